package meta

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

// runCancelledOnce runs plan on studies and cancels the run when progress
// first reports a stage starting with stage and at least done units, then
// returns how long Run took to return after the cancel and its error. It
// fails the test if Run has not returned within deadline of the cancel.
func runCancelledOnce(t *testing.T, studies []Study, opts Options, plan Plan, stage string, done int64, deadline time.Duration) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cancelled := make(chan time.Time, 1)
	var once sync.Once
	plan.Progress = func(r progress.Report) {
		if strings.HasPrefix(r.Stage, stage) && r.Done >= done {
			once.Do(func() {
				cancelled <- time.Now()
				cancel()
			})
		}
	}
	type result struct {
		err error
		at  time.Time
	}
	ret := make(chan result, 1)
	go func() {
		_, err := Run(ctx, studies, opts, plan)
		ret <- result{err, time.Now()}
	}()
	var at time.Time
	select {
	case at = <-cancelled:
	case r := <-ret:
		t.Fatalf("Run returned (%v) before %q was reported", r.err, stage)
	}
	select {
	case r := <-ret:
		return r.at.Sub(at), r.err
	case <-time.After(deadline):
		t.Fatalf("Run still working %v after Cancel during %q", deadline, stage)
	}
	return 0, nil
}

// Cancel during a leave-one-out, cumulative or influence analysis of 5,000
// studies (about a minute each before they noticed Cancel) stops it within
// 2 s, with an error that says it was stopped and wraps context.Canceled.
func TestRunCancelStopsSensitivityAnalyses(t *testing.T) {
	studies := syntheticStudies(5000, 3)
	for _, c := range []struct {
		name  string
		plan  Plan
		stage string
	}{
		{"leave-one-out", Plan{LeaveOneOut: true}, "Leave-one-out analysis: "},
		{"cumulative", Plan{Cumulative: true}, "Cumulative analysis: "},
		{"influence", Plan{Influence: true}, "Influence diagnostics: "},
		{"all three", Plan{LeaveOneOut: true, Influence: true, Cumulative: true}, "Leave-one-out analysis: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			took, err := runCancelledOnce(t, studies, Options{Measure: GEN, Method: REML}, c.plan, c.stage, 50, 2*time.Second)
			if !errors.Is(err, context.Canceled) || ErrorCode(err) != ECANCELLED {
				t.Fatalf("Run after Cancel: %v (code %q), want a %q error wrapping context.Canceled", err, ErrorCode(err), ECANCELLED)
			}
			t.Logf("stopped %v after Cancel: %v", took.Round(time.Millisecond), err)
		})
	}
}

// Cancel while the other planned analyses run (subgroups, meta-regression,
// Egger's and Begg's tests, trim and fill) stops Run with the cancellation
// error, not a report with the analysis listed as a problem.
func TestRunCancelStopsEachAnalysis(t *testing.T) {
	studies := syntheticStudies(3000, 5)
	for i := range studies {
		studies[i].Covariates = map[string]string{"g": []string{"a", "b", "c"}[i%3], "x": itoa(i % 11)}
	}
	for _, c := range []struct {
		plan  Plan
		stage string
	}{
		{Plan{Subgroup: "g"}, "Subgroup analysis"},
		{Plan{Mods: []string{"x"}}, "Meta-regression"},
		{Plan{Egger: true}, "Egger's test"},
		{Plan{Begg: true}, "Begg's test"},
		{Plan{TrimFill: "L0"}, "Trim and fill"},
	} {
		t.Run(c.stage, func(t *testing.T) {
			_, err := runCancelledOnce(t, studies, Options{Measure: GEN, Method: REML}, c.plan, c.stage, 0, 2*time.Second)
			if !errors.Is(err, context.Canceled) || ErrorCode(err) != ECANCELLED {
				t.Fatalf("Run after Cancel: %v (code %q), want a %q error wrapping context.Canceled", err, ErrorCode(err), ECANCELLED)
			}
		})
	}
}

