package evidence

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/localllm"
)

// NotPresent is the value of a field that the study's text does not report
// (TrialMind's "NP").
const NotPresent = "NP"

// MaxSources is the most chunks a value may cite.
const MaxSources = 3

// DefaultTextBudget is the most characters of study text shown to the
// model in one extraction prompt when Extractor.TextBudget is 0: about
// 3,000 tokens, which leaves room for the instructions and the reply in an
// 8k context.
const DefaultTextBudget = 12000

// FieldSpec is a field the user wants extracted from every included study,
// described in plain language.
type FieldSpec struct {
	// Name is a short name ("median age", "number randomised").
	Name string `json:"name"`
	// Description says what to extract, in the user's words.
	Description string `json:"description"`
}

// FieldValue is one extracted field of one study.
type FieldValue struct {
	// Name is the field's name (FieldSpec.Name).
	Name string `json:"name"`
	// Value is the value as text, NotPresent when the text does not report it.
	Value string `json:"value"`
	// Sources are the numbers of the chunks (StudyText.Chunks) the value
	// was read from, at most MaxSources.
	Sources []int `json:"sources,omitempty"`
	// Unsupported flags a value with a number that occurs in none of its
	// cited chunks (or a value other than NotPresent that cites none).
	Unsupported bool `json:"unsupported,omitempty"`
	// Edited marks a value the user changed; a new model run keeps it.
	Edited bool `json:"edited,omitempty"`
}

// Extractor extracts fields and results from study texts with a chat
// model. It is safe for concurrent use.
type Extractor struct {
	// Chat is the model client.
	Chat localllm.Chatter
	// Model is the chat model's name.
	Model string
	// Options are the model options.
	Options localllm.Options
	// TextBudget is the most characters of study text shown in a prompt;
	// 0 means DefaultTextBudget. A longer text is cut down to the chunks
	// that share the most words with the fields (or the outcome and
	// cohort), which keep their numbers.
	TextBudget int
}

// SourceError is a model reply that cites chunks it was not shown (or
// more than MaxSources for one value), still wrong after one retry.
type SourceError struct {
	// ID is the study's record ID; Model the model that answered.
	ID, Model string
	// Field names the value with the bad citation (a field's name, or a
	// result's number such as `group "MWA" events`).
	Field string
	// Bad are the cited numbers that are not chunks shown to the model;
	// empty when the problem is the number of sources.
	Bad []int
	// Cited is the number of chunks the value cites.
	Cited int
	// Valid lists the chunk numbers shown ("1–12", "1–4, 9").
	Valid string
}

// Error says what was wrong and what to do.
func (e *SourceError) Error() string {
	if len(e.Bad) == 0 {
		return fmt.Sprintf("model %s cited %d passages for %s in %s, more than the %d allowed, also when asked again; "+
			"try again, or choose a larger model in Settings", e.Model, e.Cited, e.Field, e.ID, MaxSources)
	}
	what := "passages"
	if len(e.Bad) == 1 {
		what = "passage"
	}
	return fmt.Sprintf("model %s cited %s %s for %s in %s, but the passages shown to it are %s, also when asked again; "+
		"try again, or choose a larger model in Settings", e.Model, what, joinInts(e.Bad), e.Field, e.ID, e.Valid)
}

// sourceProblem is one value of a reply with a bad citation.
type sourceProblem struct {
	field string
	bad   []int
	cited int
}

// describe says what is wrong, for the retry message.
func (p sourceProblem) describe() string {
	if len(p.bad) == 0 {
		return fmt.Sprintf("%s cites %d passages (at most %d)", p.field, p.cited, MaxSources)
	}
	if len(p.bad) == 1 {
		return fmt.Sprintf("%s cites passage %d, which was not shown", p.field, p.bad[0])
	}
	return fmt.Sprintf("%s cites passages %s, which were not shown", p.field, joinInts(p.bad))
}

// sourceRetryMessage asks the model again after bad citations: %s are the
// problems ("; "-joined), then the valid passage numbers.
const sourceRetryMessage = "Your reply cites passages that cannot be used: %s. " +
	"Cite only the numbers of the passages shown in the study text (%s), at most %d per value. " +
	"Reply again with the whole JSON, corrected."

