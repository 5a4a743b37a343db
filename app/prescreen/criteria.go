package prescreen

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// The deterministic reading of lab-value and age criteria ("creatinine <
// 1.5 mg/dL", "HbA1c between 7 and 10%", "aged 18 to 75 years", "eGFR ≥
// 60 mL/min/1.73 m²"). Only what is written as a comparison with a number
// is read; everything else about a criterion is left to the model (or
// stays unknown).

// Op is a comparison.
type Op string

// The comparisons. Between is inclusive at both ends.
const (
	OpLT      Op = "<"
	OpLE      Op = "≤"
	OpGT      Op = ">"
	OpGE      Op = "≥"
	OpBetween Op = "between"
)

// AgeKey is the Check.Analyte of an age criterion.
const AgeKey = "age"

// Check is one comparison read from a criterion.
type Check struct {
	// Analyte is the analyte's key, or AgeKey.
	Analyte string `json:"analyte"`
	// Op compares the value with Value, or with Lo and Hi for OpBetween.
	Op    Op      `json:"op"`
	Value float64 `json:"value,omitempty"`
	Lo    float64 `json:"lo,omitempty"`
	Hi    float64 `json:"hi,omitempty"`
	// Unit is the unit as written ("" when none; "years" or "months" for
	// an age).
	Unit string `json:"unit,omitempty"`
	// ULN is set when the numbers are multiples of the upper limit of
	// normal ("ALT > 3 × ULN").
	ULN bool `json:"uln,omitempty"`
	// Text is the part of the criterion it was read from.
	Text string `json:"text"`
}

// Name is what the check is about, for people.
func (c Check) Name() string {
	if c.Analyte == AgeKey {
		return "Age"
	}
	if a := analyteByKey(c.Analyte); a != nil {
		return a.Name
	}
	return c.Analyte
}

// String writes the check: "Creatinine < 1.5 mg/dL", "Age 18–75 years".
func (c Check) String() string {
	unit := c.unitText()
	if c.Op == OpBetween {
		return fmt.Sprintf("%s %s–%s%s", c.Name(), num(c.Lo), num(c.Hi), unit)
	}
	return fmt.Sprintf("%s %s %s%s", c.Name(), c.Op, num(c.Value), unit)
}

func (c Check) unitText() string {
	switch {
	case c.ULN:
		return " × ULN"
	case c.Unit == "%":
		return "%"
	case c.Unit != "":
		return " " + c.Unit
	}
	return ""
}

// holds compares x (in the check's unit) with the check.
func (c Check) holds(x float64) bool {
	const eps = 1e-9
	switch c.Op {
	case OpLT:
		return x < c.Value-eps
	case OpLE:
		return x <= c.Value+eps
	case OpGT:
		return x > c.Value+eps
	case OpGE:
		return x >= c.Value-eps
	case OpBetween:
		return x >= c.Lo-eps && x <= c.Hi+eps
	}
	return false
}

// thresholds returns the numbers of the check.
func (c Check) thresholds() []float64 {
	if c.Op == OpBetween {
		return []float64{c.Lo, c.Hi}
	}
	return []float64{c.Value}
}

// withThresholds returns the check with its numbers mapped by f.
func (c Check) withThresholds(f func(float64) float64) Check {
	if c.Op == OpBetween {
		c.Lo, c.Hi = f(c.Lo), f(c.Hi)
		if c.Lo > c.Hi {
			c.Lo, c.Hi = c.Hi, c.Lo
		}
	} else {
		c.Value = f(c.Value)
	}
	return c
}

// Reading is what was read from one criterion.
type Reading struct {
	// Checks are the comparisons found, in order.
	Checks []Check
	// Any is set when the criterion joins its comparisons with "or" (any
	// may hold); otherwise all must.
	Any bool
	// Partial is set when the criterion says more than its comparisons
	// ("type 2 diabetes with HbA1c 7–10%"): they decide it only when they
	// fail (inclusion) or fail to hold (exclusion).
	Partial bool
}

// maxCriterionBytes bounds the text read from one criterion.
const maxCriterionBytes = 2000

