// Command clinsight is the offline research assistant for clinical data:
// the desktop app by default, and CLI subcommands for batch work
// (see 'clinsight --help').
//
// The default build links the desktop app (gui.go). A build with -tags
// nogui is the command line alone (nogui.go): it links neither Fyne nor
// the screens, so a subcommand starts without their package
// initialisation, and without a subcommand it hands over to the desktop
// app's binary (see guiBinary).
package main

import (
	"context"
	"errors"
	"os"
	"os/signal"

	"github.com/clinsight/clinsight/app/cli"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	restoreLocale() // the locale as the user set it, now that Fyne (if linked) has initialized
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	f := &cli.Factory{
		In:      os.Stdin,
		Out:     os.Stdout,
		Err:     os.Stderr,
		Version: version,
		RunGUI:  runGUI,
	}
	code := cli.Run(ctx, f, os.Args[1:])
	stop()
	os.Exit(code)
}

// errNoDisplay is the one line printed when the desktop app is launched
// where there is no display to open it on.
var errNoDisplay = errors.New("no display: run a subcommand, or set DISPLAY")

// checkDisplay reports errNoDisplay on Linux (and the BSDs) when neither
// DISPLAY nor WAYLAND_DISPLAY is set: there the windowing library would
// panic instead of saying so.
func checkDisplay(goos string, getenv func(string) string) error {
	switch goos {
	case "windows", "darwin", "ios", "android", "js", "wasip1":
		return nil
	}
	if getenv("DISPLAY") == "" && getenv("WAYLAND_DISPLAY") == "" {
		return errNoDisplay
	}
	return nil
}
