package omop

import (
	"context"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// maxTerms bounds the terms taken from one question.
const maxTerms = 12

// questionWord matches a word of a question, keeping codes ("E11.9",
// "4548-4") and hyphenated or possessive words whole.
var questionWord = lazyre.New(`[A-Za-z0-9]+(?:[.\-'][A-Za-z0-9]+)*`)

// Cue words say which domain the term after them belongs to ("taking
// metformin", "diagnosed with asthma").
var (
	drugCues = textsearch.NewWordSet(`take takes taking took taken on prescribed prescription prescriptions
		receiving received receive using use uses treated medication medications medicine medicines drug drugs
		exposed exposure dispensed`)
	conditionCues = textsearch.NewWordSet(`have has having with diagnosed diagnosis diagnoses suffering suffer
		suffers history condition conditions disease`)
	measurementCues = textsearch.NewWordSet(`measured measurement measurements level levels value values test tests
		lab labs result results`)
	procedureCues = textsearch.NewWordSet(`underwent undergone undergo procedure procedures surgery operation`)
)

// connectors split a question into candidate terms.
var connectors = textsearch.NewWordSet(`and or but with without who whom that which on taking take takes took
	having have has had diagnosed prescribed receiving received using use treated also plus after before while
	during since than versus vs among between`)

// scaffold words frame a question rather than name a clinical idea; they
// are trimmed from the ends of a candidate term.
var scaffold = textsearch.NewWordSet(`how many much number count counts patients patient persons person people
	men women man woman male males female females children child adults adult subjects individuals cases
	do does did are is were was be been being there the a an any all some what which who list show give find
	get got given currently current ever also by gender sex age aged ages band bands group groups years year
	old older younger than over under above below between per database data cohort recorded record records
	documented known suffer suffering from their its in of at to for ever same split distribution breakdown
	percentage proportion average mean median total each both least most more less first last new
	diagnosed diagnosis history taking take takes took treated treatment prescribed medication medications
	drug drugs condition conditions disease diseases measurement measurements level levels value test tests
	result results lab labs visit visits`)

// ExtractTerms finds the clinical terms of a question without a model:
// vocabulary codes (SNOMED/RxNorm numbers, ICD-10 codes written in
// capitals, LOINC codes), the lay terms of the domain vocabulary (see
// layTerms), and the remaining phrases between connecting words ("and", "with", "taking", ...) once the words
// that frame a question ("how many patients") are trimmed. A cue word
// before a term sets its domain ("taking X": Drug; "diagnosed with X":
// Condition); abbreviations are expanded by NewTerm.
func ExtractTerms(question string) []Term {
	locs := questionWord().FindAllStringIndex(question, -1)
	words := make([]string, len(locs))
	for i, l := range locs {
		words[i] = question[l[0]:l[1]]
	}
	lower := make([]string, len(words))
	for i, w := range words {
		lower[i] = strings.ToLower(w)
	}
	used := make([]bool, len(words))
	var terms []Term
	add := func(t Term) {
		if len(terms) < maxTerms {
			terms = append(terms, t)
		}
	}
	cueBefore := func(i int) string {
		for j := i - 1; j >= 0 && j >= i-4; j-- {
			switch w := lower[j]; {
			case drugCues.Has(w):
				return "Drug"
			case procedureCues.Has(w):
				return "Procedure"
			case measurementCues.Has(w):
				return "Measurement"
			case conditionCues.Has(w):
				return "Condition"
			}
		}
		return ""
	}

	// Codes.
	for i, w := range words {
		if isQuestionCode(w, i > 0 && isCodeCue(lower[i-1])) {
			used[i] = true
			add(Term{Text: w, Search: []string{w}, Code: true})
		}
	}
	// Lay terms, longest phrases first.
	maxLen := 0
	for k := range layTerms() {
		maxLen = max(maxLen, len(strings.Fields(k)))
	}
	for n := maxLen; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) {
				continue
			}
			phrase := strings.Join(lower[i:i+n], " ")
			e, ok := layTerms()[phrase]
			if !ok {
				continue
			}
			for k := i; k < i+n; k++ {
				used[k] = true
			}
			text := strings.Join(words[i:i+n], " ")
			add(Term{Text: text, Search: append([]string{text}, e.terms...), Domain: e.domain})
		}
	}
	// The remaining phrases between connectors.
	var cur []int
	flush := func() {
		// Trim framing words from both ends.
		for len(cur) > 0 && isFrame(lower[cur[0]]) {
			cur = cur[1:]
		}
		for len(cur) > 0 && isFrame(lower[cur[len(cur)-1]]) && !isGrade(lower, cur) {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			text := question[locs[cur[0]][0]:locs[cur[len(cur)-1]][1]]
			add(NewTerm(text, cueBefore(cur[0])))
		}
		cur = nil
	}
	for i := range words {
		gap := i > 0 && hasBreak(question[locs[i-1][1]:locs[i][0]])
		if used[i] || connectors.Has(lower[i]) || gap {
			flush()
			if used[i] || connectors.Has(lower[i]) {
				continue
			}
		}
		cur = append(cur, i)
	}
	flush()
	return terms
}

// isFrame reports whether a word frames a question (or is a bare number)
// rather than naming a clinical idea.
func isFrame(w string) bool {
	return scaffold.Has(w) || textsearch.IsStopWord(w) || !textsearch.HasLetter(w)
}

