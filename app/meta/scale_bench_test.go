package meta

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

// syntheticStudies returns k generic studies (an estimate and its standard
// error) drawn around a true effect of 0.2 with between-study variance
// 0.05, as a large random-effects meta-analysis would have.
func syntheticStudies(k int, seed uint64) []Study {
	rng := rand.New(rand.NewPCG(seed, 2026))
	st := make([]Study, k)
	for i := range st {
		se := 0.1 + 0.4*rng.Float64()
		theta := 0.2 + 0.2236*rng.NormFloat64()
		st[i] = Study{Label: "S" + strconv.Itoa(i+1), Kind: Generic, Est: theta + se*rng.NormFloat64(), SE: se}
	}
	return st
}

// measure runs f once and returns its wall time and the bytes it
// allocated, and prints the processor time it took (user and system, all
// threads: on a busy machine the wall time says little).
func measure(f func()) (time.Duration, uint64) {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := cpuTime()
	start := time.Now()
	f()
	d := time.Since(start)
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&after)
	fmt.Printf("  [processor time %v] ", cpu.Round(time.Millisecond))
	return d, after.TotalAlloc - before.TotalAlloc
}

// cpuTime is the processor time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestMetaScaleFigures prints the time and memory of the pooled model and
// of the sensitivity analyses (REML) at growing study counts. It is a
// measurement, not a check: it runs only when CLINSIGHT_META_SCALE lists
// the study counts, e.g. CLINSIGHT_META_SCALE=1000,5000 (the sensitivity
// analyses at 20,000 studies and more take a long time; give
// CLINSIGHT_META_SCALE_ANALYZE_ONLY=1 to time only the pooled model).
func TestMetaScaleFigures(t *testing.T) {
	spec := os.Getenv("CLINSIGHT_META_SCALE")
	if spec == "" {
		t.Skip("set CLINSIGHT_META_SCALE=1000,5000,... to measure")
	}
	opts := Options{Measure: GEN, Method: REML}
	for _, f := range strings.Split(spec, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			t.Fatal(err)
		}
		st := syntheticStudies(k, 1)
		var res Result
		d, mem := measure(func() {
			if res, err = Analyze(st, opts); err != nil {
				t.Fatal(err)
			}
		})
		fmt.Printf("k=%d Analyze: %v, %.1f MB allocated (τ² = %.4g, %d iterations)\n", k, d.Round(time.Millisecond), float64(mem)/1e6, res.Tau2, res.Iterations)
		y, v, _, m := modelInputs(res)
		m.noR2 = true
		m.y, m.v = y[1:], v[1:]
		d, mem = measure(func() {
			if _, err := fitRMA(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		})
		fmt.Printf("k=%d one leave-one-out refit: %v, %.1f MB allocated\n", k, d.Round(10*time.Microsecond), float64(mem)/1e6)
		for _, a := range []struct {
			name string
			plan Plan
		}{{"Begg's test", Plan{Begg: true}}, {"trim and fill", Plan{TrimFill: "L0"}}, {"Egger's test", Plan{Egger: true}}} {
			d, mem = measure(func() {
				if _, err := Run(context.Background(), st, opts, a.plan); err != nil {
					t.Fatal(err)
				}
			})
			fmt.Printf("k=%d Run(%s): %v, %.1f MB allocated\n", k, a.name, d.Round(time.Millisecond), float64(mem)/1e6)
		}
		if os.Getenv("CLINSIGHT_META_SCALE_ANALYZE_ONLY") != "" {
			continue
		}
		if k >= 20000 {
			// Too long to run whole: run each analysis for 1% of its
			// refits, then Cancel, and extrapolate from the rate (the
			// cumulative analysis's refits grow from 1 to k studies: it
			// takes about half the leave-one-out's time).
			for _, a := range []struct {
				name  string
				plan  Plan
				stage string
			}{
				{"leave-one-out", Plan{LeaveOneOut: true}, "Leave-one-out analysis: "},
				{"influence", Plan{Influence: true}, "Influence diagnostics: "},
			} {
				partialRun(t, st, opts, a.plan, a.stage, a.name, k)
			}
			continue
		}
		for _, a := range []struct {
			name string
			plan Plan
		}{
			{"leave-one-out", Plan{LeaveOneOut: true}},
			{"cumulative", Plan{Cumulative: true}},
			{"influence", Plan{Influence: true}},
			{"all three", Plan{LeaveOneOut: true, Cumulative: true, Influence: true}},
		} {
			var rep Report
			d, mem := measure(func() {
				if rep, err = Run(context.Background(), st, opts, a.plan); err != nil {
					t.Fatal(err)
				}
			})
			if len(rep.Problems) > 0 {
				t.Fatalf("%s: %v", a.name, rep.Problems)
			}
			fmt.Printf("k=%d Run(%s): %v, %.1f MB allocated\n", k, a.name, d.Round(time.Millisecond), float64(mem)/1e6)
		}
	}
}

