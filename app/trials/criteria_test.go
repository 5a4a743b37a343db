package trials

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
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

// criteriaSamples returns eligibility texts to compare the scanner with the
// reference on: the variants above, the criteria of the 101 real SIGIR
// records (their raw fields), synthetic registry texts and generated texts
// mixing header variants, bullets, lead-ins and spacing.
func criteriaSamples(t *testing.T) []string {
	t.Helper()
	var out []string
	out = append(out,
		"Inclusion Criteria:\n\n  -  Age 18 years or older\n\nExclusion Criteria:\n\n  -  Pregnancy",
		"INCLUSION CRITERIA: 1. Adults\n2. Signed consent\nKEY EXCLUSION CRITERIA:\n1) HIV infection\n2) Hepatitis B",
		"Patients must meet all of the following criteria:\n- COPD\n(If any of the following apply, the subject MUST NOT enter the study):\n- Asthma",
		"Exclusion criteria:\n1) are not married 2) have had a total hysterectomy\nLaboratory values:\n- Hb < 9 g/dL",
		"DISEASE CHARACTERISTICS:\n- Stage IV melanoma\nPATIENT CHARACTERISTICS:\nAge:\n- 18 and over",
		"Criteria for inclusion:\n* Type 2 diabetes\nCriteria for exclusion:\n* Type 1 diabetes",
		"Inclusion criteria for patients with type-2 diabetes (T2D)\n- HbA1c > 7%",
		"(Key inclusion criteria)\n(i) adults\n(ii) consent\nii) x\n(iv) y\nix) z\n1.2.3) deep\n1..2 odd\n123. three",
		"Selection criteria applicable to the cohort with a very long description that goes on and on past eighty characters - yes: x",
		"Eligibility criteria in adults - with a dash – and an en dash: item",
		"Enrollment criteria: 1) a 2) b 3) c 5) e 4) d",
		"Participants inclusion criteria -\n  • a\n  ‣ b\n  ◦ c\n  ▪ d\n  — e\n  > f\n  · g",
		"INCLUſION CRITERIA:\n- long s\n\u212Aey exclusion criteria:\n- kelvin",
		"None.\nN/A\nnot applicable\n---\n-- .\nThere are no exclusion criteria\nThis study has no",
		"a.\tb\n(b) c\nZ) d\n(1) e\n10. f\n100. g",
	)
	// The 101 real records: both criteria fields as they are.
	path := realdata.Path(t, "trial-matching", "partial_trial_texts", "sigir_101_trials_mikeS141618.jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		var rec struct {
			Text     string `json:"text"`
			Metadata struct {
				Inc string `json:"inclusion_criteria"`
				Exc string `json:"exclusion_criteria"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		out = append(out, rec.Text, rec.Metadata.Inc, rec.Metadata.Exc)
	}
	// Synthetic registry records.
	var buf bytes.Buffer
	if err := WriteSyntheticJSONL(context.Background(), &buf, 300, 11); err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		var v ctgovV2
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v.ProtocolSection.Eligibility.Criteria)
	}
	// Generated mixtures.
	pieces := []string{
		"Inclusion Criteria:", "inclusion criteria", "KEY INCLUSION CRITERIA", "Exclusion:", "exclusion criterion -",
		"Criteria for exclusion:", "key criteria of participation", "Patients will be excluded if any of the following apply:",
		"(If any of the following apply, the subject MUST NOT enter the study):", "DISEASE CHARACTERISTICS:", "Age:",
		"Laboratory values:", "Eligibility criteria for adults aged 18 to 65:", "Main exclusion criteria (for all arms)-",
		"Study selection criteria in", "inclusion in another trial", "- Adults", "* women", "• men", "1. diabetes", "2) asthma",
		"(a) smokers", "b. pregnant", "iii) renal failure", "1) x 2) y 3) z", "None", "n/a.", "---", "HbA1c > 7%",
		"Signed informed consent", "  ", "", "(", ")", ":", "–", "enrolment criteria", "Other inclusion criteria:  1) a 2) b",
	}
	rng := rand.New(rand.NewPCG(5, 6))
	seps := []string{"\n", "\n\n", " ", "\r\n", "\n  ", "\t"}
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString(seps[rng.IntN(len(seps))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestSplitCriteriaMatchesReference: the scanner splits every sample as
// the regular-expression splitter it replaced did (criteria_ref_test.go),
// from both starting sections.
func TestSplitCriteriaMatchesReference(t *testing.T) {
	samples := criteriaSamples(t)
	diff := 0
	for _, s := range samples {
		for _, start := range []CriterionKind{Inclusion, Exclusion} {
			inc, exc := splitCriteriaFrom(s, start)
			rinc, rexc := refSplitCriteriaFrom(s, start)
			if !slices.Equal(inc, rinc) || !slices.Equal(exc, rexc) {
				diff++
				if diff <= 5 {
					t.Errorf("start %s, text %q:\nscanner   inc %q exc %q\nreference inc %q exc %q", start, s, inc, exc, rinc, rexc)
				}
			}
		}
	}
	if diff > 0 {
		t.Errorf("%d of %d texts split differently", diff, 2*len(samples))
	}
}

// checkScannersMatchPatterns compares each scanner with the pattern it
// replaced on s.
func checkScannersMatchPatterns(t *testing.T, s string) {
	t.Helper()
	var sp splitter
	if got, loc := sp.bulletEnd(s), refBulletRE.FindStringIndex(s); (loc == nil) != (got < 0) || loc != nil && loc[1] != got {
		t.Errorf("bullet %q: scanner %d, pattern %v", s, got, loc)
	}
	if got, want := sp.isBareHeader(s), refBareHeaderRE.MatchString(s); got != want {
		t.Errorf("bare header %q: scanner %v, pattern %v", s, got, want)
	}
	end, ws, we, ok := sp.headerMatch(s)
	if m := refHeaderRE.FindStringSubmatchIndex(s); (m != nil) != ok || ok && (m[1] != end || m[2] != ws || m[3] != we) {
		t.Errorf("header %q: scanner %v %d [%d,%d], pattern %v", s, ok, end, ws, we, m)
	}
	end, ws, we, ok = sp.criteriaFor(s)
	if m := refCriteriaForRE.FindStringSubmatchIndex(s); (m != nil) != ok || ok && (m[1] != end || m[2] != ws || m[3] != we) {
		t.Errorf("criteria for %q: scanner %v %d [%d,%d], pattern %v", s, ok, end, ws, we, m)
	}
	if got, want := sp.isEmptyCriterion(s), refIsEmptyCriterion(s); got != want {
		t.Errorf("empty criterion %q: scanner %v, pattern %v", s, got, want)
	}
	starts, nums := sp.inlineNumbers(s)
	locs := refInlineNumberRE.FindAllStringSubmatchIndex(s, -1)
	if len(locs) != len(starts) {
		t.Errorf("inline numbers %q: scanner %v, pattern %v", s, starts, locs)
		return
	}
	for i, m := range locs {
		if n, _ := strconv.Atoi(s[m[2]:m[3]]); m[0] != starts[i] || n != nums[i] {
			t.Errorf("inline numbers %q: scanner %v %v, pattern %v", s, starts, nums, locs)
			return
		}
	}
}

// TestCriteriaScannersMatchPatterns: each scanner agrees with its pattern
// on every line and item of the samples.
func TestCriteriaScannersMatchPatterns(t *testing.T) {
	for _, s := range criteriaSamples(t) {
		checkScannersMatchPatterns(t, s)
		for line := range strings.SplitSeq(s, "\n") {
			checkScannersMatchPatterns(t, line)
			checkScannersMatchPatterns(t, strings.TrimSpace(line))
		}
		if t.Failed() {
			return
		}
	}
}

func FuzzSplitCriteriaMatchesReference(f *testing.F) {
	f.Add("Inclusion Criteria:\n- a\nExclusion Criteria:\n- b")
	f.Add("Inclusion criteria for patients with type-2 diabetes (T2D)")
	f.Add("(ii) x 1) a 2) b")
	f.Add("1.2.3) deep\nINCLUſION CRITERIA:")
	f.Add("None.\n--\nkey criteria of exclusion: x")
	f.Fuzz(func(t *testing.T, s string) {
		checkScannersMatchPatterns(t, s)
		for _, start := range []CriterionKind{Inclusion, Exclusion} {
			inc, exc := splitCriteriaFrom(s, start)
			rinc, rexc := refSplitCriteriaFrom(s, start)
			if !slices.Equal(inc, rinc) || !slices.Equal(exc, rexc) {
				t.Fatalf("start %s, text %q:\nscanner   inc %q exc %q\nreference inc %q exc %q", start, s, inc, exc, rinc, rexc)
			}
		}
	})
}

// TestSplitCriteriaLinearWork: inputs that made the regular-expression
// splitter do quadratic work (a paragraph of many lines, each of which
// re-examined the item accumulated so far; header-like lines whose bounded
// "for ..." windows were re-matched; long bullet chains) are split with an
// amount of scanning bounded by a constant times their length: the work
// counted by the scanner, not a time, is bounded, so the test cannot be
// flaky and would fail for a quadratic scanner at these sizes.
func TestSplitCriteriaLinearWork(t *testing.T) {
	cases := map[string]func(n int) string{
		"one paragraph of short lines": func(n int) string { return strings.Repeat("word\n", n/5) },
		"lines ending with colons":     func(n int) string { return "Age:" + strings.Repeat("\nx y z w:", n/8) },
		"long first word":              func(n int) string { return strings.Repeat("w", n/2) + ":" + strings.Repeat("\n:", n/4) },
		"bullet chain":                 func(n int) string { return strings.Repeat("1.", n/4) + " x" + strings.Repeat("\nmore", n/10) },
		"header windows": func(n int) string {
			return strings.Repeat("Inclusion criteria for "+strings.Repeat(" ", 40)+strings.Repeat("- ", 60)+"x\n", n/200)
		},
		"spaces after for": func(n int) string { return "Inclusion criteria for " + strings.Repeat(" ", n) + "x" },
		"parentheses":      func(n int) string { return strings.Repeat("(", n/2) + "Inclusion criteria:" + strings.Repeat(")", n/2) },
		"inline numbers":   func(n int) string { return strings.Repeat("1) a 2) b ", n/10) },
		"dashes":           func(n int) string { return strings.Repeat("-", n) },
		"one long line":    func(n int) string { return "Inclusion criteria: " + strings.Repeat("abc ", n/4) },
	}
	for name, gen := range cases {
		t.Run(name, func(t *testing.T) {
			text := gen(200_000)
			var sp splitter
			inc, exc := sp.split(text, Inclusion)
			if limit := 64 * (len(text) + 1); sp.work > limit {
				t.Errorf("%d bytes: %d bytes examined, over the bound %d", len(text), sp.work, limit)
			}
			if sp.work < len(text) {
				t.Errorf("%d bytes examined for %d bytes of text: the count is broken", sp.work, len(text))
			}
			t.Logf("%d bytes, %d criteria: %.1f bytes examined per byte", len(text), len(inc)+len(exc), float64(sp.work)/float64(len(text)))
			// The same criteria as the reference, on a size it handles.
			small := gen(4000)
			inc, exc = splitCriteriaFrom(small, Inclusion)
			rinc, rexc := refSplitCriteriaFrom(small, Inclusion)
			if !slices.Equal(inc, rinc) || !slices.Equal(exc, rexc) {
				t.Errorf("%d bytes: scanner %d/%d criteria, reference %d/%d", len(small), len(inc), len(exc), len(rinc), len(rexc))
			}
		})
	}
}
