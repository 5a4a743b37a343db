package app

import (
	"context"
	"errors"
	"strings"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
)

// quotesOtherText reports whether an engine's error message quotes text
// ("…" or '…') that the statement does not hold, ignoring case and the
// quotes of identifiers: SQLite and PostgreSQL quote the statement's own
// names and literals (relation "patientz" does not exist, near "FORM":
// syntax error, bad JSON path: 'x.y'), but a value read at run time too,
// when a column is passed where a name or a JSON path is expected (bad
// JSON path: '2015-05-03', a date of death; relation "10014729" does not
// exist, a patient's identifier, from a cast to regclass). The lines that
// echo the statement (LINE n: and its caret) are skipped.
func quotesOtherText(query, msg string) bool {
	q := strings.ToLower(strings.ReplaceAll(query, `"`, ""))
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "LINE ") || strings.TrimSpace(line) == "^" || strings.HasSuffix(line, "^") && strings.TrimSpace(strings.TrimRight(line, "^")) == "" {
			continue
		}
		for _, mark := range []byte{'"', '\''} {
			rest := line
			for {
				i := strings.IndexByte(rest, mark)
				if i < 0 {
					break
				}
				j := strings.IndexByte(rest[i+1:], mark)
				if j < 0 {
					break
				}
				quoted := strings.ToLower(rest[i+1 : i+1+j])
				if quoted != "" && !strings.Contains(q, quoted) {
					return true
				}
				rest = rest[i+1+j+1:]
			}
		}
	}
	return false
}

// withholdingRunner is the cohort pipeline's runner of an aggregate-only
// source, or of any source when result rows may not be sent to the model
// host: its errors, shown and sent to the model to repair the statement,
// carry no value of the data (withholdDataError).
type withholdingRunner struct {
	cohort.SQLRunner
	pol disclosure.Policy
}

// Query runs the statement, withholding a value quoted by its error.
func (r withholdingRunner) Query(ctx context.Context, query string) (*datasets.Result, error) {
	res, err := r.SQLRunner.Query(ctx, query)
	if err != nil {
		if !r.pol.AggregateOnly() && quotesOtherText(query, err.Error()) {
			return nil, errors.New("the statement failed on a value of the data (the value is not shown, as result rows may not be sent to the model host): check the casts and functions applied to columns")
		}
		return nil, withholdDataError(r.pol, query, err)
	}
	return res, nil
}

// withholding wraps the cohort runner of an aggregate-only source, or of
// any source when result rows may not be sent to the model host.
func (c *Cohort) withholding(src Source, r cohort.SQLRunner) cohort.SQLRunner {
	if pol := c.ws.Data().Policy(src); pol.AggregateOnly() || !c.ws.SendRowsToModel() {
		return withholdingRunner{SQLRunner: r, pol: pol}
	}
	return r
}

// withholdingQuerier is the runner of Table 1 and of the saved cohorts'
// counts on an aggregate-only source: its errors, shown and recorded,
// carry no value of the data (withholdDataError).
type withholdingQuerier struct {
	cohortQuerier
	pol disclosure.Policy
}

// Query runs the statement, withholding a value quoted by its error.
func (q withholdingQuerier) Query(ctx context.Context, query string) (*datasets.Result, error) {
	res, err := q.cohortQuerier.Query(ctx, query)
	if err != nil {
		return nil, withholdDataError(q.pol, query, err)
	}
	return res, nil
}

// Dialect is the wrapped runner's (SQLite's when it does not say).
func (q withholdingQuerier) Dialect() datasets.Dialect {
	if d, ok := q.cohortQuerier.(interface{ Dialect() datasets.Dialect }); ok {
		return d.Dialect()
	}
	return datasets.DialectSQLite
}

// withholdingQuerier wraps the runner of Table 1 and of the saved
// cohorts' counts for an aggregate-only source.
func (c *Cohort) withholdingQuerier(src Source, r cohortQuerier) cohortQuerier {
	if pol := c.ws.Data().Policy(src); pol.AggregateOnly() {
		return withholdingQuerier{cohortQuerier: r, pol: pol}
	}
	return r
}
