package evidence

import (
	"strings"
	"testing"
)

// FuzzReadDecisionsFile feeds outside bytes to the decisions file reader
// and merges what it accepts into a review with two reviewers: nothing
// panics, and an accepted file leaves a project that still validates.
func FuzzReadDecisionsFile(f *testing.F) {
	f.Add(`{"format":"clinsight-screening-decisions","version":1,"review":"x","reviewer":"Ben","decisions":[{"id":"r1","stage":"title-abstract","include":true,"at":"2026-11-01T00:00:00Z"},{"id":"r1","stage":"full-text","include":false,"reason":"Wrong outcome"}]}`)
	f.Add(`{"format":"clinsight-screening-decisions","version":1,"reviewer":"Cy","decisions":[]}`)
	f.Add(`{"format":"clinsight-screening-decisions","version":1,"reviewer":"Ben","decisions":[{"id":"nope","stage":"full-text","include":true}]}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, body string) {
		df, err := ReadDecisionsFile(strings.NewReader(body))
		if err != nil {
			return
		}
		p := teamProject(t, 3, 3, 0)
		mustDo(t, p.AddReviewer("Ana"))
		mustDo(t, p.DecideAs("Ana", StageTitleAbstract, "r1", true, ""))
		if _, err := p.MergeDecisions(df); err != nil {
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("after merging %q the project is invalid: %v", body, err)
		}
		_ = p.PRISMA()
		for _, st := range Stages {
			_ = p.Conflicts(st)
			_, _ = p.Agreement(st)
		}
	})
}
