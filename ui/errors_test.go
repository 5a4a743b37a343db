package ui

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/localllm"
)

// serverDown is the model client's error for a server that does not
// answer, as localllm writes it.
var serverDown = &localllm.Error{Kind: localllm.ServerDown,
	Message: "Ollama is not running at http://127.0.0.1:11434: start it (`ollama serve`) or change the host in Settings",
	Err:     syscall.ECONNREFUSED}

// oneSentence: no package prefix, capitalised, ends with a full stop, no
// second sentence.
func checkOneSentence(t testing.TB, name, got string) {
	t.Helper()
	for _, p := range []string{"evidence:", "cohort:", "trials:", "impression:", "demo:178"} {
		if strings.Contains(got, p) {
			t.Errorf("%s: %q has %q", name, got, p)
		}
	}
	if !regexp.MustCompile(`^[A-Z]`).MatchString(got) || !strings.HasSuffix(got, ".") {
		t.Errorf("%s: %q is not a sentence", name, got)
	}
	if regexp.MustCompile(`\. [A-Z]`).MatchString(strings.TrimSuffix(got, ".")) {
		t.Errorf("%s: %q has more than one sentence", name, got)
	}
}

func TestErrorSummary(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"evidence screening chain",
			fmt.Errorf("evidence: none of the 12 records could be screened: %w", fmt.Errorf("evidence: screening demo:178: %w", serverDown)),
			"None of the 12 records could be screened: Ollama is not running at http://127.0.0.1:11434: start it (`ollama serve`) or change the host in Settings."},
		{"cohort chain",
			fmt.Errorf("cohort: the question could not be turned into a query that runs: %w", errors.New("cohort: attempt 3: no such column: x")),
			"The question could not be turned into a query that runs."},
		{"model server alone", fmt.Errorf("trials: %w", serverDown),
			"Ollama is not running at http://127.0.0.1:11434: start it (`ollama serve`) or change the host in Settings."},
		{"position chain", fmt.Errorf("the file could not be read: %w", errors.New("studies.csv:14: a row has 3 fields, the header 5")),
			"The file could not be read: studies.csv:14: a row has 3 fields, the header 5."},
		{"plain", errors.New("choose a data source first"), "Choose a data source first."},
	}
	for _, c := range cases {
		got := errorSummary(c.err)
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		checkOneSentence(t, c.name, got)
	}
	if got := plainText(serverDown.Message); strings.Contains(got, "`") || !strings.Contains(got, "(“ollama serve”)") {
		t.Errorf("label text %q", got)
	}
}

// TestShowErrorDialog: the dialog shows the sentence, the command in
// monospace inside its brackets (no backticks), and the full chain behind
// a closed "Details" disclosure.
func TestShowErrorDialog(t *testing.T) {
	a := newTestApp(t)
	err := fmt.Errorf("evidence: none of the 12 records could be screened: %w", fmt.Errorf("evidence: screening demo:178: %w", serverDown))
	var w fyne.Window
	onUI(t, func(t testing.TB) {
		w = a.NewWindow("errors")
		w.Resize(fyne.NewSize(800, 600))
		showError(w, err)
	})
	onUI(t, func(t testing.TB) {
		top := w.Canvas().Overlays().Top()
		if top == nil {
			t.Fatal("no dialog")
		}
		var rich *widget.RichText
		var acc *widget.Accordion
		walkObjects(top, func(o fyne.CanvasObject) {
			switch x := o.(type) {
			case *widget.RichText:
				if rich == nil {
					rich = x
				}
			case *widget.Accordion:
				acc = x
			}
		})
		if rich == nil || acc == nil {
			t.Fatalf("rich text %v, accordion %v", rich != nil, acc != nil)
		}
		var text strings.Builder
		code := ""
		for _, s := range rich.Segments {
			ts := s.(*widget.TextSegment)
			text.WriteString(ts.Text)
			if ts.Style == widget.RichTextStyleCodeInline {
				code = ts.Text
			}
			if !ts.Style.Inline {
				t.Errorf("segment %q is not inline", ts.Text)
			}
		}
		shown := text.String()
		checkOneSentence(t, "dialog", strings.ReplaceAll(shown, "`", ""))
		if strings.Contains(shown, "`") || code != "ollama serve" || !strings.Contains(shown, "(ollama serve)") {
			t.Errorf("dialog text %q, code %q", shown, code)
		}
		if len(acc.Items) != 1 || acc.Items[0].Title != "Details" || acc.Items[0].Open {
			t.Fatalf("disclosure %+v", acc.Items)
		}
		if l, ok := acc.Items[0].Detail.(*widget.Label); !ok || l.Text != err.Error() {
			t.Errorf("details %v", acc.Items[0].Detail)
		}
		acc.Open(0) // no panic opening it
	})
}

