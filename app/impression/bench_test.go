package impression

import (
	"testing"
	"time"
)

// benchCorpusSize is the corpus size of the similar-report benchmark.
const benchCorpusSize = 100_000

// BenchmarkLabelReports labels synthetic reports (FINDINGS + IMPRESSION)
// and reports the throughput.
func BenchmarkLabelReports(b *testing.B) {
	reports := SyntheticReports(2000, 1)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		for _, r := range reports {
			LabelText(r.Findings + "\n" + r.Impression)
		}
		n += len(reports)
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "reports/s")
}

// BenchmarkSimilar100k searches the 5 most similar reports among 100,000
// synthetic ones (goal: ≤ 50 ms per query); building the corpus (generate,
// label, index) is reported separately.
func BenchmarkSimilar100k(b *testing.B) {
	start := time.Now()
	reports := SyntheticReports(benchCorpusSize, 2)
	generated := time.Since(start)
	start = time.Now()
	c := NewCorpus(reports)
	indexed := time.Since(start)
	queries := DemoFindings(200, 3)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		q := queries[n%len(queries)]
		if ms := c.Similar(Query{Findings: q, N: DefaultExamples}); len(ms) != DefaultExamples {
			b.Fatalf("%d matches", len(ms))
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(n), "ms/query")
	b.ReportMetric(generated.Seconds(), "s-generate+label")
	b.ReportMetric(indexed.Seconds(), "s-index")
}
