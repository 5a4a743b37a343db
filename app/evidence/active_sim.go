package evidence

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/internal/inputfile"
)

// LabelledReview is a review whose every record carries the reviewers'
// final decision, for simulating screening (issue 17 item 7).
type LabelledReview struct {
	Name     string
	Docs     []ActiveDoc
	Included []bool
}

// Relevant returns the number of included records.
func (r LabelledReview) Relevant() int {
	n := 0
	for _, in := range r.Included {
		if in {
			n++
		}
	}
	return n
}

// Bounds of a labelled CSV file. The Cohen 2006 files are at most 1.6 MB,
// their lines at most 5.1 KB with 81 commas.
const (
	// maxLabelledCSV bounds the size of one file: maxActiveRecords records
	// of about 2 KB (the Cohen files' mean).
	maxLabelledCSV = 1 << 30
	// maxLabelledLine and maxLabelledCommas bound each line, so that a
	// damaged or hostile line (a header of millions of columns, a
	// gigabyte without a line end) is refused before encoding/csv holds
	// it whole, at about a hundred bytes per field. They are counted per
	// line, inside quotes or not: the reader takes bare quotes
	// (LazyQuotes), which would mislead a count of records.
	maxLabelledLine   = 1 << 20
	maxLabelledCommas = 10_000
)

// lineBound passes text through, failing once a line is longer than
// maxLabelledLine bytes or holds more than maxLabelledCommas commas.
type lineBound struct {
	r       io.Reader
	n, c    int // bytes and commas of the current line
	line    int // 1-based
	pending error
}

func (b *lineBound) Read(p []byte) (int, error) {
	if b.pending != nil {
		return 0, b.pending
	}
	n, err := b.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '\n':
			b.line++
			b.n, b.c = 0, 0
			continue
		case ',':
			b.c++
		}
		b.n++
		if b.n > maxLabelledLine || b.c > maxLabelledCommas {
			b.pending = fmt.Errorf("line %d is longer than %d MB or has more than %d commas: is this a CSV file of records?", b.line+1, maxLabelledLine>>20, maxLabelledCommas)
			return i, nil
		}
	}
	return n, err
}

// ReadLabelledCSV reads a labelled review: a CSV with a header holding
// title, abstract and label_included (1 included, 0 excluded), and
// optionally keywords (the Cohen 2006 files; ASReview's format has none).
// A file (a regular file: a named pipe would wait for ever) larger than
// maxLabelledCSV, or with a line beyond its bounds, is refused.
func ReadLabelledCSV(path string) (LabelledReview, error) {
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	rev := LabelledReview{Name: name}
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return rev, fmt.Errorf("reading labelled review %s: %w", name, err)
	}
	defer fh.Close()
	tooLarge := fmt.Errorf("reading labelled review %s: the file is larger than %d MB", name, maxLabelledCSV>>20)
	if fi.Size() > maxLabelledCSV {
		return rev, tooLarge
	}
	// One byte past the bound tells a file that grew while read.
	limited := &io.LimitedReader{R: fh, N: maxLabelledCSV + 1}
	r := csv.NewReader(&lineBound{r: limited})
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		return rev, fmt.Errorf("reading labelled review %s: header: %w", name, err)
	}
	head = slices.Clone(head)
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"title", "label_included"} {
		if _, ok := col[need]; !ok {
			return rev, fmt.Errorf("reading labelled review %s: no %q column (the file needs title, abstract and label_included)", name, need)
		}
	}
	get := func(rec []string, k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			if limited.N == 0 {
				return rev, tooLarge
			}
			break
		}
		if err != nil {
			if limited.N == 0 {
				return rev, tooLarge
			}
			return rev, fmt.Errorf("reading labelled review %s: %w", name, err)
		}
		if len(rev.Docs) >= maxActiveRecords {
			return rev, fmt.Errorf("reading labelled review %s: more than %d records", name, maxActiveRecords)
		}
		lab, err := strconv.ParseFloat(strings.TrimSpace(get(rec, "label_included")), 64)
		if err != nil {
			return rev, fmt.Errorf("reading labelled review %s: record %d: label_included %q is not 0 or 1", name, line, get(rec, "label_included"))
		}
		rev.Docs = append(rev.Docs, ActiveDoc{Title: get(rec, "title"), Abstract: get(rec, "abstract"), Keywords: get(rec, "keywords")})
		rev.Included = append(rev.Included, lab >= 0.5)
	}
	if rev.Relevant() == 0 || rev.Relevant() == len(rev.Docs) {
		return rev, fmt.Errorf("reading labelled review %s: needs at least one included and one excluded record (has %d of %d included)", name, rev.Relevant(), len(rev.Docs))
	}
	return rev, nil
}

