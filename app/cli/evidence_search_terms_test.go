package cli

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// hccTermsReply is a scripted search-term reply for the HCC PICO.
const hccTermsReply = `{
 "primary": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": ["local tumor progression"]},
 "core": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": []},
 "expanded": {"conditions": ["HCC"], "treatments": ["thermal ablation", "MWA"], "comparators": ["RFA"], "outcomes": []}
}`

// TestEvidenceSearchGeneratesTerms runs "evidence search --pico" without
// --query: the chat model writes the terms (shown the abstracts a first
// search finds), the command prints them and the query, then the results.
func TestEvidenceSearchGeneratesTerms(t *testing.T) {
	srv, ws, db := scriptedLiterature(t, nil)
	pico := writeFile(t, "pico.json", `{"P":"hepatocellular carcinoma","I":"microwave ablation","C":"radiofrequency ablation","O":"local tumor progression"}`)
	const wantQuery = `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR "thermal ablation" OR MWA)`

	srv.QueueChat(ollamatest.ChatReply{Content: hccTermsReply})
	out, stderr, code := run(t, ws, "evidence", "search", "--db", db, "--pico", pico)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Search terms written by llama3.1:8b from the PICO",
		"  Condition: hepatocellular carcinoma; HCC\n",
		"  Treatment: microwave ablation; thermal ablation; MWA\n",
		"  Comparison: radiofrequency ablation; RFA (not in the query; --with-comparison requires them)\n",
		"  Outcome: (none)\n",
		"Query: " + wantQuery + "\n",
		"Microwave versus radiofrequency ablation for hepatocellular carcinoma",
		"ranked by relevance to the PICO",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "writing the search terms with llama3.1:8b") {
		t.Errorf("stderr %q", stderr)
	}
	// The model was shown the abstract the first search found.
	reqs := srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d chat requests", len(reqs))
	}
	user := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	if !strings.Contains(user, "[1] Microwave versus radiofrequency ablation for hepatocellular carcinoma") || strings.Contains(user, "[2] ") {
		t.Errorf("references in the prompt:\n%s", user)
	}

	// JSON: the terms come with the results.
	srv.QueueChat(ollamatest.ChatReply{Content: hccTermsReply})
	got, _ := searchJSONOf(t, ws, "--db", db, "--pico", pico)
	if got.Terms == nil || strings.Join(got.Terms.Treatments, "|") != "microwave ablation|thermal ablation|MWA" ||
		strings.Join(got.Terms.Comparators, "|") != "radiofrequency ablation|RFA" || got.Total < 1 || len(got.Hits) != int(got.Total) {
		t.Errorf("--json: %+v", got)
	}

	// The model fails: a clear error, no results.
	srv.QueueChat(ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}})
	out, stderr, code = run(t, ws, "evidence", "search", "--db", db, "--pico", pico)
	if code == 0 || !strings.Contains(stderr, "generating search terms") || !strings.Contains(stderr, "model runner crashed") || strings.Contains(out, "Query:") {
		t.Errorf("model failure: exit %d, stdout %q, stderr %q", code, out, stderr)
	}

	// No chat model configured: say where to choose one.
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.Models.Chat = "" }); err != nil {
		t.Fatal(err)
	}
	w.Close()
	_, stderr, code = run(t, ws, "evidence", "search", "--db", db, "--pico", pico)
	if code == 0 || !strings.Contains(stderr, "no chat model is configured: choose one in Settings (models.chat), or give the query with --query") {
		t.Errorf("no chat model: exit %d, stderr %q", code, stderr)
	}
}

// TestEvidenceSearchWithOutcomesAndEveryMatch: by default the query the
// model's terms make joins the condition AND the treatment;
// --with-comparison ANDs the comparison terms too, as their own group,
// --with-outcomes the outcome terms; with --project the choice is saved.
// --limit 0 keeps every match.
func TestEvidenceSearchWithOutcomesAndEveryMatch(t *testing.T) {
	srv, ws, db := scriptedLiterature(t, nil)
	pico := writeFile(t, "pico.json", `{"P":"hepatocellular carcinoma","I":"microwave ablation","C":"radiofrequency ablation","O":"local tumor progression"}`)
	const comparison = ` AND ("radiofrequency ablation" OR RFA)`
	for _, tc := range []struct {
		flags               []string
		comparison, outcome bool
	}{
		{nil, false, false},
		{[]string{"--with-outcomes"}, false, true},
		{[]string{"--with-comparison"}, true, false},
		{[]string{"--with-comparison", "--with-outcomes"}, true, true},
	} {
		srv.QueueChat(ollamatest.ChatReply{Content: strings.Replace(hccTermsReply,
			`"comparators": ["radiofrequency ablation"], "outcomes": []}`,
			`"comparators": ["radiofrequency ablation"], "outcomes": ["local tumor progression"]}`, 1)})
		got, _ := searchJSONOf(t, ws, append([]string{"--db", db, "--pico", pico}, tc.flags...)...)
		if has := strings.Contains(got.Query, "local tumor progression"); has != tc.outcome {
			t.Errorf("%v: query %q: outcome terms joined %v, want %v", tc.flags, got.Query, has, tc.outcome)
		}
		if has := strings.Contains(got.Query, comparison); has != tc.comparison || strings.Count(got.Query, "RFA") != strings.Count(comparison, "RFA")*strings.Count(got.Query, comparison) {
			t.Errorf("%v: query %q: comparison terms joined %v, want %v (as their own group only)", tc.flags, got.Query, has, tc.comparison)
		}
		if got.Terms == nil || got.Terms.JoinComparators != tc.comparison || got.Terms.JoinOutcomes != tc.outcome {
			t.Errorf("%v: terms %+v", tc.flags, got.Terms)
		}
	}

	// A saved review keeps the choice: the desktop app shows it checked.
	createReview(t, ws, "cmp", db, hccPICO, nil)
	srv.QueueChat(ollamatest.ChatReply{Content: hccTermsReply})
	out, stderr, code := run(t, ws, "evidence", "search", "--project", "cmp", "--with-comparison")
	if code != 0 || !strings.Contains(out, "  Comparison: radiofrequency ablation; RFA\n") {
		t.Fatalf("--project --with-comparison: exit %d: %s %s", code, out, stderr)
	}
	if saved := openedByTheApp(t, ws, "cmp"); !saved.Terms.JoinComparators || !strings.HasSuffix(saved.Query, comparison) {
		t.Errorf("the review the app opens: terms %+v, query %q", saved.Terms, saved.Query)
	}

	all, _ := searchJSONOf(t, ws, "--db", db, "--query", "ablation OR cancer OR breast OR carcinoma", "--limit", "0", "--no-llm")
	if all.Total < 5 || len(all.Hits) != int(all.Total)-all.Duplicates {
		t.Errorf("--limit 0: %d matches, %d duplicates, %d hits; want every match", all.Total, all.Duplicates, len(all.Hits))
	}
}
