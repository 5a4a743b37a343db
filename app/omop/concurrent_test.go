package omop

import (
	"context"
	"sync"
	"testing"
)

// TestResolverConcurrent searches from several goroutines at once (the
// spelling vocabulary loading under them) and expects the sequential
// results.
func TestResolverConcurrent(t *testing.T) {
	db := demoDB(t)
	ctx := context.Background()
	want := map[string]int64{}
	seq := resolver(t, db)
	for _, tc := range demoPhrases {
		cands, err := seq.Search(ctx, NewTerm(tc.phrase, tc.domain), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(cands) > 0 {
			want[tc.phrase] = cands[0].ID
		}
	}
	r := resolver(t, db) // fresh: the vocabulary is loaded concurrently
	var wg sync.WaitGroup
	errs := make(chan string, len(demoPhrases)*4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tc := range demoPhrases {
				cands, err := r.Search(ctx, NewTerm(tc.phrase, tc.domain), 1)
				if err != nil {
					errs <- err.Error()
					return
				}
				var got int64
				if len(cands) > 0 {
					got = cands[0].ID
				}
				if got != want[tc.phrase] {
					errs <- tc.phrase
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent search differs or failed: %s", e)
	}
}
