//go:build !nogui

package main

import (
	"context"
	"os"
	"runtime"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/internal/fynelocale"
	"github.com/clinsight/clinsight/ui"
)

// restoreLocale puts back the locale fynelocale hid from Fyne's
// initializer.
func restoreLocale() { fynelocale.Restore() }

// runGUI opens the desktop app in this process.
func runGUI(ctx context.Context, ws *app.Workspace, screen string) error {
	if err := checkDisplay(runtime.GOOS, os.Getenv); err != nil {
		return err // before Fyne opens a window, which would panic
	}
	return ui.Run(ctx, ws, version, screen)
}