// ReadCriterion reads the lab-value and age comparisons of a criterion.
func ReadCriterion(text string) Reading {
	if len(text) > maxCriterionBytes {
		text = text[:maxCriterionBytes]
	}
	s := normalizeCriterion(text)
	var r Reading
	var spans [][2]int
	// Lab values.
	analyteRe, _ := analytePatterns()
	for pos := 0; pos < len(s); {
		m := analyteRe.FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		for i := range m {
			m[i] += pos
		}
		pos = m[3]
		name := s[m[2]:m[3]]
		a := analyteOfName(name)
		if a == nil {
			continue
		}
		rest := s[m[3]:]
		if followedBy(rest, a.notFollowedBy) {
			continue
		}
		cs, n := parseExpr(rest, a.Key)
		if len(cs) == 0 {
			continue
		}
		for i := range cs {
			cs[i].Text = strings.TrimSpace(s[m[2] : m[3]+n])
		}
		r.Checks = append(r.Checks, cs...)
		spans = append(spans, [2]int{m[2], m[3] + n})
	}
	// Age.
	for _, m := range ageRe().FindAllStringIndex(s, -1) {
		if overlaps(spans, m[0]) {
			continue
		}
		cs, n := parseExpr(s[m[1]:], AgeKey)
		if len(cs) == 0 {
			continue
		}
		for i := range cs {
			cs[i].Text = strings.TrimSpace(s[m[0] : m[1]+n])
		}
		r.Checks = append(r.Checks, cs...)
		spans = append(spans, [2]int{m[0], m[1] + n})
	}
	// "18 years or older", "≥ 18 years of age", "18-75 years old": an age
	// without the word.
	if !hasAge(r.Checks) {
		for _, m := range yearsRe().FindAllStringSubmatchIndex(s, -1) {
			if overlaps(spans, m[0]) {
				continue
			}
			cs, n := parseExpr(s[m[0]:], AgeKey)
			if len(cs) == 0 || !ageUnit(cs[0].Unit) {
				continue
			}
			for i := range cs {
				cs[i].Text = strings.TrimSpace(s[m[0] : m[0]+n])
			}
			r.Checks = append(r.Checks, cs...)
			spans = append(spans, [2]int{m[0], m[0] + n})
			break
		}
	}
	if len(r.Checks) == 0 {
		return r
	}
	r.Any = len(r.Checks) > 1 && orRe().MatchString(between(s, spans))
	r.Partial = residual(s, spans)
	return r
}

func hasAge(cs []Check) bool {
	for _, c := range cs {
		if c.Analyte == AgeKey {
			return true
		}
	}
	return false
}

func ageUnit(u string) bool { return strings.HasPrefix(u, "year") || strings.HasPrefix(u, "month") }

func overlaps(spans [][2]int, at int) bool {
	for _, sp := range spans {
		if at >= sp[0] && at < sp[1] {
			return true
		}
	}
	return false
}

// between returns the text between the first and last span.
func between(s string, spans [][2]int) string {
	lo, hi := len(s), 0
	for _, sp := range spans {
		lo, hi = min(lo, sp[0]), max(hi, sp[1])
	}
	if lo >= hi {
		return ""
	}
	return s[lo:hi]
}

var orRe = lazyre.New(`\bor\b`)

// normalizeCriterion lower-cases a criterion and writes its comparisons
// as symbols: "at least 18" → ">= 18", "less than 1.5" → "< 1.5".
func normalizeCriterion(text string) string {
	s := strings.ToLower(text)
	s = strings.NewReplacer("≥", ">=", "≤", "<=", "=>", ">=", "=<", "<=", "–", "-", "—", "-", "−", "-", "‐", "-",
		"µ", "u", "μ", "u", "²", "2", "×", "x", "\u00a0", " ", "\t", " ", "\n", " ", "＞", ">", "＜", "<", "⁹", "9").Replace(s)
	for i := 0; i < 3; i++ { // 150,000 → 150000
		s = thousandsRe().ReplaceAllString(s, "$1$2")
	}
	s = decimalCommaRe().ReplaceAllString(s, "$1.$2")
	for _, p := range phraseOps() {
		s = p.re.ReplaceAllString(s, p.sym+" $1")
	}
	return s
}

var (
	thousandsRe    = lazyre.New(`(\d),(\d{3})\b`)
	decimalCommaRe = lazyre.New(`(\d),(\d{1,2})\b`)
)

