package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets/demo"
)

// omopCohortScreen opens the Cohort screen on a demo workspace's OMOP
// source (demo-omop) with no model server, so the LLM-free templates
// answer.
func omopCohortScreen(t *testing.T) *CohortScreen {
	t.Helper()
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil {
		t.Fatal(err)
	}
	s := newTestMainWindow(t, ws).Cohort
	waitUntil(t, "the OMOP demo source", func() bool { return slices.Contains(s.sourceSel.Options, "demo-omop") })
	onUI(t, func(testing.TB) { s.sourceSel.SetSelected("demo-omop") })
	waitUntil(t, "the OMOP demo's examples", func() bool { return strings.HasPrefix(s.status.Text, "demo-omop: ") })
	return s
}

// answered returns the persons count and the SQL of the last answer once
// it is answered with concept sets, else ok false.
func answered(s *CohortScreen) (persons any, sql string, ok bool) {
	a := s.last
	if s.cancel != nil || a == nil || a.Status != cohort.StatusAnswered || a.Result == nil || len(a.Result.Rows) != 1 || len(a.ConceptSets) == 0 {
		return nil, "", false
	}
	return a.Result.Rows[0][0], a.SQL, true
}

// TestCohortScreenEditsConceptSets asks the OMOP demo a template-shaped
// question without a model: the Concept sets tab lists the resolved sets
// (names, ids, vocabularies, codes, persons), says the template answered,
// and shows the definition. Adding a concept by search (heparin, to the
// metformin set) answers again with its id in the SQL and a larger count;
// removing it gives back the first SQL and count.
func TestCohortScreenEditsConceptSets(t *testing.T) {
	s := omopCohortScreen(t)
	const question = "How many patients have type 2 diabetes and take metformin?"
	onUI(t, func(testing.TB) {
		s.question.SetText(question)
		s.Ask(s.question.Text)
	})
	var first any
	var firstSQL string
	waitUntil(t, "the first answer", func() bool { _, _, ok := answered(s); return ok })
	x := s.concepts
	onUI(t, func(t testing.TB) {
		first, firstSQL, _ = answered(s)
		if !slices.Contains(s.tabs.Items, x.tab) {
			t.Fatal("the Concept sets tab is not shown")
		}
		var lines []string
		for i := range x.rows {
			var cells []string
			for c := range conceptColumns[:len(conceptColumns)-1] {
				cells = append(cells, x.cell(i, c))
			}
			lines = append(lines, strings.Join(cells, " | "))
		}
		all := strings.Join(lines, "\n")
		for _, want := range []string{"type 2 diabetes (Condition) | ", "    Type 2 diabetes mellitus |  | 201826 | SNOMED | 44054006",
			"metformin (Drug) | ", "    metformin |  | 1503297 | RxNorm | 6809"} {
			if !strings.Contains(all, want) {
				t.Errorf("concept table lacks %q:\n%s", want, all)
			}
		}
		persons := fmt.Sprintf(" | %d | +1 descendants |  | ", s.last.ConceptSets[0].Persons)
		if s.last.ConceptSets[0].Persons <= 0 || !strings.HasSuffix(lines[0], persons) {
			t.Errorf("set row %q lacks %q", lines[0], persons)
		}
		if x.removable(0) != 0 || x.removable(1) != 201826 {
			t.Errorf("Remove buttons: set row %d, item row %d", x.removable(0), x.removable(1))
		}
		if !strings.Contains(x.how.Text, "without a model") || !strings.Contains(x.how.Text, `template "count"`) {
			t.Errorf("how = %q", x.how.Text)
		}
		if !strings.Contains(x.definition.Text, `entry event: first condition_occurrence record of concept set "type 2 diabetes"`) ||
			!strings.Contains(x.definition.Text, `1. has at least one drug_exposure record of concept set "metformin"`) {
			t.Errorf("definition = %q", x.definition.Text)
		}
		if !strings.Contains(firstSQL, "201826") || strings.Contains(firstSQL, "2000000115") {
			t.Errorf("first SQL = %s", firstSQL)
		}
		x.search.SetText("heparin")
		x.Search(x.search.Text)
	})
	waitUntil(t, "the search hits", func() bool { return len(x.hits) > 0 })
	onUI(t, func(t testing.TB) {
		h := x.hits[0]
		if h.ID != 2000000115 || h.Domain != "Drug" {
			t.Fatalf("first hit = %+v", h)
		}
		x.target.SetSelected("metformin")
		x.Add(h)
	})
	var added any
	if !eventually(func() bool {
		n, sql, ok := answered(s)
		added = n
		return ok && strings.Contains(sql, "2000000115")
	}) {
		onUI(t, func(t testing.TB) { t.Fatalf("no answer with the added concept: %q; %q", x.status.Text, s.status.Text) })
	}
	if added.(int64) <= first.(int64) {
		t.Errorf("count with heparin added = %v, before %v", added, first)
	}
	onUI(t, func(t testing.TB) {
		if s.last.ConceptsFrom != cohort.ConceptsFromUser || !strings.Contains(x.how.Text, "as you edited them") {
			t.Errorf("concepts from %q, how %q", s.last.ConceptsFrom, x.how.Text)
		}
		if s.sqlEntry.Text != s.last.SQL || len(s.history) != 1 {
			t.Errorf("SQL box %q, history %d turns", s.sqlEntry.Text, len(s.history))
		}
		x.Remove(2000000115)
	})
	waitUntil(t, "the answer without it", func() bool {
		_, sql, ok := answered(s)
		return ok && !strings.Contains(sql, "2000000115")
	})
	onUI(t, func(t testing.TB) {
		n, sql, _ := answered(s)
		if n != first || sql != firstSQL {
			t.Errorf("after removing the added concept: %v persons, SQL\n%s\nwant %v and\n%s", n, sql, first, firstSQL)
		}
	})
}

