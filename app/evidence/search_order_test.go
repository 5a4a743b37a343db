package evidence

import (
	"context"
	"testing"
)

// TestSearchOrder checks Search against FTS5 queried directly: the same
// number of matches, the hits in bm25 order (ties by rowid) with the same
// scores, and a limited search giving the first hits of the full one.
func TestSearchOrder(t *testing.T) {
	db, c := searchCorpus(t)
	ctx := context.Background()
	for _, q := range []string{
		`"hepatocellular carcinoma"[ti] AND ("local tumor progression" OR ablation)`,
		`(carboplatin* OR pembrolizumab) AND breast NOT "single-arm"[ti]`,
		`brachytherapy[tiab] AND prostat*`,
		`"Leukemia, Myeloid, Acute"[mh] OR leukaem*`,
		`cancer`,
	} {
		full, err := c.Search(ctx, q, 0)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var total int64
		if err := db.QueryRow(`SELECT count(*) FROM evidence_fts WHERE evidence_fts MATCH ?`, full.FTS5).Scan(&total); err != nil {
			t.Fatal(err)
		}
		if full.Total != total || int64(len(full.Hits)) != total || total < 5 {
			t.Errorf("%s: total %d, %d hits; FTS5 counts %d", q, full.Total, len(full.Hits), total)
		}
		rows, err := db.Query(`SELECT r.id, bm25(evidence_fts, 3.0, 1.0, 2.0) AS s FROM evidence_fts JOIN evidence_records r ON r.rowid = evidence_fts.rowid
			WHERE evidence_fts MATCH ? ORDER BY s, evidence_fts.rowid`, full.FTS5)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		for rows.Next() {
			var id string
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				t.Fatal(err)
			}
			if i < len(full.Hits) && (full.Hits[i].ID != id || full.Hits[i].Score != score) {
				t.Errorf("%s: hit %d is %s (%g), FTS5 ranks %s (%g)", q, i+1, full.Hits[i].ID, full.Hits[i].Score, id, score)
			}
			i++
		}
		rows.Close()
		top, err := c.Search(ctx, q, 3)
		if err != nil {
			t.Fatal(err)
		}
		if top.Total != full.Total || len(top.Hits) != 3 {
			t.Errorf("%s: limited search %d of %d", q, len(top.Hits), top.Total)
			continue
		}
		for k := range top.Hits {
			if top.Hits[k].ID != full.Hits[k].ID {
				t.Errorf("%s: limited hit %d is %s, full %s", q, k+1, top.Hits[k].ID, full.Hits[k].ID)
			}
		}
	}
}
