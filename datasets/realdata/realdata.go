// Package realdata locates the public evaluation datasets that sit beside
// the project (../shared/data), for tests and benchmarks that read them.
// The data is never copied into the repository: when it is absent, callers
// skip with a message saying where it was looked for.
package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

// EnvVar names the environment variable that overrides the data directory.
const EnvVar = "CLINSIGHT_DATA"

// Root returns the shared data directory: $CLINSIGHT_DATA when set, else the
// first "shared/data" found beside the working directory or one of its
// parents. ok is false when none exists.
func Root() (dir string, ok bool) {
	if d := os.Getenv(EnvVar); d != "" {
		if isDir(d) {
			return d, true
		}
		return d, false
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		cand := filepath.Join(d, "shared", "data")
		if isDir(cand) {
			return cand, true
		}
		if parent := filepath.Dir(d); parent == d {
			return "", false
		}
	}
}

// Path returns the path of a dataset file or folder under the shared data
// directory, skipping the test or benchmark when it is absent.
func Path(tb testing.TB, parts ...string) string {
	tb.Helper()
	root, ok := Root()
	if !ok {
		tb.Skipf("real data not found (set %s or place shared/data beside the repository); skipping", EnvVar)
	}
	p := filepath.Join(append([]string{root}, parts...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("real data %s not available: %v; skipping", p, err)
	}
	return p
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
