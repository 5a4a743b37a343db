package app

import (
	"context"
	"errors"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/internal/progress"
)

// Attrition counts the patients after each criterion of an answer written
// as a chain of criteria, with the steps of off switched off (issue 19
// item 1), and records the statement counted in the audit trail; counts
// whose record cannot be written are not returned.
func (s *auditedSession) Attrition(ctx context.Context, ans *cohort.Answer, off []int, onProgress progress.Func) (*cohort.Attrition, error) {
	a, err := s.Pipeline.Attrition(ctx, ans, off, onProgress)
	d := map[string]any{"what": "attrition"}
	if ans != nil {
		d["question"] = ans.Question
	}
	if len(off) > 0 {
		d["steps_off"] = off
	}
	if err != nil {
		d["error"] = err.Error()
	}
	if a != nil {
		d["sql"] = a.SQL
		d["steps"] = len(a.Steps)
		if a.PatientColumn != "" {
			d["individuals_counted_by"] = a.PatientColumn
		}
		if a.MinCell >= 2 {
			d["min_cell"] = a.MinCell
		}
	}
	if rerr := s.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: s.src.Name, Details: d}); rerr != nil {
		return nil, errors.Join(err, rerr)
	}
	return a, err
}
