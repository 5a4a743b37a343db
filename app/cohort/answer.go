package cohort

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/localllm"
)

// Status says how a question ended.
type Status string

// The statuses of an Answer.
const (
	// StatusAnswered: a query ran and its result is explained.
	StatusAnswered Status = "answered"
	// StatusNoData: no table of the data source is relevant enough (the
	// retrieval threshold); no model was asked.
	StatusNoData Status = "no_data"
	// StatusRefused: the question was classified as not answerable from
	// this data (Category says why); no SQL was written.
	StatusRefused Status = "refused"
	// StatusFailed: no valid query was found within the attempts allowed,
	// or the model never gave a usable reply.
	StatusFailed Status = "failed"
	// StatusError: the run stopped on an error outside the question (the
	// model server went down, the run was cancelled).
	StatusError Status = "error"
)

// Category is the class a question is given before any SQL is written.
type Category string

// The categories of a question.
const (
	// Answerable: the data can answer it.
	Answerable Category = "answerable"
	// OutOfScope: about medicine or patients, but not something this data
	// records.
	OutOfScope Category = "out_of_scope"
	// NonMedical: not about health data at all.
	NonMedical Category = "non_medical"
	// FutureData: about a time after the data's collection period.
	FutureData Category = "future_data"
	// PrivateData: asks for an identifiable individual (a name, an
	// address, a phone number) or other protected personal data.
	PrivateData Category = "private_data"
)

// Categories lists every category, answerable first.
var Categories = []Category{Answerable, OutOfScope, NonMedical, FutureData, PrivateData}

// Explain returns a sentence telling the user why a question of this
// category gets no answer.
func (c Category) Explain() string {
	switch c {
	case OutOfScope:
		return "This data source does not record what the question asks about."
	case NonMedical:
		return "The question is not about the clinical data of this source."
	case FutureData:
		return "The question is about a time the data does not cover (after its collection period)."
	case PrivateData:
		return "The question asks for identifiable or private information about a person, which Clinsight does not answer."
	}
	return ""
}

// Attempt is one SQL statement the pipeline tried.
type Attempt struct {
	// Number counts attempts from 1.
	Number int `json:"number"`
	// Source says where the SQL came from: "generate" (the first reply),
	// "repair" (after an error), "recheck" (after an empty result) or
	// "user" (typed or edited by the user).
	Source string `json:"source"`
	// SQL is the statement as run (after the data set's conventions were
	// applied).
	SQL string `json:"sql"`
	// Stage is where it stopped: "extract" (no SQL in the reply),
	// "validate", "execute", or "ok".
	Stage string `json:"stage"`
	// Error is the database's (or the runner's) exact message; "" when the
	// statement ran.
	Error string `json:"error,omitempty"`
	// Rows is the number of rows returned when it ran.
	Rows int `json:"rows"`
	// Duration is the time of this attempt, model reply included.
	Duration time.Duration `json:"duration_ns"`
	// Generated is the statement as the model wrote it when value
	// grounding rewrote its literals (SQL is the rewritten one); "" when
	// grounding changed nothing.
	Generated string `json:"generated,omitempty"`
	// Rewrites are the literals value grounding changed to stored values.
	Rewrites []ValueRewrite `json:"rewrites,omitempty"`
	// Choices are literals matching no stored value with several stored
	// values about as close: offered to the user, not applied.
	Choices []ValueChoice `json:"choices,omitempty"`
}

// Notes describes what value grounding did to the attempt's statement,
// one line per literal ("" when nothing), for the attempts log.
func (a Attempt) Notes() string {
	var out []string
	for _, r := range a.Rewrites {
		out = append(out, "value grounded: "+r.String())
	}
	for _, c := range a.Choices {
		out = append(out, "value not grounded: "+c.String())
	}
	return strings.Join(out, "\n")
}

// LLMCall records one model call (which may be several requests when a
// JSON reply had to be retried).
type LLMCall struct {
	// Stage is the pipeline stage: "classify+generate", "repair",
	// "recheck" or "explain".
	Stage string `json:"stage"`
	// Model is the model asked.
	Model string `json:"model"`
	// Requests is the number of requests sent to the server.
	Requests int `json:"requests"`
	// PromptTokens and CompletionTokens are as reported by the server.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Duration is the wall time of the call.
	Duration time.Duration `json:"duration_ns"`
	// Error is the call's error message, "" on success.
	Error string `json:"error,omitempty"`
}

// StageTiming records one pipeline stage.
type StageTiming struct {
	// Name is the stage: retrieve, guard, classify+generate, validate,
	// execute, repair, recheck, explain, verify.
	Name string `json:"name"`
	// Duration is the total time spent in it.
	Duration time.Duration `json:"duration_ns"`
}

