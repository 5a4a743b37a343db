package evidence

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

func TestForEachBoundsConcurrencyAndKeepsErrorsByIndex(t *testing.T) {
	const n, limit = 20, 3
	var running, peak atomic.Int32
	var mu sync.Mutex
	var progress []int
	errs := ForEach(context.Background(), n, limit, func(done, total int) {
		if total != n {
			t.Errorf("progress total %d, want %d", total, n)
		}
		progress = append(progress, done) // ForEach serialises progress
	}, func(ctx context.Context, i int) error {
		r := running.Add(1)
		defer running.Add(-1)
		mu.Lock()
		peak.Store(max(peak.Load(), r))
		mu.Unlock()
		if i%5 == 0 {
			return errors.New("failed")
		}
		return nil
	})
	for i, err := range errs {
		if (err != nil) != (i%5 == 0) {
			t.Errorf("index %d: error %v", i, err)
		}
	}
	if p := peak.Load(); p > limit || p < 1 {
		t.Errorf("at most %d calls ran at once, want 1 to %d", p, limit)
	}
	if len(progress) != n || progress[n-1] != n {
		t.Errorf("progress %v, want 1 to %d", progress, n)
	}
	for i, d := range progress {
		if d != i+1 {
			t.Fatalf("progress %v not counting up", progress)
		}
	}
}

func TestForEachStopsStartingOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	const n = 10
	var started atomic.Int32
	errs := ForEach(ctx, n, 1, nil, func(ctx context.Context, i int) error {
		started.Add(1)
		if i == 2 {
			cancel()
			<-ctx.Done() // the call in flight sees the cancelled context
			return ctx.Err()
		}
		return nil
	})
	if got := started.Load(); got != 3 {
		t.Errorf("%d calls started, want 3 (none after the cancel)", got)
	}
	for i, err := range errs {
		switch {
		case i < 2 && err != nil:
			t.Errorf("index %d (before the cancel): %v", i, err)
		case i >= 2 && !errors.Is(err, context.Canceled):
			t.Errorf("index %d: error %v, want context.Canceled", i, err)
		}
	}
}
