// Package ui is Clinsight's desktop interface (Fyne): one file per screen,
// no business logic. Screens call the app services, never SQL, HTTP or files
// directly, keep that work off the UI goroutine and update widgets through
// fyne.Do.
package ui

import (
	"context"
	"fmt"
	"log/slog"
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

// Run opens the main window on the workspace, showing the named screen
// first (a tab title such as "data" or "settings"; "" for the first), and
// returns when it is closed.
func Run(ctx context.Context, ws *app.Workspace, version, screen string) error {
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(fyne.NewStaticResource("icon.png", assets.IconPNG))
	a.Settings().SetTheme(NewTheme())
	mw := NewMainWindow(ctx, a, ws, version)
	if err := mw.Show(screen); err != nil {
		return err
	}
	mw.Window.ShowAndRun()
	return nil
}

// Show selects the screen whose tab title matches name (case-insensitive,
// ignoring spaces and dashes); "" keeps the current one.
func (mw *MainWindow) Show(name string) error {
	if name == "" {
		return nil
	}
	key := func(s string) string { return strings.ToLower(strings.NewReplacer(" ", "", "-", "").Replace(s)) }
	var titles []string
	for i, item := range mw.Tabs.Items {
		if key(item.Text) == key(name) {
			mw.Tabs.SelectIndex(i)
			return nil
		}
		titles = append(titles, key(item.Text))
	}
	return fmt.Errorf("no screen named %q; screens: %s", name, strings.Join(titles, ", "))
}

// MainWindow is the application window with one navigation tab per screen.
type MainWindow struct {
	Window      fyne.Window
	Tabs        *container.AppTabs
	Data        *DataScreen
	Settings    *SettingsScreen
	Meta        *MetaScreen
	Impressions *ImpressionsScreen
	Cohort      *CohortScreen
	Trials      *TrialsScreen
	Evidence    *EvidenceScreen
	Audit       *AuditScreen
	// settings is the workspace's settings service (the window size is
	// remembered there).
	settings app.SettingsService
	// HostBar is the status bar: a red warning while the model server is
	// reached over plain http (settings.go).
	HostBar *HostStatusBar
}

// NewMainWindow builds the main window. It is separate from Run so tests
// can build it on Fyne's test app.
func NewMainWindow(ctx context.Context, a fyne.App, ws *app.Workspace, version string) *MainWindow {
	w := a.NewWindow("Clinsight " + version + " — " + ws.Dir())
	mw := &MainWindow{Window: w, settings: ws.Settings(), Data: NewDataScreen(ctx, ws.Data(), w, version), Settings: NewSettingsScreen(ctx, ws.Settings(), w)}
	mw.Meta = NewMetaScreen(ctx, ws.Meta(), w, version)
	mw.Audit = NewAuditScreen(ctx, ws.Audit(), w)
	mw.Tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Data", theme.StorageIcon(), mw.Data.Content()),
		container.NewTabItemWithIcon("Cohort", theme.SearchIcon(), mw.cohortTab(ctx, ws.Cohort(), w, version)),
		container.NewTabItemWithIcon("Trials", theme.ListIcon(), mw.trialsTab(ctx, ws.Trials(), w, version)),
		container.NewTabItemWithIcon("Evidence", theme.FileTextIcon(), mw.evidenceTab(ctx, ws, w, version)),
		container.NewTabItemWithIcon("Meta-analysis", theme.GridIcon(), mw.Meta.Content()),
		container.NewTabItemWithIcon("Impressions", theme.DocumentIcon(), mw.impressionsTab(ctx, ws.Impressions(), w, version)),
		container.NewTabItemWithIcon("Audit", theme.HistoryIcon(), mw.Audit.Content()),
		container.NewTabItemWithIcon("Settings", theme.SettingsIcon(), mw.Settings.Content()),
	)
	mw.Tabs.OnSelected = func(t *container.TabItem) {
		if t.Text == "Audit" {
			mw.Audit.Refresh() // records written since the view was last shown
		}
	}
	// The tabs along the top: at the left, with their icons above the
	// names, the eight took 110 pixels of a 1024-pixel-wide window and did
	// not fit a 640-pixel-high one (the last ones went into a "more" menu).
	mw.Tabs.SetTabLocation(container.TabLocationTop)
	mw.HostBar = NewHostStatusBar(ws.Settings())
	mw.Settings.OnHostChanged = mw.HostBar.Refresh
	mw.Settings.OnModelsChecked = mw.applyModels // settings_models.go
	w.SetContent(container.NewBorder(nil, mw.HostBar.Content(), nil, nil, mw.Tabs))
	w.Resize(openingSize(ws.Settings().Config().Window))
	w.SetCloseIntercept(mw.requestClose)
	w.SetOnClosed(mw.closed)
	if warnings := ws.Warnings(); len(warnings) > 0 {
		dialog.ShowInformation("Workspace", strings.Join(warnings, "\n"), w)
	}
	ws.OnWarning(func(msg string) { // found while in use, such as a search index being rebuilt
		fyne.Do(func() { dialog.ShowInformation("Workspace", msg, w) })
	})
	mw.Data.Refresh()
	mw.Settings.Check()
	return mw
}

// The main window opens at the size the user left it at, else at
// 1024×640, which fits a 1280×720 laptop display beside its panels and on
// which every screen fits (TestScreensAtBothSizes); a remembered size is
// kept within 800×500 and 3840×2160, so a size saved on a large monitor
// stays usable.
const (
	defaultWidth, defaultHeight = 1024, 640
	minWidth, minHeight         = 800, 500
	maxWidth, maxHeight         = 3840, 2160
)

// openingSize is the size to open the main window at, from the remembered
// size (zero when none).
func openingSize(saved app.WindowSize) fyne.Size {
	if saved.Width <= 0 || saved.Height <= 0 {
		return fyne.NewSize(defaultWidth, defaultHeight)
	}
	return fyne.NewSize(float32(min(max(saved.Width, minWidth), maxWidth)), float32(min(max(saved.Height, minHeight), maxHeight)))
}

// requestClose runs when the user closes the main window (its close
// intercept): the window closes once the open review is saved, or, when it
// cannot be, once the user has chosen what to do with it
// (EvidenceScreen.closeReviews).
func (mw *MainWindow) requestClose() {
	if mw.Evidence == nil {
		mw.Window.Close()
		return
	}
	mw.Evidence.closeReviews(mw.Window.Close)
}

// closed runs when the main window closes: it remembers the window's size
// in the workspace settings and saves the open review (when the window
// closes without requestClose, as when the application quits: a review
// that cannot be saved is then written to a recovery copy).
func (mw *MainWindow) closed() {
	size := mw.Window.Canvas().Size()
	ws := app.WindowSize{Width: int(size.Width + 0.5), Height: int(size.Height + 0.5)}
	if ws.Width > 0 && ws.Height > 0 && ws != mw.settings.Config().Window {
		if err := mw.settings.UpdateConfig(func(c *app.Config) { c.Window = ws }); err != nil {
			slog.Warn("the window size could not be remembered", "err", err)
		}
	}
	if mw.Evidence != nil {
		mw.Evidence.saveBeforeClose()
	}
}
