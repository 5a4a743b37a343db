package evidence

import (
	"strings"
	"testing"
)

// TestPRISMADiagramShowsBothStagesAndTheStoppingRule lays out the flow
// diagram of a review with the full-text stage and a stopping rule, and
// reads its boxes: the PRISMA 2020 boxes of the full-text stage with their
// counts, and the stopping rule under the diagram.
func TestPRISMADiagramShowsBothStagesAndTheStoppingRule(t *testing.T) {
	p := stoppingProject(40)
	for i, id := range p.Search.IDs[:20] {
		mustDo(t, p.Decide(id, i < 5, "Wrong population"))
	}
	mustDo(t, p.SetConsecutiveRule(15))
	p.SetFullTextStage(true)
	sought := p.Sought()
	mustDo(t, p.DecideAs("", StageFullText, sought[0], true, ""))
	mustDo(t, p.DecideAs("", StageFullText, sought[1], false, "Wrong outcome"))
	mustDo(t, p.SetNotRetrieved(sought[2], "no access"))
	c := p.PRISMA()
	if !strings.Contains(c.StoppingBrief, "stop after 15 in a row (last run 15, met)") {
		t.Fatalf("stopping brief %q", c.StoppingBrief)
	}
	var text []string
	for _, b := range newPRISMALayout(c).Boxes {
		var lines []string
		for _, l := range b.Lines {
			lines = append(lines, l.Text)
		}
		text = append(text, strings.Join(lines, " "))
	}
	all := strings.ReplaceAll(strings.Join(text, " | "), "\u00a0", " ")
	for _, want := range []string{
		"Records screened (n = 20)", "Records excluded (n = 15)",
		"Reports sought for retrieval (n = 5)", "Reports not retrieved (n = 1)",
		"Reports assessed for eligibility (n = 2)", "Reports excluded (n = 1)", "Wrong outcome (n = 1)",
		"Reports awaiting assessment (n = 2)", "Studies included in review (n = 1)",
		"Stopping rule: Consecutive irrelevant records: stop after 15 in a row",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("the diagram lacks %q:\n%s", want, all)
		}
	}
}
