package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
)

// TestDataScreenServerSource: the "Add server source" form tests the
// connection off the UI goroutine (the button is disabled until the
// service answers), shows the warning and the GRANT statements, refuses a
// DSN with a password, and adds the source through the service.
func TestDataScreenServerSource(t *testing.T) {
	a := newTestApp(t)
	data := &fakeData{connect: make(chan struct{})}
	var s *DataScreen
	onUI(t, func(t testing.TB) {
		s = NewDataScreen(t.Context(), data, a.NewWindow("data"), "test")
		s.Refresh()
		s.ShowServerForm()
		f := s.server
		f.name.SetText("warehouse")
		f.dsn.SetText("postgres://writer@db.example.org/ehr")
		f.schemas.SetText("clin, lab")
		test.Tap(f.testBtn)
		if !f.testBtn.Disabled() || f.status.Text != "Connecting…" {
			t.Errorf("while testing: disabled %v, status %q", f.testBtn.Disabled(), f.status.Text)
		}
	})
	close(data.connect) // the UI goroutine was free while the service waited
	waitUntil(t, "the connection report", func() bool { return strings.HasPrefix(s.server.status.Text, "Connected") })
	onUI(t, func(t testing.TB) {
		f := s.server
		for _, want := range []string{"PostgreSQL 15.99 (fake) as writer, database ehr, schemas clin, lab", "Warning: This role can change data.", "INSERT on 3 tables"} {
			if !strings.Contains(f.status.Text, want) {
				t.Errorf("status: no %q in %q", want, f.status.Text)
			}
		}
		if !f.grants.Visible() || !strings.Contains(f.grants.Text, "GRANT SELECT ON ALL TABLES IN SCHEMA clin") || f.testBtn.Disabled() {
			t.Errorf("grants visible %v %q; test disabled %v", f.grants.Visible(), f.grants.Text, f.testBtn.Disabled())
		}
		f.dsn.SetText("postgres://writer:hunter2@db.example.org/ehr")
		test.Tap(f.addBtn)
	})
	waitUntil(t, "the refusal", func() bool { return strings.HasPrefix(s.server.status.Text, "Not added") })
	onUI(t, func(t testing.TB) {
		if st := s.server.status.Text; !strings.Contains(st, "password") || strings.Contains(st, "hunter2") {
			t.Errorf("refusal: %q", st)
		}
		s.server.dsn.SetText("postgres://writer@db.example.org/ehr")
		test.Tap(s.server.addBtn)
	})
	waitUntil(t, "the source added", func() bool {
		data.mu.Lock()
		defer data.mu.Unlock()
		return len(data.added) == 1 && data.added[0] == "warehouse"
	})
}
