package trials

import (
	"regexp"
	"strings"
	"testing"
)

// TestDemoTrialPhases: every demo trial has a phase, and a title that names
// one agrees with it.
func TestDemoTrialPhases(t *testing.T) {
	titled := regexp.MustCompile(`^A (Phase \d) Study`)
	named := 0
	for _, seed := range []uint64{1, 5, 42} {
		for i := range DemoTrials {
			tr := SyntheticTrial(seed, i)
			if strings.TrimSpace(tr.Phase) == "" {
				t.Fatalf("seed %d: %s has no phase", seed, tr.ID)
			}
			if m := titled.FindStringSubmatch(tr.Title); m != nil {
				named++
				if tr.Phase != m[1] {
					t.Errorf("seed %d: %s %q has phase %q", seed, tr.ID, tr.Title, tr.Phase)
				}
			}
		}
	}
	if named == 0 {
		t.Error("no title names a phase: the check checked nothing")
	}
}
