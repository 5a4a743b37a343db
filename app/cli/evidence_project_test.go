package cli

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// createReview saves a review project on the literature source src, as the
// desktop app creates one; edit, if not nil, edits it first.
func createReview(t *testing.T, wsDir, name, src string, q evidence.PICO, edit func(p *evidence.Project)) {
	t.Helper()
	ws := openWorkspace(t, wsDir)
	defer ws.Close()
	r, err := ws.Reviews().Create(name, src, q)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		r.Update(edit)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// openedByTheApp returns the saved review project as the desktop app opens
// it (ws.Reviews().Open).
func openedByTheApp(t *testing.T, wsDir, name string) (p *evidence.Project) {
	t.Helper()
	withReview(t, wsDir, name, func(r app.Reviewer) { p = r.Project() })
	return p
}

var hccPICO = evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation",
	Comparison: "radiofrequency ablation", Outcome: "local tumor progression"}

// TestEvidenceSearchOnASavedProject: "evidence search --project" searches
// a saved review with its own PICO and query (or those the flags give,
// which it saves), keeps as many candidates as the desktop app does, and
// saves them: the review the desktop app opens afterwards has the same
// candidates as a search run in the app. Without a model (--no-llm).
func TestEvidenceSearchOnASavedProject(t *testing.T) {
	wsDir := t.TempDir()
	db := demoLiterature(t)
	const name, query = "hcc ablation", "ablation OR carcinoma OR cancer"
	createReview(t, wsDir, name, db, hccPICO, nil)

	// A review without a query, and no model to write one.
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", name, "--no-llm"); code == 0 || !strings.Contains(stderr, "review hcc ablation has no search query yet: give one with --query") {
		t.Errorf("no query, --no-llm: %d %s", code, stderr)
	}

	// --query overrides (and is saved); the PICO is the review's.
	got, cli := searchJSONOf(t, wsDir, "--project", name, "--query", query, "--no-llm")
	for _, h := range got.Hits {
		if h.PICOScore == nil {
			t.Fatalf("hit %s has no PICO score: the review's PICO was not used", h.ID)
		}
	}
	if got.Project == nil || got.Project.Inputs["query"] != "--query" || got.Project.Inputs["pico"] != "review" || !got.Project.Searched || got.Project.Candidates != len(cli) {
		t.Errorf("project %+v (%d hits)", got.Project, len(cli))
	}
	saved := openedByTheApp(t, wsDir, name)
	if saved.Query != query || saved.Search == nil || !slices.Equal(saved.Search.IDs, cli) {
		t.Fatalf("the review the app opens has query %q and candidates %v, the command line found %v", saved.Query, saved.Search, cli)
	}
	// The same candidates as the desktop app's search with its default
	// limit, and more than the 20 the scratch search shows.
	ws := openWorkspace(t, wsDir)
	r := createSearchedReview(t, ws, "in the app", db, hccPICO, query, evidence.DefaultSearchLimit)
	gui := r.Project().Search.IDs
	r.Close()
	ws.Close()
	if !slices.Equal(gui, cli) || len(cli) <= 20 {
		t.Errorf("command line %d candidates, desktop app %d; equal: %v", len(cli), len(gui), slices.Equal(gui, cli))
	}

	// Again with no flags: the saved query; the text output says so and
	// lists the first 20.
	out, stderr, code := run(t, wsDir, "evidence", "search", "--project", name, "--no-llm")
	if code != 0 || !strings.Contains(out, "; 20 shown") || !strings.Contains(out, "more candidates (--json lists them all)") ||
		!strings.Contains(out, `Saved in review "hcc ablation" (`) || !strings.Contains(out, "the search): PICO and query from the review.") {
		t.Errorf("search --project, text: %d\n%s%s", code, out, stderr)
	}

	// --pico overrides the review's PICO and is saved; --limit bounds the
	// candidates kept.
	other := writeFile(t, "pico.json", `{"P":"breast cancer","I":"neoadjuvant chemotherapy"}`)
	out, stderr, code = run(t, wsDir, "evidence", "search", "--project", name, "--pico", other, "--limit", "7", "--no-llm", "--json")
	got = searchJSON{}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Project.Inputs["pico"] != "--pico" || got.Project.Inputs["query"] != "review" || len(got.Hits) != 7 {
		t.Fatalf("search --project --pico: %d %s %s", code, out, stderr)
	}
	saved = openedByTheApp(t, wsDir, name)
	if saved.PICO.Population != "breast cancer" || saved.Query != query || len(saved.Search.IDs) != 7 || saved.Search.IDs[0] != got.Hits[0].ID {
		t.Errorf("saved after --pico: PICO %+v, query %q, %d candidates", saved.PICO, saved.Query, len(saved.Search.IDs))
	}

	// A review keeps its source; an unknown review lists the saved ones.
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", name, "--db", demoLiterature(t), "--no-llm"); code == 0 || !strings.Contains(stderr, "review hcc ablation searches the literature of "+db) {
		t.Errorf("another --db: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", name, "--db", db, "--no-llm"); code != 0 {
		t.Errorf("--db naming the review's own source: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", "nope", "--no-llm"); code == 0 || !strings.Contains(stderr, "saved reviews: ") || !strings.Contains(stderr, name) {
		t.Errorf("unknown project: %d %s", code, stderr)
	}
}