// phraseOps turn words before a number into a comparison symbol.
var phraseOps = sync.OnceValue(func() []struct {
	re  *regexp.Regexp
	sym string
} {
	groups := []struct {
		sym     string
		phrases []string
	}{
		{">=", []string{"greater than or equal to", "more than or equal to", "higher than or equal to", "equal to or greater than", "equal to or more than", "equal to or higher than", "equal or greater than", "equal or more than", "at least", "not less than", "no less than", "not lower than", "not below", "minimum of", "minimum", "min\\."}},
		{"<=", []string{"less than or equal to", "lower than or equal to", "equal to or less than", "equal to or lower than", "equal or less than", "not more than", "no more than", "not greater than", "no greater than", "not higher than", "not exceeding", "not to exceed", "not above", "at most", "maximum of", "maximum", "max\\.", "up to"}},
		{"<", []string{"less than", "lower than", "fewer than", "younger than", "below", "under", "<"}},
		{">", []string{"greater than", "more than", "higher than", "older than", "in excess of", "exceeding", "exceeds", "above", "over", ">"}},
	}
	var out []struct {
		re  *regexp.Regexp
		sym string
	}
	for _, g := range groups {
		var alts []string
		for _, p := range g.phrases {
			if p == "<" || p == ">" {
				continue
			}
			alts = append(alts, strings.ReplaceAll(p, " ", `\s+`))
		}
		if len(alts) == 0 {
			continue
		}
		re := regexp.MustCompile(`\b(?:` + strings.Join(alts, "|") + `)\s*(\d)`)
		out = append(out, struct {
			re  *regexp.Regexp
			sym string
		}{re, g.sym})
	}
	return out
})

// analytePatterns returns the pattern that finds the names of the analytes
// (longest first) and the analyte of each name.
var analytePatterns = sync.OnceValues(func() (*regexp.Regexp, map[string]*Analyte) {
	names := map[string]*Analyte{}
	var alts []string
	for _, a := range Analytes() {
		for _, n := range a.names {
			if _, dup := names[n]; dup {
				continue
			}
			names[n] = a
			alts = append(alts, regexp.QuoteMeta(n))
		}
	}
	// Longest first, so that "serum creatinine" wins over "creatinine".
	for i := 1; i < len(alts); i++ {
		for j := i; j > 0 && len(alts[j]) > len(alts[j-1]); j-- {
			alts[j], alts[j-1] = alts[j-1], alts[j]
		}
	}
	return regexp.MustCompile(`(?:^|[^a-z0-9])(` + strings.Join(alts, "|") + `)(?:[^a-z0-9]|$)`), names
})

func analyteOfName(n string) *Analyte {
	_, names := analytePatterns()
	return names[n]
}

// followedBy reports whether rest starts (after spaces) with one of words.
func followedBy(rest string, words []string) bool {
	r := strings.TrimLeft(rest, " -")
	for _, w := range words {
		if strings.HasPrefix(r, w) {
			return true
		}
	}
	return false
}

var (
	ageRe   = lazyre.New(`\b(?:age[sd]?|aged)\b`)
	yearsRe = lazyre.New(`(?:between\s+|from\s+|(?:<=|>=|<|>)\s*)?\d+(?:\.\d+)?\s*(?:-|to|and)?\s*(?:\d+(?:\.\d+)?\s*)?(?:years?|yrs?|months?)\b`)
)

// Expression grammar. filler may come between a name and its comparison
// ("HbA1c level at screening of 7-10%").
const (
	numP    = `(\d+(?:\.\d+)?)`
	unitP   = `(%|percent|mg/dl|mg/l|g/dl|g/l|umol/l|micromol/l|mmol/mol|mmol/l|meq/l|ml/min/1\.73\s*m\^?2|ml/min/1\.73\s*sq\.?\s*m|ml/min/1\.73|ml/min|iu/l|u/l|units/l|x\s*10\^?\s*9\s*/\s*l|10\^?9\s*/\s*l|x\s*10\^?\s*3\s*/\s*(?:ul|mm3)|cells/ul|cells/mm3|/mm3|/ul|k/ul|uiu/ml|miu/l|mu/l|x\s*uln|x\s*the\s*uln|times\s+(?:the\s+)?(?:upper\s+limit\s+of\s+(?:the\s+)?normal|uln)|x\s*(?:the\s+)?upper\s+limit\s+of\s+(?:the\s+)?normal|years?|yrs?|months?)?`
	opP     = `(<=|>=|<|>|=)`
	fillerP = `^(?:[\s:,()]|\b(?:level|levels|value|values|concentration|concentrations|of|is|are|must|be|should|was|at|screening|baseline|serum|plasma|measured|calculated|estimated|by|ckd-epi|mdrd|equation|formula|with|a|an|the|result|between)\b)*?`
)

