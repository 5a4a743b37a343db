package cohort

import (
	"context"
	"os"
	"testing"

	"github.com/clinsight/clinsight/app/eval"
)

// TestRetrievalDevReport prints the retrieval figures of both halves and,
// with CLINSIGHT_RETRIEVAL_MISSES=1, the misses of the dev half only (the
// half vocabulary and constants are chosen on).
func TestRetrievalDevReport(t *testing.T) {
	if os.Getenv("CLINSIGHT_RETRIEVAL_DEV") == "" {
		t.Skip("a development aid: set CLINSIGHT_RETRIEVAL_DEV=1")
	}
	for _, gen := range []bool{false, true} {
		var ix *Index
		var dir string
		if gen {
			ix, dir = ehrsqlGeneratedIndex(t)
		} else {
			ix, dir = ehrsqlIndex(t)
		}
		items, err := eval.LoadEHRSQL(dir, "valid")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := EvaluateRetrieval(context.Background(), ix, items, 5)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("generated=%v all %d: %.4f / %.4f; dev %d: %.4f / %.4f; test %d: %.4f / %.4f", gen,
			rep.N, rep.RecallAtK, rep.AllTablesShare, rep.Dev.N, rep.Dev.RecallAtK, rep.Dev.AllTablesShare,
			rep.Test.N, rep.Test.RecallAtK, rep.Test.AllTablesShare)
		if os.Getenv("CLINSIGHT_RETRIEVAL_MISSES") != "" {
			for _, c := range rep.Cases {
				if c.Half == "dev" && c.Recall < 1 && gen == (os.Getenv("CLINSIGHT_RETRIEVAL_MISSES") == "gen") {
					t.Logf("miss %.2f %q gold %v got %v", c.Recall, c.Question, c.Gold, c.Retrieved)
				}
			}
		}
	}
}