// TestEvidenceSourcesResolveByOneRule: the evidence commands resolve --db
// by the workspace's rule (app.Workspace.ResolveExisting): a registered
// source by name, a file by path, and an unknown name names the
// registered sources; a saved review whose source is gone says so.
func TestEvidenceSourcesResolveByOneRule(t *testing.T) {
	wsDir := t.TempDir()
	db := demoLiterature(t)
	registerLiterature(t, wsDir, db, "lit")
	byName, _, code := run(t, wsDir, "evidence", "search", "--db", "lit", "--query", "ablation", "--json")
	byPath, stderr, code2 := run(t, wsDir, "evidence", "search", "--db", db, "--query", "ablation", "--json")
	if code != 0 || code2 != 0 || byName != byPath || !strings.Contains(byName, `"hits":[{`) {
		t.Errorf("by name (%d) and by path (%d) differ: %s\n%s\n%s", code, code2, byName, byPath, stderr)
	}
	for _, args := range [][]string{
		{"evidence", "search", "--db", "litt", "--query", "ablation"},
		{"evidence", "screen", "--db", "litt", "--query", "ablation", "--pico", writeFile(t, "pico.json", `{"P":"x","I":"y"}`)},
	} {
		_, stderr, code := run(t, wsDir, args...)
		if code == 0 || !strings.Contains(stderr, `there is no data source named "litt" and no database file`) || !strings.Contains(stderr, "the data sources are: lit") {
			t.Errorf("%s with an unknown source: %d %s", args[1], code, stderr)
		}
	}
	// A review on a source whose file is gone.
	gone := filepath.Join(t.TempDir(), "gone.sqlite")
	createReview(t, wsDir, "orphan", gone, hccPICO, func(p *evidence.Project) { p.Query = "ablation" })
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", "orphan", "--query", "cancer", "--no-llm"); code == 0 || !strings.Contains(stderr, "opening the literature of review orphan: there is no database file "+gone) || !strings.Contains(stderr, "the data sources are: lit") {
		t.Errorf("a review whose literature is gone: %d %s", code, stderr)
	}
	// The search did not run: the query --query gave is not kept.
	if p := openedByTheApp(t, wsDir, "orphan"); p.Query != "ablation" {
		t.Errorf("a failed search saved the query %q", p.Query)
	}
}

