package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestAggregateOnlyErrorsQuoteNoValues: on an aggregate-only SQLite
// source, an error that would quote a record's value (bad JSON path:
// '2024-03-24', a patient's date of death; or a subject_id) is shown
// without it, by sql, by ask (whose repair request to the model must not
// carry it either) and by cohort table1, and the audit trail records none;
// an error quoting the statement's own text is kept.
func TestAggregateOnlyErrorsQuoteNoValues(t *testing.T) {
	ws, srv, _ := disclosureWorkspace(t)
	out, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", "SELECT CAST(subject_id AS TEXT), coalesce(dod, '') FROM patients")
	var ref struct {
		Rows [][]string `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ref) != nil || len(ref.Rows) == 0 {
		t.Fatalf("reference: %d %s %s", code, out, stderr)
	}
	leaks := func(what, text string) {
		t.Helper()
		for _, r := range ref.Rows {
			for _, v := range r {
				if v != "" && strings.Contains(text, v) {
					t.Fatalf("%s quotes the value %q of the data: %s", what, v, text)
				}
			}
		}
	}
	run(t, ws, "sources", "set", "demo", "--access", "aggregate-only")
	for _, q := range []string{
		"SELECT count(*) FROM patients WHERE json_extract('{}', dod) IS NULL AND dod IS NOT NULL",
		"SELECT count(*) FROM patients WHERE json_extract('{}', CAST(subject_id AS TEXT)) IS NULL",
		"SELECT count(*) FROM patients WHERE json_set('{}', '$' || subject_id, 1) IS NULL",
	} {
		_, stderr, code := run(t, ws, "sql", "--db", "demo", q)
		if code != 1 || !strings.Contains(stderr, "not shown") {
			t.Errorf("%s: %d %s, want the error without its value", q, code, stderr)
		}
		leaks("sql "+q, stderr)
	}
	if _, stderr, code := run(t, ws, "sql", "--db", "demo", "SELECT count(*) FROM patients WHERE json_extract('{}', 'x.y') IS NULL"); code != 1 || !strings.Contains(stderr, "bad JSON path: 'x.y'") {
		t.Errorf("an error quoting the statement's own literal: %d %s", code, stderr)
	}

	bad := "SELECT count(*) FROM patients WHERE json_extract('{}', dod) IS NULL AND dod IS NOT NULL"
	srv.QueueChat(classifyReply(bad), ollamatest.ChatReply{Content: "```sql\n" + cliGenderSQL + "\n```"},
		ollamatest.ChatReply{Content: "Fewer than 11 patients of each sex."})
	out, stderr, code = run(t, ws, "ask", "--db", "demo", "--json", "How many patients of each sex died?")
	if code != 0 {
		t.Fatalf("ask: %d %s", code, stderr)
	}
	leaks("ask --json", out)
	leaks("ask's messages", stderr)
	repaired := false
	for _, req := range srv.ChatRequests() {
		for _, m := range req.Messages {
			leaks("a request to the model", m.Content)
			repaired = repaired || strings.Contains(m.Content, "not shown")
		}
	}
	if !repaired {
		t.Error("no repair request names the withheld error: the bad statement did not fail as the test expects")
	}

	_, stderr, code = run(t, ws, "cohort", "table1", "--db", "demo", "--sql", "SELECT subject_id FROM patients WHERE json_extract('{}', dod) IS NULL AND dod IS NOT NULL")
	if code == 0 || !strings.Contains(stderr, "not shown") {
		t.Errorf("table1: %d %s, want the error without its value", code, stderr)
	}
	leaks("table1", stderr)
	out, stderr, code = run(t, ws, "audit", "show", "--json")
	if code != 0 {
		t.Fatalf("audit show: %d %s", code, stderr)
	}
	leaks("the audit trail", out)
}

// TestRowsWithheldFromModelErrorsQuoteNoValues: on a row-level source
// whose result rows may not be sent to the model host, the error of a
// generated statement that quotes a record's value reaches the model (to
// repair the statement) without it.
func TestRowsWithheldFromModelErrorsQuoteNoValues(t *testing.T) {
	ws, srv, _ := disclosureWorkspace(t)
	out, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", "SELECT coalesce(dod, '') FROM patients")
	var ref struct {
		Rows [][]string `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ref) != nil || len(ref.Rows) == 0 {
		t.Fatalf("reference: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := run(t, ws, "models", "host", "--send-rows=false"); code != 0 {
		t.Fatalf("models host: %s", stderr)
	}
	bad := "SELECT count(*) FROM patients WHERE json_extract('{}', dod) IS NULL AND dod IS NOT NULL"
	srv.QueueChat(classifyReply(bad), ollamatest.ChatReply{Content: "```sql\n" + cliGenderSQL + "\n```"},
		ollamatest.ChatReply{Content: "Fewer than 11 patients of each sex."})
	if _, stderr, code := run(t, ws, "ask", "--db", "demo", "How many patients of each sex died?"); code != 0 {
		t.Fatalf("ask: %d %s", code, stderr)
	}
	repaired := false
	for _, req := range srv.ChatRequests() {
		for _, m := range req.Messages {
			for _, r := range ref.Rows {
				if r[0] != "" && strings.Contains(m.Content, r[0]) {
					t.Fatalf("a request to the model quotes the date of death %q: %s", r[0], m.Content)
				}
			}
			repaired = repaired || strings.Contains(m.Content, "not shown")
		}
	}
	if !repaired {
		t.Error("no repair request names the withheld error: the bad statement did not fail as the test expects")
	}
}
