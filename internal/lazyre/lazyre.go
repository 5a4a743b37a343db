// Package lazyre compiles a package's regular expressions on first use
// rather than in its initializer, so that a program start (clinsight
// --help) does not pay for the patterns of every pipeline it links.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr on its first call (panicking,
// as regexp.MustCompile does, if it is invalid) and returns the same
// *regexp.Regexp on every call, from any goroutine.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
