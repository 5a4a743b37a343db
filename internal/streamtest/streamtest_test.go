package streamtest

import (
	"reflect"
	"runtime"
	"testing"
	"time"
)

// TestHeapSamplerSeesAnAllocation: a 64 MB buffer held until the sampler has
// read the heap at least twice shows in the peak, and the base is the heap
// before it.
func TestHeapSamplerSeesAnAllocation(t *testing.T) {
	const size = 64 << 20
	s := SampleHeap(time.Millisecond)
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	// Wait for a sample taken after the allocation (with a deadline).
	deadline := time.Now().Add(30 * time.Second)
	for s.peak.Load() < s.base+size/2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	runtime.KeepAlive(buf)
	base, peak := s.Stop()
	if peak < base+size/2 {
		t.Fatalf("peak %d bytes, base %d: the 64 MB buffer was not seen", peak, base)
	}
	if base > peak {
		t.Fatalf("base %d above peak %d", base, peak)
	}
}

// rows is a stream of fixed rows that reuses its row slice, as the
// engines' streams do.
type rows struct {
	data   [][]any
	i      int
	row    []any
	err    error
	closed bool
}

func (r *rows) Next() bool {
	if r.i >= len(r.data) {
		return false
	}
	r.row = append(r.row[:0], r.data[r.i]...)
	r.i++
	return true
}
func (r *rows) Row() []any   { return r.row }
func (r *rows) Err() error   { return r.err }
func (r *rows) Close() error { r.closed = true; return nil }

// TestReadAllCopiesRowsAndCloses: every row is kept as it was read
// although the stream reuses its slice, and the stream is closed.
func TestReadAllCopiesRowsAndCloses(t *testing.T) {
	s := &rows{data: [][]any{{int64(1), "a"}, {int64(2), "b"}, {int64(3), nil}}}
	got := ReadAll(t, s)
	if !reflect.DeepEqual(got, s.data) || !s.closed {
		t.Fatalf("read %v (closed %v), want %v", got, s.closed, s.data)
	}
}
