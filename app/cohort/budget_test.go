package cohort

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// askAndRecord asks a question whose generated SQL is sql and returns the
// answer and the bodies of the chat requests the model server received.
func askAndRecord(t *testing.T, sql string) (*Answer, []string, *fixture) {
	t.Helper()
	f := newFixture(t, Config{})
	f.srv.QueueChat(classify("answerable", "", sql), text("Here is the result."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "Show the scans of the patients"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered {
		t.Fatalf("status %s: %s", ans.Status, ans.Message)
	}
	var bodies []string
	for _, r := range f.srv.Requests() {
		if r.Path == "/api/chat" {
			bodies = append(bodies, string(r.Body))
		}
	}
	if len(bodies) != 2 {
		t.Fatalf("%d chat requests, want 2", len(bodies))
	}
	return ans, bodies, f
}

// TestExplainPromptWithinBudgetForHugeValues is issue 12, defect 4: a
// result of 3 rows × 50 MB went to the model as a 300 MB request. Every
// request must stay within the context window (num_ctx tokens at
// charsPerToken characters each).
func TestExplainPromptWithinBudgetForHugeValues(t *testing.T) {
	ans, bodies, f := askAndRecord(t,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 3) SELECT x AS n, zeroblob(50000000) AS scan FROM c")
	limit := f.p.cfg.NumCtx * charsPerToken
	for i, b := range bodies {
		if len(b) > limit {
			t.Errorf("chat request %d is %d bytes, over the budget of %d (num_ctx %d tokens)", i, len(b), limit, f.p.cfg.NumCtx)
		}
	}
	t.Logf("explain request: %d bytes", len(bodies[1]))
	prompt := lastUser(f.srv.ChatRequests()[1])
	for _, want := range []string{"<BLOB, 1 MiB>", "cut to their first 1 MiB", "Not shown, to fit the model's context: about 3 MiB of values."} {
		if !strings.Contains(prompt, want) {
			t.Errorf("explain prompt lacks %q:\n%s", want, prompt)
		}
	}
	if s := ans.Turn().Summary; len(s) > digestChars {
		t.Errorf("follow-up digest is %d bytes, over %d", len(s), digestChars)
	}
}

// TestExplainPromptWithinBudgetForWideResults: many rows and columns of
// long text are sampled and summarised within the budget, with a line
// saying what was left out.
func TestExplainPromptWithinBudgetForWideResults(t *testing.T) {
	cols := []string{"x AS n"}
	for i := range 59 {
		cols = append(cols, fmt.Sprintf("printf('%%.300c', 'a') || x AS col%d", i))
	}
	ans, bodies, f := askAndRecord(t,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 2000) SELECT "+strings.Join(cols, ", ")+" FROM c")
	limit := f.p.cfg.NumCtx * charsPerToken
	t.Logf("explain request: %d bytes", len(bodies[1]))
	if len(bodies[1]) > limit {
		t.Errorf("explain request is %d bytes, over the budget of %d", len(bodies[1]), limit)
	}
	prompt := lastUser(f.srv.ChatRequests()[1])
	for _, want := range []string{"2000 rows", "Not shown, to fit the model's context:", "20 of 60 columns", "of values"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("explain prompt lacks %q", want)
		}
	}
	if s := ans.Turn().Summary; len(s) > digestChars || !strings.Contains(s, "and 20 more") {
		t.Errorf("follow-up digest (%d bytes): %q", len(s), s)
	}
}

// TestResultForPromptBudget: the description never exceeds its budget and
// a small result is still shown whole.
func TestResultForPromptBudget(t *testing.T) {
	f := newFixture(t, Config{})
	res, err := f.runner.Query(context.Background(), "SELECT gender, count(*) AS n FROM patients GROUP BY gender ORDER BY gender")
	if err != nil {
		t.Fatal(err)
	}
	if got := resultForPrompt(res, 10_000); strings.Contains(got, "Not shown") || !strings.HasPrefix(got, "gender | n\nF | ") {
		t.Errorf("small result: %q", got)
	}
	wide, err := f.runner.Query(context.Background(), "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 500) SELECT x, printf('%.5000c', 'é') FROM c")
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []int{0, 100, 700, 2000, 50_000} {
		if got := resultForPrompt(wide, budget); len(got) > budget {
			t.Errorf("budget %d: %d bytes", budget, len(got))
		}
	}
}
