package trials

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/textsearch"
	"github.com/clinsight/clinsight/localllm"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

// prompts are the pipeline's prompt templates (prompts/*.tmpl), each
// defining a "system" and a "user" template.
// They are parsed on first use, not at program start.
var prompts = sync.OnceValue(func() map[string]*template.Template {
	return map[string]*template.Template{
		"concepts":    mustPrompt("concepts"),
		"eligibility": mustPrompt("eligibility"),
	}
})

func mustPrompt(name string) *template.Template {
	return template.Must(template.New(name).Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).
		ParseFS(promptFS, "prompts/"+name+".tmpl"))
}

// renderPrompt executes a template's system and user parts.
func renderPrompt(name string, data any) ([]localllm.Message, error) {
	t := prompts()[name]
	var sys, user bytes.Buffer
	if err := t.ExecuteTemplate(&sys, "system", data); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", name, err)
	}
	if err := t.ExecuteTemplate(&user, "user", data); err != nil {
		return nil, fmt.Errorf("prompt %s: %w", name, err)
	}
	return []localllm.Message{
		{Role: localllm.RoleSystem, Content: strings.TrimSpace(sys.String())},
		{Role: localllm.RoleUser, Content: strings.TrimSpace(user.String())},
	}, nil
}

// conceptSchema is the reply of the concept extraction.
var conceptSchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{
  "type": "object",
  "properties": {
    "age": {"type": ["number", "null"]},
    "sex": {"type": "string", "enum": ["female", "male", "unknown"]},
    "concepts": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "text": {"type": "string"},
          "kind": {"type": "string", "enum": ["diagnosis", "condition", "procedure", "treatment", "finding"]},
          "weight": {"type": "number"},
          "negated": {"type": "boolean"}
        },
        "required": ["text", "kind", "weight", "negated"],
        "additionalProperties": false
      }
    }
  },
  "required": ["age", "sex", "concepts"],
  "additionalProperties": false
}`)
})

type conceptReply struct {
	Age      *float64 `json:"age"`
	Sex      string   `json:"sex"`
	Concepts []struct {
		Text    string  `json:"text"`
		Kind    string  `json:"kind"`
		Weight  float64 `json:"weight"`
		Negated bool    `json:"negated"`
	} `json:"concepts"`
}

// modelOptions are the deterministic model options of every call.
func (p *Pipeline) modelOptions(numPredict int) localllm.Options {
	temp, seed := 0.0, 42
	return localllm.Options{Temperature: &temp, Seed: &seed, NumCtx: p.opts.NumCtx, NumPredict: numPredict}
}

// modelConcepts asks the model for weighted concepts (schema-validated
// JSON; the client retries an invalid reply). Weights are clamped to
// [0, 1]; when the model gives none above 0, every concept weighs 1. The
// age and sex the model misses are read from the text deterministically.
func (p *Pipeline) modelConcepts(ctx context.Context, patient string) (*Query, localllm.Usage, error) {
	msgs, err := renderPrompt("concepts", struct{ Patient string }{patient})
	if err != nil {
		return nil, localllm.Usage{}, err
	}
	var reply conceptReply
	res, err := p.chat.ChatJSON(ctx, localllm.ChatRequest{Model: p.model, Messages: msgs, Options: p.modelOptions(1024)}, conceptSchema(), &reply)
	if err != nil {
		return nil, res.Usage, err
	}
	q := &Query{Patient: patient, Source: "model " + p.model}
	q.Age, q.HasAge, q.Sex = PatientDemographics(patient)
	if reply.Age != nil && *reply.Age >= 0 && *reply.Age <= 120 {
		q.Age, q.HasAge = *reply.Age, true
	}
	if s := ParseSex(reply.Sex); s == SexFemale || s == SexMale {
		q.Sex = s
	}
	seen := map[string]bool{}
	positive := false
	for _, c := range reply.Concepts {
		text := strings.TrimSpace(c.Text)
		key := strings.ToLower(text)
		if text == "" || seen[key] || len(textsearch.Tokens(text)) == 0 {
			continue
		}
		seen[key] = true
		w := c.Weight
		if math.IsNaN(w) || w < 0 {
			w = 0
		}
		w = min(w, 1)
		if c.Negated {
			w = 0
		}
		positive = positive || w > 0
		q.Concepts = append(q.Concepts, Concept{Text: text, Kind: ConceptKind(c.Kind), Weight: w, Negated: c.Negated})
	}
	if !positive {
		for i := range q.Concepts {
			if !q.Concepts[i].Negated {
				q.Concepts[i].Weight = 1
			}
		}
	}
	slices.SortStableFunc(q.Concepts, func(a, b Concept) int { return cmp.Compare(b.Weight, a.Weight) })
	if err := q.Validate(); err != nil {
		return nil, res.Usage, &localllm.Error{Kind: localllm.BadReply, Message: "the model found no concept to search for", Err: err}
	}
	return q, res.Usage, nil
}

// eligibilitySchema is the reply of the eligibility step.
var eligibilitySchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{
  "type": "object",
  "properties": {
    "criteria": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "id": {"type": "string"},
          "verdict": {"type": "string", "enum": ["included", "not included", "excluded", "not excluded", "not enough information"]},
          "evidence_sentence": {"type": "integer"},
          "explanation": {"type": "string"}
        },
        "required": ["id", "verdict", "evidence_sentence", "explanation"],
        "additionalProperties": false
      }
    }
  },
  "required": ["criteria"],
  "additionalProperties": false
}`)
})

