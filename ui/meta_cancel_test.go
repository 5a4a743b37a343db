package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/meta"
)

// runWatch is the workspace's meta-analysis service, telling when each Run
// returns and with what error.
type runWatch struct {
	app.MetaService
	returned chan error
}

func (r runWatch) Run(ctx context.Context, studies []meta.Study, opts meta.Options, plan meta.Plan) (meta.Report, error) {
	rep, err := r.MetaService.Run(ctx, studies, opts, plan)
	r.returned <- err
	return rep, err
}

// A new analysis (here: another model chosen) stops the one under way: a
// 3,000-study leave-one-out analysis, seen running in the status line,
// returns within 2 s of the change with a cancellation error instead of
// running on unseen; the status line shows how far it had come.
func TestMetaScreenNewAnalysisStopsTheRunning(t *testing.T) {
	a := newTestApp(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	svc := runWatch{MetaService: ws.Meta(), returned: make(chan error, 4)}
	var b strings.Builder
	b.WriteString("study,ai,n1i,ci,n2i\n")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "S%d,%d,%d,%d,%d\n", i+1, 5+i%17, 100+i%50, 9+i%23, 100+i%41)
	}
	var s *MetaScreen
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("meta")
		s = NewMetaScreen(t.Context(), svc, w, "test")
		w.SetContent(s.Content())
		if !s.SelectMeasure(meta.RR) || !s.SelectModel(meta.REML) {
			t.Fatal("RR or REML not offered for 2x2 counts")
		}
		s.analyses.leave1out.SetChecked(true)
		s.paste.SetText(b.String())
		test.Tap(s.pasteBtn)
	})
	if !eventually(func() bool { return strings.Contains(s.status.Text, "Leave-one-out analysis: ") }) {
		var got string
		fyne.DoAndWait(func() { got = s.status.Text })
		t.Fatalf("the leave-one-out analysis's progress was not shown (status %q)", got)
	}
	for len(svc.returned) > 0 { // analyses that ended before the data were in
		<-svc.returned
	}
	onUI(t, func(t testing.TB) {
		if !s.SelectModel(meta.DL) {
			t.Fatal("DL not offered")
		}
	})
	select {
	case err := <-svc.returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the running analysis returned %v, want it cancelled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the running analysis did not stop within 2 s of a new one")
	}
}
