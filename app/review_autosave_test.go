package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
)

// projectJSON returns the project as the app saves it, with its Updated
// time set to at (a save stamps the copy it writes, not the project).
func projectJSON(t *testing.T, p *evidence.Project, at time.Time) []byte {
	t.Helper()
	cp := p.Snapshot()
	cp.Updated = at
	raw, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// waitSavedAsInMemory waits (with a deadline) until the saved file of the
// review holds what the review holds in memory, and returns the saved
// project; nothing may change the review meanwhile.
func waitSavedAsInMemory(t *testing.T, ws *Workspace, r *Review) *evidence.Project {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var diff string
	for {
		p := r.Project()
		saved, err := ws.LoadReviewProject(p.Name)
		if err == nil {
			got, want := projectJSON(t, saved, saved.Updated), projectJSON(t, p, saved.Updated)
			if bytes.Equal(got, want) {
				return saved
			}
			diff = fmt.Sprintf("saved %d bytes, in memory %d", len(got), len(want))
		} else {
			diff = err.Error()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the saved project never became what the review holds in memory: %s", diff)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReviewAutosaveWhileDeciding makes decisions (includes, exclusions,
// undos) without pause on a review that autosaves a millisecond after
// each change, while another goroutine saves it back to back and a third
// edits the candidates' titles (a change that is not a decision): under
// -race no save reads what an edit writes, and once the last save is done
// the file holds exactly what the review holds in memory, every decision
// made (none lost to a save finishing late).
func TestReviewAutosaveWhileDeciding(t *testing.T) {
	ws, r := openAutosaveReview(t, 2000)
	defer r.Close()
	r.mu.Lock()
	r.delay = time.Millisecond
	r.mu.Unlock()
	var statusMu sync.Mutex
	var failed []error
	r.OnSave(func(s SaveStatus) {
		if s.Err != nil {
			statusMu.Lock()
			failed = append(failed, s.Err)
			statusMu.Unlock()
		}
	})
	ids := slices.Clone(r.Project().Search.IDs)
	want := map[string]evidence.Decision{}
	for id, d := range r.Project().Decisions {
		want[id] = evidence.Decision{Include: d.Include, Reason: d.Reason}
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { // saves racing with the autosaves
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := r.Save(); err != nil {
				t.Errorf("save: %v", err)
				return
			}
		}
	})
	wg.Go(func() { // edits that are not decisions
		for k := 0; ; k++ {
			select {
			case <-done:
				return
			default:
			}
			id := ids[k%len(ids)]
			r.Update(func(p *evidence.Project) {
				st := p.Studies[id]
				st.Title = fmt.Sprintf("edited title %d", k)
				p.Studies[id] = st
			})
			time.Sleep(2 * time.Millisecond)
		}
	})
	rng := rand.New(rand.NewPCG(17, 2026))
	for k := range 1500 {
		id := ids[rng.IntN(len(ids))]
		switch k % 3 {
		case 0:
			if err := r.Decide(id, true, ""); err != nil {
				t.Fatal(err)
			}
			want[id] = evidence.Decision{Include: true}
		case 1:
			reason := evidence.ExclusionReasons[k%len(evidence.ExclusionReasons)]
			if err := r.Decide(id, false, reason); err != nil {
				t.Fatal(err)
			}
			want[id] = evidence.Decision{Reason: reason}
		default:
			r.Undecide(id)
			delete(want, id)
		}
	}
	close(done)
	wg.Wait()

	saved := waitSavedAsInMemory(t, ws, r)
	got := map[string]evidence.Decision{}
	for id, d := range saved.Decisions {
		got[id] = evidence.Decision{Include: d.Include, Reason: d.Reason}
	}
	if len(got) != len(want) {
		t.Errorf("%d decisions saved, %d made", len(got), len(want))
	}
	for id, d := range want {
		if got[id] != d {
			t.Errorf("%s: saved %+v, decided %+v", id, got[id], d)
		}
	}
	statusMu.Lock()
	defer statusMu.Unlock()
	if len(failed) > 0 {
		t.Errorf("%d saves failed, the first: %v", len(failed), failed[0])
	}
}

// TestReviewSavesAStepThenDecisions: after a step replaces the project
// (a new search, with other candidates), the decisions that follow are
// saved with the step's candidates, not with the candidates the review
// had when it was opened.
func TestReviewSavesAStepThenDecisions(t *testing.T) {
	ws := literatureWorkspace(t)
	r := searchedReview(t, ws, "steps", `"microwave ablation"`, 5)
	defer r.Close()
	first := slices.Clone(r.Project().Search.IDs)
	if err := r.Decide(first[0], true, ""); err != nil {
		t.Fatal(err)
	}
	waitSavedAsInMemory(t, ws, r)

	r.Update(func(p *evidence.Project) { p.Query = "ablation" })
	if _, err := r.Search(context.Background(), 12); err != nil {
		t.Fatal(err)
	}
	second := slices.Clone(r.Project().Search.IDs)
	if slices.Equal(first, second) {
		t.Fatalf("the second search found the same candidates: %v", second)
	}
	for _, id := range second[:3] {
		if err := r.Decide(id, false, "Wrong study design"); err != nil {
			t.Fatal(err)
		}
	}
	saved := waitSavedAsInMemory(t, ws, r)
	if !slices.Equal(saved.Search.IDs, second) || saved.Decisions[second[2]].Reason != "Wrong study design" {
		t.Errorf("saved candidates %v, decisions %v", saved.Search.IDs, saved.Decisions)
	}
}
