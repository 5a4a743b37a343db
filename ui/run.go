// Package ui is Clinsight's desktop interface (Fyne): one file per screen,
// no business logic. Screens call the app services, never SQL, HTTP or files
// directly, keep that work off the UI goroutine and update widgets through
// fyne.Do.
package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/assets"
)

// AppID is the application's unique identifier (also in FyneApp.toml).
const AppID = "org.clinsight.app"

// Run opens the main window on the workspace and returns when it is closed.
func Run(ctx context.Context, ws *app.Workspace, version string) error {
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.IconPNG))
	mw := NewMainWindow(ctx, a, ws, version)
	mw.Window.ShowAndRun()
	return nil
}

// MainWindow is the application window with one navigation tab per screen.
type MainWindow struct {
	Window fyne.Window
	Tabs   *container.AppTabs
	Data   *DataScreen
}

// NewMainWindow builds the main window. It is separate from Run so tests
// can build it on Fyne's test app.
func NewMainWindow(ctx context.Context, a fyne.App, ws *app.Workspace, version string) *MainWindow {
	w := a.NewWindow("Clinsight " + version + " — " + ws.Dir())
	mw := &MainWindow{Window: w, Data: NewDataScreen(ctx, ws, w, version)}
	mw.Tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Data", theme.StorageIcon(), mw.Data.Content()),
	)
	mw.Tabs.SetTabLocation(container.TabLocationLeading)
	w.SetContent(mw.Tabs)
	w.Resize(fyne.NewSize(1100, 720))
	if warnings := ws.Warnings(); len(warnings) > 0 {
		dialog.ShowInformation("Workspace", strings.Join(warnings, "\n"), w)
	}
	mw.Data.Refresh()
	return mw
}
