// Package progress is the progress report every long operation of Clinsight
// (an import, an index build, a batch of model calls) sends to its front end.
package progress

// Report says how far a long operation has come. Done and Total are in Unit
// (for example "bytes" or "rows"); Total is 0 when it is not known in advance.
type Report struct {
	// Stage names the current step, for example the table being imported.
	Stage string
	// Done is the amount of work finished so far.
	Done int64
	// Total is the amount of work expected, 0 when unknown.
	Total int64
	// Unit is what Done and Total count.
	Unit string
}

// Func receives progress reports. It is called from the goroutine doing the
// work and must return quickly; a nil Func is allowed.
type Func func(Report)

// Send calls f with r when f is set.
func (f Func) Send(r Report) {
	if f != nil {
		f(r)
	}
}
