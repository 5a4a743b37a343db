// Command clinsight is the offline research assistant for clinical data:
// the desktop app by default, and CLI subcommands for batch work
// (see 'clinsight --help').
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cli"
	"github.com/clinsight/clinsight/internal/fynelocale"
	"github.com/clinsight/clinsight/ui"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	fynelocale.Restore() // the locale as the user set it, now that Fyne has initialized
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	f := &cli.Factory{
		In:      os.Stdin,
		Out:     os.Stdout,
		Err:     os.Stderr,
		Version: version,
		RunGUI: func(ctx context.Context, ws *app.Workspace, screen string) error {
			return ui.Run(ctx, ws, version, screen)
		},
	}
	code := cli.Run(ctx, f, os.Args[1:])
	stop()
	os.Exit(code)
}