// NumberCheck is one number of the explanation and whether it is backed by
// the result or the question.
type NumberCheck struct {
	// Text is the number as written ("1,234", "42%").
	Text string `json:"text"`
	// Start and End are its byte offsets in the explanation.
	Start int `json:"start"`
	End   int `json:"end"`
	// Verified is true when the number was found in the result (a cell,
	// the row count, a column statistic or share) or in the question.
	Verified bool `json:"verified"`
	// Source says where it was found ("cell", "row count", "question", ...).
	Source string `json:"source,omitempty"`
}

// Answer is everything a question produced: the outcome, the evidence, and
// the record of every stage for provenance.
type Answer struct {
	// Question is the question as asked.
	Question string `json:"question"`
	// Status says how it ended.
	Status Status `json:"status"`
	// Category is the classification ("" when the run stopped earlier).
	Category Category `json:"category,omitempty"`
	// Reason is the model's reason for the category, or the guard's.
	Reason string `json:"reason,omitempty"`
	// Message explains a refusal or a failure to the user.
	Message string `json:"message,omitempty"`
	// Retrieval is the retrieved table documentation with scores.
	Retrieval *Retrieval `json:"retrieval,omitempty"`
	// SQL is the statement whose result is shown ("" when none ran).
	SQL string `json:"sql,omitempty"`
	// Attempts are all statements tried, in order.
	Attempts []Attempt `json:"attempts"`
	// Result is the result of SQL (nil when none ran).
	Result *datasets.Result `json:"-"`
	// Explanation is the plain-language answer.
	Explanation string `json:"explanation,omitempty"`
	// Numbers are the numbers of the explanation, checked.
	Numbers []NumberCheck `json:"numbers,omitempty"`
	// Stages are the stage timings in order of first use.
	Stages []StageTiming `json:"stages"`
	// LLMCalls are the model calls, in order.
	LLMCalls []LLMCall `json:"llm_calls"`
	// Usage sums the model usage of all calls.
	Usage localllm.Usage `json:"-"`
	// Models lists the models used.
	Models []string `json:"models,omitempty"`
	// DataSource names the database.
	DataSource string `json:"data_source,omitempty"`
	// Started is when the question was asked.
	Started time.Time `json:"started"`
	// Elapsed is the total time.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Settings records the pipeline's parameters for provenance.
	Settings Settings `json:"settings"`
	// ConceptSets are the question's resolved concept sets (OMOP sources);
	// UnresolvedTerms the terms no concept was found for; ConceptsFrom
	// says where the terms came from (ConceptsFromModel, ...).
	ConceptSets     []omop.ConceptSet `json:"concept_sets,omitempty"`
	UnresolvedTerms []omop.Term       `json:"unresolved_terms,omitempty"`
	ConceptsFrom    string            `json:"concepts_from,omitempty"`
	// Template names the LLM-free template that answered, "" when the
	// model wrote the SQL.
	Template string `json:"template,omitempty"`
	// Disclosure says what disclosure control did to Result and to what
	// the explaining model saw (Config.Disclose).
	Disclosure Disclosure `json:"disclosure"`
	// Attrition is the patients left after each criterion when SQL is a
	// chain of criteria (ParseChain); nil otherwise.
	Attrition *Attrition `json:"attrition,omitempty"`
}

// Disclosure records the disclosure control of an answer (issue 13).
type Disclosure struct {
	// Shown is the small-cell suppression of Result; nil when Result is
	// exact (a row-level source).
	Shown *disclosure.Report `json:"shown,omitempty"`
	// Explained is the suppression of the result the explanation was
	// written from; nil when the model saw the exact result.
	Explained *disclosure.Report `json:"explained,omitempty"`
	// RowsWithheld is set when the model saw only the number of rows of a
	// patient-level result (result rows may not be sent to the model host).
	RowsWithheld bool `json:"rows_withheld,omitempty"`
}

// Disclosed is a result as Config.Disclose lets it be shown and explained.
type Disclosed struct {
	// Shown is what the answer holds and front ends show.
	Shown *datasets.Result
	// Explain is what the explaining model sees and numbers are checked
	// against.
	Explain *datasets.Result
	// Info records what was done.
	Info Disclosure
}

// Settings are the parameters a question ran with.
type Settings struct {
	TopK         int     `json:"top_k"`
	MinRelevance float64 `json:"min_relevance"`
	MaxAttempts  int     `json:"max_attempts"`
	Temperature  float64 `json:"temperature"`
	Seed         int     `json:"seed"`
	Now          string  `json:"now,omitempty"`
	Period       string  `json:"period,omitempty"`
}

// Unverified returns the numbers of the explanation that were not found in
// the result or the question.
func (a *Answer) Unverified() []NumberCheck {
	var out []NumberCheck
	for _, n := range a.Numbers {
		if !n.Verified {
			out = append(out, n)
		}
	}
	return out
}

