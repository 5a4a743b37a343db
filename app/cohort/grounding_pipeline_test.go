package cohort

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestAskGroundsGeneratedLiterals: a generated literal that matches no
// stored value only by case is rewritten before the statement runs, and the
// attempt records the statement as generated and the rewrite.
func TestAskGroundsGeneratedLiterals(t *testing.T) {
	f := newFixture(t, Config{})
	n := f.scalar(t, femaleSQL).(int64)
	generated := strings.Replace(femaleSQL, "'F'", "'f'", 1)
	f.srv.QueueChat(classify("answerable", "", generated), text("Done."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.SQL != femaleSQL || ans.Result.Rows[0][0] != n {
		t.Fatalf("answer: %s %q %v", ans.Status, ans.SQL, ans.Result)
	}
	if len(ans.Attempts) != 1 {
		t.Fatalf("attempts = %+v", ans.Attempts)
	}
	a := ans.Attempts[0]
	if a.Generated != generated || a.SQL != femaleSQL || len(a.Rewrites) != 1 || len(a.Choices) != 0 {
		t.Fatalf("attempt = %+v", a)
	}
	if rw := a.Rewrites[0]; rw.Table != "patients" || rw.Column != "gender" || rw.From != "f" || rw.To != "F" || rw.Reason != "case or spacing" {
		t.Errorf("rewrite = %+v", rw)
	}
	if !strings.Contains(a.Notes(), "value grounded: patients.gender: 'f' → 'F'") {
		t.Errorf("notes = %q", a.Notes())
	}
}

// TestAskOffersChoicesForAmbiguousLiteral: a generated literal several
// stored values fit equally is not rewritten: the statement runs as
// generated and the attempt lists the choices.
func TestAskOffersChoicesForAmbiguousLiteral(t *testing.T) {
	f := newFixture(t, Config{})
	generated := "SELECT COUNT(DISTINCT subject_id) FROM prescriptions WHERE drug = 'sodium'"
	f.srv.QueueChat(classify("answerable", "", generated), text("The filters are right."), text("None."))
	ans, err := f.p.Ask(context.Background(), Request{Question: "How many patients were given sodium?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.SQL != generated || len(ans.Attempts) == 0 {
		t.Fatalf("answer: %s %q %+v", ans.Status, ans.SQL, ans.Attempts)
	}
	a := ans.Attempts[0]
	if a.Generated != "" || len(a.Rewrites) != 0 || len(a.Choices) != 1 {
		t.Fatalf("attempt = %+v", a)
	}
	opts := a.Choices[0].Options
	if len(opts) < 2 || !slices.Contains(opts, "Docusate Sodium") || !slices.Contains(opts, "Levothyroxine Sodium") {
		t.Errorf("choices = %v", opts)
	}
	if !strings.Contains(a.Notes(), "value not grounded: prescriptions.drug: 'sodium' matches no stored value; did you mean") {
		t.Errorf("notes = %q", a.Notes())
	}
}
