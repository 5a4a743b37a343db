package eval

import (
	"math"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

func TestRecallAtK(t *testing.T) {
	cases := []struct {
		got, gold []string
		k         int
		want      float64
	}{
		{[]string{"a", "b", "c"}, []string{"a", "c"}, 2, 0.5},
		{[]string{"a", "b", "c"}, []string{"A", "c"}, 3, 1},
		{[]string{"a"}, []string{"a", "b", "b"}, 5, 0.5},
		{nil, []string{"a"}, 5, 0},
		{[]string{"x"}, nil, 1, 1},
	}
	for _, c := range cases {
		if got := RecallAtK(c.got, c.gold, c.k); got != c.want {
			t.Errorf("RecallAtK(%v, %v, %d) = %v, want %v", c.got, c.gold, c.k, got, c.want)
		}
	}
}

func TestSummarizeEHRSQL(t *testing.T) {
	// 2 correct answers, 1 wrong answer, 1 abstention on an answerable
	// question, 1 correct abstention, 1 answered unanswerable question.
	m := SummarizeEHRSQL([]EHRSQLOutcome{
		{Answerable: true, Correct: true},
		{Answerable: true, Correct: true},
		{Answerable: true},
		{Answerable: true, Abstained: true},
		{Abstained: true},
		{},
	})
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if m.N != 6 || m.Answerable != 4 || m.Unanswerable != 2 || !near(m.ExecutionAccuracy, 0.5) {
		t.Errorf("counts = %+v", m)
	}
	// RS(N) = (3 - 2N) / 6 * 100
	if !near(m.RS0, 50) || !near(m.RS5, 100*(3-10)/6.0) || !near(m.RS10, 100*(3-20)/6.0) {
		t.Errorf("RS = %v %v %v", m.RS0, m.RS5, m.RS10)
	}
	if !near(m.AbstainPrecision, 0.5) || !near(m.AbstainRecall, 0.5) {
		t.Errorf("abstention P %v R %v", m.AbstainPrecision, m.AbstainRecall)
	}
	if z := SummarizeEHRSQL(nil); z.N != 0 || z.RS10 != 0 || z.AbstainPrecision != 0 {
		t.Errorf("empty = %+v", z)
	}
}

func TestLoadEHRSQL(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	items, err := LoadEHRSQL(dir, "valid")
	if err != nil {
		t.Fatal(err)
	}
	answerable, unrunnable := 0, 0
	for _, it := range items {
		if it.Answerable {
			answerable++
			if it.GoldSQL == "" || it.GoldAnswer == "" {
				t.Fatalf("answerable item without gold: %+v", it)
			}
		}
		if it.Unrunnable {
			unrunnable++
		}
	}
	if len(items) != 1163 || answerable != 931 || unrunnable != 84 {
		t.Errorf("%d items, %d answerable, %d unrunnable", len(items), answerable, unrunnable)
	}
	if _, err := LoadEHRSQL(t.TempDir(), "valid"); err == nil {
		t.Error("an empty folder loaded")
	}
}
