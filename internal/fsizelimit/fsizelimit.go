//go:build linux

// Package fsizelimit lets a test run one write under a file-size limit
// (RLIMIT_FSIZE, what `ulimit -f` sets), the way a full disk or a quota
// fails a write half-way. The test binary runs the test again in a child
// process, with the limit applied and SIGXFSZ ignored, so that an
// oversized write fails with EFBIG instead of killing the process.
//
// Usage, in a top-level test:
//
//	dir := fsizelimit.Dir(t) // the same folder in the parent and the child
//	path := filepath.Join(dir, "out.png")
//	if !fsizelimit.InChild() {
//		// prepare the files the write must not damage
//	}
//	err := fsizelimit.Run(t, dir, 8<<10, func() error { return save(path) })
//	// the parent gets the write's error (nil when it succeeded)
package fsizelimit

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const (
	envTest  = "CLINSIGHT_FSIZELIMIT_TEST"
	envDir   = "CLINSIGHT_FSIZELIMIT_DIR"
	envLimit = "CLINSIGHT_FSIZELIMIT_BYTES"
	marker   = "FSIZELIMIT-RESULT:"
)

// InChild reports whether this process is the child Run started.
func InChild() bool { return os.Getenv(envTest) != "" }

// Dir returns the test's folder: a new t.TempDir in the parent, the
// parent's folder in the child.
func Dir(t *testing.T) string {
	t.Helper()
	if InChild() {
		return os.Getenv(envDir)
	}
	return t.TempDir()
}

// Run runs write in a child process limited to limit bytes per file and
// returns its error (nil when it succeeded). In the child, Run applies the
// limit, calls write, reports and exits: it does not return.
func Run(t *testing.T, dir string, limit uint64, write func() error) error {
	t.Helper()
	if name := os.Getenv(envTest); name != "" {
		if name != t.Name() {
			t.Skip("another test's child")
		}
		n, err := strconv.ParseUint(os.Getenv(envLimit), 10, 64)
		if err == nil {
			signal.Ignore(syscall.SIGXFSZ)
			err = syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n})
		}
		if err != nil {
			os.Stdout.WriteString(marker + "setup: " + err.Error() + "\n")
			os.Exit(3)
		}
		msg := "ok"
		if werr := write(); werr != nil {
			msg = "error: " + strings.ReplaceAll(werr.Error(), "\n", " ")
		}
		os.Stdout.WriteString(marker + msg + "\n")
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v=false")
	cmd.Env = append(os.Environ(), envTest+"="+t.Name(), envDir+"="+dir, envLimit+"="+strconv.FormatUint(limit, 10))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child process: %v\n%s", err, out)
	}
	i := bytes.Index(out, []byte(marker))
	if i < 0 {
		t.Fatalf("child process reported nothing:\n%s", out)
	}
	line, _, _ := strings.Cut(string(out[i+len(marker):]), "\n")
	if line == "ok" {
		return nil
	}
	msg, ok := strings.CutPrefix(line, "error: ")
	if !ok {
		t.Fatalf("child process: %s", line)
	}
	return errors.New(msg)
}
