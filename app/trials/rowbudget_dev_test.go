package trials

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/vectorstore"
)

// BenchmarkDevRowBudget chose [Options.RowBudget] on development data: the
// 248 trials of the SIGIR-BIRCO dev corpus are added to the synthetic
// registry of BenchmarkScale (CLINSIGHT_BENCH_DB, made by a run of
// BenchmarkScale with that variable; the copy with the dev trials is kept
// beside it), and the 9 dev topics are ranked over the whole index
// without a model, for each budget in CLINSIGHT_BENCH_BUDGETS (default
// "3000 5000 8000 15000"). Reported per budget: NDCG@10 against the dev
// judgments (the synthetic trials are unjudged, so not relevant), the
// share of the judged relevant trials among the 2,000 candidates, and the
// matching time. The test split stays untouched for
// TestEvalSIGIRBIRCOPoolNoModel.
//
//	CLINSIGHT_BENCH_DB=/tmp/trials375k.sqlite CGO_ENABLED=0 go test -tags ci -run '^$' -bench BenchmarkDevRowBudget -benchtime 1x -timeout 60m ./app/trials/
func BenchmarkDevRowBudget(b *testing.B) {
	base := os.Getenv("CLINSIGHT_BENCH_DB")
	if base == "" {
		b.Skip("CLINSIGHT_BENCH_DB names no synthetic registry (see BenchmarkScale)")
	}
	ctx := context.Background()
	corpus := realdata.Path(b, "trial-matching", "sigir_birco_subset", "dev_corpus.jsonl")
	topics := readTopicsFile(b, realdata.Path(b, "trial-matching", "sigir_birco_subset", "dev_queries.jsonl"))
	qrels := readQrelsFile(b, realdata.Path(b, "trial-matching", "sigir_birco_subset", "dev_qrels.tsv"))
	devPath := base + ".dev.sqlite"
	if _, err := os.Stat(devPath); err != nil {
		copyFile(b, base, devPath)
		db := benchOpen(b, devPath)
		if _, err := Import(ctx, db, []string{corpus}, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
	ro, err := OpenForMatching(ctx, devPath)
	if err != nil {
		b.Fatal(err)
	}
	defer ro.Close()
	emb := vectorstore.NewLexicalEmbedder(0)
	items := newMemItems(emb)
	if _, err := IndexItems(ctx, ro, items, nil); err != nil {
		b.Fatal(err)
	}
	budgets := []int{3000, 5000, 8000, 15000}
	if s := os.Getenv("CLINSIGHT_BENCH_BUDGETS"); s != "" {
		budgets = nil
		for _, f := range strings.Fields(s) {
			v, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			budgets = append(budgets, v)
		}
	}
	b.ResetTimer()
	for _, budget := range budgets {
		p, err := New(Config{DB: ro, Embedder: emb, Items: items, Options: Options{RowBudget: budget}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		run, s, err := p.Evaluate(ctx, topics, qrels, EvalOptions{Depth: 2000})
		if err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start) / time.Duration(len(topics))
		found, rel := 0, 0
		for topic, judged := range qrels {
			in := map[string]bool{}
			for _, e := range run[topic] {
				in[e.Doc] = true
			}
			for d, g := range judged {
				if g > 0 {
					rel++
					if in[d] {
						found++
					}
				}
			}
		}
		b.Logf("row budget %6d: NDCG@10 %.4f  P@10 %.4f  RR %.4f  relevant in the candidates %d/%d  %s per topic (%d topics)",
			budget, s.NDCG10, s.P10, s.RR, found, rel, elapsed.Round(time.Millisecond), s.Topics)
	}
}

func copyFile(b *testing.B, from, to string) {
	b.Helper()
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
