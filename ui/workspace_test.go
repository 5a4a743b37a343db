package ui

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// newDemoSourceWorkspace opens a workspace with a source named name whose
// database fill writes (a pipeline's demo data), and a scripted Ollama
// server as its host with chat model "m" configured when chat is set.
func newDemoSourceWorkspace(t *testing.T, name string, fill func(context.Context, *sql.DB) error, chat bool) (*app.Workspace, *ollamatest.Server) {
	t.Helper()
	ctx := context.Background()
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	path := filepath.Join(t.TempDir(), name+".sqlite")
	db, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(ctx, db); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := ws.RegisterSQLite(ctx, path, name); err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	if err := ws.UpdateConfig(func(c *app.Config) {
		c.OllamaHost = srv.URL
		c.Models.Chat = ""
		if chat {
			c.Models.Chat = "m"
		}
	}); err != nil {
		t.Fatal(err)
	}
	return ws, srv
}

// newEmptyWorkspace opens a workspace without data sources.
func newEmptyWorkspace(t *testing.T) *app.Workspace {
	t.Helper()
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

// newTestMainWindow builds the main window on ws, on the UI goroutine, with
// the test's context: the screens' work stops when the test ends.
func newTestMainWindow(t *testing.T, ws *app.Workspace) *MainWindow {
	t.Helper()
	a := newTestApp(t)
	var mw *MainWindow
	onUI(t, func(t testing.TB) { mw = NewMainWindow(t.Context(), a, ws, "test") })
	return mw
}
