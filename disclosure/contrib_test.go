package disclosure

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPlanContributions: one added count per aggregate to check (two for
// avg's zeros and values other than 0 and 1), with FILTER and DISTINCT
// read, none for a plain count(*), and the added counts read back into the
// fewest individuals per result column.
func TestPlanContributions(t *testing.T) {
	q := "SELECT ward, count(*) AS n, sum(died) AS d, count(*) FILTER (WHERE sex = 'F') AS f, " +
		"100.0 * avg(DISTINCT x) AS p, max(CASE WHEN died = 1 THEN age END) AS m FROM t GROUP BY ward"
	p, ok := PlanContributions(q, "pid", true, AllCalls)
	if !ok || !p.Fits(6) || p.Added() != 9 {
		t.Fatalf("plan %v, %+v", ok, p)
	}
	for _, want := range []string{
		"count(DISTINCT CASE WHEN (died) <> 0 THEN pid END)",
		"count(DISTINCT CASE WHEN (died) = 0 THEN pid END)",
		"count(CASE WHEN (died) NOT IN (0, 1) THEN 1 END)",
		"count(DISTINCT CASE WHEN (sex = 'F') THEN pid END)",
		"count(DISTINCT CASE WHEN (x) IS NOT NULL THEN pid END)",
		"count(DISTINCT CASE WHEN (x) = 0 THEN pid END)",
		"count(CASE WHEN (x) NOT IN (0, 1) THEN 1 END)",
		"count(DISTINCT CASE WHEN (CASE WHEN died = 1 THEN age END) IS NOT NULL THEN pid END)",
		" FROM t GROUP BY ward",
	} {
		if !strings.Contains(p.Query, want) {
			t.Errorf("query lacks %q:\n%s", want, p.Query)
		}
	}
	// d: 3 died, 40 not, all 0/1; f: 40 women; p: 50 with x, 48 non-zero,
	// 2 zeros, all 0/1; m: 3.
	got := p.Cells([]any{int64(3), int64(40), int64(0), int64(40), int64(50), int64(48), int64(2), int64(0), int64(3)}, 6)
	if want := []int64{math.MaxInt64, math.MaxInt64, 3, 40, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("cells %v, want %v", got, want)
	}
	// d: 40 died, 2 did not (0/1): the complement shows; x not 0/1: its
	// zeros are no complement; an unreadable count is unknown.
	got = p.Cells([]any{int64(40), int64(2), int64(0), nil, int64(50), int64(48), int64(2), int64(7), int64(30)}, 6)
	if want := []int64{math.MaxInt64, math.MaxInt64, 2, CellUnknown, 48, 30}; !slices.Equal(got, want) {
		t.Errorf("cells %v, want %v", got, want)
	}
	// count(x) counts those without x too.
	c, _ := PlanContributions("SELECT count(x) AS n FROM t", "pid", true, AllCalls)
	if !strings.Contains(c.Query, "count(DISTINCT CASE WHEN (x) IS NULL THEN pid END)") || c.Added() != 2 {
		t.Errorf("count(x) plan:\n%s", c.Query)
	}
	untyped, _ := PlanContributions(q, "", false, AllCalls)
	if strings.Contains(untyped.Query, "<> 0") || !strings.Contains(untyped.Query, "count(CASE WHEN (died) IS NOT NULL THEN 1 END)") {
		t.Errorf("untyped plan counting records:\n%s", untyped.Query)
	}
	for _, q := range []string{"SELECT ward, count(*) FROM t GROUP BY ward", "SELECT * FROM t", "SELECT a FROM t UNION SELECT sum(b) FROM u"} {
		if _, ok := PlanContributions(q, "pid", true, AllCalls); ok {
			t.Errorf("%s: nothing to count, planned", q)
		}
	}
}

// TestSuppressCells: a cell whose fewest individuals behind one aggregate
// are 1 to k−1 is suppressed in a row of many, an unknown one too when it
// is a statistic.
func TestSuppressCells(t *testing.T) {
	res := result([]string{"ward", "n", "died", "age"}, []any{"a", int64(84), int64(1), 61.5}, []any{"b", int64(273), int64(22), 70.1})
	kinds := []ColumnKind{Key, Count, Statistic, Statistic}
	info := Individuals{Column: "pid", Counts: []int64{46, 143}, Kinds: kinds,
		Cells: [][]int64{{math.MaxInt64, math.MaxInt64, 1, 46}, {math.MaxInt64, math.MaxInt64, 22, CellUnknown}}}
	out, rep := Suppress(res, info, 11)
	var got []string
	for _, c := range rep.Cells {
		got = append(got, c.Column+":"+string(c.Reason))
	}
	if want := []string{"died:primary", "age:primary"}; !slices.Equal(got, want) || out.Rows[0][1] != int64(84) || out.Rows[1][2] != int64(22) || out.Rows[0][3] != 61.5 {
		t.Errorf("suppressed %q (want %q), rows %v", got, want, out.Rows)
	}
}

// TestCountArithmetic: counts added or subtracted, or filtered, are counts
// (checked by value); a count scaled or mixed with decimals is a statistic.
func TestCountArithmetic(t *testing.T) {
	sh := Analyze("SELECT count(*) - count(x) AS a, count(*) FILTER (WHERE y) b, (count(*) + 1) c, count(*) * 100 / 3 AS d, count(x) + 1.5 AS e FROM t")
	if want := []ColumnKind{Count, Count, Count, Statistic, Statistic}; !slices.Equal(sh.Items, want) {
		t.Errorf("kinds %v, want %v", sh.Items, want)
	}
}
