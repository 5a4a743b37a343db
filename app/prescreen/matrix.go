package prescreen

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/localllm"
)

// Bounds of a pre-screening.
const (
	// DefaultTop is K, the best-ranked trials per patient checked and
	// shown, when none is chosen; MaxTop bounds it.
	DefaultTop = 10
	MaxTop     = 50
	// MaxPatients bounds the patients of one pre-screening.
	MaxPatients = 2000
)

// Matcher ranks trials for one patient description (*trials.Pipeline).
type Matcher interface {
	Match(ctx context.Context, req trials.Request) (*trials.Result, error)
}

// Options configure [Run].
type Options struct {
	// Top is K: the best-ranked trials per patient that are checked and
	// enter the matrix (0: DefaultTop).
	Top int
	// UseModel asks the matcher for the model's concepts and its
	// criterion-level eligibility of each patient's top K trials (when it
	// has a model).
	UseModel bool
	// Workers bounds the patients matched at once (0: up to 4).
	Workers int
	// Progress, if set, receives the patients done out of all, from the
	// workers (it must be safe for concurrent use).
	Progress func(done, total int)
}

// Cell is one patient × trial: the patient's criteria for the trial when
// it is among the patient's top K, else Ranked is false.
type Cell struct {
	Ranked bool `json:"ranked"`
	// Rank of the trial in the patient's ranking, from 1.
	Rank int `json:"rank,omitempty"`
	// Status is the overall verdict; Criteria each criterion's.
	Status   Status            `json:"status,omitempty"`
	Criteria []CriterionResult `json:"criteria,omitempty"`
	// ModelScore is the model's eligibility score when it assessed the
	// trial; ModelError when it could not.
	ModelScore *float64 `json:"model_score,omitempty"`
	ModelError string   `json:"model_error,omitempty"`
}

// Counts counts a cell's criteria by status.
func (c Cell) Counts() (eligible, not, unknown int) {
	for _, r := range c.Criteria {
		switch r.Status {
		case Eligible:
			eligible++
		case NotEligible:
			not++
		default:
			unknown++
		}
	}
	return
}

// TrialInfo describes a trial of the matrix.
type TrialInfo struct {
	ID         string   `json:"id"`
	Title      string   `json:"title,omitempty"`
	Conditions []string `json:"conditions,omitempty"`
	Phase      string   `json:"phase,omitempty"`
	Status     string   `json:"status,omitempty"`
	AgeLimits  string   `json:"age_limits,omitempty"`
	Sex        string   `json:"sex,omitempty"`
}

// Matrix is the result of a pre-screening: patients × the trials among
// any patient's top K.
type Matrix struct {
	Patients []*Summary  `json:"patients"`
	Trials   []TrialInfo `json:"trials"`
	// Cells[i][j] is patient i and trial j.
	Cells [][]Cell `json:"cells"`
	// Top is K; Model the chat model that assessed criteria ("" without
	// one); Embedder the ranking's embedder.
	Top      int    `json:"top"`
	Model    string `json:"model,omitempty"`
	Embedder string `json:"embedder,omitempty"`
	// Notices tell the user what was left out or fell back.
	Notices []string       `json:"notices,omitempty"`
	Usage   localllm.Usage `json:"usage"`
	Elapsed time.Duration  `json:"elapsed_ns"`
}

// TrialCount is how many patients a trial's column holds of each status.
type TrialCount struct {
	Eligible, Unknown, NotEligible int
}

// Might is the patients who might qualify: eligible or unknown.
func (c TrialCount) Might() int { return c.Eligible + c.Unknown }

// TrialCounts counts a trial's patients among those who have it in their
// top K.
func (m *Matrix) TrialCounts(j int) TrialCount {
	return countCells(len(m.Patients), func(i int) Cell { return m.Cells[i][j] })
}

// PatientCounts counts a patient's trials by status.
func (m *Matrix) PatientCounts(i int) TrialCount {
	return countCells(len(m.Cells[i]), func(j int) Cell { return m.Cells[i][j] })
}

// countCells counts the ranked cells among at(0) … at(n-1) by status.
func countCells(n int, at func(k int) Cell) TrialCount {
	var c TrialCount
	for k := range n {
		cell := at(k)
		if !cell.Ranked {
			continue
		}
		switch cell.Status {
		case Eligible:
			c.Eligible++
		case NotEligible:
			c.NotEligible++
		default:
			c.Unknown++
		}
	}
	return c
}

// TrialOrder returns the trials' indexes, those more patients might
// qualify for first (then more eligible, then by id).
func (m *Matrix) TrialOrder() []int {
	return order(len(m.Trials), m.TrialCounts, func(j int) string { return m.Trials[j].ID })
}

