package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestCheckPlansTheQuery: Check finds what only planning finds (a
// constant division by zero) with the position marked in the statement
// itself, not in the EXPLAIN put in front of it; a statement that would
// fail this way is never run.
func TestCheckPlansTheQuery(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	ctx := context.Background()
	err := e.Check(ctx, "SELECT subject_id FROM patients WHERE anchor_age > 1/0")
	var qe *datasets.QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "division by zero") || strings.Contains(qe.Message, "EXPLAIN") {
		t.Fatalf("Check of 1/0: %v", err)
	}
	err = e.Check(ctx, "SELECT subject_id FROM patients WHERE dob > '2130-13-45'::date")
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "LINE 1: SELECT subject_id FROM patients WHERE dob > '2130-13-45'::date\n") {
		t.Fatalf("Check of a bad date: %v", err)
	}
	if err := e.Check(ctx, "SELECT gender, count(*) FROM patients GROUP BY gender"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestScanReadsInTheEnginesTransaction: Scan streams the rows of
// Clinsight's own statements with the Scanner's types, in the engine's
// schemas, and a write is refused by the server even there.
func TestScanReadsInTheEnginesTransaction(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	ctx := context.Background()
	var got [][]any
	err := e.Scan(ctx, "SELECT subject_id, gender, score, weight, dob, alive FROM patients ORDER BY subject_id", func(vals []any) error {
		got = append(got, append([]any(nil), vals...))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0][0] != int64(1) || got[0][1] != "F" || got[0][2] != 1.5 || got[0][3] != 61.25 ||
		got[0][4] != "2130-01-02" || got[0][5] != int64(1) || got[1][3] != nil {
		t.Errorf("rows = %v", got)
	}
	n, err := datasets.ScanInt64s(ctx, e, "SELECT count(*), count(dob) FROM patients")
	if err != nil || n[0] != 3 || n[1] != 2 {
		t.Errorf("counts = %v, %v", n, err)
	}
	if err := e.Scan(ctx, "DELETE FROM patients RETURNING subject_id", func([]any) error { return nil }); err == nil {
		t.Error("a write through Scan was not refused")
	}
	if n, _ := datasets.ScanInt64s(ctx, e, "SELECT count(*) FROM patients"); n[0] != 3 {
		t.Errorf("patients after the refused write: %d", n[0])
	}
}