// ReadLabelledDir reads every *.csv file of dir, in name order.
func ReadLabelledDir(dir string) ([]LabelledReview, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.csv"))
	if err != nil {
		return nil, fmt.Errorf("listing labelled reviews in %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no labelled review (*.csv) in %s", dir)
	}
	slices.Sort(paths)
	var out []LabelledReview
	for _, p := range paths {
		r, err := ReadLabelledCSV(p)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// SimOptions sets a screening simulation.
type SimOptions struct {
	Learner  LearnerConfig
	Features FeatureOptions
	// Batch is the number of decisions between retrainings; 0 or 1
	// retrains after every decision, as ASReview's simulation does.
	Batch int
}

// SimResult is one simulated screening: the order records were screened
// in (the two seed records first) and the resulting metrics.
type SimResult struct {
	Order []int
	// Included is the review's labels, by record index.
	Included []bool
	Metrics
}

// Metrics are the standard figures of a screening order.
type Metrics struct {
	// WSS95 and WSS100 are the work saved over sampling at 95% and 100%
	// recall: (N − screened to reach that recall)/N − (1 − recall).
	WSS95, WSS100 float64
	// RRF10 is the recall after screening 10% of the records.
	RRF10 float64
	// N95 is the number of records screened to reach 95% recall.
	N95 int
}

// ScreeningMetrics computes the metrics of screening in order (the
// indices of every record; included[i] tells record i's label).
func ScreeningMetrics(order []int, included []bool) Metrics {
	n := len(order)
	rel := 0
	for _, in := range included {
		if in {
			rel++
		}
	}
	var m Metrics
	need95 := int(math.Ceil(0.95 * float64(rel)))
	at10 := int(math.Ceil(0.10 * float64(n)))
	found, n100 := 0, n
	for k, i := range order {
		if included[i] {
			found++
			if found == need95 && m.N95 == 0 {
				m.N95 = k + 1
			}
			if found == rel {
				n100 = k + 1
			}
		}
		if k+1 == at10 {
			m.RRF10 = float64(found) / float64(rel)
		}
	}
	m.WSS95 = float64(n-m.N95)/float64(n) - 0.05
	m.WSS100 = float64(n-n100) / float64(n)
	return m
}

// Simulate screens rev as a reviewer following the learner would, with
// its own labels as the decisions: it starts from one random included and
// one random excluded record (drawn from seed), then repeatedly screens
// the record ranked first, retraining after every Batch decisions. Once
// every included record is found the rest follow in the last ranking.
func Simulate(ctx context.Context, rev LabelledReview, f *Features, opt SimOptions, seed uint64) (SimResult, error) {
	n := len(rev.Docs)
	var pos, neg []int
	for i, in := range rev.Included {
		if in {
			pos = append(pos, i)
		} else {
			neg = append(neg, i)
		}
	}
	if len(pos) == 0 || len(neg) == 0 {
		return SimResult{}, fmt.Errorf("simulating %s: needs an included and an excluded record", rev.Name)
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	a := NewActive(f, opt.Learner)
	order := []int{pos[rng.IntN(len(pos))], neg[rng.IntN(len(neg))]}
	a.Label(order[0], true)
	a.Label(order[1], false)
	found := 1
	batch := max(opt.Batch, 1)
	var ranked []Ranked
	for len(order) < n {
		if found == len(pos) {
			if ranked == nil {
				var err error
				if ranked, err = a.Retrain(ctx); err != nil {
					return SimResult{}, fmt.Errorf("simulating %s: %w", rev.Name, err)
				}
			}
			for _, r := range ranked {
				if !a.Decided(r.Index) {
					order = append(order, r.Index)
				}
			}
			break
		}
		var err error
		if ranked, err = a.Retrain(ctx); err != nil {
			return SimResult{}, fmt.Errorf("simulating %s: %w", rev.Name, err)
		}
		for _, r := range ranked[:min(batch, len(ranked))] {
			order = append(order, r.Index)
			a.Label(r.Index, rev.Included[r.Index])
			if rev.Included[r.Index] {
				found++
			}
		}
		ranked = nil
	}
	return SimResult{Order: order, Included: rev.Included, Metrics: ScreeningMetrics(order, rev.Included)}, nil
}

// ActiveReviewResult is one review's mean metrics over the seeds of
// EvalActive, and the screening order of its first seed (for plots).
type ActiveReviewResult struct {
	Name     string
	Records  int
	Relevant int
	Metrics
	// N95Mean is the mean number of records screened to reach 95% recall.
	N95Mean   float64
	FirstSeed SimResult
}

// ActiveEval is the outcome of EvalActive: each review and the means.
type ActiveEval struct {
	Reviews                   []ActiveReviewResult
	WSS95, WSS100, RRF10, N95 float64
}

// EvalActive simulates screening each review from seeds 0..seeds-1 and
// averages the metrics per review and over reviews.
func EvalActive(ctx context.Context, revs []LabelledReview, opt SimOptions, seeds int) (ActiveEval, error) {
	var ev ActiveEval
	seeds = max(seeds, 1)
	for _, rev := range revs {
		f, err := BuildFeatures(ctx, rev.Docs, opt.Features)
		if err != nil {
			return ev, fmt.Errorf("simulating %s: %w", rev.Name, err)
		}
		res := ActiveReviewResult{Name: rev.Name, Records: len(rev.Docs), Relevant: rev.Relevant()}
		for s := range seeds {
			r, err := Simulate(ctx, rev, f, opt, uint64(s))
			if err != nil {
				return ev, err
			}
			if s == 0 {
				res.FirstSeed = r
			}
			k := float64(seeds)
			res.WSS95 += r.WSS95 / k
			res.WSS100 += r.WSS100 / k
			res.RRF10 += r.RRF10 / k
			res.N95Mean += float64(r.N95) / k
		}
		res.N95 = int(math.Round(res.N95Mean))
		ev.Reviews = append(ev.Reviews, res)
		k := float64(len(revs))
		ev.WSS95 += res.WSS95 / k
		ev.WSS100 += res.WSS100 / k
		ev.RRF10 += res.RRF10 / k
		ev.N95 += res.N95Mean / k
	}
	return ev, nil
}
