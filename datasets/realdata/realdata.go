// Package realdata locates the public evaluation datasets that sit beside
// the project (../shared/data), for tests and benchmarks that read them.
// The data is never copied into the repository: when it is absent, callers
// skip with a message saying where it was looked for, except in CI (the
// environment variable CI set to true, as CI services do), where a missing
// dataset fails the test: a green CI run must mean the quality floors on the
// real data were checked.
package realdata

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// EnvVar names the environment variable that overrides the data directory.
const EnvVar = "CLINSIGHT_DATA"

// EnvCI names the environment variable that marks a CI run.
const EnvCI = "CI"

// Root returns the shared data directory: $CLINSIGHT_DATA when set, else the
// first "shared/data" found beside the working directory or one of its
// parents. ok is false when none exists.
func Root() (dir string, ok bool) {
	dir, _, ok = find()
	return dir, ok
}

// find is Root that also returns the directories it looked at.
func find() (dir string, looked []string, ok bool) {
	if d := os.Getenv(EnvVar); d != "" {
		return d, []string{d + " ($" + EnvVar + ")"}, isDir(d)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", []string{"(working directory unknown: " + err.Error() + ")"}, false
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		looked = append(looked, cand)
		if isDir(cand) {
			return cand, looked, true
		}
		if parent := filepath.Dir(d); parent == d {
			return "", looked, false
		}
	}
}

// InCI reports whether this is a CI run ($CI is true, 1, ...).
func InCI() bool {
	ci, _ := strconv.ParseBool(os.Getenv(EnvCI))
	return ci
}

// Path returns the path of a dataset file or folder under the shared data
// directory. When it is absent, the test or benchmark is skipped, or fails
// in CI (see [InCI]); the message names every place looked at.
func Path(tb testing.TB, parts ...string) string {
	tb.Helper()
	root, looked, ok := find()
	if !ok {
		missing(tb, fmt.Sprintf("real data not found: looked for %s (set %s or place shared/data beside the repository)", strings.Join(looked, ", "), EnvVar))
		return "" // reached only with a testing.TB whose Fatalf/Skipf return
	}
	p := filepath.Join(append([]string{root}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		missing(tb, fmt.Sprintf("real data %s not available: %v", p, err))
		return ""
	}
	return p
}

// missing skips tb, or fails it in CI, with msg.
func missing(tb testing.TB, msg string) {
	tb.Helper()
	if InCI() {
		tb.Fatalf("%s; this is a CI run ($%s=%s), where the real data must be present", msg, EnvCI, os.Getenv(EnvCI))
		return
	}
	tb.Skipf("%s; skipping", msg)
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
