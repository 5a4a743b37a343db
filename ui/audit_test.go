package ui

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
)

func TestAuditViewListsChecksAndShowsTampering(t *testing.T) {
	a := newTestApp(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	for _, m := range []string{"model-a", "model-b", "model-c"} {
		if err := ws.UpdateConfig(func(c *app.Config) { c.Models.Chat = m }); err != nil {
			t.Fatal(err)
		}
	}
	var s *AuditScreen
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("audit")
		s = NewAuditScreen(t.Context(), ws.Audit(), w)
		w.SetContent(s.Content())
		s.Refresh()
	})
	waitUntil(t, "three records listed", func() bool { return len(s.records) == 3 && s.count.Text == "3 records." })
	onUI(t, func(t testing.TB) {
		if got := s.cell(2, 3); got != "settings change" {
			t.Errorf("action cell = %q", got)
		}
		if got := s.cell(2, 5); !strings.Contains(got, "model-c") {
			t.Errorf("details cell = %q", got)
		}
		s.table.Select(widget.TableCellID{Row: 1, Col: 0})
		if !strings.Contains(s.detail.Text, "Record 2") || !strings.Contains(s.detail.Text, "model-b") {
			t.Errorf("detail pane = %q", s.detail.Text)
		}
		s.Verify()
	})
	waitUntil(t, "the check", func() bool { return strings.HasPrefix(s.check.Text, "Intact: 3 records") })

	// Change one byte of the second record: the view says where.
	path := ws.Audit().Path()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("model-b"), []byte("model-x"), 1)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(testing.TB) { s.Verify() })
	waitUntil(t, "the tampering to be shown", func() bool {
		return strings.Contains(s.check.Text, "altered at line 2 (record 2)")
	})
}
