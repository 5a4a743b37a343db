package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

// progressPrinter shows progress of long work on stderr: redrawn in place on
// a terminal, otherwise a line per stage and every 10%, so logs stay short.
type progressPrinter struct {
	w        io.Writer
	terminal bool

	mu        sync.Mutex
	last      time.Time
	stage     string
	lastTenth int64
	drawn     bool
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	return &progressPrinter{w: w, terminal: isTerminal(w), lastTenth: -1}
}

// Report is a progress.Func.
func (p *progressPrinter) Report(pr progress.Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pct := int64(-1)
	if pr.Total > 0 {
		pct = pr.Done * 100 / pr.Total
	}
	if p.terminal {
		if time.Since(p.last) < 200*time.Millisecond && pr.Stage == p.stage && pct != 100 {
			return
		}
		p.last = time.Now()
		p.stage = pr.Stage
		writeControl(p.w, "\r\033[K") // stage names can hold data: only this is unescaped
		fmt.Fprint(p.w, describe(pr, pct))
		p.drawn = true
		return
	}
	tenth := pct / 10
	if pr.Stage == p.stage && tenth == p.lastTenth {
		return
	}
	p.stage, p.lastTenth = pr.Stage, tenth
	fmt.Fprintln(p.w, describe(pr, pct))
}

// studiesProgress returns the printer of a step's progress over studies
// (stage "screening", "extracting") and the callback that feeds it; both
// nil with asJSON, whose output is the JSON alone.
func studiesProgress(w io.Writer, asJSON bool, stage string) (*progressPrinter, func(done, total int)) {
	if asJSON {
		return nil, nil
	}
	pp := newProgressPrinter(w)
	return pp, func(done, total int) {
		pp.Report(progress.Report{Stage: stage, Done: int64(done), Total: int64(total), Unit: "studies"})
	}
}

// Done ends an in-place progress line; a nil printer does nothing.
func (p *progressPrinter) Done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func describe(pr progress.Report, pct int64) string {
	if pr.Unit == "%" && pct >= 0 { // a percentage only (no counts: aggregate-only pre-screening)
		return fmt.Sprintf("%s: %3d%%", pr.Stage, pct)
	}
	amount := fmt.Sprintf("%d %s", pr.Done, pr.Unit)
	if pr.Unit == "bytes" || pr.Unit == "" {
		amount = humanBytes(pr.Done)
		if pr.Total > 0 {
			amount += " of " + humanBytes(pr.Total)
		}
	}
	if pct >= 0 {
		return fmt.Sprintf("%s: %3d%% (%s)", pr.Stage, pct, amount)
	}
	return fmt.Sprintf("%s: %s", pr.Stage, amount)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