// TestScreenshotCohortConcepts renders, with the app's theme and Fyne's
// software painter, the Cohort screen's Concept sets tab after a question
// on the OMOP demo (3,000 patients, no model: the template answers), with
// a vocabulary search for "insulin" listed; it checks the picture is
// drawn, and writes cohort-concepts.png to screenshotDir (make
// screenshot: docs/screenshots).
func TestScreenshotCohortConcepts(t *testing.T) {
	a := newTestApp(t)
	ws := newEmptyWorkspace(t)
	if _, err := ws.InitDemo(context.Background(), demo.DefaultOptions(), false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil {
		t.Fatal(err)
	}
	var prev fyne.Theme // restored after, not replaced by another: later tests size screens with it
	onUI(t, func(testing.TB) { prev = a.Settings().Theme(); a.Settings().SetTheme(NewTheme()) })
	t.Cleanup(func() { onUI(t, func(testing.TB) { a.Settings().SetTheme(prev) }) })
	mw := newTestMainWindow(t, ws)
	t.Cleanup(func() { onUI(t, func(testing.TB) { mw.Window.Close() }) })
	s := mw.Cohort
	onUI(t, func(t testing.TB) {
		if err := mw.Show("cohort"); err != nil {
			t.Fatal(err)
		}
	})
	waitUntil(t, "the OMOP demo source", func() bool { return slices.Contains(s.sourceSel.Options, "demo-omop") })
	onUI(t, func(testing.TB) { s.sourceSel.SetSelected("demo-omop") })
	waitUntil(t, "the OMOP demo's examples", func() bool { return strings.HasPrefix(s.status.Text, "demo-omop: ") })
	onUI(t, func(testing.TB) {
		s.question.SetText("How many patients have type 2 diabetes and take metformin?")
		s.Ask(s.question.Text)
	})
	waitUntil(t, "the answer", func() bool { _, _, ok := answered(s); return ok })
	x := s.concepts
	onUI(t, func(testing.TB) {
		s.tabs.Select(x.tab)
		x.search.SetText("insulin")
		x.Search(x.search.Text)
	})
	waitUntil(t, "the search hits", func() bool { return len(x.hits) > 0 })
	size := fyne.NewSize(1600, 900)
	path := filepath.Join(screenshotDir(t), "cohort-concepts.png")
	onUI(t, func(t testing.TB) {
		mw.Window.Resize(size)
		capturePNG(t, mw.Window.Canvas(), path)
	})
}
