//go:build !nogui

package main

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cli"
)

// TestNoDisplayOneLine: launching the desktop app without a display
// prints one line and exits 1, without opening a window (or panicking).
func TestNoDisplayOneLine(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		t.Skip("there is always a display")
	}
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	var out, errw bytes.Buffer
	f := &cli.Factory{In: strings.NewReader(""), Out: &out, Err: &errw, Version: "test", RunGUI: runGUI}
	code := cli.Run(context.Background(), f, []string{"--workspace", t.TempDir()})
	lines := strings.Split(strings.TrimSpace(errw.String()), "\n")
	if code != 1 || lines[len(lines)-1] != "clinsight: no display: run a subcommand, or set DISPLAY" || strings.Contains(errw.String(), "panic") {
		t.Errorf("exit %d, stderr %q", code, errw.String())
	}
}
