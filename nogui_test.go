//go:build nogui

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cli"
)

// TestHandOverReportsOnce: the command-line build hands over to the
// desktop app beside it; when the desktop app fails and says why on the
// terminal, the command adds nothing (one line, not two) and exits with
// the desktop app's code.
func TestHandOverReportsOnce(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in desktop app is a shell script")
	}
	dir := t.TempDir()
	gui := filepath.Join(dir, "gui.sh")
	script := "#!/bin/sh\necho \"clinsight: no display: run a subcommand, or set DISPLAY\" >&2\nexit 3\n"
	if err := os.WriteFile(gui, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envGUIBinary, gui)
	ws := t.TempDir()
	// The stand-in writes to this process's stderr; what the command itself
	// prints goes to errOut.
	var out, errOut bytes.Buffer
	f := &cli.Factory{Out: &out, Err: &errOut, Version: "test", RunGUI: runGUI}
	code := cli.Run(context.Background(), f, []string{"--workspace", ws})
	if code != 3 {
		t.Errorf("exit code %d, want the desktop app's 3", code)
	}
	if s := strings.TrimSpace(errOut.String()); s != "" {
		t.Errorf("the command added %q to the desktop app's own message", s)
	}

	// A desktop app that cannot be started at all is the command's to report.
	t.Setenv(envGUIBinary, filepath.Join(dir, "missing"))
	errOut.Reset()
	if code := cli.Run(context.Background(), f, []string{"--workspace", ws}); code != 1 || !strings.Contains(errOut.String(), "desktop app") {
		t.Errorf("missing desktop app: code %d, message %q", code, errOut.String())
	}
}