var (
	betweenRe = lazyre.New(fillerP + `\b(?:between|from)\s+` + numP + `\s*` + unitP + `\s*(?:and|-|to)\s*` + numP + `\s*` + unitP)
	opRe      = lazyre.New(fillerP + opP + `\s*` + numP + `\s*` + unitP + `(?:\s*(?:and|,)?\s*(?:(?:the\s+)?(?:value\s+)?)` + opP + `\s*` + numP + `\s*` + unitP + `)?`)
	postfixRe = lazyre.New(fillerP + numP + `\s*` + unitP + `\s*(?:of\s+age\s+|old\s+)?(?:or|and)\s+(less|lower|below|fewer|younger|under|more|greater|higher|above|older|over)\b`)
	rangeRe   = lazyre.New(fillerP + numP + `\s*` + unitP + `\s*(?:-|to)\s*` + numP + `\s*` + unitP)
)

// bounds reads the groups of a between or range match (1 the low value,
// 2 its unit, 3 the high value, 4 its unit): the bounds, the low one in
// years when only it was given in months, and the unit (the high value's,
// else the low one's).
func bounds(g []string) (lo, hi float64, unit string) {
	lo, _ = strconv.ParseFloat(g[1], 64)
	hi, _ = strconv.ParseFloat(g[3], 64)
	unit = g[4]
	if unit == "" {
		unit = g[2]
	}
	return monthsToYears(lo, g[2], g[4]), hi, unit
}

// parseExpr reads the comparison at the start of rest (after filler
// words) for an analyte (or AgeKey), and returns its checks (one, or two
// for "> 7% and < 10%") and the bytes read.
func parseExpr(rest, key string) ([]Check, int) {
	if len(rest) > 160 {
		rest = rest[:160]
	}
	mk := func(op Op, v string, unit string) Check {
		x, _ := strconv.ParseFloat(v, 64)
		return finishUnit(Check{Analyte: key, Op: op, Value: x}, unit)
	}
	if m := betweenRe().FindStringSubmatchIndex(rest); m != nil {
		lo, hi, unit := bounds(groups(rest, m))
		if lo > hi {
			lo, hi = hi, lo
		}
		return []Check{finishUnit(Check{Analyte: key, Op: OpBetween, Lo: lo, Hi: hi}, unit)}, m[1]
	}
	if m := postfixRe().FindStringSubmatchIndex(rest); m != nil {
		g := groups(rest, m)
		op := OpGE
		switch g[3] {
		case "less", "lower", "below", "fewer", "younger", "under":
			op = OpLE
		}
		return []Check{mk(op, g[1], g[2])}, m[1]
	}
	if m := opRe().FindStringSubmatchIndex(rest); m != nil {
		g := groups(rest, m)
		if g[1] == "=" {
			return nil, 0
		}
		first := mk(symOp(g[1]), g[2], g[3])
		if g[4] == "" {
			return []Check{first}, m[1]
		}
		unit := g[6]
		if unit == "" {
			unit = g[3]
		}
		if first.Unit == "" && !first.ULN {
			first = finishUnit(first, unit)
		}
		second := mk(symOp(g[4]), g[5], unit)
		return []Check{first, second}, m[1]
	}
	if m := rangeRe().FindStringSubmatchIndex(rest); m != nil {
		lo, hi, unit := bounds(groups(rest, m))
		if lo > hi {
			return nil, 0
		}
		return []Check{finishUnit(Check{Analyte: key, Op: OpBetween, Lo: lo, Hi: hi}, unit)}, m[1]
	}
	return nil, 0
}

// monthsToYears writes the lower end of "6 months to 17 years" in years.
func monthsToYears(lo float64, loUnit, hiUnit string) float64 {
	if strings.HasPrefix(loUnit, "month") && (strings.HasPrefix(hiUnit, "year") || strings.HasPrefix(hiUnit, "yr")) {
		return lo / 12
	}
	return lo
}

// groups returns the submatches as strings ("" for unmatched).
func groups(s string, m []int) []string {
	out := make([]string, len(m)/2)
	for i := range out {
		if m[2*i] >= 0 {
			out[i] = s[m[2*i]:m[2*i+1]]
		}
	}
	return out
}

