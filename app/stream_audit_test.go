package app

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
)

// TestStreamAuditRecords: Data.Stream records the statement before its
// rows and, on Close, with the rows read; an unconfirmed streamed
// patient-level export records the refused statement.
func TestStreamAuditRecords(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	lastSQL := func() audit.Record {
		t.Helper()
		recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		for i := len(recs) - 1; i >= 0; i-- {
			if recs[i].Action == audit.ActionSQL {
				return recs[i]
			}
		}
		t.Fatal("no SQL record")
		return audit.Record{}
	}
	res := rawQuery(t, ws, src, streamQuery)
	rows, err := ws.Data().Stream(ctx, src, streamQuery, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lastSQL().Details["rows"]; ok {
		t.Errorf("the record before the rows names a row count: %v", lastSQL().Details)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if rec := lastSQL(); n != len(res.Rows) || fmt.Sprint(rec.Details["rows"]) != fmt.Sprint(n) || rec.Details["sql"] != streamQuery {
		t.Errorf("closed after %d rows of %d: record %v", n, len(res.Rows), rec.Details)
	}

	_, err = ws.Data().ExportQuery(ctx, filepath.Join(t.TempDir(), "refused.xlsx"), src, streamQuery,
		datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{Source: src, Query: streamQuery})
	if err == nil {
		t.Fatal("an unconfirmed patient-level export was written")
	}
	if rec := lastSQL(); rec.Details["sql"] != streamQuery || !strings.Contains(fmt.Sprint(rec.Details["error"]), "must be confirmed") {
		t.Errorf("refused export's record %v", rec.Details)
	}
}
