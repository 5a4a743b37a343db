package datasets

// Progress reports how far a long operation (an import, an index build) has
// come. Done and Total are in Unit (for example "bytes" or "rows"); Total is 0
// when it is not known in advance.
type Progress struct {
	// Stage names the current step, for example the table being imported.
	Stage string
	// Done is the amount of work finished so far.
	Done int64
	// Total is the amount of work expected, 0 when unknown.
	Total int64
	// Unit is what Done and Total count.
	Unit string
}

// ProgressFunc receives progress reports. It is called from the goroutine
// doing the work and must return quickly; a nil ProgressFunc is allowed.
type ProgressFunc func(Progress)

// report calls f when it is set.
func (f ProgressFunc) report(p Progress) {
	if f != nil {
		f(p)
	}
}