func symOp(s string) Op {
	switch s {
	case "<":
		return OpLT
	case "<=":
		return OpLE
	case ">":
		return OpGT
	}
	return OpGE
}

// finishUnit sets a check's unit from the text matched for it.
func finishUnit(c Check, unit string) Check {
	u := strings.TrimSpace(unit)
	switch {
	case strings.Contains(u, "uln") || strings.Contains(u, "upper limit"):
		c.ULN, c.Unit = true, ""
	case strings.HasPrefix(u, "yr") || strings.HasPrefix(u, "year"):
		c.Unit = "years"
	case strings.HasPrefix(u, "month"):
		c.Unit = "months"
	case u == "percent":
		c.Unit = "%"
	default:
		c.Unit = displayUnit(u)
	}
	return c
}

// displayUnit writes a unit read from a criterion as people write it.
func displayUnit(u string) string {
	switch normUnit(u) {
	case "":
		return ""
	case "mg/dl":
		return "mg/dL"
	case "g/dl":
		return "g/dL"
	case "umol/l":
		return "µmol/L"
	case "mmol/l":
		return "mmol/L"
	case "mmol/mol":
		return "mmol/mol"
	case "meq/l":
		return "mEq/L"
	case "ml/min/1.73m2":
		return "mL/min/1.73 m²"
	case "ml/min":
		return "mL/min"
	case "x109/l":
		return "×10⁹/L"
	case "k/ul":
		return "K/µL"
	case "g/l":
		return "g/L"
	case "mg/l":
		return "mg/L"
	case "u/l":
		return "U/L"
	case "iu/l":
		return "IU/L"
	case "miu/l":
		return "mIU/L"
	case "uiu/ml":
		return "µIU/mL"
	case "mu/l":
		return "mU/L"
	}
	return u
}

// criterionFiller are the words a criterion may have besides its
// comparisons and still be decided by them alone.
var criterionFiller = textsearch.NewWordSet(`serum plasma blood level levels value values concentration concentrations screening baseline visit
	measured calculated estimated ckd epi mdrd equation formula cockcroft gault patient patients participant participants subject subjects
	must have has had should be is are was were with adult adults aged age ages year years old yrs month months male female men women
	defined def ie eg within normal range limit upper lower uln times documented recent most last laboratory lab labs test result results
	local central inclusive both either older younger than between from mg dl ml min m2 mmol mol umol l g k ul mm3 iu u sq
	renal kidney function impairment insufficiency dysfunction adequate severe moderate mild significant significantly clinically
	hepatic liver organ marrow bone reserve creatinine egfr gfr hba1c a1c hemoglobin haemoglobin glycated glycosylated rate
	glomerular filtration x percent lab-based`)

// residual reports whether a criterion says more than its comparisons:
// words left once the comparisons' text, filler and stop words are taken
// out. Comparisons in parentheses define the words before them
// ("uncontrolled diabetes (HbA1c > 10%)"): those do not count.
func residual(s string, spans [][2]int) bool {
	var b strings.Builder
	last := 0
	for _, sp := range sortedSpans(spans) {
		if sp[0] < last {
			continue
		}
		b.WriteString(s[last:sp[0]])
		b.WriteByte(' ')
		last = sp[1]
	}
	b.WriteString(s[last:])
	rest := b.String()
	if parenthesised(s, spans) {
		return false
	}
	for _, t := range textsearch.Tokens(rest) {
		w := t.Lower
		if textsearch.IsStopWord(w) || criterionFiller.Has(w) || isNumber(w) {
			continue
		}
		return true
	}
	return false
}

func sortedSpans(spans [][2]int) [][2]int {
	out := append([][2]int(nil), spans...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j][0] < out[j-1][0]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// parenthesised reports whether every comparison sits inside
// parentheses (or after "defined as", "i.e.").
func parenthesised(s string, spans [][2]int) bool {
	for _, sp := range spans {
		before := s[:sp[0]]
		open := strings.Count(before, "(") - strings.Count(before, ")")
		if open > 0 {
			continue
		}
		if strings.Contains(before, "defined as") || strings.Contains(before, "i.e.") {
			continue
		}
		return false
	}
	return len(spans) > 0
}

func isNumber(w string) bool {
	_, err := strconv.ParseFloat(w, 64)
	return err == nil
}

// num formats a threshold.
func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
