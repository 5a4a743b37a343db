package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// TestEvalActiveJSON simulates screening a small ASReview-format review
// (title, abstract, label_included) whose included records share a topic:
// the last --json line holds the means and a per_review list, the
// learner beats random order, and --plot writes a PNG.
func TestEvalActiveJSON(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("title,abstract,label_included\n")
	for i := range 60 {
		if i%6 == 0 {
			fmt.Fprintf(&b, "Aspirin after stroke trial %d,Randomised aspirin dose after ischaemic stroke %d,1\n", i, i)
		} else {
			fmt.Fprintf(&b, "Knee surgery cohort %d,Outcomes of knee arthroplasty topic%d,0\n", i, i%7)
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(dir, "toy.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	png := filepath.Join(t.TempDir(), "recall.png")
	out, errOut, code := run(t, t.TempDir(), "eval", "active", "--reviews", dir, "--seeds", "2", "--json", "--plot", png)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got struct {
		WSS95, WSS100, RRF10 float64
		Reviews              int
		PerReview            []struct{ Review string } `json:"per_review"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("last line %q: %v", lines[len(lines)-1], err)
	}
	if got.Reviews != 1 || len(got.PerReview) != 1 || got.PerReview[0].Review != "toy" {
		t.Errorf("got %+v, want one review named toy", got)
	}
	// 10 included of 60: screening them first saves (60-10)/60 - 0.05.
	if got.WSS95 < 0.5 || got.RRF10 < 0.5 {
		t.Errorf("WSS@95 %.3f RRF@10 %.3f: the learner did not find the aspirin records early", got.WSS95, got.RRF10)
	}
	if fi, err := os.Stat(png); err != nil || fi.Size() == 0 {
		t.Errorf("plot not written: %v", err)
	}
}
