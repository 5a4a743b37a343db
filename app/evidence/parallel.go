package evidence

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"
)

// ForEach calls fn(ctx, i) for i in [0, n), at most concurrency calls at a
// time (at least 1), and returns fn's errors by index: an error does not
// stop the other calls. When ctx is cancelled no new call starts and the
// indexes not started get ctx's error; the calls in flight see the
// cancelled ctx. progress, if not nil, is called after each call with the
// number done and n, one call at a time.
func ForEach(ctx context.Context, n, concurrency int, progress func(done, total int), fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	var g errgroup.Group
	g.SetLimit(max(concurrency, 1))
	var mu sync.Mutex
	done := 0
	for i := range n {
		if err := ctx.Err(); err != nil {
			for j := i; j < n; j++ {
				errs[j] = err
			}
			break
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil { // cancelled while waiting for a slot
				errs[i] = err
				return nil
			}
			errs[i] = fn(ctx, i)
			if progress != nil {
				mu.Lock()
				done++
				progress(done, n)
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait() // the calls' errors are in errs
	return errs
}