type eligibilityReply struct {
	Criteria []struct {
		ID          string `json:"id"`
		Verdict     string `json:"verdict"`
		Evidence    int    `json:"evidence_sentence"`
		Explanation string `json:"explanation"`
	} `json:"criteria"`
}

// promptCriterion is a criterion as the eligibility prompt shows it.
type promptCriterion struct {
	ID, Kind, Text string
}

func criterionID(c Criterion) string {
	if c.Kind == Exclusion {
		return fmt.Sprintf("E%d", c.Index)
	}
	return fmt.Sprintf("I%d", c.Index)
}

// estimateTokens is a conservative token count for English text (about
// 3.5 characters per token for clinical text, rounded up).
func estimateTokens(s string) int { return utf8.RuneCountInString(s)*2/7 + 1 }

// Token budget of an eligibility call: the reply needs about this much per
// criterion (id, verdict, sentence number, a short explanation).
const (
	replyTokensPerCriterion = 80
	promptOverheadTokens    = 400
)

// chunkCriteria splits criteria into groups whose prompt and reply fit in
// numCtx tokens together with the fixed part (patient and instructions).
// A single criterion that does not fit on its own is still sent alone: the
// model's context overflow is then reported for that trial.
func chunkCriteria(crit []Criterion, fixedTokens, numCtx int) [][]Criterion {
	budget := numCtx - fixedTokens - promptOverheadTokens
	var out [][]Criterion
	var cur []Criterion
	used := 0
	for _, c := range crit {
		need := estimateTokens(c.Text) + 8 + replyTokensPerCriterion
		if len(cur) > 0 && used+need > budget {
			out = append(out, cur)
			cur, used = nil, 0
		}
		cur = append(cur, c)
		used += need
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// assessTrial asks the model for a verdict on every criterion of t,
// chunking the criteria to fit the context window.
func (p *Pipeline) assessTrial(ctx context.Context, patientSentences []string, t *Trial) (*Eligibility, localllm.Usage, error) {
	var usage localllm.Usage
	crit := t.Criteria()
	el := &Eligibility{}
	if len(crit) == 0 {
		el.Error = "the trial lists no eligibility criteria"
		return el, usage, nil
	}
	fixed := estimateTokens(t.Title)
	for _, s := range patientSentences {
		fixed += estimateTokens(s) + 3
	}
	verdicts := map[string]CriterionVerdict{}
	for _, chunk := range chunkCriteria(crit, fixed, p.opts.NumCtx) {
		pc := make([]promptCriterion, len(chunk))
		for i, c := range chunk {
			pc[i] = promptCriterion{ID: criterionID(c), Kind: string(c.Kind), Text: c.Text}
		}
		msgs, err := renderPrompt("eligibility", struct {
			Sentences []string
			Title     string
			Criteria  []promptCriterion
		}{patientSentences, t.Title, pc})
		if err != nil {
			return nil, usage, err
		}
		var reply eligibilityReply
		res, err := p.chat.ChatJSON(ctx, localllm.ChatRequest{Model: p.model, Messages: msgs,
			Options: p.modelOptions(len(chunk)*replyTokensPerCriterion + 64)}, eligibilitySchema(), &reply)
		usage = usage.Add(res.Usage)
		if err != nil {
			return nil, usage, err
		}
		for _, r := range reply.Criteria {
			ev := ""
			if r.Evidence >= 1 && r.Evidence <= len(patientSentences) {
				ev = patientSentences[r.Evidence-1]
			}
			verdicts[strings.ToUpper(strings.TrimSpace(r.ID))] = CriterionVerdict{Verdict: Verdict(r.Verdict), Evidence: ev, Explanation: strings.TrimSpace(r.Explanation)}
		}
	}
	for _, c := range crit {
		v, ok := verdicts[criterionID(c)]
		if !ok {
			v.Verdict = VerdictMissing
		}
		v.Verdict = normalizeVerdict(c.Kind, v.Verdict)
		v.Criterion = c
		el.Verdicts = append(el.Verdicts, v)
	}
	el.Score = EligibilityScore(el.Verdicts)
	return el, usage, nil
}

// normalizeVerdict maps a verdict onto those valid for the criterion's
// kind: an inclusion criterion "excluded" is "not included", an exclusion
// criterion "included" is "excluded".
func normalizeVerdict(kind CriterionKind, v Verdict) Verdict {
	switch {
	case v == VerdictMissing || v == NotEnoughInfo:
		return v
	case kind == Inclusion && (v == Excluded || v == NotIncluded):
		return NotIncluded
	case kind == Inclusion && (v == Included || v == NotExcluded):
		return Included
	case kind == Exclusion && (v == Included || v == Excluded):
		return Excluded
	case kind == Exclusion && (v == NotIncluded || v == NotExcluded):
		return NotExcluded
	}
	return NotEnoughInfo
}

// EligibilityScore aggregates criterion verdicts as TrialGPT does: the
// share of inclusion criteria met, minus the share of inclusion criteria
// not met, minus the share of exclusion criteria that exclude the patient.
// It ranges from -2 (fails everything) to 1 (meets every inclusion
// criterion and no exclusion); "not enough information" counts for
// neither.
func EligibilityScore(vs []CriterionVerdict) float64 {
	var nInc, met, notMet, nExc, hit float64
	for _, v := range vs {
		switch v.Kind {
		case Inclusion:
			nInc++
			switch v.Verdict {
			case Included:
				met++
			case NotIncluded:
				notMet++
			}
		case Exclusion:
			nExc++
			if v.Verdict == Excluded {
				hit++
			}
		}
	}
	s := 0.0
	if nInc > 0 {
		s += (met - notMet) / nInc
	}
	if nExc > 0 {
		s -= hit / nExc
	}
	return s
}

// rerankEligibility assesses the top trials criterion by criterion and
// re-orders them by eligibility score (ties keep the fusion order). When
// the model fails on every trial the fusion order is kept and a notice says
// so; a server that is down or a missing model stops at the first trial.
func (p *Pipeline) rerankEligibility(ctx context.Context, q *Query, top []RankedTrial, stage func(string, int, int)) (localllm.Usage, string, error) {
	var usage localllm.Usage
	ts := make([]*Trial, len(top))
	for i := range top {
		ts[i] = top[i].Trial
	}
	if err := loadCriteria(ctx, p.db, ts); err != nil {
		return usage, "", err
	}
	sents := sentences(q.Patient)
	failed := 0
	var lastErr error
	for i := range top {
		stage("Checking eligibility criteria", i, len(top))
		el, u, err := p.assessTrial(ctx, sents, top[i].Trial)
		usage = usage.Add(u)
		if err != nil {
			if ctx.Err() != nil {
				return usage, "", ctx.Err()
			}
			failed++
			lastErr = err
			top[i].Eligibility = &Eligibility{Error: localllm.MessageOf(err)}
			p.log.Warn("eligibility check failed", "trial", top[i].Trial.ID, "model", p.model, "err", err)
			if k := localllm.KindOf(err); k == localllm.ServerDown || k == localllm.ModelMissing {
				for j := i + 1; j < len(top); j++ {
					top[j].Eligibility = &Eligibility{Error: localllm.MessageOf(err)}
					failed++
				}
				break
			}
			continue
		}
		top[i].Eligibility = el
	}
	stage("Checking eligibility criteria", len(top), len(top))
	if failed == len(top) {
		return usage, "The model could not check the eligibility criteria (" + localllm.MessageOf(lastErr) +
			"); the trials are in the lexical ranking order.", nil
	}
	slices.SortStableFunc(top, func(a, b RankedTrial) int {
		return cmp.Compare(eligibilityOf(b), eligibilityOf(a))
	})
	notice := ""
	if failed > 0 {
		notice = fmt.Sprintf("The model could not check %d of %d trials (%s); they rank as if neutral.", failed, len(top), localllm.MessageOf(lastErr))
	}
	return usage, notice, nil
}

// eligibilityOf is the score a trial sorts by; an unassessed trial is
// neutral (0).
func eligibilityOf(r RankedTrial) float64 {
	if r.Eligibility == nil || r.Eligibility.Error != "" {
		return 0
	}
	return r.Eligibility.Score
}
