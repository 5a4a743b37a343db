package cohort

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/localllm"
)

// ConceptResolver turns the clinical terms of a question into concept sets
// on an OMOP CDM source; *omop.Resolver implements it. Config.Concepts is
// set for OMOP sources only.
type ConceptResolver interface {
	// ResolveTerms resolves terms to concept sets.
	ResolveTerms(ctx context.Context, terms []omop.Term) (sets []omop.ConceptSet, unresolved []omop.Term, err error)
	// SearchHits returns the best standard concepts for a term with the
	// persons each finds, hiding counts under k.
	SearchHits(ctx context.Context, t omop.Term, limit, k int) ([]omop.Hit, error)
	// Concept reads one concept.
	Concept(ctx context.Context, id int64) (omop.Concept, bool, error)
	// Refresh recomputes a set's ids and counts after an edit.
	Refresh(ctx context.Context, set *omop.ConceptSet) error
}

// conceptTokens bounds the reply of the concept-term call.
const conceptTokens = 300

// maxPromptIDs is how many concept ids of one set the generation prompt
// lists; a larger set built from concept_ancestor is given as a subquery.
const maxPromptIDs = 300

// conceptsSchema is the JSON schema of the concept-term reply.
const conceptsSchema = `{"type":"object","properties":{"terms":{"type":"array","items":{"type":"object","properties":{` +
	`"text":{"type":"string"},` +
	`"domain":{"type":"string","enum":["Condition","Drug","Measurement","Procedure","Observation","Device",""]}},` +
	`"required":["text","domain"],"additionalProperties":false}}},"required":["terms"],"additionalProperties":false}`

// Where the terms of a question came from (Answer.ConceptsFrom).
const (
	// ConceptsFromModel: the model listed the terms.
	ConceptsFromModel = "model"
	// ConceptsFromExtractor: the deterministic extractor found them (no
	// model, or the model's reply was unusable).
	ConceptsFromExtractor = "extractor"
	// ConceptsFromUser: the user's edited concept sets were used as given.
	ConceptsFromUser = "user"
)

// resolveConcepts fills the answer's concept sets: the user's edited sets
// when the request carries them, else the question's terms (from the
// model, or the deterministic extractor when there is no model or its
// reply is unusable) resolved in the vocabulary.
func (r *run) resolveConcepts(ctx context.Context, req Request) error {
	p, ans := r.p, r.ans
	if req.ConceptSets != nil {
		ans.ConceptSets, ans.ConceptsFrom = slices.Clone(req.ConceptSets), ConceptsFromUser
		omop.HideSmallPersons(ans.ConceptSets, p.cfg.MinPersons)
		r.emit(Event{Kind: EventConcepts, ConceptSets: ans.ConceptSets})
		return nil
	}
	var terms []omop.Term
	from := ConceptsFromExtractor
	if p.cfg.Chat != nil {
		var out struct {
			Terms []struct {
				Text   string `json:"text"`
				Domain string `json:"domain"`
			} `json:"terms"`
		}
		var res localllm.ChatResult
		var err error
		r.timed("concepts", func() {
			t := time.Now()
			res, err = p.cfg.Chat.ChatJSON(ctx, localllm.ChatRequest{Model: p.cfg.SQLModel, Options: p.options(conceptTokens),
				Messages: []localllm.Message{{Role: localllm.RoleSystem, Content: render("concepts.tmpl", nil)}, {Role: localllm.RoleUser, Content: ans.Question}}},
				p.conceptSchema, &out)
			r.call("concepts", p.cfg.SQLModel, res, time.Since(t), err)
		})
		switch {
		case err == nil:
			from = ConceptsFromModel
			for _, t := range out.Terms {
				if text := strings.TrimSpace(t.Text); text != "" && len(terms) < 12 {
					terms = append(terms, omop.NewTerm(text, t.Domain))
				}
			}
		case localllm.KindOf(err) == localllm.BadReply || localllm.KindOf(err) == localllm.ContextOverflow:
			// Fall back to the extractor below.
		case localllm.KindOf(err) == localllm.ServerDown || localllm.KindOf(err) == localllm.ModelMissing:
			// No model to write SQL either: the templates answer.
			r.modelDown = localllm.MessageOf(err)
		default:
			return err
		}
	}
	if from == ConceptsFromExtractor {
		terms = omop.ExtractTerms(ans.Question)
	}
	var err error
	r.timed("resolve concepts", func() {
		ans.ConceptSets, ans.UnresolvedTerms, err = p.cfg.Concepts.ResolveTerms(ctx, terms)
	})
	if err != nil {
		return err
	}
	ans.ConceptsFrom = from
	if len(req.ExcludeConcepts) > 0 {
		if ans.ConceptSets, err = p.ExcludeConcepts(ctx, ans.ConceptSets, req.ExcludeConcepts); err != nil {
			return err
		}
	}
	omop.HideSmallPersons(ans.ConceptSets, p.cfg.MinPersons)
	r.emit(Event{Kind: EventConcepts, ConceptSets: ans.ConceptSets})
	return nil
}