// PatientOrder returns the patients' indexes, those who might qualify for
// more trials first (then more eligible, then by id).
func (m *Matrix) PatientOrder() []int {
	return order(len(m.Patients), m.PatientCounts, func(i int) string { return m.Patients[i].ID })
}

// order returns the indexes 0 … n-1, those whose count might qualify more
// first, then more eligible, then by id.
func order(n int, count func(int) TrialCount, id func(int) string) []int {
	idx := make([]int, n)
	counts := make([]TrialCount, n)
	for k := range idx {
		idx[k], counts[k] = k, count(k)
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(counts[b].Might(), counts[a].Might()); c != 0 {
			return c
		}
		if c := cmp.Compare(counts[b].Eligible, counts[a].Eligible); c != 0 {
			return c
		}
		return cmp.Compare(id(a), id(b))
	})
	return idx
}

// Run ranks the trials for each patient with m (in parallel, at most
// opts.Workers at once), checks the criteria of each patient's top K
// trials (Evaluate), and returns the matrix. Cancelling ctx stops it:
// no new patient starts and the error is ctx's.
func Run(ctx context.Context, m Matcher, pats []*Summary, opts Options) (*Matrix, error) {
	start := time.Now()
	if m == nil {
		return nil, errors.New("pre-screen: no trial matcher")
	}
	if len(pats) == 0 {
		return nil, errors.New("pre-screen: the cohort has no patients")
	}
	if len(pats) > MaxPatients {
		return nil, fmt.Errorf("pre-screen: at most %d patients at once (%d given)", MaxPatients, len(pats))
	}
	top := opts.Top
	switch {
	case top <= 0:
		top = DefaultTop
	case top > MaxTop:
		return nil, fmt.Errorf("pre-screen: at most the %d best-ranked trials per patient can be checked (%d asked)", MaxTop, top)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = min(runtime.GOMAXPROCS(0), 4)
	}
	results := make([]*trials.Result, len(pats))
	var done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i, p := range pats {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			res, err := m.Match(gctx, trials.Request{Patient: p.Narrative(), Top: top, UseModel: opts.UseModel})
			if err != nil {
				return fmt.Errorf("pre-screen patient %s: %w", p.ID, err)
			}
			results[i] = res
			if opts.Progress != nil {
				opts.Progress(int(done.Add(1)), len(pats))
			}
			return nil
		})
	}
	err := g.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	return build(pats, results, top, start), nil
}

// build assembles the matrix from each patient's ranking.
func build(pats []*Summary, results []*trials.Result, top int, start time.Time) *Matrix {
	mx := &Matrix{Patients: pats, Top: top}
	col := map[string]int{}
	notices := map[string]bool{}
	type placed struct {
		j int
		r *trials.RankedTrial
	}
	per := make([][]placed, len(pats))
	for i, res := range results {
		if res == nil {
			continue
		}
		if res.Model != "" {
			mx.Model = res.Model
		}
		mx.Embedder = res.Embedder
		mx.Usage = mx.Usage.Add(res.Usage)
		for _, n := range res.Notices {
			if !notices[n] {
				notices[n] = true
				mx.Notices = append(mx.Notices, n)
			}
		}
		for k := range res.Trials {
			r := &res.Trials[k]
			if r.Trial == nil {
				continue
			}
			j, ok := col[r.Trial.ID]
			if !ok {
				j = len(mx.Trials)
				col[r.Trial.ID] = j
				t := r.Trial
				mx.Trials = append(mx.Trials, TrialInfo{ID: t.ID, Title: t.Title, Conditions: t.Conditions, Phase: t.Phase,
					Status: t.Status, AgeLimits: t.AgeLimits(), Sex: string(t.Sex)})
			}
			per[i] = append(per[i], placed{j, r})
		}
	}
	mx.Cells = make([][]Cell, len(pats))
	for i := range pats {
		mx.Cells[i] = make([]Cell, len(mx.Trials))
		for _, p := range per[i] {
			c := Cell{Ranked: true, Rank: p.r.Rank}
			if el := p.r.Eligibility; el != nil {
				if el.Error != "" {
					c.ModelError = el.Error
				} else {
					score := el.Score
					c.ModelScore = &score
				}
			}
			c.Criteria = Evaluate(p.r.Trial, pats[i], p.r.Eligibility)
			c.Status = Overall(c.Criteria)
			mx.Cells[i][p.j] = c
		}
	}
	mx.Elapsed = time.Since(start)
	return mx
}
