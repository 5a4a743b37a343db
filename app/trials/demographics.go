package trials

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// ParseAge reads a registry age limit ("18 Years", "6 Months", "2 Weeks",
// "30 Days", "N/A", "18") in years. ok is false when there is no limit or
// the text is not an age.
func ParseAge(s string) (years float64, ok bool) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) == 0 {
		return 0, false
	}
	n, err := strconv.ParseFloat(f[0], 64)
	if err != nil || n < 0 {
		return 0, false
	}
	unit := "years"
	if len(f) > 1 {
		unit = f[1]
	}
	y, ok := toYears(n, unit)
	return y, ok
}

// toYears converts an amount in a unit ("years", "yrs", "months", "weeks",
// "days", "hours", "minutes") to years.
func toYears(n float64, unit string) (float64, bool) {
	u := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(unit), "."), "s")
	switch u {
	case "year", "yr", "y", "yo", "year-old", "years-old":
		return n, true
	case "month", "mo", "mth", "mon":
		return n / 12, true
	case "week", "wk":
		return n / 52.1775, true
	case "day", "d":
		return n / 365.25, true
	case "hour", "hr", "h":
		return n / (365.25 * 24), true
	case "minute", "min":
		return n / (365.25 * 24 * 60), true
	}
	return 0, false
}

// Patient ages in case descriptions: "58-year-old", "44 yo", "66yo",
// "a 38 year old", "6-month-old", "45 y/o", "aged 45".
var patientAgeRE = lazyre.New(`(?i)\b(\d{1,3}(?:\.\d+)?)\s*[- ]?\s*(years?|yrs?|months?|mos?|weeks?|wks?|days?)[- ]?\s*old\b|\b(\d{1,3})\s*[- ]?(?:yo|y/o|y\.o\.)\b|\baged?\s+(\d{1,3})\b|\b(\d{1,3})\s*(?:year|yr)s?\s+of\s+age\b`)

// Sex words of case descriptions, counted to decide the patient's sex.
var (
	femaleNounRE = lazyre.New(`(?i)\b(?:woman|female|girl|lady|pregnant|postmenopausal|g\d+p\d+)\b`)
	maleNounRE   = lazyre.New(`(?i)\b(?:man|male|boy|gentleman)\b`)
	femaleProRE  = lazyre.New(`(?i)\b(?:she|her|hers|herself)\b`)
	maleProRE    = lazyre.New(`(?i)\b(?:he|him|his|himself)\b`)
)

// PatientDemographics reads a patient's age (in years) and sex from a case
// description. hasAge is false when no age is stated; sex is SexUnknown
// when neither sex words nor pronouns decide it. Nouns about the patient
// ("woman", "boy") weigh more than pronouns, which may refer to relatives.
func PatientDemographics(text string) (age float64, hasAge bool, sex Sex) {
	text = textPrefix(text, maxInferBytes) // a case description is a few sentences
	if m := patientAgeRE().FindStringSubmatch(text); m != nil {
		switch {
		case m[1] != "":
			n, _ := strconv.ParseFloat(m[1], 64)
			age, hasAge = toYears(n, m[2])
		case m[3] != "":
			n, _ := strconv.ParseFloat(m[3], 64)
			age, hasAge = n, true
		case m[4] != "":
			n, _ := strconv.ParseFloat(m[4], 64)
			age, hasAge = n, true
		case m[5] != "":
			n, _ := strconv.ParseFloat(m[5], 64)
			age, hasAge = n, true
		}
	}
	// The first sex noun decides (case reports introduce the patient
	// first: "a 58-year-old woman ... her husband"); pronouns otherwise.
	f := femaleNounRE().FindStringIndex(text)
	m := maleNounRE().FindStringIndex(text)
	switch {
	case f != nil && (m == nil || f[0] < m[0]):
		return age, hasAge, SexFemale
	case m != nil:
		return age, hasAge, SexMale
	}
	nf := len(femaleProRE().FindAllStringIndex(text, -1))
	nm := len(maleProRE().FindAllStringIndex(text, -1))
	switch {
	case nf > nm:
		sex = SexFemale
	case nm > nf:
		sex = SexMale
	}
	return age, hasAge, sex
}

