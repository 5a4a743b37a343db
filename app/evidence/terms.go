package evidence

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/clinsight/clinsight/localllm"
)

// SearchTerms are the search terms of a review, per PICO role: the
// condition (population), the treatment (intervention), the comparator
// (comparison) and the outcome. The user may edit them; Query turns them
// into a boolean query.
//
// By default the query joins the population AND the intervention only, as
// the Cochrane Handbook (chapter 4.4.2) advises: the comparison and the
// outcomes are often not named in titles and abstracts, so requiring them
// loses studies. The user may require the comparator terms
// (JoinComparators) and the outcome terms (JoinOutcomes) too.
type SearchTerms struct {
	// Conditions are the terms for the condition or population.
	Conditions []string `json:"conditions"`
	// Treatments are the terms for the intervention. Projects saved before
	// the comparator role hold the comparator's terms here too (ORed with
	// the intervention's, as the query then was); they load unchanged.
	Treatments []string `json:"treatments"`
	// Comparators are the terms for the comparison (the control
	// treatment). They join the query only with JoinComparators, as a
	// group of their own (ANDed, not ORed with the intervention).
	Comparators []string `json:"comparators,omitempty"`
	// Outcomes are the terms for the outcome. They join the query only
	// with JoinOutcomes.
	Outcomes []string `json:"outcomes"`
	// JoinComparators, the user's choice, ANDs the comparator terms to the
	// query.
	JoinComparators bool `json:"join_comparators,omitempty"`
	// JoinOutcomes, the user's choice, ANDs the outcome terms to the query.
	JoinOutcomes bool `json:"join_outcomes,omitempty"`
}

// TermSteps is the model's reply to the search-term prompt: TrialMind's
// three steps, each with terms per role.
type TermSteps struct {
	// Primary are the primary terms read from the PICO (step 1).
	Primary SearchTerms `json:"primary"`
	// Core are the primary terms filtered to the core (step 2).
	Core SearchTerms `json:"core"`
	// Expanded are the core terms with synonyms, abbreviations and split
	// compounds (step 3).
	Expanded SearchTerms `json:"expanded"`
}

// termListsSchema is the schema of one SearchTerms object. The comparators
// are not required: a reply without them (a question without a
// comparison, or a model that leaves them out) is valid.
const termListsSchema = `{"type":"object","properties":{
	"conditions":{"type":"array","items":{"type":"string"}},
	"treatments":{"type":"array","items":{"type":"string"}},
	"comparators":{"type":"array","items":{"type":"string"}},
	"outcomes":{"type":"array","items":{"type":"string"}}},
	"required":["conditions","treatments","outcomes"]}`

