package cohort

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm"
)

// SQLRunner runs SQL read-only within limits; *datasets.Runner and every
// datasets.Engine (the PostgreSQL engine) implement it. Every statement a
// model writes reaches the database through it.
type SQLRunner interface {
	// Check validates a statement without running it: the read-only rules
	// and the database's own compilation (SQLite's; PostgreSQL's PREPARE
	// and EXPLAIN): syntax, unknown tables and columns.
	Check(ctx context.Context, query string) error
	// Query checks and runs a statement.
	Query(ctx context.Context, query string) (*datasets.Result, error)
}

// Defaults of Config.
const (
	// DefaultMaxAttempts is how many statements are tried per question.
	DefaultMaxAttempts = 10
	// DefaultMinRelevance is the retrieval threshold: below it no table is
	// about the question (see Retrieval.Best) and the answer is "no data".
	DefaultMinRelevance = 0.02
	// DefaultSeed makes every model call reproducible.
	DefaultSeed = 42
	// DefaultNumCtx is the model context window requested, in tokens.
	DefaultNumCtx = 8192
)

// Reply length limits, in tokens.
const (
	generateTokens = 1024
	repairTokens   = 768
	explainTokens  = 400
)

// keepRepairTurns is how many earlier repair exchanges a repair
// conversation keeps (besides the question), bounding the prompt.
const keepRepairTurns = 3

// Config configures a Pipeline.
type Config struct {
	// Chat is the model client (the Ollama client, or any Chatter).
	// Required by Ask.
	Chat localllm.Chatter
	// Runner runs the SQL, read-only. Required.
	Runner SQLRunner
	// Dialect is the SQL the runner's engine speaks (Engine.Dialect): the
	// prompts state it, and the data set's current time is written in it;
	// "" means SQLite.
	Dialect datasets.Dialect
	// Index retrieves the table documentation; its catalog describes the
	// database. Required.
	Index *Index
	// SQLModel classifies questions and writes and repairs SQL.
	SQLModel string
	// ChatModel explains results; default SQLModel.
	ChatModel string
	// TopK is how many tables are retrieved; default DefaultTopK.
	TopK int
	// MinRelevance is the retrieval threshold; 0 means DefaultMinRelevance,
	// a negative value disables the check.
	MinRelevance float64
	// MaxAttempts bounds the statements tried; default DefaultMaxAttempts.
	MaxAttempts int
	// Seed is the sampling seed of every call; default DefaultSeed.
	Seed int
	// NumCtx is the context window requested; default DefaultNumCtx.
	NumCtx int
	// Facts is the data set's time frame; when zero it is read from the
	// database (ReadFacts).
	Facts *Facts
	// DataSource names the database in answers and provenance.
	DataSource string
	// Clock gives the current time when the data set fixes none; default
	// time.Now.
	Clock func() time.Time
	// Logger receives one record per question; default slog.Default().
	Logger *slog.Logger
	// OnClose, if set, is called by Pipeline.Close to release what the
	// pipeline was built on (the runner's connections).
	OnClose func() error
	// Concepts, set for OMOP CDM sources, resolves the question's clinical
	// terms to concept sets before generation (and lets questions be
	// answered by templates without a model).
	Concepts ConceptResolver
	// Disclose, if set, applies the data source's disclosure policy to
	// every result before it is shown or explained: the answer holds
	// Shown, the explanation is written from Explain. An error refuses the
	// result (an aggregate-only source's patient-level rows). Nil shows and
	// explains results as they are.
	Disclose func(ctx context.Context, query string, res *datasets.Result) (Disclosed, error)
	// MinPersons, when positive, hides the concept sets' person counts
	// under it (omop.HideSmallPersons), and the attrition counts: the
	// minimum cell size of an aggregate-only source.
	MinPersons int
	// Profile is the source's kind or profile (disclosure.Profile): which
	// column identifies a patient when the attrition is counted; "" tries
	// the usual names.
	Profile string
}

// disclose applies Config.Disclose.
func (p *Pipeline) disclose(ctx context.Context, query string, res *datasets.Result) (Disclosed, error) {
	if p.cfg.Disclose == nil {
		return Disclosed{Shown: res, Explain: res}, nil
	}
	return p.cfg.Disclose(ctx, query, res)
}