// Calls returns the number of requests sent to the model server.
func (a *Answer) Calls() int {
	n := 0
	for _, c := range a.LLMCalls {
		n += c.Requests
	}
	return n
}

// LLMTime returns the wall time spent waiting for the model.
func (a *Answer) LLMTime() time.Duration {
	var d time.Duration
	for _, c := range a.LLMCalls {
		d += c.Duration
	}
	return d
}

// NonLLMTime returns the time spent outside model calls: retrieval,
// checks, validation, execution and verification.
func (a *Answer) NonLLMTime() time.Duration { return a.Elapsed - a.LLMTime() }

// Tables returns the names of the retrieved tables.
func (a *Answer) Tables() []string {
	if a.Retrieval == nil {
		return nil
	}
	return a.Retrieval.Names()
}

// MarkedExplanation returns the explanation with every unverified number
// followed by "[unverified]", for plain-text output.
func (a *Answer) MarkedExplanation() string {
	var b strings.Builder
	last := 0
	for _, n := range a.Numbers {
		if n.Verified || n.Start < last || n.End > len(a.Explanation) {
			continue
		}
		b.WriteString(a.Explanation[last:n.End])
		b.WriteString(" [unverified]")
		last = n.End
	}
	b.WriteString(a.Explanation[last:])
	return b.String()
}

// Turn returns what a follow-up question needs to know of this answer.
func (a *Answer) Turn() Turn {
	t := Turn{Question: a.Question, SQL: a.SQL, Tables: a.Tables()}
	if a.Result != nil {
		t.Summary = resultDigest(a.Result, 5)
	} else if a.Message != "" {
		t.Summary = a.Message
	}
	return t
}

// Turn is one earlier question of a conversation, for follow-ups ("now
// only the women").
type Turn struct {
	// Question is the earlier question.
	Question string `json:"question"`
	// SQL is the query that answered it ("" when none did).
	SQL string `json:"sql,omitempty"`
	// Summary describes its result briefly.
	Summary string `json:"summary,omitempty"`
	// Tables are the tables retrieved for it.
	Tables []string `json:"tables,omitempty"`
}

// EventKind says what an Event reports.
type EventKind string

// The kinds of Event.
const (
	// EventStage: a stage starts (Stage is set).
	EventStage EventKind = "stage"
	// EventRetrieved: the tables were retrieved (Retrieval is set).
	EventRetrieved EventKind = "retrieved"
	// EventAttempt: an attempt finished (Attempt is set).
	EventAttempt EventKind = "attempt"
	// EventResult: a query result is ready (Result is set).
	EventResult EventKind = "result"
	// EventDelta: a piece of the explanation (Text is set).
	EventDelta EventKind = "delta"
	// EventConcepts: the concept sets were resolved (ConceptSets is set).
	EventConcepts EventKind = "concepts"
	// EventAttrition: the attrition of a chain of criteria was counted
	// (Attrition is set).
	EventAttrition EventKind = "attrition"
)

// Event reports progress of a question to a front end, in order, on the
// goroutine running the question.
type Event struct {
	Kind      EventKind
	Stage     string
	Retrieval *Retrieval
	Attempt   *Attempt
	Result    *datasets.Result
	SQL       string
	Text      string
	// ConceptSets are the resolved concept sets (EventConcepts).
	ConceptSets []omop.ConceptSet
	// Attrition is the attrition table (EventAttrition).
	Attrition *Attrition
}

// digestChars bounds a result digest, which goes into the prompt of every
// follow-up question.
const digestChars = 1500

// resultDigest describes a result in a few lines, at most digestChars
// characters: its columns, row count and first rows.
func resultDigest(res *datasets.Result, rows int) string {
	ncols := min(len(res.Columns), maxPromptColumns)
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows; columns %s", len(res.Rows), strings.Join(promptNames(res, ncols), ", "))
	if ncols < len(res.Columns) {
		fmt.Fprintf(&b, " and %d more", len(res.Columns)-ncols)
	}
	if res.Truncated {
		b.WriteString(" (the query's result was cut)")
	}
	for i, r := range res.Rows {
		line := "\n" + rowText(r, ncols)
		if i == rows || b.Len()+len(line) > digestChars {
			fmt.Fprintf(&b, "\n...")
			break
		}
		b.WriteString(line)
	}
	return cutText(b.String(), digestChars)
}

// cellString renders a value for prompts and summaries.
func cellString(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if len(x) > 120 {
			k := 117
			for k > 0 && !utf8.RuneStart(x[k]) {
				k-- // never split a character
			}
			return x[:k] + "..."
		}
		return x
	case float64:
		return fmt.Sprintf("%.6g", x)
	case datasets.Blob:
		return fmt.Sprintf("<BLOB, %s>", datasets.FormatBytes(int64(len(x))))
	}
	return fmt.Sprint(v)
}