// ErrNotOMOP is returned by the concept-set methods of a pipeline whose
// source is not an OMOP CDM database.
var ErrNotOMOP = errors.New("this data source is not an OMOP CDM database: it has no concept sets")

// OMOP reports whether the pipeline's source is an OMOP CDM database with
// concept sets.
func (p *Pipeline) OMOP() bool { return p.cfg.Concepts != nil }

// SearchConcepts looks a term up in the source's vocabulary (to add a
// concept to a set): the best standard concepts with the persons each
// finds (hidden under the source's minimum cell size), at most limit;
// domain may be "".
func (p *Pipeline) SearchConcepts(ctx context.Context, text, domain string, limit int) ([]omop.Hit, error) {
	if p.cfg.Concepts == nil {
		return nil, ErrNotOMOP
	}
	return p.cfg.Concepts.SearchHits(ctx, omop.NewTerm(text, domain), limit, p.cfg.MinPersons)
}

// AddConcept adds a concept (with its descendants) to a set and
// recomputes the set.
func (p *Pipeline) AddConcept(ctx context.Context, set *omop.ConceptSet, id int64) error {
	if p.cfg.Concepts == nil {
		return ErrNotOMOP
	}
	c, ok, err := p.cfg.Concepts.Concept(ctx, id)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("there is no concept %d in this vocabulary", id)
	}
	set.Add(c)
	if err := p.cfg.Concepts.Refresh(ctx, set); err != nil {
		return err
	}
	one := []omop.ConceptSet{*set}
	one[0].PersonsUnder = 0
	omop.HideSmallPersons(one, p.cfg.MinPersons)
	*set = one[0]
	return nil
}

// ExcludeConcepts returns copies of the sets with each given concept
// removed: an item is dropped, a descendant is excluded (as ATLAS does);
// a concept in no set is an error naming it.
func (p *Pipeline) ExcludeConcepts(ctx context.Context, sets []omop.ConceptSet, ids []int64) ([]omop.ConceptSet, error) {
	if p.cfg.Concepts == nil {
		return nil, ErrNotOMOP
	}
	out := slices.Clone(sets)
	for _, id := range ids {
		found := false
		for i := range out {
			s := &out[i]
			if !slices.Contains(s.IDs, id) && !slices.ContainsFunc(s.Items, func(it omop.SetItem) bool { return it.ID == id }) {
				continue
			}
			found = true
			s.Items = slices.Clone(s.Items)
			if !s.Remove(id) {
				c, ok, err := p.cfg.Concepts.Concept(ctx, id)
				if err != nil {
					return nil, err
				}
				if !ok {
					c = omop.Concept{ID: id, Domain: s.Domain}
				}
				s.Items = append(s.Items, omop.SetItem{Concept: c, Excluded: true})
			}
			if err := p.cfg.Concepts.Refresh(ctx, s); err != nil {
				return nil, err
			}
			if len(s.IDs) == 0 {
				return nil, fmt.Errorf("removing concept %d leaves the concept set %q empty: rephrase the question without it instead", id, s.Name)
			}
		}
		if !found {
			return nil, fmt.Errorf("concept %d is in none of the question's concept sets", id)
		}
	}
	return out, nil
}

// conceptSetPrompt is a concept set as the generation prompt lists it.
type conceptSetPrompt struct {
	// Name is the set's name; Domain its OMOP domain.
	Name, Domain string
	// Filter is the condition to write, for example
	// "condition_concept_id IN (201826, 443732)".
	Filter string
	// Table is the event table the domain's events are in.
	Table string
	// Concepts names the set's items ("201826 Type 2 diabetes mellitus").
	Concepts string
}

// conceptPrompts renders concept sets for generate.tmpl.
func conceptPrompts(sets []omop.ConceptSet) []conceptSetPrompt {
	var out []conceptSetPrompt
	for _, s := range sets {
		table, column, _, ok := omop.EventTable(s.Domain)
		if !ok || len(s.IDs) == 0 {
			continue
		}
		var names, items []string
		for _, it := range s.Items {
			if it.Excluded {
				names = append(names, fmt.Sprintf("not %d %s", it.ID, it.Name))
				continue
			}
			names = append(names, fmt.Sprintf("%d %s", it.ID, it.Name))
			items = append(items, fmt.Sprint(it.ID))
		}
		filter := column + " IN (" + joinIDs(s.IDs) + ")"
		if len(s.IDs) > maxPromptIDs && s.DescendantSource == "concept_ancestor" {
			filter = column + " IN (SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id IN (" + strings.Join(items, ", ") + "))"
		}
		desc := ""
		if s.Descendants > 0 {
			desc = fmt.Sprintf(" and %d descendants", s.Descendants)
		}
		out = append(out, conceptSetPrompt{Name: s.Name, Domain: s.Domain, Filter: filter, Table: table,
			Concepts: strings.Join(names, "; ") + desc})
	}
	return out
}