// checkSources dedups sources and reports the ones not in shown, or too
// many.
func checkSources(field string, sources []int, shown map[int]bool) ([]int, *sourceProblem) {
	var out, bad []int
	for _, s := range sources {
		if slices.Contains(out, s) {
			continue
		}
		out = append(out, s)
		if !shown[s] {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		return out, &sourceProblem{field: field, bad: bad, cited: len(out)}
	}
	if len(out) > MaxSources {
		return out, &sourceProblem{field: field, cited: len(out)}
	}
	return out, nil
}

// fieldsSchema is the schema of a field-extraction reply.
var fieldsSchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{"type":"object","properties":{
	"fields":{"type":"array","items":{"type":"object","properties":{
		"name":{"type":"string"},
		"value":{"type":"string"},
		"sources":{"type":"array","items":{"type":"integer"}}},
		"required":["name","value","sources"]}}},
	"required":["fields"]}`)
})

// ExtractFields asks the model for the fields in the study's text, in one
// JSON reply (TrialMind's design: the text as numbered passages, each
// field's value with up to MaxSources source passages, NotPresent when the
// text does not report it). A field the reply leaves out is NotPresent; a
// name that was not asked for is dropped. A reply citing passages that were
// not shown, or too many, is retried once with a message naming them and
// the valid numbers, then rejected with a *SourceError. Every value is
// checked against its cited passages (see Supported) and flagged
// Unsupported when a number is not found or it cites none. The values come
// in the order of fields; the caller merges them with the user's edits
// (MergeFields).
func (e *Extractor) ExtractFields(ctx context.Context, t StudyText, fields []FieldSpec) ([]FieldValue, error) {
	if err := ValidateFields(fields); err != nil {
		return nil, err
	}
	if len(t.Chunks) == 0 {
		return nil, fmt.Errorf("evidence: extracting fields from %s: the study has no text", t.ID)
	}
	var q strings.Builder
	for _, f := range fields {
		q.WriteString(f.Name + " " + f.Description + " ")
	}
	view := selectChunks(t, q.String(), e.budget())
	specs := make([]FieldSpec, len(fields))
	for i, f := range fields {
		specs[i] = FieldSpec{Name: cleanSpace(f.Name), Description: cleanSpace(f.Description)}
	}
	msgs, err := promptMessages("fields", struct {
		textView
		Fields     []FieldSpec
		MaxSources int
		NotPresent string
	}{view, specs, MaxSources, NotPresent})
	if err != nil {
		return nil, err
	}
	req := localllm.ChatRequest{Model: e.Model, Messages: msgs, Options: e.Options}
	var problems []sourceProblem
	for attempt := 0; attempt < 2; attempt++ {
		var reply struct {
			Fields []struct {
				Name    string `json:"name"`
				Value   string `json:"value"`
				Sources []int  `json:"sources"`
			} `json:"fields"`
		}
		res, err := e.Chat.ChatJSON(ctx, req, fieldsSchema(), &reply)
		if err != nil {
			return nil, fmt.Errorf("evidence: extracting fields from %s: %w", t.ID, err)
		}
		byName := map[string]int{}
		for i, f := range specs {
			byName[fieldKey(f.Name)] = i
		}
		out := make([]FieldValue, len(specs))
		got := make([]bool, len(specs))
		problems = problems[:0]
		for _, r := range reply.Fields {
			i, ok := byName[fieldKey(r.Name)]
			if !ok || got[i] {
				continue // not asked for, or repeated: the first counts
			}
			got[i] = true
			v := FieldValue{Name: specs[i].Name, Value: cleanSpace(r.Value)}
			if v.Value == "" || strings.EqualFold(v.Value, NotPresent) {
				out[i] = FieldValue{Name: v.Name, Value: NotPresent}
				continue
			}
			var p *sourceProblem
			if v.Sources, p = checkSources(strconv.Quote(v.Name), r.Sources, view.shown); p != nil {
				problems = append(problems, *p)
			}
			out[i] = CheckField(v, t)
		}
		for i := range out {
			if !got[i] {
				out[i] = FieldValue{Name: specs[i].Name, Value: NotPresent}
			}
		}
		if len(problems) == 0 {
			return out, nil
		}
		req.Messages = append(append([]localllm.Message(nil), req.Messages...),
			localllm.Message{Role: localllm.RoleAssistant, Content: res.Content},
			localllm.Message{Role: localllm.RoleUser, Content: sourceRetry(problems, view.valid)})
	}
	return nil, fmt.Errorf("evidence: extracting fields from %s: %w", t.ID, sourceErr(t.ID, e.Model, problems[0], view.valid))
}

// sourceRetry is the retry message for bad citations.
func sourceRetry(problems []sourceProblem, valid string) string {
	parts := make([]string, len(problems))
	for i, p := range problems {
		parts[i] = p.describe()
	}
	return fmt.Sprintf(sourceRetryMessage, strings.Join(parts, "; "), valid, MaxSources)
}

// sourceErr is the error for a bad citation left after the retry.
func sourceErr(id, model string, p sourceProblem, valid string) *SourceError {
	return &SourceError{ID: id, Model: model, Field: p.field, Bad: p.bad, Cited: p.cited, Valid: valid}
}

// fieldKey is the form in which field names are compared.
func fieldKey(s string) string { return strings.ToLower(cleanSpace(s)) }

// ValidateFields checks the fields to extract: at least one, each with a
// name, names distinct (ignoring case).
func ValidateFields(fields []FieldSpec) error {
	if len(fields) == 0 {
		return fmt.Errorf("evidence: there are no fields to extract; describe at least one")
	}
	seen := map[string]bool{}
	for i, f := range fields {
		k := fieldKey(f.Name)
		if k == "" {
			return fmt.Errorf("evidence: field %d has no name", i+1)
		}
		if seen[k] {
			return fmt.Errorf("evidence: field %d: the name %q is used twice; give every field its own name", i+1, cleanSpace(f.Name))
		}
		seen[k] = true
	}
	return nil
}

// CheckField returns v with Unsupported recomputed against the study's
// text: set when the value is not NotPresent and cites no chunk, or has a
// number that occurs in none of its cited chunks. Call it after the user
// edits a value or its sources.
func CheckField(v FieldValue, t StudyText) FieldValue {
	v.Unsupported = v.Value != NotPresent && (len(v.Sources) == 0 || !Supported(v.Value, t, v.Sources))
	return v
}

// MergeFields merges a new model run (fresh) into the earlier values of a
// study (old): the values come in fresh's order, and a value the user
// Edited in old replaces the fresh one of the same name (names compared
// ignoring case). Edited values whose field is not in fresh are kept after
// the others, so no edit is lost. Neither argument is modified.
func MergeFields(old, fresh []FieldValue) []FieldValue {
	edited := map[string]FieldValue{}
	var order []string
	for _, v := range old {
		if k := fieldKey(v.Name); v.Edited {
			if _, dup := edited[k]; !dup {
				order = append(order, k)
			}
			edited[k] = v
		}
	}
	out := make([]FieldValue, 0, len(fresh)+len(edited))
	used := map[string]bool{}
	for _, v := range fresh {
		k := fieldKey(v.Name)
		if e, ok := edited[k]; ok {
			v = e
			used[k] = true
		}
		v.Sources = slices.Clone(v.Sources)
		out = append(out, v)
	}
	for _, k := range order {
		if !used[k] {
			v := edited[k]
			v.Sources = slices.Clone(v.Sources)
			out = append(out, v)
		}
	}
	return out
}

// Supported reports whether every number in value occurs in the text of
// one of its cited chunks. Numbers are compared as numbers, whole: "12"
// matches "12.0" and "12%" but not "120" or "12.5"; thousands separators
// ("1,234"), a unicode minus and signs are ignored (a range "18-65" or "a
// fall of 3.2" has no sign to compare). A middle dot between digits is a
// decimal point (the Lancet's "45·2"), and so is a single comma that does
// not separate thousands ("45,2"); in the cited text such a number may
// also list its parts ("refs 12,13"), in the value it does not. A value
// without numbers, and NotPresent, are supported; a value with a number is
// not when it cites no existing chunk.
func Supported(value string, t StudyText, sources []int) bool {
	nums := numberTokens(value, false)
	if len(nums) == 0 {
		return true
	}
	have := map[string]bool{}
	for _, s := range sources {
		if c, ok := t.Chunk(s); ok {
			for _, n := range numberTokens(c.Section+" "+c.Text, true) {
				have[n] = true
			}
		}
	}
	for _, n := range nums {
		if !have[n] {
			return false
		}
	}
	return true
}

// Patterns of numberTokens: numberPattern finds runs of digits joined by
// points, middle dots or commas, or a bare decimal fraction (".5"); a run
// is a number with thousands separators (thousandsPattern), a number with
// a decimal comma (decimalCommaPattern), or else the plain or decimal
// numbers in it (plainNumberPattern).
var (
	numberPattern       = lazyre.New(`\d+(?:[.,·]\d+)*|\.\d+`)
	thousandsPattern    = lazyre.New(`^[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$`)
	decimalCommaPattern = lazyre.New(`^\d+,\d+$`)
	plainNumberPattern  = lazyre.New(`\d+(?:\.\d+)?`)
)

// numberTokens returns the canonical forms of the numbers in s (without
// sign, separators or trailing zeros), reading a middle dot between digits
// as a decimal point and a single comma that does not separate thousands
// as a decimal comma; with lists, such a number also gives its parts
// ("12,13" may list 12 and 13).
func numberTokens(s string, lists bool) []string {
	var out []string
	add := func(m string) {
		if f, err := strconv.ParseFloat(m, 64); err == nil {
			out = append(out, canonNumber(f))
		}
	}
	for _, m := range numberPattern().FindAllString(s, -1) {
		m = strings.ReplaceAll(m, "·", ".")
		switch {
		case strings.HasPrefix(m, "."):
			add(m)
			continue
		case thousandsPattern().MatchString(m):
			add(strings.ReplaceAll(m, ",", ""))
			continue
		case decimalCommaPattern().MatchString(m):
			add(strings.Replace(m, ",", ".", 1))
			if !lists {
				continue
			}
		}
		for _, p := range plainNumberPattern().FindAllString(m, -1) {
			add(p)
		}
	}
	return out
}

// canonNumber is the canonical text of a number's magnitude.
func canonNumber(f float64) string {
	return strconv.FormatFloat(math.Abs(f), 'f', -1, 64)
}

// textView is the part of a study's text shown to the model.
type textView struct {
	// Title is the study's title.
	Title string
	// Chunks are the chunks shown, in reading order, with their numbers.
	Chunks []Chunk
	// Total is the number of chunks of the study; Clipped is true when
	// some were left out.
	Total   int
	Clipped bool
	// shown are the numbers of Chunks; valid describes them ("1–12").
	shown map[int]bool
	valid string
}

// budget is the extractor's text budget in characters.
func (e *Extractor) budget() int {
	if e.TextBudget > 0 {
		return e.TextBudget
	}
	return DefaultTextBudget
}

// selectChunks returns the chunks to show: all of them when their text
// fits the budget, else chunk 1 (the title, or the text's start) and the
// chunks sharing the most words with query, as many as fit, in reading
// order. At least one chunk is shown.
func selectChunks(t StudyText, query string, budget int) textView {
	v := textView{Title: cleanSpace(t.Title), Total: len(t.Chunks), shown: map[int]bool{}}
	cost := func(c Chunk) int { return len([]rune(c.Text)) + len([]rune(c.Section)) + 8 }
	total := 0
	for _, c := range t.Chunks {
		total += cost(c)
	}
	if total <= budget {
		v.Chunks = t.Chunks
	} else {
		q := map[string]bool{}
		for _, w := range rankTokens(query) {
			q[w] = true
		}
		type scored struct {
			i     int
			score int
		}
		order := make([]scored, len(t.Chunks))
		for i, c := range t.Chunks {
			seen := map[string]bool{}
			for _, w := range rankTokens(c.Section + " " + c.Text) {
				if q[w] && !seen[w] {
					seen[w] = true
					order[i].score++
				}
			}
			order[i].i = i
			if i == 0 {
				order[i].score = math.MaxInt // the title first
			}
		}
		slices.SortStableFunc(order, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
		left := budget
		var keep []int
		for _, s := range order {
			if c := cost(t.Chunks[s.i]); c <= left || len(keep) == 0 {
				keep = append(keep, s.i)
				left -= c
			}
		}
		slices.Sort(keep)
		for _, i := range keep {
			v.Chunks = append(v.Chunks, t.Chunks[i])
		}
		v.Clipped = len(keep) < len(t.Chunks)
	}
	nums := make([]int, len(v.Chunks))
	for i, c := range v.Chunks {
		v.shown[c.N] = true
		nums[i] = c.N
	}
	v.valid = numberRanges(nums)
	return v
}

// numberRanges writes sorted numbers as ranges: "1–5, 8, 10–12".
func numberRanges(ns []int) string {
	var parts []string
	for i := 0; i < len(ns); {
		j := i
		for j+1 < len(ns) && ns[j+1] == ns[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", ns[i], ns[j]))
		} else {
			parts = append(parts, strconv.Itoa(ns[i]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// joinInts writes numbers separated by ", ".
func joinInts(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ", ")
}
