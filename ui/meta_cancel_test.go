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

// longAnalysis opens the Meta-analysis screen on a 3,000-study table with
// leave-one-out (REML, RR) and returns once the analysis is seen running
// in the status line, with the service that tells when each Run returns
// (runs that ended before are drained).
func longAnalysis(t *testing.T) (*MetaScreen, runWatch) {
	t.Helper()
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
	return s, svc
}

// cancelledWithin fails the test unless the running analysis returns a
// cancellation within 2 s.
func cancelledWithin(t *testing.T, svc runWatch, what string) {
	t.Helper()
	select {
	case err := <-svc.returned:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the running analysis returned %v, want it cancelled", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("the running analysis did not stop within 2 s of %s", what)
	}
}

// Stop beside the status line stops the analysis under way within 2 s,
// clears the result of the settings before, says so, and hides itself.
func TestMetaScreenStopButtonStopsTheAnalysis(t *testing.T) {
	s, svc := longAnalysis(t)
	onUI(t, func(t testing.TB) {
		if !s.stopBtn.Visible() {
			t.Fatal("no Stop button while the analysis runs")
		}
		test.Tap(s.stopBtn)
	})
	cancelledWithin(t, svc, "Stop")
	onUI(t, func(t testing.TB) {
		if s.stopBtn.Visible() {
			t.Error("the Stop button is still shown after the analysis stopped")
		}
		if !strings.HasPrefix(s.status.Text, "Analysis stopped") {
			t.Errorf("status %q, want it to say the analysis stopped", s.status.Text)
		}
		if s.hasResult || !s.exportBtn.Disabled() {
			t.Error("a result is still shown after Stop")
		}
	})
}

// A new analysis (here: another model chosen) stops the one under way: a
// 3,000-study leave-one-out analysis, seen running in the status line,
// returns within 2 s of the change with a cancellation error instead of
// running on unseen; the status line shows how far it had come.
func TestMetaScreenNewAnalysisStopsTheRunning(t *testing.T) {
	s, svc := longAnalysis(t)
	onUI(t, func(t testing.TB) {
		if !s.SelectModel(meta.DL) {
			t.Fatal("DL not offered")
		}
	})
	cancelledWithin(t, svc, "a new one")
}
