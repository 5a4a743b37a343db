package eval

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/realdata"
)

func TestPythonFloat(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {-2.5, "-2.5"}, {469, "469.0"}, {0.026, "0.026"},
		{1e16, "1e+16"}, {1.5e16, "1.5e+16"}, {123456789012345.0, "123456789012345.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {7.42, "7.42"},
	}
	for _, c := range cases {
		if got := pythonFloat(c.in); got != c.want {
			t.Errorf("pythonFloat(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestRound3(t *testing.T) {
	// Expected values from Python 3.11: round(x, 3).
	cases := []struct{ in, want float64 }{
		{2.6755, 2.675}, // 2.6755 is stored just below ...55
		{0.0625, 0.062}, // exact tie: half to even
		{0.0635, 0.064}, // stored just above the tie
		{1.0005, 1.0},   // stored just below
		{-1.23456, -1.235},
		{12.3449999, 12.345},
	}
	for _, c := range cases {
		if got := round3(c.in); got != c.want {
			t.Errorf("round3(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseEHRSQLGold(t *testing.T) {
	cases := []struct {
		in   string
		want [][]string
	}{
		{"[['m'], ['f']]", [][]string{{"f"}, {"m"}}},
		{`[["it's"], ['a\'b']]`, [][]string{{"a'b"}, {"it's"}}},
		{"[]", nil},
		{"[[1, 2.5, None]]", [][]string{{"1", "2.5", "None"}}},
		{"[('x', 'y')]", [][]string{{"x", "y"}}},
	}
	for _, c := range cases {
		got, err := ParseEHRSQLGold(c.in)
		if err != nil {
			t.Fatalf("ParseEHRSQLGold(%q): %v", c.in, err)
		}
		if !SameEHRSQLAnswer(got, c.want) {
			t.Errorf("ParseEHRSQLGold(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	for _, bad := range []string{"", "[", "[['a']", "[['a'] x", "[['unterminated]]", "['a']"} {
		if _, err := ParseEHRSQLGold(bad); err == nil {
			t.Errorf("ParseEHRSQLGold(%q) succeeded, want error", bad)
		}
	}
}

func FuzzParseEHRSQLGold(f *testing.F) {
	for _, s := range []string{"[['m']]", "[[1, 'a,b']]", `[["x\""]]`, "[(None,)]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = ParseEHRSQLGold(s) // must not panic or loop
	})
}

func TestEHRSQLQuery(t *testing.T) {
	in := "SELECT strftime('%y',current_time)  ,\n  strftime('%j', current_date)"
	want := "SELECT strftime('%Y','2100-12-31 23:59:00') , strftime('%J', '2100-12-31')"
	if got := EHRSQLQuery(in); got != want {
		t.Errorf("EHRSQLQuery = %q, want %q", got, want)
	}
}

// TestEHRSQLGoldThroughRunner runs the gold SQL of every answerable question
// of the EHRSQL 2024 valid split that runs on the shipped database through
// the read-only runner, and compares with the gold answers: the runner must
// return values faithfully (no time conversion, exact numbers).
func TestEHRSQLGoldThroughRunner(t *testing.T) {
	flat := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "valid_flat.json")
	dbPath := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	raw, err := os.ReadFile(flat)
	if err != nil {
		t.Fatal(err)
	}
	var items []struct {
		ID         string `json:"id"`
		GoldSQL    string `json:"gold_sql"`
		GoldAnswer string `json:"gold_answer"`
		Answerable bool   `json:"answerable"`
		Executable bool   `json:"executable_on_shipped_db"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		t.Fatalf("parse %s: %v", flat, err)
	}
	ctx := context.Background()
	r, err := datasets.NewRunner(ctx, dbPath, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, ok := 0, 0
	for _, it := range items {
		if !it.Answerable || !it.Executable {
			continue
		}
		n++
		gold, err := ParseEHRSQLGold(it.GoldAnswer)
		if err != nil {
			t.Errorf("%s: %v", it.ID, err)
			continue
		}
		res, err := r.Query(ctx, EHRSQLQuery(it.GoldSQL))
		if err != nil {
			t.Errorf("%s: %v\n  sql: %s", it.ID, err, it.GoldSQL)
			continue
		}
		got := EHRSQLAnswer(res.Rows)
		if !SameEHRSQLAnswer(got, gold) {
			t.Errorf("%s: answer differs\n  sql:  %s\n  got:  %.200q\n  gold: %.200q", it.ID, it.GoldSQL, got, gold)
			continue
		}
		ok++
	}
	t.Logf("EHRSQL valid, answerable and runnable: %d/%d gold answers reproduced", ok, n)
	if n != 847 {
		t.Errorf("expected 847 runnable answerable questions, found %d", n)
	}
	if ok != n {
		t.Errorf("reproduced %d/%d gold answers", ok, n)
	}
}
