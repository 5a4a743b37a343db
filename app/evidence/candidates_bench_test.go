package evidence

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// syntheticCandidateProject returns a review whose search kept n
// candidates, a tenth of them decided (half of those excluded with a
// reason), with titles of PubMed's median length (about 100 characters).
func syntheticCandidateProject(n int) *Project {
	p := NewProject("big", "lit", PICO{Population: "adults with hepatocellular carcinoma", Intervention: "microwave ablation"})
	p.Query = `"hepatocellular carcinoma" OR ablation`
	p.Search = &SearchRun{Query: p.Query, FTS5: p.Query, Total: int64(n), At: time.Now().UTC()}
	p.Studies = make(map[string]StudyInfo, n)
	p.Decisions = map[string]Decision{}
	for i := range n {
		id := fmt.Sprintf("pmid:%d", 30_000_000+i)
		p.Search.IDs = append(p.Search.IDs, id)
		p.Studies[id] = StudyInfo{PMID: fmt.Sprint(30_000_000 + i), Year: 1990 + i%35, FirstAuthor: "Nguyen",
			Title: fmt.Sprintf("Microwave versus radiofrequency ablation for hepatocellular carcinoma in a cohort of %d patients: outcomes", i)}
		if i%10 == 0 {
			d := Decision{Include: i%20 == 0, At: p.Search.At}
			if !d.Include {
				d.Reason = "Wrong population"
			}
			p.Decisions[id] = d
		}
	}
	return p
}

// heapInUse returns the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkCandidateProject measures a review of 10,000, 50,000 and
// 100,000 (MaxCandidates) candidates as the app keeps and saves it: the
// saved JSON's size, one save (the app reads the previous file, checks and
// writes the project indented, SaveReviewProject's work) and one copy
// (Clone, which every step and save makes), and the project's memory.
//
//	go test -tags ci ./app/evidence/ -run '^$' -bench CandidateProject -benchtime 3x
func BenchmarkCandidateProject(b *testing.B) {
	for _, n := range []int{10_000, 50_000, MaxCandidates} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			before := heapInUse()
			p := syntheticCandidateProject(n)
			mem := heapInUse() - before
			path := filepath.Join(b.TempDir(), "big.json")
			raw, err := json.MarshalIndent(p, "", "  ")
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(path, raw, 0o644); err != nil {
				b.Fatal(err)
			}
			var save, clone []time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				old, err := os.ReadFile(path)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ParseProject(old); err != nil {
					b.Fatal(err)
				}
				if err := p.Validate(); err != nil {
					b.Fatal(err)
				}
				raw, err = json.MarshalIndent(p, "", "  ")
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(path, append(raw, '\n'), 0o644); err != nil {
					b.Fatal(err)
				}
				save = append(save, time.Since(start))
				start = time.Now()
				if _, err := p.Clone(); err != nil {
					b.Fatal(err)
				}
				clone = append(clone, time.Since(start))
			}
			b.StopTimer()
			runtime.KeepAlive(p)
			b.ReportMetric(float64(len(raw))/(1<<20), "MB-json")
			b.ReportMetric(float64(mem)/(1<<20), "MB-heap")
			b.ReportMetric(median(save).Seconds()*1000, "ms-save")
			b.ReportMetric(median(clone).Seconds()*1000, "ms-clone")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// BenchmarkSearchEveryMatch imports $CLINSIGHT_EVIDENCE_BENCH_RECORDS
// synthetic records (default 100,000; benchRecords) and searches every
// match of a query that matches about half of them: the time of the search
// and the memory it allocates and holds (the candidates hold identifying
// fields only).
//
//	CLINSIGHT_EVIDENCE_BENCH_RECORDS=100000 go test -tags ci ./app/evidence/ -run '^$' -bench SearchEveryMatch -benchtime 3x
func BenchmarkSearchEveryMatch(b *testing.B) {
	c := benchCorpus(b, benchRecords(b))
	pico := PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation"}
	const q = `ablation OR carcinoma OR leukaemia OR glioblastoma`
	var took []time.Duration
	var cands int
	var held, alloc uint64
	b.ResetTimer()
	for range b.N {
		before := heapInUse()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		res, err := c.SearchCandidates(context.Background(), q, pico, 0)
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		runtime.ReadMemStats(&m1)
		alloc = m1.TotalAlloc - m0.TotalAlloc
		held = heapInUse() - before
		cands = len(res.Hits)
		runtime.KeepAlive(res)
	}
	b.ReportMetric(float64(cands), "candidates")
	b.ReportMetric(median(took).Seconds()*1000, "ms-median")
	b.ReportMetric(float64(held)/(1<<20), "MB-held")
	b.ReportMetric(float64(alloc)/(1<<20), "MB-allocated")
}

// BenchmarkScreenLearnerBuild builds the learner of a 10,000- and a
// 50,000-record review (the first Rank after a search) and reports the
// time and the memory its features hold.
func BenchmarkScreenLearnerBuild(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			rev := syntheticReview(n)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = fmt.Sprintf("r%d", i)
			}
			var took []time.Duration
			var held uint64
			b.ResetTimer()
			for range b.N {
				before := heapInUse()
				start := time.Now()
				l, err := NewScreenLearner(context.Background(), ids, rev.Docs, "w20001 w20002")
				if err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
				held = heapInUse() - before
				runtime.KeepAlive(l)
			}
			b.ReportMetric(median(took).Seconds()*1000, "ms-build")
			b.ReportMetric(float64(held)/(1<<20), "MB-held")
		})
	}
}
