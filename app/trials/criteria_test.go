package trials

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clinsight/clinsight/datasets/realdata"
)

func TestSplitCriteriaVariants(t *testing.T) {
	cases := []struct {
		name     string
		text     string
		inc, exc []string
	}{
		{
			name: "ctgov textblock",
			text: `
        Inclusion Criteria:

          -  Age 18 years or older

          -  Histologically confirmed adenocarcinoma of the
             pancreas

        Exclusion Criteria:

          -  Pregnancy
          -  Prior chemotherapy`,
			inc: []string{"Age 18 years or older", "Histologically confirmed adenocarcinoma of the pancreas"},
			exc: []string{"Pregnancy", "Prior chemotherapy"},
		},
		{
			name: "numbered, caps headers, colon text",
			text: "INCLUSION CRITERIA: 1. Adults\n2. Signed consent\nKEY EXCLUSION CRITERIA:\n1) HIV infection\n2) Hepatitis B",
			inc:  []string{"Adults", "Signed consent"},
			exc:  []string{"HIV infection", "Hepatitis B"},
		},
		{
			name: "header with text on the same line, no criteria word",
			text: "Inclusion: women aged 40-70\nExclusion: breast implants",
			inc:  []string{"women aged 40-70"},
			exc:  []string{"breast implants"},
		},
		{
			name: "lead-in sentences",
			text: "Patients must meet all of the following criteria:\n- COPD\n(If any of the following apply, the subject MUST NOT enter the study):\n- Asthma",
			inc:  []string{"COPD"},
			exc:  []string{"Asthma"},
		},
		{
			name: "no header at all",
			text: "Patients with systemic lupus erythematosus",
			inc:  []string{"Patients with systemic lupus erythematosus"},
		},
		{
			name: "inclusion in another trial is a criterion",
			text: "Exclusion Criteria:\n- Inclusion in another clinical trial\n- None",
			exc:  []string{"Inclusion in another clinical trial"},
		},
		{
			name: "inline numbers and sub-header lead-in",
			text: "Exclusion criteria:\n1) are not married 2) have had a total hysterectomy\nLaboratory values:\n- Hb < 9 g/dL",
			exc:  []string{"are not married", "have had a total hysterectomy", "Laboratory values: Hb < 9 g/dL"},
		},
		{
			name: "old NCI layout",
			text: "DISEASE CHARACTERISTICS:\n- Stage IV melanoma\nPATIENT CHARACTERISTICS:\nAge:\n- 18 and over",
			inc:  []string{"Stage IV melanoma", "Age: 18 and over"},
		},
		{
			name: "criteria for exclusion",
			text: "Criteria for inclusion:\n* Type 2 diabetes\nCriteria for exclusion:\n* Type 1 diabetes",
			inc:  []string{"Type 2 diabetes"},
			exc:  []string{"Type 1 diabetes"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inc, exc := SplitCriteria(c.text)
			if !slices.Equal(inc, c.inc) || !slices.Equal(exc, c.exc) {
				t.Errorf("got\n inc %q\n exc %q\nwant\n inc %q\n exc %q", inc, exc, c.inc, c.exc)
			}
		})
	}
}

// headerLike matches what a criteria header looks like: it must never come
// out as a criterion.
var headerLike = regexp.MustCompile(`(?i)^\W*(?:(?:key|main|additional)\s+)?(?:inclusion|exclusion|eligibility)(?:\s+criteria)?\W*$|^[^\p{L}\p{N}]*$`)

// TestSplitCriteriaRealRecords: the 101 full SIGIR trial records of
// partial_trial_texts (TrialGPT format) each yield at least one inclusion
// criterion, and no header ever ends up as a criterion.
func TestSplitCriteriaRealRecords(t *testing.T) {
	path := realdata.Path(t, "trial-matching", "partial_trial_texts", "sigir_101_trials_mikeS141618.jsonl")
	var trials []Trial
	_, _, err := readPaths(context.Background(), []string{path}, newCounter(), func(tr Trial, _ []Cut) error {
		trials = append(trials, tr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 101 {
		t.Fatalf("read %d records, want 101", len(trials))
	}
	inc, exc := 0, 0
	for _, tr := range trials {
		if len(tr.Inclusion) == 0 {
			t.Errorf("%s: no inclusion criterion", tr.ID)
		}
		for _, c := range tr.Criteria() {
			if headerLike.MatchString(c.Text) || strings.HasSuffix(strings.ToLower(strings.TrimSpace(c.Text)), "criteria:") {
				t.Errorf("%s: header as a %s criterion: %q", tr.ID, c.Kind, c.Text)
			}
			if strings.HasPrefix(strings.ToLower(c.Text), "inclusion criteria") || strings.HasPrefix(strings.ToLower(c.Text), "exclusion criteria") {
				t.Errorf("%s: criterion starts with a header: %q", tr.ID, c.Text)
			}
		}
		inc += len(tr.Inclusion)
		exc += len(tr.Exclusion)
	}
	t.Logf("101 records: %d inclusion and %d exclusion criteria", inc, exc)
}

func FuzzSplitCriteria(f *testing.F) {
	f.Add("Inclusion Criteria:\n- a\nExclusion Criteria:\n- b")
	f.Add("1) x 2) y 3) z")
	f.Add("inclusion criteria: \n\n Patients with X \n\n ")
	f.Add(": \n\n None")
	f.Fuzz(func(t *testing.T, s string) {
		inc, exc := SplitCriteria(s)
		for _, c := range append(inc, exc...) {
			if strings.TrimSpace(c) == "" || c != strings.TrimSpace(c) {
				t.Fatalf("empty or untrimmed criterion %q", c)
			}
			if utf8.ValidString(s) && !utf8.ValidString(c) {
				t.Fatalf("invalid UTF-8 criterion %q from valid input", c)
			}
			if headerLike.MatchString(c) {
				t.Fatalf("header as criterion: %q", c)
			}
		}
	})
}
