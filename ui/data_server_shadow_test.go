package ui

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/postgres"
)

// TestConnectionSummaryWarnsAReadOnlyRole: a warning that is not about
// writing (objects named like PostgreSQL's own in the schemas read) is
// shown for a read-only role too.
func TestConnectionSummaryWarnsAReadOnlyRole(t *testing.T) {
	got := connectionSummary(postgres.ConnectionReport{ServerVersion: "15.99", User: "reader", Database: "ehr", Tables: 3,
		Shadows: []string{"clin.lower(character varying)"}, Warning: "The schemas read hold functions or operators named like PostgreSQL's own (clin.lower(character varying))."})
	for _, want := range []string{"Warning: The schemas read hold", "clin.lower(character varying)", "The role can only read."} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
}