// Pipeline answers plain-English questions about one SQLite database with
// validated, self-correcting, read-only SQL:
// retrieve → (guard) → classify and generate → validate → autocorrect →
// execute → explain → verify numbers. A Pipeline is safe for concurrent
// use; each question is independent apart from the history it is given.
type Pipeline struct {
	cfg    Config
	index  *Index
	cat    *datasets.Catalog
	facts  Facts
	log    *slog.Logger
	schema *localllm.Schema
	// conceptSchema is the JSON schema of the concept-term reply.
	conceptSchema *localllm.Schema
	// grounder checks generated literals against the stored values; nil
	// when the index holds no values.
	grounder *Grounder
}

// classifySchema is the JSON schema of the classify-and-generate reply.
const classifySchema = `{"type":"object","properties":{` +
	`"category":{"type":"string","enum":["answerable","out_of_scope","non_medical","future_data","private_data"]},` +
	`"reason":{"type":"string"},` +
	`"sql":{"type":"string"}},` +
	`"required":["category","reason","sql"],"additionalProperties":false}`

// New checks cfg, fills its defaults and returns the pipeline.
func New(ctx context.Context, cfg Config) (*Pipeline, error) {
	if cfg.Runner == nil || cfg.Index == nil {
		return nil, errors.New("cohort pipeline: a runner and a retrieval index are required")
	}
	if cfg.ChatModel == "" {
		cfg.ChatModel = cfg.SQLModel
	}
	if cfg.TopK < 1 {
		cfg.TopK = DefaultTopK
	}
	if cfg.MinRelevance == 0 {
		cfg.MinRelevance = DefaultMinRelevance
	}
	if cfg.MaxAttempts < 1 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Seed == 0 {
		cfg.Seed = DefaultSeed
	}
	if cfg.NumCtx <= 0 {
		cfg.NumCtx = DefaultNumCtx
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	p := &Pipeline{cfg: cfg, index: cfg.Index, cat: cfg.Index.Catalog(), log: cfg.Logger,
		schema: localllm.MustParseSchema(classifySchema), conceptSchema: localllm.MustParseSchema(conceptsSchema)}
	if p.log == nil {
		p.log = slog.Default()
	}
	p.grounder = NewGrounder(cfg.Index, cfg.Runner)
	if cfg.Facts != nil {
		p.facts = *cfg.Facts
	} else {
		p.facts = ReadFacts(ctx, cfg.Runner, p.cat)
	}
	p.facts.dialect = cfg.Dialect
	return p, nil
}

// Index returns the retrieval index.
func (p *Pipeline) Index() *Index { return p.index }

// Close releases the resources given in Config.OnClose.
func (p *Pipeline) Close() error {
	if p.cfg.OnClose != nil {
		return p.cfg.OnClose()
	}
	return nil
}

// DataSource returns the name of the database the pipeline queries.
func (p *Pipeline) DataSource() string { return p.cfg.DataSource }

// Facts returns the data set's time frame.
func (p *Pipeline) Facts() Facts { return p.facts }

// Models returns the models the pipeline asks, without duplicates.
func (p *Pipeline) Models() []string {
	out := []string{p.cfg.SQLModel}
	if p.cfg.ChatModel != p.cfg.SQLModel {
		out = append(out, p.cfg.ChatModel)
	}
	return out
}

// Examples returns up to n example questions for this data source, taken
// from the documentation of its tables (curated examples first).
func (p *Pipeline) Examples(n int) []string {
	var out []string
	for round := 0; len(out) < n; round++ {
		added := false
		for _, t := range p.cat.Tables {
			if round < len(t.Doc.Examples) && len(out) < n {
				out = append(out, t.Doc.Examples[round])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// Request is one question.
type Request struct {
	// Question is the question in plain English.
	Question string
	// History holds the earlier turns of the conversation, oldest first;
	// the last one is what a follow-up refers to.
	History []Turn
	// ConceptSets, on an OMOP source, are concept sets the user edited
	// (a concept removed or added): used as given instead of resolving the
	// question's terms again. nil resolves them.
	ConceptSets []omop.ConceptSet
	// ExcludeConcepts, on an OMOP source, removes these concept ids from
	// the resolved concept sets before generation.
	ExcludeConcepts []int64
}

// Validate checks a request.
func (r Request) Validate() error {
	q := strings.TrimSpace(r.Question)
	switch {
	case q == "":
		return errors.New("the question is empty")
	case len(q) > 4000:
		return fmt.Errorf("the question is too long (%d characters; at most 4000)", len(q))
	}
	return nil
}

// run is the state of one question.
type run struct {
	p     *Pipeline
	ans   *Answer
	on    func(Event)
	stage map[string]int // index into ans.Stages
	// modelDown is set when the model server could not be reached for the
	// concept terms (OMOP sources answer by template then).
	modelDown string
}

// emit sends an event to the front end.
func (r *run) emit(e Event) {
	if r.on == nil {
		return
	}
	// A listener may read the retrieval later on another goroutine (the
	// desktop app's UI loop) while the run goes on revising it
	// (MergeConceptTables replaces its tables and values): it gets its own
	// copy of the struct, whose slices the run replaces, never mutates.
	if e.Retrieval != nil {
		ret := *e.Retrieval
		e.Retrieval = &ret
	}
	r.on(e)
}

// timed runs f as part of stage name, adding its duration to the stage's.
func (r *run) timed(name string, f func()) {
	i, ok := r.stage[name]
	if !ok {
		r.ans.Stages = append(r.ans.Stages, StageTiming{Name: name})
		i = len(r.ans.Stages) - 1
		r.stage[name] = i
		r.emit(Event{Kind: EventStage, Stage: name})
	}
	start := time.Now()
	f()
	r.ans.Stages[i].Duration += time.Since(start)
}

// options are the model options of a call: temperature 0 and the fixed
// seed always.
func (p *Pipeline) options(predict int) localllm.Options {
	return localllm.Options{Temperature: new(0.0), Seed: new(p.cfg.Seed), NumCtx: p.cfg.NumCtx, NumPredict: predict}
}

// call records a model call.
func (r *run) call(stage, model string, res localllm.ChatResult, d time.Duration, err error) {
	c := LLMCall{Stage: stage, Model: model, Requests: max(res.Attempts, 1), PromptTokens: res.Usage.PromptTokens,
		CompletionTokens: res.Usage.CompletionTokens, Duration: d}
	if err != nil {
		c.Error = localllm.MessageOf(err)
	}
	r.ans.LLMCalls = append(r.ans.LLMCalls, c)
	r.ans.Usage = r.ans.Usage.Add(res.Usage)
	if !slices.Contains(r.ans.Models, model) {
		r.ans.Models = append(r.ans.Models, model)
	}
}

// stop ends the question with a status and a message for the user.
func (r *run) stop(status Status, msg string) *Answer {
	r.ans.Status, r.ans.Message = status, msg
	return r.ans
}

// fail ends the question on an error outside the question itself (model
// server down, cancelled) and returns it, wrapped.
func (r *run) fail(err error) (*Answer, error) {
	msg := localllm.MessageOf(err)
	if errors.Is(err, context.Canceled) {
		msg = "Cancelled."
	}
	r.stop(StatusError, msg)
	return r.ans, fmt.Errorf("cohort question %q: %w", truncate(r.ans.Question, 60), err)
}

// Ask answers one question. It returns the Answer in every case, with
// everything recorded so far; the error is non-nil only when the run
// stopped on a failure outside the question (the model server went down,
// ctx was cancelled), and then Status is StatusError. Refusals and
// questions no valid query was found for are answers, not errors.
//
// on, if not nil, receives the progress events (stages, retrieved tables,
// attempts, the result and the explanation as it is streamed) on the
// calling goroutine.
func (p *Pipeline) Ask(ctx context.Context, req Request, on func(Event)) (*Answer, error) {
	start := time.Now()
	r := &run{p: p, on: on, stage: map[string]int{}, ans: &Answer{
		Question: strings.TrimSpace(req.Question), Started: start, DataSource: p.cfg.DataSource,
		Attempts: []Attempt{}, LLMCalls: []LLMCall{}, Stages: []StageTiming{},
	}}
	now, _ := p.facts.now(p.cfg.Clock)
	r.ans.Settings = Settings{TopK: p.cfg.TopK, MinRelevance: p.cfg.MinRelevance, MaxAttempts: p.cfg.MaxAttempts,
		Temperature: 0, Seed: p.cfg.Seed, Now: now, Period: p.facts.Period()}
	ans, err := r.ask(ctx, req)
	ans.Elapsed = time.Since(start)
	p.log.Info("cohort question", "status", string(ans.Status), "category", string(ans.Category),
		"attempts", len(ans.Attempts), "llm_calls", ans.Calls(), "tokens", ans.Usage.Tokens(),
		"elapsed_ms", ans.Elapsed.Milliseconds(), "non_llm_ms", ans.NonLLMTime().Milliseconds(), "db", p.cfg.DataSource)
	return ans, err
}

// ask runs the stages.
func (r *run) ask(ctx context.Context, req Request) (*Answer, error) {
	p, ans := r.p, r.ans
	if err := req.Validate(); err != nil {
		r.stop(StatusFailed, err.Error())
		return ans, nil
	}
	if p.cfg.Chat == nil {
		if p.cfg.Concepts != nil {
			return r.askTemplate(ctx, req)
		}
		return r.fail(errors.New("no model client is configured"))
	}
	question := ans.Question

	// 1. Retrieve.
	var err error
	r.timed("retrieve", func() { err = r.retrieve(ctx, req) })
	if err != nil {
		return r.fail(err)
	}
	if len(req.History) == 0 && p.cfg.MinRelevance > 0 && ans.Retrieval.Best < p.cfg.MinRelevance {
		return r.stop(StatusNoData, fmt.Sprintf("I don't have data to answer that: no table of %s is about this question (best relevance %.3f, threshold %.3f).",
			nameOr(p.cfg.DataSource, "this data source"), ans.Retrieval.Best, p.cfg.MinRelevance)), nil
	}

	// 2. Questions no model is needed to decline.
	var cat Category
	var reason string
	r.timed("guard", func() { cat, reason = guard(question, p.facts) })
	if cat != "" {
		ans.Category, ans.Reason = cat, reason
		return r.stop(StatusRefused, cat.Explain()+" ("+reason+")"), nil
	}

	// 2b. Concept sets (OMOP sources).
	if p.cfg.Concepts != nil {
		if err := r.resolveConcepts(ctx, req); err != nil {
			return r.fail(err)
		}
		MergeConceptTables(ans.Retrieval, p.cat, ans.ConceptSets, p.cfg.TopK)
		r.emit(Event{Kind: EventRetrieved, Retrieval: ans.Retrieval})
		if r.modelDown != "" {
			return r.answerByTemplate(ctx, r.modelDown)
		}
	}

	// 3. Classify and generate in one call.
	now, note := p.facts.now(p.cfg.Clock)
	gen := generateData{Schema: p.cat.Text(ans.Tables()...), Now: now, NowNote: note, Period: p.facts.Period(), Values: ans.Retrieval.Values,
		ConceptSets: conceptPrompts(ans.ConceptSets)}
	gen.Engine = p.cfg.Dialect
	system := render("generate.tmpl", gen)
	user := render("question.tmpl", questionData{History: req.History, Question: question})
	var out struct {
		Category string `json:"category"`
		Reason   string `json:"reason"`
		SQL      string `json:"sql"`
	}
	var res localllm.ChatResult
	r.timed("classify+generate", func() {
		t := time.Now()
		res, err = p.cfg.Chat.ChatJSON(ctx, localllm.ChatRequest{Model: p.cfg.SQLModel, Options: p.options(generateTokens),
			Messages: []localllm.Message{{Role: localllm.RoleSystem, Content: system}, {Role: localllm.RoleUser, Content: user}}}, p.schema, &out)
		r.call("classify+generate", p.cfg.SQLModel, res, time.Since(t), err)
	})
	if err != nil {
		if k := localllm.KindOf(err); p.cfg.Concepts != nil && (k == localllm.ServerDown || k == localllm.ModelMissing) {
			return r.answerByTemplate(ctx, localllm.MessageOf(err)) // edited concept sets and no model
		}
		if localllm.KindOf(err) == localllm.BadReply || localllm.KindOf(err) == localllm.ContextOverflow {
			return r.stop(StatusFailed, "The model did not give a usable reply: "+localllm.MessageOf(err)), nil
		}
		return r.fail(err)
	}
	ans.Category, ans.Reason = Category(out.Category), strings.TrimSpace(out.Reason)
	if ans.Category != Answerable {
		msg := ans.Category.Explain()
		if ans.Reason != "" {
			msg += " (" + ans.Reason + ")"
		}
		return r.stop(StatusRefused, msg), nil
	}

	// 4-6. Validate, autocorrect, execute.
	gen.Repair = true
	result, err := r.attempts(ctx, render("generate.tmpl", gen), user, out.SQL)
	if err != nil {
		return r.fail(err)
	}
	if result == nil {
		last := ans.Attempts[len(ans.Attempts)-1]
		return r.stop(StatusFailed, fmt.Sprintf("No valid query was found in %d attempts; the last one failed at %s: %s",
			len(ans.Attempts), last.Stage, last.Error)), nil
	}
	shown, err := p.disclose(ctx, ans.SQL, result)
	if err != nil {
		if ctx.Err() != nil {
			return r.fail(ctx.Err())
		}
		return r.stop(StatusRefused, errorText(err)), nil
	}
	ans.Result, ans.Disclosure, result = shown.Shown, shown.Info, shown.Explain
	r.emit(Event{Kind: EventResult, Result: ans.Result, SQL: ans.SQL})
	// 6b. Attrition: the patients left after each criterion of a chain.
	if err := p.attrition(ctx, ans, r.timed); err != nil {
		return r.fail(err)
	}
	if ans.Attrition != nil {
		r.emit(Event{Kind: EventAttrition, Attrition: ans.Attrition})
	}

	// 7. Explain, streamed, then check its numbers.
	var text strings.Builder
	r.timed("explain", func() {
		t := time.Now()
		res, err = p.cfg.Chat.Chat(ctx, localllm.ChatRequest{Model: p.cfg.ChatModel, Options: p.options(explainTokens),
			Messages: []localllm.Message{
				{Role: localllm.RoleSystem, Content: render("explain.tmpl", nil)},
				{Role: localllm.RoleUser, Content: render("explain_user.tmpl", explainData{Question: question, SQL: ans.SQL, Result: resultForPrompt(result, p.resultBudget())})},
			}}, func(d string) {
			text.WriteString(d)
			r.emit(Event{Kind: EventDelta, Text: d})
		})
		r.call("explain", p.cfg.ChatModel, res, time.Since(t), err)
	})
	ans.Explanation = strings.TrimSpace(text.String())
	if err == nil {
		ans.Explanation = strings.TrimSpace(res.Content)
	}
	r.timed("verify", func() {
		ans.Numbers = verifyNumbers(ans.Explanation, collectEvidence(question, ans.SQL, result))
	})
	if err != nil {
		return r.fail(fmt.Errorf("explaining the result: %w", err))
	}
	ans.Status = StatusAnswered
	return ans, nil
}

// retrieve finds the tables; a follow-up searches with the earlier
// question too and keeps the tables of the previous turn.
func (r *run) retrieve(ctx context.Context, req Request) error {
	p := r.p
	query := r.ans.Question
	var prev []string
	if n := len(req.History); n > 0 {
		last := req.History[n-1]
		query = last.Question + "\n" + query
		prev = append(prev, last.Tables...)
		prev = append(prev, ReferencedTables(last.SQL, p.cat)...)
	}
	ret, err := p.index.Retrieve(ctx, query, p.cfg.TopK)
	if err != nil {
		return err
	}
	for _, name := range prev {
		if t, ok := p.cat.Table(name); ok && !slices.Contains(ret.Names(), t.Name) {
			ret.Tables = append(ret.Tables, TableScore{Table: t.Name, Evidence: []string{"used by the previous question"}})
		}
	}
	r.ans.Retrieval = ret
	r.emit(Event{Kind: EventRetrieved, Retrieval: ret})
	return nil
}

// attempts validates and runs the generated SQL, asking the model to
// correct it after each failure, up to MaxAttempts statements; an empty
// result triggers one re-check of the filters. It returns the result, or
// nil when no statement ran; the error is non-nil only for a model call
// that failed. An empty result is no rows, or one row of zeros and NULLs
// (a count over nothing): the filters may not match the stored values. A
// re-check reply with the same query, or with no query, confirms the empty
// result without another attempt.
func (r *run) attempts(ctx context.Context, system, question, reply string) (*datasets.Result, error) {
	p, ans := r.p, r.ans
	msgs := []localllm.Message{{Role: localllm.RoleSystem, Content: system}, {Role: localllm.RoleUser, Content: question}}
	source := "generate"
	rechecked := false
	var lastResult *datasets.Result
	lastSQL, lastGenerated := "", ""
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		at := Attempt{Number: n, Source: source}
		var res *datasets.Result
		var followUp string
		followStage := "repair"
		query, err := ExtractSQL(reply)
		if source == "recheck" && lastResult != nil && (err != nil || p.facts.applyNow(query) == lastGenerated) {
			// The model stands by its filters: the empty result is the answer.
			ans.SQL = lastSQL
			return lastResult, nil
		}
		switch {
		case err != nil:
			at.Stage, at.Error = "extract", "the reply contains no SQL statement"
			followUp = "Your reply contained no SQL query. Reply with one " + dialectOf(p.cfg.Dialect).Name + " SELECT query in a ```sql code block."
		default:
			query = p.facts.applyNow(query)
			// Value grounding: literals that match no stored value are
			// rewritten to a clear best match, or offered as choices.
			if query, err = r.ground(ctx, &at, query); err != nil {
				return nil, err
			}
			at.SQL = query
			r.timed("validate", func() { err = p.cfg.Runner.Check(ctx, query) })
			if err == nil {
				r.timed("execute", func() { res, err = p.cfg.Runner.Query(ctx, query) })
				at.Stage = "execute"
			} else {
				at.Stage = "validate"
			}
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				at.Error = errorText(err)
				followUp = render("repair.tmpl", p.feedback(query, err, ans.Tables()))
				res = nil
			} else {
				at.Stage, at.Rows = "ok", len(res.Rows)
				if emptyResult(res) && !rechecked && n < p.cfg.MaxAttempts {
					rechecked = true
					followStage = "recheck"
					r.timed("recheck", func() {
						followUp = render("recheck.tmpl", recheckData{SQL: query, Samples: p.recheckSamples(query)})
					})
				}
			}
		}
		at.Duration = time.Since(start)
		if source != "generate" && len(ans.LLMCalls) > 0 {
			at.Duration += ans.LLMCalls[len(ans.LLMCalls)-1].Duration
		}
		ans.Attempts = append(ans.Attempts, at)
		r.emit(Event{Kind: EventAttempt, Attempt: &ans.Attempts[len(ans.Attempts)-1]})
		if res != nil {
			ans.SQL = query
			if followUp == "" {
				return res, nil
			}
			lastResult, lastSQL, lastGenerated = res, query, at.Generated
			if lastGenerated == "" {
				lastGenerated = query
			}
		}
		if n >= p.cfg.MaxAttempts {
			if lastResult != nil { // an empty result that could not be re-checked
				ans.SQL = lastSQL
				return lastResult, nil
			}
			return nil, nil
		}
		// Ask the model to correct (or re-check) it.
		prev := reply
		if at.SQL != "" {
			prev = "```sql\n" + at.SQL + "\n```"
		} else if strings.TrimSpace(prev) == "" {
			prev = "(no query)"
		}
		msgs = append(msgs, localllm.Message{Role: localllm.RoleAssistant, Content: prev}, localllm.Message{Role: localllm.RoleUser, Content: followUp})
		if extra := len(msgs) - 2 - 2*keepRepairTurns; extra > 0 {
			msgs = append(msgs[:2:2], msgs[2+extra:]...)
		}
		var cres localllm.ChatResult
		r.timed(followStage, func() {
			t := time.Now()
			cres, err = p.cfg.Chat.Chat(ctx, localllm.ChatRequest{Model: p.cfg.SQLModel, Options: p.options(repairTokens), Messages: msgs}, nil)
			r.call(followStage, p.cfg.SQLModel, cres, time.Since(t), err)
		})
		if err != nil {
			return nil, err
		}
		reply, source = cres.Content, followStage
	}
}

// ground applies value grounding to a generated statement and records what
// it did in the attempt; the statement is returned unchanged when the
// grounder cannot check it (the failure is logged). The error is non-nil
// only when ctx is done.
func (r *run) ground(ctx context.Context, at *Attempt, query string) (string, error) {
	if r.p.grounder == nil {
		return query, nil
	}
	var g Grounding
	var err error
	r.timed("validate", func() { g, err = r.p.grounder.Ground(ctx, query) })
	if err != nil {
		if ctx.Err() != nil {
			return query, ctx.Err()
		}
		r.p.log.Warn("value grounding skipped", "err", err)
		return query, nil
	}
	at.Rewrites, at.Choices = g.Rewrites, g.Choices
	if g.SQL != query {
		at.Generated = query
	}
	return g.SQL, nil
}

// Run validates and runs a statement typed or edited by the user through
// the same runner (with the data set's conventions applied), without a
// model. The returned Answer copies prev's question and retrieval, keeps
// its attempts and adds this one; the explanation is cleared, since it
// described another result.
func (p *Pipeline) Run(ctx context.Context, prev *Answer, query string) (*Answer, error) {
	start := time.Now()
	ans := &Answer{Started: start, DataSource: p.cfg.DataSource, Status: StatusFailed, Attempts: []Attempt{}}
	if prev != nil {
		cp := *prev
		ans = &cp
		ans.Attempts = slices.Clone(prev.Attempts)
		ans.Explanation, ans.Numbers, ans.Result, ans.Message = "", nil, nil, ""
		ans.Status, ans.Attrition = StatusFailed, nil
	}
	query = p.facts.applyNow(strings.TrimSpace(query))
	at := Attempt{Number: len(ans.Attempts) + 1, Source: "user", SQL: query}
	err := p.cfg.Runner.Check(ctx, query)
	var res *datasets.Result
	if err == nil {
		res, err = p.cfg.Runner.Query(ctx, query)
		at.Stage = "execute"
	} else {
		at.Stage = "validate"
	}
	at.Duration = time.Since(start)
	if err != nil {
		at.Error = errorText(err)
		ans.Attempts = append(ans.Attempts, at)
		ans.Message = at.Error
		return ans, err
	}
	shown, err := p.disclose(ctx, query, res)
	if err != nil {
		at.Stage, at.Error = "disclosure", errorText(err)
		ans.Attempts = append(ans.Attempts, at)
		ans.Message = at.Error
		return ans, err
	}
	at.Stage, at.Rows = "ok", len(res.Rows)
	ans.Attempts = append(ans.Attempts, at)
	ans.SQL, ans.Result, ans.Disclosure, ans.Status = query, shown.Shown, shown.Info, StatusAnswered
	ans.Message = "Edited query: the explanation is not updated for it."
	if err := p.attrition(ctx, ans, func(_ string, f func()) { f() }); err != nil {
		return ans, err
	}
	return ans, nil
}

// emptyResult reports whether a result says "nothing matched": no rows,
// or a single row of zeros and NULLs (a count or sum over nothing).
func emptyResult(res *datasets.Result) bool {
	if len(res.Rows) == 0 {
		return true
	}
	if len(res.Rows) > 1 {
		return false
	}
	for _, v := range res.Rows[0] {
		if x, ok := numeric(v); v != nil && (!ok || x != 0) {
			return false
		}
	}
	return true
}

// nameOr returns s, or def when s is empty.
func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// truncate cuts s to n bytes with an ellipsis.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
