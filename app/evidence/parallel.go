package evidence

import (
	"context"
	"sync"
)

// ForEach calls fn(ctx, i) for i in [0, n), at most concurrency calls at a
// time (at least 1), and returns fn's errors by index. When ctx is
// cancelled no new call starts and the indexes not started get ctx's
// error; the calls in flight see the cancelled ctx. progress, if not nil,
// is called after each call with the number done and n, one call at a
// time.
func ForEach(ctx context.Context, n, concurrency int, progress func(done, total int), fn func(ctx context.Context, i int) error) []error {
	errs := make([]error, n)
	sem := make(chan struct{}, max(concurrency, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i := range n {
		select {
		case <-ctx.Done():
		case sem <- struct{}{}:
			if ctx.Err() != nil { // both were ready: do not start
				<-sem
			}
		}
		if err := ctx.Err(); err != nil {
			for j := i; j < n; j++ {
				errs[j] = err
			}
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(ctx, i)
			if progress != nil {
				mu.Lock()
				done++
				progress(done, n)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs
}
