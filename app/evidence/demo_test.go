package evidence

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestDemoData(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	if err := DemoData(ctx, db, 7); err != nil {
		t.Fatal(err)
	}
	if err := DemoData(ctx, db, 7); err != nil { // again: replaced, not doubled
		t.Fatal(err)
	}
	c := NewCorpus(db)
	if n, err := c.Count(ctx); err != nil || n != 300 {
		t.Fatalf("count %d %v", n, err)
	}
	sr, err := c.Search(ctx, `"hepatocellular carcinoma"[ti] AND "local tumor progression"[ab]`, 0)
	if err != nil || sr.Total < 20 || len(sr.Hits) != int(sr.Total) {
		t.Fatalf("demo search: %d matches, %d hits, %v", sr.Total, len(sr.Hits), err)
	}
	// With a limit: the count is still of all matches, the hits are the best.
	top, err := c.Search(ctx, `"hepatocellular carcinoma"[ti] AND "local tumor progression"[ab]`, 3)
	if err != nil || top.Total != sr.Total || len(top.Hits) != 3 || top.Hits[0].ID != sr.Hits[0].ID || top.Hits[0].Score > top.Hits[2].Score {
		t.Errorf("limited search: %d matches, %d hits, %v", top.Total, len(top.Hits), err)
	}
	// The stored record reads back equal to the generated one.
	want := DemoRecords(300, 7)
	recs, err := c.Records(ctx, []string{"demo:1", "demo:2"})
	if err != nil || len(recs) != 2 {
		t.Fatal(err)
	}
	for i, r := range recs {
		w := want[i]
		w.Line = 0
		if !reflect.DeepEqual(r, w) {
			t.Errorf("stored %+v\nwant   %+v", r, w)
		}
	}
	if !strings.Contains(want[0].Title, "synthetic demo record 1") || want[0].PMID != "" {
		t.Errorf("demo record %+v", want[0])
	}
	if !reflect.DeepEqual(DemoRecords(5, 1), DemoRecords(5, 1)) || reflect.DeepEqual(DemoRecords(5, 1), DemoRecords(5, 2)) {
		t.Error("DemoRecords is not deterministic per seed")
	}
}