// A cancelled context stops the model fit itself between its iterations.
func TestFitStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	y, v := yisVis(syntheticStudies(200, 9))
	for _, m := range []Method{REML, ML, EB, PM, DL} {
		_, err := fitRMA(ctx, uniModel{y: y, v: v, method: m, test: TestZ, level: 0.95, ctl: Options{}.withDefaults().Control})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: %v, want context.Canceled", m, err)
		}
	}
	if _, err := Run(ctx, syntheticStudies(20, 9), Options{Measure: GEN}, Plan{}); !errors.Is(err, context.Canceled) || ErrorCode(err) != ECANCELLED {
		t.Errorf("Run with a cancelled context: %v", err)
	}
}

func yisVis(st []Study) (y, v []float64) {
	for _, s := range st {
		y, v = append(y, s.Est), append(v, s.SE*s.SE)
	}
	return y, v
}

// The refits spread over the processors give the rows a single loop gives,
// in the same order, and progress counts every refit up to the total.
func TestSensitivityRefitsInParallelMatchSequential(t *testing.T) {
	studies := syntheticStudies(3*minParallelRefits, 11)
	for _, m := range []Method{REML, DL, EE, PM} {
		opts := Options{Measure: GEN, Method: m, Test: TestKnHa}
		res := mustAnalyze(t, studies, opts)
		var mu sync.Mutex
		var reports []progress.Report
		plan := Plan{LeaveOneOut: true, Influence: true, Cumulative: true, Progress: func(r progress.Report) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, r)
		}}
		rep, err := Run(context.Background(), studies, opts, plan)
		if err != nil {
			t.Fatal(err)
		}
		// The sequential reference: the refits one after another, here
		// written out as the analyses did them before they were spread.
		y, v, idx, um := modelInputs(res)
		um.noR2 = true
		for i := range y {
			mm := um
			mm.y = append(append([]float64(nil), y[:i]...), y[i+1:]...)
			mm.v = append(append([]float64(nil), v[:i]...), v[i+1:]...)
			u, err := fitRMA(context.Background(), mm)
			if err != nil {
				t.Fatal(err)
			}
			want := refitOf(u).row(res.Studies[idx[i]].Label)
			if !reflect.DeepEqual(rep.LeaveOneOut[i], want) {
				t.Fatalf("%s: leave-one-out row %d = %+v, a single loop gives %+v", m, i, rep.LeaveOneOut[i], want)
			}
			if got := float64(rep.Influence[i].Tau2Del); got != u.tau2 {
				t.Fatalf("%s: influence row %d τ²₍₋ᵢ₎ = %v, a single loop gives %v", m, i, got, u.tau2)
			}
			mm.y, mm.v = y[:i+1], v[:i+1]
			if i == 0 {
				continue // a single study: metafor's cumul gives its own estimate
			}
			if u, err = fitRMA(context.Background(), mm); err != nil {
				t.Fatal(err)
			}
			if want := refitOf(u).row(res.Studies[idx[i]].Label); !reflect.DeepEqual(rep.Cumulative[i], want) {
				t.Fatalf("%s: cumulative row %d = %+v, a single loop gives %+v", m, i, rep.Cumulative[i], want)
			}
		}
		last := map[string]int64{}
		for _, r := range reports {
			name, _, _ := strings.Cut(r.Stage, ":")
			if r.Unit != "refits" {
				continue
			}
			if r.Total != int64(len(y)) || r.Done < last[name] || r.Done > r.Total {
				t.Fatalf("%s: progress %+v after %d", m, r, last[name])
			}
			last[name] = r.Done
		}
		for _, name := range []string{"Leave-one-out analysis", "Cumulative analysis"} {
			if last[name] != int64(len(y)) {
				t.Errorf("%s: %s progress ended at %d of %d", m, name, last[name], len(y))
			}
		}
	}
}

