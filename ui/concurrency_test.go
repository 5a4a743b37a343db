package ui

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// streamedWords is a model reply of n words, streamed one word per chunk.
func streamedWords(prefix string, n int) ollamatest.ChatReply {
	chunks := make([]string, n)
	for i := range chunks {
		chunks[i] = fmt.Sprintf("%s%d ", prefix, i+1)
	}
	chunks[n-1] = strings.TrimSpace(chunks[n-1]) + "."
	return ollamatest.ChatReply{Chunks: chunks, Fault: ollamatest.Fault{Delay: time.Millisecond}}
}

// loadModel answers every pipeline's prompts: cohort SQL and a streamed
// explanation, streamed impressions, and screening verdicts.
func loadModel(req api.ChatRequest) ollamatest.ChatReply {
	system := req.Messages[0].Content
	switch {
	case strings.Contains(system, "You turn a clinician's question into one SQLite query"):
		return cohortReply("SELECT gender, COUNT(*) AS patients FROM patients GROUP BY gender ORDER BY gender")
	case strings.Contains(system, "You explain the result of a database query"):
		return streamedWords("explained", 30)
	case strings.Contains(system, "chest radiologist"):
		return streamedWords("cardiomegaly", 30)
	}
	if r, ok := screeningReply(req); ok {
		r.Delay = time.Millisecond
		return r
	}
	return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: http.StatusBadRequest, Error: "unexpected prompt"}}
}

// TestScreensWorkWhileTheUserInteracts runs the streaming and progress
// paths of four screens at once (an impression streamed token by token, a
// cohort question with its explanation streamed, a trial matching and a
// screening behind progress dialogs) while the user switches screens,
// resizes the window, scrolls the tables and types. Every widget change
// lands on the UI goroutine; Fyne's test driver, which runs fyne.Do on the
// calling goroutine, made the race detector fail this (and Fyne's table
// renderer crash with "concurrent map writes" on a loaded machine).
func TestScreensWorkWhileTheUserInteracts(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"}, ollamatest.Model{Name: "qwen2.5-coder:7b"})
	srv.HandleChat(loadModel)
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL; c.Models.Chat = "m" }); err != nil {
		t.Fatal(err)
	}
	mw := newTestMainWindow(t, ws)
	imp, coh, tri, evi := mw.Impressions, mw.Cohort, mw.Trials, mw.Evidence
	waitUntil(t, "the report corpus", func() bool { return strings.Contains(imp.corpusInfo.Text, " eligible as examples") })
	waitUntil(t, "the example questions", func() bool { return len(coh.examples.Options) > 0 })
	waitUntil(t, "the demo patients", func() bool { return len(tri.patientSel.Options) > 0 })
	waitUntil(t, "the demo review opened", func() bool { return evi.project() != nil })

	// Start all four.
	onUI(t, func(t testing.TB) {
		imp.useModel.SetChecked(true)
		imp.findings.SetText("The heart is mildly enlarged. The lungs are clear. No pleural effusion.")
		test.Tap(imp.generateBtn)

		coh.question.SetText("How many patients of each sex?")
		test.Tap(coh.askBtn)

		if len(tri.patientSel.Options) == 0 {
			t.Fatal("no demo patients on the Trials screen")
		}
		tri.patientSel.SetSelected(tri.patientSel.Options[0])
		tri.useModel.SetChecked(false)
		test.Tap(tri.matchBtn)

		evi.NewProject("under load", app.DemoSourceName, evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
		evi.search.query.SetText(`"hepatocellular carcinoma" AND (microwave OR radiofrequency)`)
		evi.search.limitSel.SetSelected("20")
		test.Tap(evi.search.searchBtn)
	})

	// The user works while they run: the screening starts when the search
	// is done.
	screening, screened, finished := false, false, false
	sizes := []fyne.Size{fyne.NewSize(1100, 720), fyne.NewSize(900, 640), fyne.NewSize(1280, 800)}
	deadline := time.Now().Add(waitTimeout)
	rounds := 0
	for i := 0; !finished; i++ {
		rounds++
		if time.Now().After(deadline) {
			onUI(t, func(t testing.TB) {
				t.Fatalf("timed out after %s: impressions %q, cohort %q, trials %q; evidence screening started %v, running %v, notice %q",
					waitTimeout, imp.status.Text, coh.status.Text, tri.status.Text, screening, evi.running != nil, evi.notice.Text)
			})
		}
		onUI(t, func(t testing.TB) {
			mw.Tabs.SelectIndex(i % len(mw.Tabs.Items))
			mw.Window.Resize(sizes[i%len(sizes)])
			for _, tbl := range []interface {
				Refresh()
				ScrollToBottom()
				ScrollToTop()
			}{imp.similar, imp.iterations, coh.tables, coh.attempts, coh.result.table, tri.table, evi.search.candidates, evi.screening.table} {
				tbl.ScrollToBottom()
				tbl.ScrollToTop()
				tbl.Refresh()
			}
			coh.question.SetText(fmt.Sprintf("draft question %d", i))
			_ = imp.answer.Text + coh.answerText() + imp.status.Text + coh.status.Text
			switch {
			case !screening && evi.running == nil:
				if p := evi.project(); p == nil || p.Search == nil || len(p.Search.IDs) == 0 {
					t.Fatalf("evidence search found nothing; notice %q", evi.notice.Text)
				}
				test.Tap(evi.screening.addCriterionBtn)
				test.Tap(evi.screening.addCriterionBtn)
				evi.screening.criterionText[0].SetText("The study is a randomized controlled trial")
				evi.screening.criterionText[1].SetText("The study reports paediatric patients")
				test.Tap(evi.screening.screenBtn)
				screening = true
			case screening && evi.running == nil:
				screened = true
			}
			finished = screened && strings.HasPrefix(imp.status.Text, "Done in ") &&
				strings.Contains(coh.status.Text, " attempt(s) · ") && strings.Contains(tri.status.Text, " trials ranked")
		})
	}

	t.Logf("%d rounds of interaction while the screens worked", rounds)
	onUI(t, func(t testing.TB) {
		if res := imp.result; res == nil || !res.Generated || len(res.Iterations) != 3 || imp.answer.Text != res.Impression ||
			!strings.HasPrefix(res.Impression, "cardiomegaly1 cardiomegaly2") || !strings.HasSuffix(res.Impression, "cardiomegaly30.") {
			t.Errorf("impression: %+v, shown %q", res, imp.answer.Text)
		}
		if coh.last == nil || coh.last.Status != "answered" || !strings.Contains(coh.answerText(), "explained1 explained2") ||
			!strings.Contains(coh.answerText(), "explained30.") {
			t.Errorf("cohort answer %q; status %q", coh.answerText(), coh.status.Text)
		}
		if tri.result == nil || len(tri.result.Trials) == 0 {
			t.Errorf("trials result %+v", tri.result)
		}
		if p := evi.project(); p == nil || p.Search == nil || len(p.Screening) != len(p.Search.IDs) || evi.notice.Visible() {
			t.Errorf("screening: project %+v, notice %q", p, evi.notice.Text)
		}
	})
	waitSaved(t, evi)
}
