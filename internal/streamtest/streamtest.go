// Package streamtest is test support for streamed query results
// (datasets.RowStream, on SQLite and PostgreSQL, and the exports reading
// them): reading a stream whole, and sampling the Go heap while one is
// read, for the tests that bound a stream's memory.
//
// It does not import datasets, so that package's own tests can use it.
package streamtest

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// Stream is what ReadAll needs of a datasets.RowStream.
type Stream interface {
	Next() bool
	Row() []any
	Err() error
	Close() error
}

// ReadAll reads every row of s (each row copied: a stream reuses its row),
// closes it and fails the test on the stream's error.
func ReadAll(t testing.TB, s Stream) [][]any {
	t.Helper()
	defer s.Close()
	var rows [][]any
	for s.Next() {
		rows = append(rows, append([]any(nil), s.Row()...))
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// HeapSampler reads the heap in use at a fixed interval until Stop.
type HeapSampler struct {
	base       uint64
	peak       atomic.Uint64
	stop, done chan struct{}
}

// SampleHeap collects garbage, records the heap in use and samples it
// every interval until Stop.
func SampleHeap(every time.Duration) *HeapSampler {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	s := &HeapSampler{base: m.HeapInuse, stop: make(chan struct{}), done: make(chan struct{})}
	go s.run(every)
	return s
}

func (s *HeapSampler) run(every time.Duration) {
	defer close(s.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > s.peak.Load() {
			s.peak.Store(m.HeapInuse)
		}
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}

// Stop ends the sampling (waiting for the sampler to finish) and returns
// the heap in use before Start and its peak since, in bytes. Call it once.
func (s *HeapSampler) Stop() (base, peak uint64) {
	close(s.stop)
	<-s.done
	return s.base, s.peak.Load()
}
