package ui

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestResultSummaryNotice: the result status says which cap cut what
// (issue 12, defect 4).
func TestResultSummaryNotice(t *testing.T) {
	limits := datasets.RunnerOptions{MaxRows: 50_000, MaxCellBytes: 1 << 20, MaxResultBytes: 256 << 20}
	cut := &datasets.Result{Rows: make([][]any, 5), CutCells: 5, Limits: limits}
	if s := resultSummary(cut); !strings.Contains(s, "5 values were longer than 1 MiB and cut to their first 1 MiB") {
		t.Errorf("cut values: %q", s)
	}
	big := &datasets.Result{Rows: make([][]any, 12), Truncated: true, TruncatedBy: datasets.CapBytes, Limits: limits}
	if s := resultSummary(big); !strings.Contains(s, "Truncated: Only the first 12 rows are shown: the result reached the size limit of 256 MiB.") ||
		strings.Contains(s, "row cap") {
		t.Errorf("size cap: %q", s)
	}
	rows := &datasets.Result{Rows: make([][]any, 3), Truncated: true, TruncatedBy: datasets.CapRows, Limits: datasets.RunnerOptions{MaxRows: 3}}
	if s := resultSummary(rows); !strings.Contains(s, "row cap (3)") || !strings.Contains(s, "Settings") {
		t.Errorf("row cap: %q", s)
	}
}
