package app

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
)

// autosaveProject returns a review whose search kept n candidates, every
// one screened by the model against three criteria, a tenth of them
// decided (half of those excluded with a reason), with titles of PubMed's
// median length (about 100 characters): the largest review the app keeps
// (evidence.MaxCandidates) is the worst case of an autosave.
func autosaveProject(name string, n int) *evidence.Project {
	p := evidence.NewProject(name, "lit", evidence.PICO{Population: "adults with hepatocellular carcinoma", Intervention: "microwave ablation"})
	p.Query = `"hepatocellular carcinoma" OR ablation`
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	p.Search = &evidence.SearchRun{Query: p.Query, FTS5: p.Query, Total: int64(n), At: at}
	p.Criteria = []evidence.Criterion{{Text: "Adults with hepatocellular carcinoma", Weight: 1}, {Text: "Microwave ablation", Weight: 1}, {Text: "Randomised or cohort study", Weight: 1}}
	for _, c := range p.Criteria {
		p.ScreenedCriteria = append(p.ScreenedCriteria, c.Text)
	}
	p.Studies = make(map[string]evidence.StudyInfo, n)
	p.Decisions = map[string]evidence.Decision{}
	p.Screening = make([]evidence.ScreenedStudy, 0, n)
	verdicts := []evidence.Verdict{evidence.Yes, evidence.No, evidence.Uncertain}
	for i := range n {
		id := fmt.Sprintf("pmid:%d", 30_000_000+i)
		title := fmt.Sprintf("Microwave versus radiofrequency ablation for hepatocellular carcinoma in a cohort of %d patients: outcomes", i)
		p.Search.IDs = append(p.Search.IDs, id)
		p.Studies[id] = evidence.StudyInfo{PMID: fmt.Sprint(30_000_000 + i), Year: 1990 + i%35, FirstAuthor: "Nguyen", Title: title}
		p.Screening = append(p.Screening, evidence.ScreenedStudy{ID: id, Title: title, Year: 1990 + i%35,
			Verdicts: []evidence.Verdict{verdicts[i%3], verdicts[(i/3)%3], evidence.Yes}, Score: float64(n-i) / float64(n)})
		if i%10 == 0 {
			d := evidence.Decision{Include: i%20 == 0, At: at}
			if !d.Include {
				d.Reason = "Wrong population"
			}
			p.Decisions[id] = d
		}
	}
	return p
}

// openAutosaveReview saves a review of n candidates (autosaveProject) in
// a new workspace and opens it as the app does.
func openAutosaveReview(tb testing.TB, n int) (*Workspace, *Review) {
	tb.Helper()
	ws, err := Open(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ws.Close() })
	if err := ws.SaveReviewProject(autosaveProject("big", n)); err != nil {
		tb.Fatal(err)
	}
	ri, err := ws.Reviews().Open("big")
	if err != nil {
		tb.Fatal(err)
	}
	return ws, ri.(*Review)
}

// BenchmarkReviewDecideWhileSaving measures what a reviewer feels while
// the review autosaves: one goroutine saves the review back to back (each
// save has changes to write) while another makes a decision every
// millisecond, as fast as a reviewer could press Include/Exclude, and
// times each Decide call. It reports the decisions' latency (p50, p99,
// max; a decision blocked by a save counts once, however long it waits),
// the median over the saves of the longest wait of a decision made during
// the save, the saves' median time, the longest of 500 decisions made
// before, without a save (what the machine's load alone causes), and logs
// the load average.
//
//	go test -tags ci ./app/ -run '^$' -bench ReviewDecideWhileSaving -benchtime 5x -v
func BenchmarkReviewDecideWhileSaving(b *testing.B) {
	for _, n := range []int{10_000, 50_000, evidence.MaxCandidates} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			_, r := openAutosaveReview(b, n)
			ids := slices.Clone(r.Project().Search.IDs)
			if err := r.Decide(ids[1], true, ""); err != nil {
				b.Fatal(err)
			}
			// The same decisions without a save, for comparison: what the
			// machine's load alone does to them.
			var idle []time.Duration
			for k := range 500 {
				start := time.Now()
				if err := r.Decide(ids[2+k], k%2 == 0, "Wrong population"); err != nil {
					b.Fatal(err)
				}
				idle = append(idle, time.Since(start))
				time.Sleep(time.Millisecond)
			}
			if err := r.Save(); err != nil {
				b.Fatal(err)
			}
			saves := max(b.N, 3)
			done := make(chan struct{})
			type span struct {
				start time.Time
				d     time.Duration
			}
			var saveSpans, decideSpans []span
			var saveErr error
			var wg sync.WaitGroup
			b.ResetTimer()
			wg.Go(func() {
				defer close(done)
				for range saves {
					start := time.Now()
					if err := r.Save(); err != nil {
						saveErr = err
						return
					}
					saveSpans = append(saveSpans, span{start, time.Since(start)})
					time.Sleep(time.Millisecond) // a decision comes in: there is something to save
				}
			})
			for k := 2; ; k++ {
				select {
				case <-done:
				default:
					id := ids[k%len(ids)]
					start := time.Now()
					if err := r.Decide(id, k%2 == 0, "Wrong population"); err != nil {
						b.Fatal(err)
					}
					decideSpans = append(decideSpans, span{start, time.Since(start)})
					time.Sleep(time.Millisecond)
					continue
				}
				break
			}
			wg.Wait()
			b.StopTimer()
			if saveErr != nil {
				b.Fatal(saveErr)
			}
			if err := r.Close(); err != nil {
				b.Fatal(err)
			}
			// The longest wait of a decision made during each save.
			var lat, saveTimes, pauses []time.Duration
			for _, d := range decideSpans {
				lat = append(lat, d.d)
			}
			for _, s := range saveSpans {
				saveTimes = append(saveTimes, s.d)
				var worst time.Duration
				for _, d := range decideSpans {
					if !d.start.Before(s.start) && d.start.Before(s.start.Add(s.d)) {
						worst = max(worst, d.d)
					}
				}
				pauses = append(pauses, worst)
			}
			slices.Sort(lat)
			slices.Sort(saveTimes)
			slices.Sort(pauses)
			ms := func(d time.Duration) float64 { return d.Seconds() * 1000 }
			b.ReportMetric(ms(lat[len(lat)/2]), "ms-decide-p50")
			b.ReportMetric(ms(lat[len(lat)*99/100]), "ms-decide-p99")
			b.ReportMetric(ms(lat[len(lat)-1]), "ms-decide-max")
			b.ReportMetric(ms(pauses[len(pauses)/2]), "ms-worst-per-save")
			b.ReportMetric(ms(saveTimes[len(saveTimes)/2]), "ms-save")
			b.ReportMetric(float64(len(lat)), "decisions")
			b.ReportMetric(ms(slices.Max(idle)), "ms-decide-max-nosave")
			b.Logf("%d candidates, %d saves, %d decisions; load average %s", n, len(saveTimes), len(lat), loadAverage())
		})
	}
}

// loadAverage returns the machine's load averages (1, 5, 15 minutes), or
// "unknown" where /proc/loadavg cannot be read.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