// Age limits stated in criteria or descriptions. A number counts as an
// age when it carries a time unit in a sentence that speaks of age, or
// directly follows the word age ("age 18 or older", "aged > 65").
const (
	ageNum  = `(\d{1,3}(?:\.\d+)?)`
	ageUnit = `(years?|yrs?|months?|mos?|weeks?|wks?|days?)`
	ageWord = `\bage[sd]?\s*(?:of\s*|is\s*|:\s*|between\s*|from\s*)?`
	minWord = `(?:≥|>=|=>|>|\bover|\bolder than|\babove|\bat least|\bgreater than|\bmore than|\bminimum(?: age)?(?: of)?)`
	maxWord = `(≤|<=|=<|<|\bunder|\byounger than|\bbelow|\bless than|\bup to|\bmaximum(?: age)?(?: of)?|\bno older than|\bnot older than)`
	orMore  = `\s*(?:old\s*|of age\s*)?(?:or|and)\s*(?:older|over|above|more|greater)\b`
)

var (
	// "18-65 years", "between 18 and 65 years", "age 18-65", "20-40 age"
	ageRangeUnitRE = lazyre.New(`(?i)` + ageNum + `\s*(?:-|–|to|and)\s*` + ageNum + `\s*` + ageUnit + `\b`)
	ageRangeWordRE = lazyre.New(`(?i)` + ageWord + ageNum + `\s*(?:-|–|to|and)\s*` + ageNum + `\s*` + ageUnit + `?|` + ageNum + `\s*(?:-|–|to)\s*` + ageNum + `\s*(?:of\s+)?age\b`)
	// "18 years or older", "age 18 and over", "≥ 18 years", "age > 65"
	ageMinUnitRE = lazyre.New(`(?i)` + ageNum + `\s*` + ageUnit + orMore + `|` + minWord + `\s*` + ageNum + `\s*` + ageUnit + `\b`)
	ageMinWordRE = lazyre.New(`(?i)` + ageWord + ageNum + `\s*` + ageUnit + `?` + orMore + `|` + ageWord + minWord + `\s*` + ageNum + `\s*` + ageUnit + `?`)
	// "≤ 65 years", "under 18 years", "age < 18"
	ageMaxUnitRE = lazyre.New(`(?i)` + maxWord + `\s*` + ageNum + `\s*` + ageUnit + `\b`)
	ageMaxWordRE = lazyre.New(`(?i)` + ageWord + maxWord + `\s*` + ageNum + `\s*` + ageUnit + `?`)
	gestationRE  = lazyre.New(`(?i)gestation|weeks? pregnant|menstrual age`)
	// Words that put a number with a unit in an age context.
	ageContextRE = lazyre.New(`(?i)\b(?:age[ds]?|years? old|year-old|years? of age|yrs? old|adults?|children|infants?|born)\b|\d\s*(?:years?|yrs?)\s*(?:or|and)\s*(?:older|over|above)`)

	childWordsRE = lazyre.New(`(?i)\b(?:child|children|pediatric|paediatric|infants?|neonates?|neonatal|newborns?|toddlers?|preterm|adolescents?|juvenile|kids|schoolchildren|boys|girls)\b`)
	adultWordsRE = lazyre.New(`(?i)\b(?:adults?|adult-onset|elderly|older people|older persons|older patients|postmenopausal|geriatric)\b`)
	// Sex is inferred from population statements only: an inclusion
	// criterion or a description sentence that leads with women or men,
	// never from conditional ones ("Female patients of childbearing
	// potential must ...", "Negative pregnancy test for females").
	womenLeadRE      = lazyre.New(`(?i)^(?:\W*)(?:healthy\s+|adult\s+|pregnant\s+|postmenopausal\s+|premenopausal\s+)*(?:women|woman|females?|girls|pregnant|postmenopausal|premenopausal|mothers)\b`)
	menLeadRE        = lazyre.New(`(?i)^(?:\W*)(?:healthy\s+|adult\s+)*(?:men|man|males?|boys)\b`)
	womenWordsRE     = lazyre.New(`(?i)\b(?:women|woman|females?|girls|pregnant|postmenopausal|premenopausal|mothers)\b`)
	menWordsRE       = lazyre.New(`(?i)\b(?:men|man|males?|boys|fathers)\b`)
	conditionalSexRE = lazyre.New(`(?i)childbearing|contracept|birth.control|pregnancy test|\bif (?:fe)?male|\bnon-?pregnant|lactating|breast-?feeding|nursing`)
	bothSexRE        = lazyre.New(`(?i)\b(?:men and women|women and men|males? and females?|females? and males?|males? or females?|females? or males?|men or women|women or men|both (?:sexes|genders)|either (?:sex|gender)|any gender|regardless of (?:sex|gender)|boys and girls|girls and boys)\b`)
)