// walkObjects calls f on o and every object under it.
func walkObjects(o fyne.CanvasObject, f func(fyne.CanvasObject)) {
	f(o)
	switch w := o.(type) {
	case *fyne.Container:
		for _, c := range w.Objects {
			walkObjects(c, f)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(w).Objects() {
			walkObjects(c, f)
		}
	}
}

// failingTrials is a TrialsService whose matching fails with a chained
// error, as the pipeline's wrapping builds it.
type failingTrials struct{ err error }

func (f failingTrials) Sources(context.Context) []app.Source {
	return []app.Source{{Name: "ct", Path: "ct.sqlite"}}
}
func (f failingTrials) Patients(context.Context, app.Source) ([]trials.SyntheticPatient, error) {
	return nil, nil
}
func (f failingTrials) Match(context.Context, app.Source, trials.Request, app.TrialsOptions) (*trials.Result, error) {
	return nil, f.err
}
func (f failingTrials) Export(context.Context, string, *trials.Result, export.Provenance) (export.Summary, error) {
	return export.Summary{}, f.err
}

// TestTrialsErrorPath: a failed match shows one sentence (no "trials:"
// prefixes, the model server's advice, the command without backticks) in
// the dialog and the status line, the chain under "Details".
func TestTrialsErrorPath(t *testing.T) {
	a := newTestApp(t)
	err := fmt.Errorf("trials: the trials could not be ranked: %w", fmt.Errorf("trials: concepts of demo:12: %w", serverDown))
	var s *TrialsScreen
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("trials")
		w.Resize(fyne.NewSize(1024, 640))
		s = NewTrialsScreen(t.Context(), failingTrials{err}, w, "test")
		w.SetContent(s.Content())
		s.Refresh()
	})
	waitUntil(t, "the source", func() bool { return s.sourceSel.Selected == "ct" })
	onUI(t, func(testing.TB) {
		s.patient.SetText("A 58-year-old woman with type 2 diabetes.")
		s.Match()
	})
	waitUntil(t, "the error", func() bool { return strings.HasPrefix(s.status.Text, "Cancelled or failed: ") })
	onUI(t, func(t testing.TB) {
		status := strings.TrimPrefix(s.status.Text, "Cancelled or failed: ")
		checkOneSentence(t, "status", status)
		if strings.Contains(status, "`") || !strings.Contains(status, "“ollama serve”") {
			t.Errorf("status %q", status)
		}
		var rich *widget.RichText
		var acc *widget.Accordion
		walkObjects(s.window.Canvas().Overlays().Top(), func(o fyne.CanvasObject) {
			switch x := o.(type) {
			case *widget.RichText:
				if len(x.Segments) > 1 { // the sentence (the title is one segment)
					rich = x
				}
			case *widget.Accordion:
				acc = x
			}
		})
		if rich == nil || acc == nil {
			t.Fatal("no error dialog with details")
		}
		var b strings.Builder
		for _, seg := range rich.Segments {
			b.WriteString(seg.Textual())
		}
		checkOneSentence(t, "dialog", b.String())
		if got, want := b.String(), "The trials could not be ranked: Ollama is not running at http://127.0.0.1:11434: start it (ollama serve) or change the host in Settings."; got != want {
			t.Errorf("dialog %q, want %q", got, want)
		}
		if acc.Items[0].Open || acc.Items[0].Detail.(*widget.Label).Text != err.Error() {
			t.Errorf("details open %v: %q", acc.Items[0].Open, acc.Items[0].Detail.(*widget.Label).Text)
		}
	})
}
