//go:build nogui

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cli"
)

// restoreLocale does nothing: without Fyne, nothing hid the locale.
func restoreLocale() {}

// runGUI hands over to the desktop app's binary (see guiBinary) on the
// same workspace and screen, and waits for it.
func runGUI(ctx context.Context, ws *app.Workspace, screen string) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the desktop app: %w", err)
	}
	path, err := guiBinary(self, os.Getenv(envGUIBinary))
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, path, guiArgs(ws.Dir(), screen)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() > 0 {
			// The desktop app said what went wrong on the same terminal.
			return &cli.ReportedError{Code: exit.ExitCode()}
		}
		return fmt.Errorf("desktop app %s: %w", path, err)
	}
	return nil
}
