package app

import (
	"context"
	"errors"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/disclosure"
)

// auditedSession is the cohort pipeline as the front ends use it: every
// question asked and every statement run again is recorded in the audit
// trail, and an answer whose record cannot be written is not shown.
type auditedSession struct {
	*cohort.Pipeline
	ws  *Workspace
	src Source
}

// Ask answers a question and records it: the question, the statement whose
// result is shown, the attempts, the rows and what disclosure control did.
func (s *auditedSession) Ask(ctx context.Context, req cohort.Request, on func(cohort.Event)) (*cohort.Answer, error) {
	ans, err := s.Pipeline.Ask(ctx, req, on)
	d := map[string]any{"question": req.Question}
	if len(req.ExcludeConcepts) > 0 {
		d["excluded_concepts"] = req.ExcludeConcepts
	}
	answerDetails(d, ans, err)
	if rerr := s.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionAsk, Source: s.src.Name, Details: d}); rerr != nil {
		return withheld(req.Question), errors.Join(err, rerr)
	}
	return ans, err
}

// Run runs an edited statement again and records it as SQL typed by the
// user.
func (s *auditedSession) Run(ctx context.Context, prev *cohort.Answer, query string) (*cohort.Answer, error) {
	ans, err := s.Pipeline.Run(ctx, prev, query)
	d := map[string]any{"typed": true}
	answerDetails(d, ans, err)
	d["sql"] = query
	if rerr := s.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: s.src.Name, Details: d}); rerr != nil {
		q := ""
		if prev != nil {
			q = prev.Question
		}
		return withheld(q), errors.Join(err, rerr)
	}
	return ans, err
}

// withheld is the answer given in place of one that could not be recorded.
func withheld(question string) *cohort.Answer {
	return &cohort.Answer{Question: question, Status: cohort.StatusFailed,
		Message: "The answer is not shown because it could not be recorded in the audit trail."}
}

// answerDetails adds what an answer did to an audit record's details.
func answerDetails(d map[string]any, ans *cohort.Answer, err error) {
	if err != nil {
		d["error"] = err.Error()
	}
	if ans == nil {
		return
	}
	d["status"] = string(ans.Status)
	if ans.SQL != "" {
		d["sql"] = ans.SQL
	}
	d["attempts"] = len(ans.Attempts)
	if ans.Result != nil {
		d["rows"] = len(ans.Result.Rows)
		d["columns"] = len(ans.Result.Columns)
	}
	suppressionDetails(d, ans.Disclosure.Shown)
	if ans.Disclosure.RowsWithheld {
		d["rows_sent_to_model"] = false
	}
}

// suppressionDetails adds what small-cell suppression did.
func suppressionDetails(d map[string]any, rep *disclosure.Report) {
	if rep == nil {
		return
	}
	d["suppressed_cells"] = len(rep.Cells)
	d["min_cell"] = rep.K
	if rep.IndividualColumn != "" {
		d["individuals_counted_by"] = rep.IndividualColumn
	}
}

// recordQuery records one statement run through the Data service: the SQL,
// the rows returned and the suppression applied. The result is not shown
// when the record cannot be written.
func (d *Data) recordQuery(ctx context.Context, src Source, query string, res Disclosed, err error) error {
	det := map[string]any{"sql": query}
	if err != nil {
		det["error"] = err.Error()
	}
	if res.Result != nil {
		det["rows"] = len(res.Result.Rows)
		det["columns"] = len(res.Result.Columns)
		if res.Result.Truncated {
			det["truncated"] = string(res.Result.TruncatedBy)
		}
	}
	det["access"] = "row-level"
	if res.Policy.AggregateOnly() {
		det["access"] = "aggregate-only"
	}
	suppressionDetails(det, res.Report)
	return d.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: src.Name, Details: det})
}