// joinIDs writes ids as an SQL list.
func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// askTemplate answers a question on an OMOP source without a model: its
// terms are found by the deterministic extractor and resolved, and a
// template-shaped question (a count of persons with the concepts, by
// gender or by age band) runs the template's query. Other questions fail
// with the reason.
func (r *run) askTemplate(ctx context.Context, req Request) (*Answer, error) {
	if err := r.resolveConcepts(ctx, req); err != nil {
		return r.fail(err)
	}
	return r.answerByTemplate(ctx, "no model is configured")
}

// answerByTemplate answers from the resolved concept sets with a
// template; why says why no model is used.
func (r *run) answerByTemplate(ctx context.Context, why string) (*Answer, error) {
	p, ans := r.p, r.ans
	tmpl, ok, reason := omop.MatchTemplate(ans.Question, ans.ConceptSets, ans.UnresolvedTerms)
	if !ok {
		return r.stop(StatusFailed, "No model is available ("+strings.TrimSuffix(why, ".")+"), and the question does not fit the questions Clinsight answers without one "+
			"(how many patients have given conditions, drugs or measurements, optionally by gender or by age band): "+reason+"."), nil
	}
	ans.Template = string(tmpl.Kind)
	at := Attempt{Number: 1, Source: "template", SQL: tmpl.SQL}
	start := time.Now()
	var res *datasets.Result
	var err error
	r.timed("validate", func() { err = p.cfg.Runner.Check(ctx, tmpl.SQL) })
	if err == nil {
		r.timed("execute", func() { res, err = p.cfg.Runner.Query(ctx, tmpl.SQL) })
	}
	at.Duration = time.Since(start)
	if err != nil {
		if ctx.Err() != nil {
			return r.fail(ctx.Err())
		}
		at.Stage, at.Error = "execute", errorText(err)
		ans.Attempts = append(ans.Attempts, at)
		return r.stop(StatusFailed, "The template query failed: "+at.Error), nil
	}
	shown, err := p.disclose(ctx, tmpl.SQL, res)
	if err != nil {
		if ctx.Err() != nil {
			return r.fail(ctx.Err())
		}
		return r.stop(StatusRefused, errorText(err)), nil
	}
	at.Stage, at.Rows = "ok", len(res.Rows)
	ans.Attempts = append(ans.Attempts, at)
	r.emit(Event{Kind: EventAttempt, Attempt: &ans.Attempts[len(ans.Attempts)-1]})
	ans.SQL, ans.Result, ans.Disclosure, ans.Category = tmpl.SQL, shown.Shown, shown.Info, Answerable
	r.emit(Event{Kind: EventResult, Result: ans.Result, SQL: ans.SQL})
	var names []string
	for _, s := range ans.ConceptSets {
		names = append(names, fmt.Sprintf("%q", s.Name))
	}
	ans.Message = fmt.Sprintf("Answered without a model (%s), by the template %q over the concept sets %s.", strings.TrimSuffix(why, "."), tmpl.Kind, strings.Join(names, ", "))
	ans.Status = StatusAnswered
	return ans, nil
}

// Criterion is one line of a cohort's readable definition.
type Criterion struct {
	// Section is "entry event" or "inclusion criterion".
	Section string
	// Set names the concept set the line is about.
	Set string
	// Text says the criterion in words: "first condition_occurrence
	// record of concept set "type 2 diabetes"".
	Text string
}

// DefinitionCriteria describes a cohort over concept sets as ATLAS does:
// the entry event is the first event of the first set, and each other set
// is an inclusion criterion (at least one event of it), one per set.
func DefinitionCriteria(sets []omop.ConceptSet) []Criterion {
	out := make([]Criterion, 0, len(sets))
	for i, s := range sets {
		table, _, _, _ := omop.EventTable(s.Domain)
		c := Criterion{Section: "inclusion criterion", Set: s.Name, Text: fmt.Sprintf("has at least one %s record of concept set %q", table, s.Name)}
		if i == 0 {
			c.Section, c.Text = "entry event", fmt.Sprintf("first %s record of concept set %q", table, s.Name)
		}
		out = append(out, c)
	}
	return out
}

