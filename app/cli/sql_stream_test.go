package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// manyRows is a statement of 1,000 rows.
const manyRows = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 1000) SELECT x, 'row ' || x AS label FROM c"

// TestSQLTextShowsTheFirstRows: the text table shows the first rows and a
// line counting the others (output that is not a terminal shows 20); the
// summary counts every row.
func TestSQLTextShowsTheFirstRows(t *testing.T) {
	db := fixtureDB(t)
	out, stderr, code := run(t, t.TempDir(), "sql", "--db", db, manyRows)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != defaultHeadRows+2 || !strings.HasPrefix(lines[1], "1 ") || !strings.HasPrefix(lines[defaultHeadRows], "20 ") {
		t.Fatalf("got %d lines, want the header, %d rows and the more line:\n%s", len(lines), defaultHeadRows, out)
	}
	if want := "… 980 more rows (all rows with --json or --xlsx)"; lines[len(lines)-1] != want {
		t.Errorf("last line %q, want %q", lines[len(lines)-1], want)
	}
	if !strings.Contains(stderr, "1000 rows in") {
		t.Errorf("stderr %q does not count 1000 rows", stderr)
	}
	// With --xlsx, one run of the statement both exports and prints.
	xlsx := filepath.Join(t.TempDir(), "many.xlsx")
	out, stderr, code = run(t, t.TempDir(), "sql", "--db", db, "--xlsx", xlsx, "--patient-level", manyRows)
	if code != 0 || !strings.Contains(out, "… 980 more rows") || !strings.Contains(stderr, "wrote 1000 rows to") {
		t.Fatalf("--xlsx: exit %d, out %q, stderr %q", code, out, stderr)
	}
	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if rows, err := wb.GetRows("Results"); err != nil || len(rows) != 1001 || rows[1000][1] != "row 1000" {
		t.Errorf("Results sheet: %d rows, %v", len(rows), err)
	}
}

// TestSQLJSONStreamsEveryRow: --json writes every row, and stays one valid
// JSON object when reading fails part way (the time limit here), with the
// error in it and a failing exit.
func TestSQLJSONStreamsEveryRow(t *testing.T) {
	db := fixtureDB(t)
	out, stderr, code := run(t, t.TempDir(), "sql", "--db", db, "--json", manyRows)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res struct {
		Columns   []string `json:"columns"`
		Rows      [][]any  `json:"rows"`
		Truncated bool     `json:"truncated"`
		Error     string   `json:"error"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 1000 || res.Rows[999][1] != "row 1000" || res.Truncated {
		t.Fatalf("json: %v; %d rows", err, len(res.Rows))
	}
	// Rows come before a statement that runs out of time: the first rows
	// are written, then the error closes the object.
	slow := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c WHERE x < 3 OR x > 1e15"
	out, stderr, code = run(t, t.TempDir(), "sql", "--db", db, "--json", "--timeout", "300ms", slow)
	res.Rows, res.Error = nil, ""
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json after an error is not valid: %v\n%s", err, out)
	}
	if code != 1 || len(res.Rows) != 2 || !strings.Contains(res.Error, "stopped after 300ms") || !strings.Contains(stderr, "stopped after 300ms") {
		t.Errorf("exit %d, %d rows, error %q, stderr %q", code, len(res.Rows), res.Error, stderr)
	}
}