// TestMetaDumpReports writes every planned analysis of Run, with every
// number in full precision, for BCG and synthetic data under each method,
// to the file CLINSIGHT_META_DUMP names: run it before and after a change
// to the engine and compare the files to show the numbers did not move.
func TestMetaDumpReports(t *testing.T) {
	path := os.Getenv("CLINSIGHT_META_DUMP")
	if path == "" {
		t.Skip("set CLINSIGHT_META_DUMP=file to dump the reports")
	}
	bcg := loadBCG(t)
	gen := syntheticStudies(300, 7)
	for i := range gen {
		gen[i].Covariates = map[string]string{"g": []string{"a", "b", "c"}[i%3], "x": strconv.Itoa(i % 17)}
	}
	var b strings.Builder
	for _, d := range []struct {
		name    string
		st      []Study
		measure Measure
		plan    Plan
	}{
		{"bcg", bcg, RR, Plan{Subgroup: "alloc", Mods: []string{"ablat"}, Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Influence: true, Cumulative: true, CumulativeBy: "year"}},
		{"bcg-r0", bcg, OR, Plan{TrimFill: "R0", LeaveOneOut: true, Cumulative: true}},
		{"synthetic", gen, GEN, Plan{Subgroup: "g", Mods: []string{"x"}, Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Influence: true, Cumulative: true, CumulativeBy: "x"}},
	} {
		for _, m := range allMethods() {
			for _, test := range []Test{TestZ, TestKnHa} {
				o := Options{Measure: d.measure, Method: m, Test: test}
				if o.Validate() != nil {
					continue
				}
				rep, err := Run(context.Background(), d.st, o, d.plan)
				fmt.Fprintf(&b, "== %s %s %s\nerr=%v\n", d.name, m, test, err)
				for _, part := range []any{rep.Result, rep.Subgroups, rep.Regression, rep.Egger, rep.Begg, rep.TrimFill, rep.LeaveOneOut, rep.Cumulative, rep.Influence, rep.Sentences, rep.Problems} {
					v := reflect.ValueOf(part)
					if v.Kind() == reflect.Pointer && !v.IsNil() {
						part = v.Elem().Interface()
					}
					fmt.Fprintf(&b, "%#v\n", part)
				}
			}
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkRefit times one leave-one-out refit (REML) of 5,000 studies,
// the unit of work of the leave-one-out, cumulative and influence analyses.
func BenchmarkRefit(b *testing.B) {
	res, err := Analyze(syntheticStudies(5000, 1), Options{Measure: GEN, Method: REML})
	if err != nil {
		b.Fatal(err)
	}
	y, v, _, m := modelInputs(res)
	m.noR2, m.noCI = true, true
	m.y, m.v = y[1:], v[1:]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fitRMA(context.Background(), m); err != nil {
			b.Fatal(err)
		}
	}
}

// partialRun runs plan on studies for 1% of its refits, cancels it, and
// prints the rate, the time the whole analysis would take at that rate and
// how long Run took to stop after the cancel.
func partialRun(t *testing.T, studies []Study, opts Options, plan Plan, stage, name string, k int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu           sync.Mutex
		start        time.Time
		first, count int64
		at           time.Time
	)
	plan.Progress = func(r progress.Report) {
		if !strings.HasPrefix(r.Stage, stage) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if start.IsZero() {
			start, first = time.Now(), r.Done
		}
		if r.Done-first >= int64(k)/100 && at.IsZero() {
			count, at = r.Done-first, time.Now()
			cancel()
		}
	}
	_, err := Run(ctx, studies, opts, plan)
	end := time.Now()
	mu.Lock()
	defer mu.Unlock()
	if at.IsZero() {
		t.Fatalf("%s: not cancelled (%v)", name, err)
	}
	per := at.Sub(start) / time.Duration(count)
	fmt.Printf("k=%d %s: %d refits in %v (%v each, whole analysis ≈ %v); stopped %v after Cancel\n",
		k, name, count, at.Sub(start).Round(time.Millisecond), per.Round(10*time.Microsecond), (per * time.Duration(k)).Round(time.Second), end.Sub(at).Round(time.Millisecond))
}