// DefinitionRows describes an answer's cohort as a readable definition for
// the Definition sheet: the entry event (the first event of the first
// concept set), the inclusion criteria (an event of each other set) and
// every concept of every set. Columns: section, concept set, concept id,
// concept name, vocabulary, code, domain, descendants, excluded, persons.
func DefinitionRows(ans *Answer) (columns []string, rows [][]any) {
	columns = []string{"section", "concept set", "concept id", "concept name", "vocabulary", "code", "domain", "include descendants", "excluded", "persons in data"}
	for i, c := range DefinitionCriteria(ans.ConceptSets) {
		s := ans.ConceptSets[i]
		rows = append(rows, []any{c.Section, s.Name, nil, c.Text, nil, nil, s.Domain, nil, nil, personsCell(s)})
	}
	for _, s := range ans.ConceptSets {
		for _, it := range s.Items {
			rows = append(rows, []any{"concept set", s.Name, it.ID, it.Name, it.Vocabulary, it.Code, it.Domain, it.IncludeDescendants, it.Excluded, nil})
		}
		if s.Descendants > 0 {
			rows = append(rows, []any{"concept set", s.Name, nil, fmt.Sprintf("%d descendant concepts (from %s)", s.Descendants, s.DescendantSource), nil, nil, s.Domain, nil, nil, personsCell(s)})
		}
	}
	return columns, rows
}

// ConceptSetsPath is the file the concept sets of a cohort exported to
// the workbook at path are written to: "cohort.xlsx" gives
// "cohort.concept-sets.json".
func ConceptSetsPath(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".concept-sets.json"
}

// WriteConceptSets writes concept sets as ATLAS JSON (omop.ATLASJSON) to
// path, atomically.
func WriteConceptSets(path string, sets []omop.ConceptSet) error {
	b, err := omop.ATLASJSON(sets)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write the concept sets: %w", err)
	}
	return nil
}

// MergeConceptTables adapts a retrieval on an OMOP source to the
// question's concept sets: the concept table (the dictionary of every
// *_concept_id) and the event table of each set's domain come first, then
// the other retrieved tables, k in all; Clinsight's concept search index
// is never offered to the model; and stored values found in the
// vocabulary tables (concept names) are dropped, since the SQL must filter
// by the sets' ids, not by names.
func MergeConceptTables(ret *Retrieval, cat *datasets.Catalog, sets []omop.ConceptSet, k int) {
	type first struct{ table, why string }
	var firsts []first
	add := func(table, why string) {
		t, ok := cat.Table(table)
		if !ok {
			return
		}
		for i := range firsts {
			if firsts[i].table == t.Name {
				firsts[i].why += "; " + why
				return
			}
		}
		firsts = append(firsts, first{t.Name, why})
	}
	add("concept", "the OMOP vocabulary (names of concept ids)")
	for _, s := range sets {
		if table, _, _, ok := omop.EventTable(s.Domain); ok {
			add(table, fmt.Sprintf("concept set %q (%s)", s.Name, s.Domain))
		}
	}
	out := make([]TableScore, 0, k)
	taken := map[string]bool{}
	for _, f := range firsts {
		ts := TableScore{Table: f.table, Score: ret.Best}
		for _, old := range ret.Tables {
			if strings.EqualFold(old.Table, f.table) {
				ts = old
			}
		}
		ts.Evidence = append(slices.Clone(ts.Evidence), f.why)
		out = append(out, ts)
		taken[strings.ToLower(f.table)] = true
	}
	for _, t := range ret.Tables {
		if len(out) >= k {
			break
		}
		if taken[strings.ToLower(t.Table)] || strings.EqualFold(t.Table, datasets.OMOPConceptIndex) {
			continue
		}
		out = append(out, t)
	}
	if len(out) > k && k >= len(firsts) {
		out = out[:k]
	}
	ret.Tables = out
	vocab := map[string]bool{"concept": true, "concept_synonym": true, "concept_relationship": true, "concept_ancestor": true,
		"vocabulary": true, "domain": true, "concept_class": true, strings.ToLower(datasets.OMOPConceptIndex): true}
	ret.Values = slices.DeleteFunc(slices.Clone(ret.Values), func(v ValueHit) bool { return vocab[strings.ToLower(v.Table)] })
}

// personsCell is a concept set's person count for the Definition sheet:
// "<k" when hidden by small-cell suppression, nothing when not counted.
func personsCell(s omop.ConceptSet) any {
	switch {
	case s.PersonsUnder > 0:
		return fmt.Sprintf("<%d", s.PersonsUnder)
	case s.Persons < 0:
		return nil
	}
	return s.Persons
}