// isGrade reports whether the last word of a phrase is a number that
// grades the word before it ("stage 3", "type 2").
func isGrade(lower []string, phrase []int) bool {
	n := len(phrase)
	if n < 2 || textsearch.HasLetter(lower[phrase[n-1]]) {
		return false
	}
	switch lower[phrase[n-2]] {
	case "stage", "type", "grade", "class", "phase", "level":
		return true
	}
	return false
}

// hasBreak reports whether the text between two words ends a phrase
// (punctuation other than a space).
func hasBreak(between string) bool {
	return strings.ContainsAny(between, ",;:?!()/")
}

// isCodeCue reports whether a word announces a code ("code 6809").
func isCodeCue(w string) bool {
	switch w {
	case "code", "codes", "snomed", "icd", "icd10", "icd-10", "icd10cm", "rxnorm", "loinc", "concept":
		return true
	}
	return false
}

var (
	icd10Code  = lazyre.New(`^[A-Z][0-9]{2}(?:\.[0-9A-Z]{1,4})?$`)
	longNumber = lazyre.New(`^[0-9]{5,18}$`)
	loincCode  = lazyre.New(`^[0-9]{1,7}-[0-9]$`)
)

// isQuestionCode reports whether a word of a question is a vocabulary
// code: an ICD-10 code in capitals, a number of five or more digits
// (SNOMED, RxNorm), a LOINC code, or any code-like word after a cue.
func isQuestionCode(w string, cue bool) bool {
	if cue && IsCode(w) {
		return true
	}
	return icd10Code().MatchString(w) || longNumber().MatchString(w) || loincCode().MatchString(w)
}

// ResolveTerms resolves each term to a concept set. A phrase that resolves
// to nothing as a whole is tried word group by word group (the longest
// groups first), so that "diabetic kidney patients" still finds its
// concepts. Terms resolving to the same concept are merged. unresolved
// lists the terms that found nothing.
func (r *Resolver) ResolveTerms(ctx context.Context, terms []Term) (sets []ConceptSet, unresolved []Term, err error) {
	seen := map[int64]bool{}
	addSet := func(s ConceptSet) {
		if len(s.Items) == 0 || seen[s.Items[0].ID] {
			return
		}
		seen[s.Items[0].ID] = true
		sets = append(sets, s)
	}
	for _, t := range terms {
		s, ok, err := r.Resolve(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		if ok && s.score() >= 0.6 || ok && len(strings.Fields(t.Text)) == 1 {
			addSet(s)
			continue
		}
		parts, err := r.resolveParts(ctx, t)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case len(parts) > 0:
			for _, p := range parts {
				addSet(p)
			}
		default:
			unresolved = append(unresolved, t)
		}
	}
	return sets, unresolved, nil
}

// score is how well the set's first item matched its term when resolved
// (Candidate.Match).
func (s *ConceptSet) score() float64 {
	if len(s.Items) == 0 {
		return 0
	}
	return s.itemMatch
}

// resolveParts resolves the word groups of a phrase, longest first,
// without overlaps, keeping the groups that match well.
func (r *Resolver) resolveParts(ctx context.Context, t Term) ([]ConceptSet, error) {
	words := strings.Fields(t.Text)
	if len(words) < 2 {
		return nil, nil
	}
	used := make([]bool, len(words))
	var out []ConceptSet
	for n := len(words) - 1; n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if slices.Contains(used[i:i+n], true) {
				continue
			}
			text := strings.Join(words[i:i+n], " ")
			if isFrame(strings.ToLower(words[i])) || isFrame(strings.ToLower(words[i+n-1])) {
				continue
			}
			s, ok, err := r.Resolve(ctx, Term{Text: text, Search: []string{text}, Domain: t.Domain})
			if err != nil {
				return nil, err
			}
			if ok && s.score() >= 0.75 {
				for k := i; k < i+n; k++ {
					used[k] = true
				}
				out = append(out, s)
			}
		}
	}
	return out, nil
}

// NewTerm makes the term for a phrase the user typed or a model named: a
// code when it looks like one; the expansions of a lay term or an
// abbreviation; for a phrase holding abbreviations ("CKD stage 3"), the
// phrase with them spelled out as a second search text. domain may be "".
func NewTerm(text, domain string) Term {
	text = strings.TrimSpace(text)
	t := Term{Text: text, Search: []string{text}, Domain: normalizeDomain(domain)}
	if IsCode(text) {
		t.Code = true
		return t
	}
	lower := strings.Join(strings.Fields(strings.ToLower(text)), " ")
	if e, ok := layTerms()[lower]; ok {
		t.Search = append(t.Search, e.terms...)
		if t.Domain == "" {
			t.Domain = e.domain
		}
		return t
	}
	fields := strings.Fields(text)
	expanded := make([]string, len(fields))
	changed := false
	for i, f := range fields {
		expanded[i] = f
		core := strings.Trim(f, ",.;:()")
		if e, ok := expandAbbreviation(core); ok {
			expanded[i] = e.terms[0]
			changed = true
			if t.Domain == "" {
				t.Domain = e.domain
			}
			if len(fields) == 1 {
				t.Search = append(t.Search, e.terms...)
				return t
			}
		}
	}
	if changed {
		t.Search = append(t.Search, strings.Join(expanded, " "))
	}
	return t
}