// TestEvidenceScreenOnASavedProject: "evidence screen --project" searches
// a saved review that has not searched yet, has the model write the
// criteria, screens, and saves it all; run again, it screens the saved
// candidates against the saved criteria, asking the model only about the
// study that failed. Scripted replies through the real client.
func TestEvidenceScreenOnASavedProject(t *testing.T) {
	var calls atomic.Int32
	var mended atomic.Bool // the model no longer fails on the cryotherapy study
	reply := screenModelReply(&calls)
	_, wsDir, db := scriptedLiterature(t, func(req api.ChatRequest) ollamatest.ChatReply {
		if mended.Load() && strings.Contains(req.Messages[len(req.Messages)-1].Content, "Title: Salvage cryotherapy") {
			calls.Add(1)
			return ollamatest.ChatReply{Content: `{"verdicts":["NO","NO"]}`}
		}
		return reply(req)
	})
	const name = "hcc"
	createReview(t, wsDir, name, db, hccPICO, func(p *evidence.Project) { p.Query = "ablation OR cryotherapy OR brachytherapy" })

	out, stderr, code := run(t, wsDir, "evidence", "screen", "--project", name, "--json")
	if code == 0 || !strings.Contains(stderr, "1 of 4 studies could not be screened") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	var got screenJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Project == nil || !got.Project.Searched || got.Project.Inputs["criteria"] != "model" || got.Project.Inputs["query"] != "review" || got.Project.Candidates != 4 {
		t.Errorf("project %+v", got.Project)
	}
	if len(got.Studies) != 4 || got.Studies[0].PMID != "90000001" || len(got.Criteria) != 2 || calls.Load() != 5 {
		t.Fatalf("screen --project: %d model calls, %+v", calls.Load(), got)
	}
	saved := openedByTheApp(t, wsDir, name)
	if len(saved.Criteria) != 2 || saved.Criteria[0].Text != "Hepatocellular carcinoma" || len(saved.Screening) != 4 || saved.Search == nil || len(saved.Search.IDs) != 4 {
		t.Fatalf("the review the app opens: criteria %+v, %d screened", saved.Criteria, len(saved.Screening))
	}
	for i, st := range saved.Screening {
		if st.ID != got.Studies[i].ID || st.Error != got.Studies[i].Error {
			t.Errorf("screening %d: saved %s (%q), printed %s (%q)", i, st.ID, st.Error, got.Studies[i].ID, got.Studies[i].Error)
		}
	}

	// Again: the saved candidates and criteria; only the failed study is
	// asked about again. The text output says where the inputs came from.
	calls.Store(0)
	mended.Store(true)
	out, stderr, code = run(t, wsDir, "evidence", "screen", "--project", name)
	if code != 0 || calls.Load() != 1 || !strings.Contains(out, "the screening of its saved candidates): PICO, query and criteria from the review.") {
		t.Errorf("%d model calls, output:\n%s%s", calls.Load(), out, stderr)
	}

	// --criteria overrides the review's and is saved; every candidate is
	// screened again against the new texts.
	calls.Store(0)
	crit := writeFile(t, "criteria.json", `["Adults with hepatocellular carcinoma", "Randomized trial"]`)
	out, _, _ = run(t, wsDir, "evidence", "screen", "--project", name, "--criteria", crit, "--json")
	got = screenJSON{}
	if err := json.Unmarshal([]byte(out), &got); err != nil || got.Project.Inputs["criteria"] != "--criteria" || got.Project.Searched || calls.Load() != 4 {
		t.Errorf("--criteria: %d calls, %v %s", calls.Load(), err, out)
	}
	if saved := openedByTheApp(t, wsDir, name); saved.Criteria[0].Text != "Adults with hepatocellular carcinoma" {
		t.Errorf("saved criteria %+v", saved.Criteria)
	}

	// A record named by its PMID, with or without "pmid:".
	for _, id := range []string{"90000001", "PMID:90000001"} {
		if out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", id, "--include"); code != 0 || !strings.Contains(out, "pmid:90000001 (") {
			t.Errorf("decide --id %s: %d %s %s", id, code, out, stderr)
		}
	}
	if d, ok := openedByTheApp(t, wsDir, name).Decisions["pmid:90000001"]; !ok || !d.Include {
		t.Errorf("the decision by PMID is not saved: %+v", d)
	}
}

// TestEvidenceSearchOnASavedProjectWritesItsQuery: a saved review with a
// PICO and no query: "evidence search --project" has the chat model write
// the terms from the review's PICO (scripted reply through the real
// client), and the terms, the query and the candidates are saved in the
// review the desktop app opens; the next search uses that query without
// asking the model.
func TestEvidenceSearchOnASavedProjectWritesItsQuery(t *testing.T) {
	srv, wsDir, db := scriptedLiterature(t, nil)
	createReview(t, wsDir, "hcc", db, hccPICO, nil)
	const wantQuery = `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR "thermal ablation" OR MWA)`
	srv.QueueChat(ollamatest.ChatReply{Content: hccTermsReply})
	out, stderr, code := run(t, wsDir, "evidence", "search", "--project", "hcc", "--json")
	var got searchJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("search --project: %d %s %s", code, out, stderr)
	}
	if got.Project.Inputs["query"] != "model" || got.Project.Inputs["pico"] != "review" || len(got.Hits) == 0 || got.Terms == nil {
		t.Errorf("search --project: %+v", got)
	}
	saved := openedByTheApp(t, wsDir, "hcc")
	if saved.Query != wantQuery || strings.Join(saved.Terms.Treatments, "|") != "microwave ablation|thermal ablation|MWA" || saved.Search == nil || len(saved.Search.IDs) != len(got.Hits) {
		t.Errorf("the review the app opens: query %q, terms %+v, search %+v", saved.Query, saved.Terms, saved.Search)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", "hcc"); code != 0 || len(srv.ChatRequests()) != 1 {
		t.Errorf("second search: %d %s; %d chat requests", code, stderr, len(srv.ChatRequests()))
	}
}