// termsSchema is the schema of the search-term reply (TermSteps).
var termsSchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{"type":"object","properties":{
	"primary":` + termListsSchema + `,
	"core":` + termListsSchema + `,
	"expanded":` + termListsSchema + `},
	"required":["primary","core","expanded"]}`)
})

// TermOptions tunes GenerateTerms.
type TermOptions struct {
	// References are texts of studies found by an initial search (title
	// and abstract), shown to the model as examples of the literature's
	// vocabulary; at most MaxReferences are used.
	References []string
	// Options are the model options (temperature, context window ...).
	Options localllm.Options
}

// MaxReferences bounds the reference abstracts given to GenerateTerms.
const MaxReferences = 5

// maxReferenceChars clips each reference abstract in the prompt.
const maxReferenceChars = 1500

// GenerateTerms asks the model for search terms from a PICO in one JSON
// reply (TrialMind's design: primary terms per condition, treatment and
// comparator and outcome, filtered to the core, expanded with synonyms, abbreviations and
// split compounds). It returns the three steps; TermSteps.Final gives the
// search terms (the core terms merged with the expanded ones), which the
// user may edit before SearchTerms.Query builds the boolean query. An
// invalid reply is retried by the client, telling the model what was
// wrong, and then reported as a localllm BadReply error.
func GenerateTerms(ctx context.Context, chat localllm.Chatter, model string, p PICO, opts TermOptions) (TermSteps, error) {
	if err := p.Validate(); err != nil {
		return TermSteps{}, fmt.Errorf("evidence: search terms: %w", err)
	}
	refs := opts.References
	if len(refs) > MaxReferences {
		refs = refs[:MaxReferences]
	}
	clipped := make([]string, len(refs))
	for i, r := range refs {
		clipped[i] = clipRunes(cleanSpace(r), maxReferenceChars)
	}
	msgs, err := promptMessages("terms", struct {
		PICO       PICO
		References []string
	}{p, clipped})
	if err != nil {
		return TermSteps{}, err
	}
	var steps TermSteps
	if _, err := chat.ChatJSON(ctx, localllm.ChatRequest{Model: model, Messages: msgs, Options: opts.Options}, termsSchema(), &steps); err != nil {
		return TermSteps{}, fmt.Errorf("evidence: generating search terms: %w", err)
	}
	return steps, nil
}

// Final returns the search terms: the core terms followed by the expanded
// ones, cleaned (see CleanTerm) and without duplicates (ignoring case). A
// term the model lists both as a treatment and as a comparator is kept as
// a comparator only, so that the user's choice whether the comparison
// joins the query holds for it.
func (s TermSteps) Final() SearchTerms {
	comparators := mergeTerms(s.Core.Comparators, s.Expanded.Comparators)
	isComparator := make(map[string]bool, len(comparators))
	for _, c := range comparators {
		isComparator[strings.ToLower(c)] = true
	}
	var treatments []string
	for _, t := range mergeTerms(s.Core.Treatments, s.Expanded.Treatments) {
		if !isComparator[strings.ToLower(t)] {
			treatments = append(treatments, t)
		}
	}
	if treatments == nil {
		treatments = []string{}
	}
	if len(comparators) == 0 {
		comparators = nil // as a project saved without them
	}
	return SearchTerms{
		Conditions:  mergeTerms(s.Core.Conditions, s.Expanded.Conditions),
		Treatments:  treatments,
		Comparators: comparators,
		Outcomes:    mergeTerms(s.Core.Outcomes, s.Expanded.Outcomes),
	}
}

// mergeTerms cleans the terms of the lists and drops empty ones and
// duplicates (ignoring case), keeping the first spelling.
func mergeTerms(lists ...[]string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range lists {
		for _, t := range l {
			c := CleanTerm(t)
			k := strings.ToLower(c)
			if c == "" || seen[k] {
				continue
			}
			seen[k] = true
			out = append(out, c)
		}
	}
	return out
}

// CleanTerm makes a term safe for a boolean query: characters with a
// meaning in the query syntax (quotes, parentheses, brackets, *) become
// spaces, white space is collapsed, and a term without letters or digits
// becomes "".
func CleanTerm(t string) string {
	t = cleanSpace(strings.Map(func(r rune) rune {
		if strings.ContainsRune(`"“”()[]*`, r) || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, t))
	if !strings.ContainsFunc(t, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return ""
	}
	return t
}

// ErrNoTerms is returned by SearchTerms.Query when every list is empty.
var ErrNoTerms = errors.New("evidence: there are no search terms: give at least one condition or treatment term")

// Query builds the boolean query: the terms of each role joined by OR
// (parenthesised when more than one), the roles joined by AND in the order
// conditions, treatments, comparators (only with JoinComparators),
// outcomes (only with JoinOutcomes); empty roles are left out. Terms are
// cleaned (CleanTerm) and de-duplicated; a term of several words, or one
// spelled like an operator, is quoted as a phrase. The query is checked
// with ParseQuery.
func (s SearchTerms) Query() (string, error) {
	var groups []string
	roles := [][]string{s.Conditions, s.Treatments}
	if s.JoinComparators {
		roles = append(roles, s.Comparators)
	}
	if s.JoinOutcomes {
		roles = append(roles, s.Outcomes)
	}
	for _, l := range roles {
		terms := mergeTerms(l)
		if len(terms) == 0 {
			continue
		}
		for i, t := range terms {
			terms[i] = quoteTerm(t)
		}
		g := strings.Join(terms, " OR ")
		if len(terms) > 1 {
			g = "(" + g + ")"
		}
		groups = append(groups, g)
	}
	if len(groups) == 0 {
		return "", ErrNoTerms
	}
	q := strings.Join(groups, " AND ")
	if _, err := ParseQuery(q); err != nil {
		return "", fmt.Errorf("evidence: the search terms give an invalid query: %w", err)
	}
	return q, nil
}

// quoteTerm quotes a cleaned term when it has several words or reads as an
// operator.
func quoteTerm(t string) string {
	switch strings.ToUpper(t) {
	case "AND", "OR", "NOT":
		return `"` + t + `"`
	}
	if strings.ContainsFunc(t, unicode.IsSpace) {
		return `"` + t + `"`
	}
	return t
}

// clipRunes shortens s to at most n runes, marking the cut with "…".
func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