// maxInferBytes bounds what the age and sex inference reads of a trial:
// its criteria up to this many bytes, and the first this many bytes of its
// summary and description (the registry allows 20,000 characters of
// criteria). The inference runs a dozen regular expressions over what it
// reads, so bounding it keeps its cost small whatever a record holds.
const maxInferBytes = 64 << 10

// inferenceView is t with its texts bounded for the inference: the title,
// the criteria up to maxInferBytes in all (inclusion first), and the first
// maxInferBytes of the summary and description together.
func inferenceView(t *Trial) *Trial {
	v := &Trial{ID: t.ID, Title: textPrefix(t.Title, maxTitleBytes)}
	left := maxInferBytes
	items := func(in []string) []string {
		var out []string
		for _, c := range in {
			if left <= 0 {
				break
			}
			c = textPrefix(c, left)
			left -= len(c) + 1
			out = append(out, c)
		}
		return out
	}
	v.Inclusion = items(t.Inclusion)
	v.Exclusion = items(t.Exclusion)
	v.Summary = textPrefix(t.Summary, maxInferBytes)
	v.Description = textPrefix(t.Description, maxInferBytes-len(v.Summary))
	return v
}

// textPrefix returns s cut to at most n bytes: at the last line or
// sentence end in the final kilobyte of the bound when there is one (so
// no statement is cut in two), else at a character boundary.
func textPrefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := s[:n]
	if i := max(strings.LastIndexByte(cut, '\n'), strings.LastIndex(cut, ". ")+1); i > 0 && i >= n-1024 {
		return s[:i]
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// demographics are age and sex limits read from text.
type demographics struct {
	minAge, maxAge float64
	sex            Sex
	found          bool
}

// inferDemographics reads age and sex limits from a trial's criteria (and,
// when it has none, from its title and description). Explicit ages in an
// age context win ("Age 25 to 65 years", "≥ 18 years"; in an exclusion,
// "Age < 18" means a minimum of 18). Without them, population words
// decide: children/pediatric only → under 18, adults only → 18 and over.
// Sex: female or male words without the other sex's.
func inferDemographics(t *Trial) demographics {
	t = inferenceView(t)
	var d demographics
	apply := func(text string, excl bool) {
		lo, hi := agesInText(text)
		if excl { // an excluded age range bounds the other side
			switch {
			case lo > 0 && hi == 0:
				lo, hi = 0, lo // "excluded: older than 65" → max 65
			case hi > 0 && lo == 0:
				lo, hi = hi+1, 0 // "excluded: younger than 18" (hi 17) → min 18
			default:
				lo, hi = 0, 0
			}
		}
		if lo > 0 && (d.minAge == 0 || lo > d.minAge) {
			d.minAge, d.found = lo, true
		}
		if hi > 0 && (d.maxAge == 0 || hi < d.maxAge) {
			d.maxAge, d.found = hi, true
		}
	}
	for _, c := range t.Inclusion {
		apply(c, false)
	}
	for _, c := range t.Exclusion {
		apply(c, true)
	}
	popText := t.Title + "\n" + strings.Join(t.Inclusion, "\n")
	if len(t.Inclusion) == 0 {
		// Free text only: explicit ages anywhere, population words in the
		// opening sentences (later ones tell background: "common in
		// children").
		desc := strings.TrimSpace(t.Summary + "\n" + t.Description)
		if !d.found {
			apply(strings.Join(sentences(desc), "\n"), false)
		}
		popText += "\n" + strings.Join(firstN(sentences(desc), 2), "\n")
	}
	if !d.found {
		apply(popText, false)
	}
	if !d.found {
		child := childWordsRE().MatchString(popText)
		adult := adultWordsRE().MatchString(popText)
		switch {
		case child && !adult:
			d.maxAge, d.found = 18, true
		case adult && !child:
			d.minAge, d.found = 18, true
		}
	}
	if d.maxAge > 0 && d.minAge > d.maxAge {
		d.minAge, d.maxAge = 0, 0
	}
	d.sex = inferSex(t)
	if d.sex != SexAll {
		d.found = true
	}
	return d
}

// inferSex reads the enrolled sex from population statements: the title,
// inclusion criteria that lead with a sex ("Women aged 40-70", "Male
// patients with ..."), or (without criteria) description sentences about
// women or men only. Conditional statements and both-sex phrases keep
// SexAll.
func inferSex(t *Trial) Sex {
	var statements []string
	statements = append(statements, t.Title)
	statements = append(statements, t.Inclusion...)
	if len(t.Inclusion) == 0 {
		for s := range strings.SplitSeq(strings.NewReplacer(". ", ".\n", "; ", ";\n").Replace(t.Summary+"\n"+t.Description), "\n") {
			statements = append(statements, s)
		}
	}
	female, male := false, false
	for _, s := range statements {
		if !mentionsSex(s) {
			continue
		}
		if bothSexRE().MatchString(s) {
			return SexAll
		}
		if conditionalSexRE().MatchString(s) {
			continue
		}
		lead := len(t.Inclusion) > 0 && s != t.Title
		if lead {
			if (womenLeadRE().MatchString(s) || menLeadRE().MatchString(s)) && womenWordsRE().MatchString(s) && menWordsRE().MatchString(s) {
				return SexAll // "Male age 2 months to 20 years; female age ..."
			}
			female = female || womenLeadRE().MatchString(s)
			male = male || menLeadRE().MatchString(s)
			continue
		}
		female = female || womenWordsRE().MatchString(s)
		male = male || menWordsRE().MatchString(s)
	}
	switch {
	case female && !male:
		return SexFemale
	case male && !female:
		return SexMale
	}
	return SexAll
}

// mentionsSex is a quick test before the sex regular expressions: does
// the text contain a word stem they look for ("women" contains "men",
// "female" "male")?
func mentionsSex(s string) bool {
	for _, w := range textsearch.Tokens(s) {
		if sexWords.Has(w.Lower) {
			return true
		}
	}
	return false
}

// sexWords are the words the sex regular expressions look for.
var sexWords = textsearch.NewWordSet(`women woman men man male males female females girls girl boys boy mothers fathers pregnant
pregnancy postmenopausal premenopausal menopausal sexes genders sex gender either`)

// agesInText returns the age limits a text states (0 = none), line by
// line: "MI within < 6 months" is no age, "aged between 1 and 16 years" is.
func agesInText(text string) (lo, hi float64) {
	for line := range strings.SplitSeq(text, "\n") {
		if !strings.ContainsAny(line, "0123456789") {
			continue // no number, no age (and the regular expressions are slow)
		}
		low := strings.ToLower(line)
		hasAge := strings.Contains(low, "age")
		hasUnit := strings.Contains(low, "year") || strings.Contains(low, "yr") || strings.Contains(low, "month") ||
			strings.Contains(low, "mos") || strings.Contains(low, "week") || strings.Contains(low, "wk") || strings.Contains(low, "day")
		if !hasAge && !hasUnit {
			continue
		}
		find := func(ok bool, re *regexp.Regexp) []string {
			if !ok {
				return nil
			}
			return re.FindStringSubmatch(line)
		}
		if gestationRE().MatchString(line) {
			continue // "gestational age < 23 weeks" is not the person's age
		}
		context := ageContextRE().MatchString(line)
		if m := find(hasAge, ageRangeWordRE()); m != nil {
			a, b := firstNonEmpty(m[1], m[4]), firstNonEmpty(m[2], m[5])
			if ya, ok1 := yearsOf(a, m[3]); ok1 {
				if yb, ok2 := yearsOf(b, m[3]); ok2 && ya < yb {
					lo, hi = maxNonZero(lo, ya), minNonZero(hi, yb)
					continue
				}
			}
		}
		if m := find(hasUnit, ageRangeUnitRE()); m != nil && context && (isYears(m[3]) || ageNearRE().MatchString(line)) {
			if ya, ok1 := yearsOf(m[1], m[3]); ok1 {
				if yb, ok2 := yearsOf(m[2], m[3]); ok2 && ya < yb {
					lo, hi = maxNonZero(lo, ya), minNonZero(hi, yb)
					continue
				}
			}
		}
		if m := find(hasAge, ageMinWordRE()); m != nil {
			if y, ok := yearsOf(firstNonEmpty(m[1], m[3]), firstNonEmpty(m[2], m[4])); ok {
				lo = maxNonZero(lo, y)
			}
		} else if m := find(hasUnit, ageMinUnitRE()); m != nil && context && (isYears(m[2]+m[4]) || ageNearRE().MatchString(line)) {
			if m[1] != "" {
				if y, ok := yearsOf(m[1], m[2]); ok {
					lo = maxNonZero(lo, y)
				}
			} else if y, ok := yearsOf(m[3], m[4]); ok {
				lo = maxNonZero(lo, y)
			}
		}
		var op, num, unit string
		if m := find(hasAge, ageMaxWordRE()); m != nil {
			op, num, unit = m[1], m[2], m[3]
		} else if m := find(hasUnit, ageMaxUnitRE()); m != nil && context && (isYears(m[3]) || ageNearRE().MatchString(line)) {
			op, num, unit = m[1], m[2], m[3]
		}
		if y, ok := yearsOf(num, unit); ok {
			switch strings.ToLower(op) {
			case "<", "under", "younger than", "below", "less than":
				if y >= 2 && y == math.Floor(y) {
					y-- // "under 18" is at most 17 (ages compare as completed years)
				}
			}
			hi = minNonZero(hi, y)
		}
	}
	if hi > 0 && lo > hi {
		return 0, 0
	}
	return lo, hi
}

// ageNearRE says a month, week or day count is an age ("infants 2 to 6
// months old", "aged 6-24 months"), not a duration ("treated for 3-6
// months").
var ageNearRE = lazyre.New(`(?i)\b(?:months?|weeks?|days?)\s*(?:old|of age)\b|\bage[ds]?\s*\d|\bage[ds]?\s*(?:between|from|of)\s*\d`)

func isYears(unit string) bool {
	u := strings.ToLower(unit)
	return strings.HasPrefix(u, "y")
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func yearsOf(num, unit string) (float64, bool) {
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	if unit == "" {
		unit = "years"
	}
	y, ok := toYears(n, unit)
	if !ok || y > 120 {
		return 0, false
	}
	return y, true
}

func maxNonZero(a, b float64) float64 {
	if a == 0 || b > a {
		return b
	}
	return a
}

func minNonZero(a, b float64) float64 {
	if a == 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// AgeAllowed reports whether a patient of the given age (years) is within
// the trial's limits (limits compare in completed years: a 65.4-year-old
// fits "up to 65 years").
func (t *Trial) AgeAllowed(age float64) bool {
	if t.MinAge > 0 && age < t.MinAge {
		return false
	}
	if limit := t.MaxAge; limit > 0 {
		if limit >= 1 && limit == math.Floor(limit) {
			limit++ // whole years: "up to 65" admits 65 years and some months
			if age >= limit {
				return false
			}
		} else if age > limit {
			return false
		}
	}
	return true
}

// SexAllowed reports whether a patient of sex s may enrol (an unknown sex
// always may).
func (t *Trial) SexAllowed(s Sex) bool {
	return s == SexUnknown || t.Sex == SexAll || t.Sex == "" || t.Sex == s
}

func firstN(s []string, n int) []string { return s[:min(n, len(s))] }