// powInt gives math.Pow's bits for every double it multiplies out (and is
// math.Pow elsewhere): checked over random mantissas at every exponent of
// its range and its edges, positive and negative.
func TestPowIntIsMathPow(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2026))
	check := func(w float64) {
		for n := 1; n <= 3; n++ {
			if got, want := powInt(w, n), math.Pow(w, float64(n)); math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("powInt(%b, %d) = %b, math.Pow %b", w, n, got, want)
			}
		}
	}
	for e := -1074; e <= 1023; e++ {
		for j := 0; j < 300; j++ {
			w := math.Ldexp(1+rng.Float64(), e)
			check(w)
			check(-w)
		}
	}
	for _, w := range []float64{0x1p-300, 0x1p300, math.Nextafter(0x1p-300, 0), math.Nextafter(0x1p300, math.Inf(1)), 1, 0, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		check(w)
		check(-w)
	}
}

// Knight's O(n log n) counts give the pair sums of Begg's test to the
// last bit: random values with many ties, ±0, ±Inf and huge magnitudes;
// NaN sends the test back to the pairs.
func TestKendallSumsMatchPairs(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 2026))
	pick := func(pool []float64) float64 {
		if rng.IntN(4) == 0 {
			return pool[rng.IntN(len(pool))]
		}
		return rng.NormFloat64() * math.Pow(10, float64(rng.IntN(600)-300))
	}
	pool := []float64{0, math.Copysign(0, -1), 1, -1, 2.5, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	for trial := 0; trial < 400; trial++ {
		n := rng.IntN(300)
		x, y := make([]float64, n), make([]float64, n)
		for i := range x {
			x[i], y[i] = pick(pool), pick(pool)
			if trial%5 == 0 {
				x[i] = float64(rng.IntN(4)) // heavy ties
			}
		}
		s, nx, ny, ok := kendallSums(x, y)
		ws, wnx, wny, _ := kendallSumsPairs(context.Background(), x, y)
		if !ok || s != ws || nx != wnx || ny != wny {
			t.Fatalf("trial %d (n = %d): Knight %v %v %v (ok %v), pairs %v %v %v", trial, n, s, nx, ny, ok, ws, wnx, wny)
		}
	}
	if _, _, _, ok := kendallSums([]float64{1, math.NaN()}, []float64{1, 2}); ok {
		t.Error("a NaN was counted as ordered")
	}
}

// The one-pass traces of an intercept-only projection are the p×p code's
// to the last bit, for weights of every magnitude.
func TestInterceptOnlyTracesMatchGeneral(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 2026))
	for trial := 0; trial < 300; trial++ {
		k := 1 + rng.IntN(400)
		v, y := make([]float64, k), make([]float64, k)
		for i := range v {
			v[i] = math.Ldexp(0.5+rng.Float64(), rng.IntN(80)-40)
			if trial%10 == 0 {
				v[i] = math.Ldexp(0.5+rng.Float64(), rng.IntN(1400)-700)
			}
			y[i] = rng.NormFloat64()
		}
		pr, ok := newProjection(interceptOnly(k), weights(v, rng.Float64()), y)
		if !ok || !pr.io {
			continue
		}
		general := pr
		general.io = false
		if got, want := pr.trPD(nil), general.trPD(nil); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: trPD %b, general %b", trial, got, want)
		}
		if got, want := pr.trPPD(nil), general.trPPD(nil); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("trial %d: trPPD %b, general %b", trial, got, want)
		}
	}
}

// A panic in a refit on a worker goroutine reaches the caller, as it did
// before the refits were spread over goroutines, instead of ending the
// program, and stops the other refits.
func TestRefitPanicReachesCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the refits run on one goroutine")
	}
	caller := goroutineID()
	var callerRefits atomic.Int64
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "failed on a worker") {
			t.Fatalf("recovered %v, want the worker's panic", r)
		}
		if n := callerRefits.Load(); n >= 1000 {
			t.Errorf("the caller went on with all %d refits", n)
		}
	}()
	_ = refits(context.Background(), "test", 1000, nil, func(i int) {
		if goroutineID() != caller {
			panic(fmt.Sprintf("refit %d failed on a worker", i))
		}
		callerRefits.Add(1)
		x := 0.0 // a refit takes some work
		for j := range 200000 {
			x += math.Sqrt(float64(j))
		}
		if x < 0 {
			t.Error("a sum of square roots below 0")
		}
	})
}

// goroutineID is the number of the calling goroutine, from its stack.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}
