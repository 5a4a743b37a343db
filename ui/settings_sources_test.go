package ui

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/disclosure"
)

// TestSettingsSourcePolicies: the Settings card lists each source with
// its policy, refuses an invalid minimum cell size without saving, and
// saves aggregate-only with k, which the data service then applies.
func TestSettingsSourcePolicies(t *testing.T) {
	newTestApp(t)
	ws := newTestWorkspace(t)
	var p *sourcePolicies
	onUI(t, func(t testing.TB) {
		p = newSourcePolicies(ws.Settings())
		if len(p.rows) != 1 || p.rows[0].name != "site" || p.rows[0].access.Selected != accessRowLevel || p.rows[0].minCell.Text != "" {
			t.Fatalf("rows %+v", p.rows)
		}
		p.rows[0].access.SetSelected(accessAggregateOnly)
		p.rows[0].minCell.SetText("1")
		p.Save()
		if !strings.Contains(p.info.Text, "between 2 and") {
			t.Errorf("invalid k: %q", p.info.Text)
		}
	})
	if src, _ := ws.Source("site"); src.Access != "" {
		t.Fatalf("an invalid policy was saved: %+v", src)
	}
	onUI(t, func(t testing.TB) {
		p.rows[0].minCell.SetText("20")
		p.Save()
		if p.info.Text != "Saved: 1 aggregate-only source(s)." {
			t.Errorf("info %q", p.info.Text)
		}
	})
	src, _ := ws.Source("site")
	if pol := ws.Data().Policy(src); pol.Access != disclosure.AggregateOnly || pol.K() != 20 {
		t.Errorf("saved policy %v", pol)
	}
	onUI(t, func(t testing.TB) {
		p.Refresh()
		if p.rows[0].access.Selected != accessAggregateOnly || p.rows[0].minCell.Text != "20" {
			t.Errorf("after refresh: %s %s", p.rows[0].access.Selected, p.rows[0].minCell.Text)
		}
	})
}
