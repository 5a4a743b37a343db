package cli

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestCohortPrescreenHiddenCountsNotDerivable is the attack review's
// reproduction: women over 70 of the demo, on an aggregate-only source
// (k = 11). In no trial row may a hidden count ("<11") follow from the
// shown ones (R = E+U+N, M = E+U, N = R−M).
func TestCohortPrescreenHiddenCountsNotDerivable(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "cohort", "save", "--db", "demo", "--sql", "SELECT subject_id FROM patients WHERE gender='F' AND anchor_age > 70", "--name", "Few"); code != 0 {
		t.Fatalf("save: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only", "--min-cell", "11"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	out, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "Few", "--trials", "demo", "--no-llm", "--top", "3", "--json")
	if code != 0 {
		t.Fatalf("prescreen: %s", stderr)
	}
	var res struct {
		Trials []struct {
			ID          string `json:"id"`
			Ranked      string `json:"patients_ranked"`
			Eligible    string `json:"eligible"`
			Unknown     string `json:"unknown"`
			NotEligible string `json:"not_eligible"`
			Might       string `json:"might_qualify"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v: %q", err, out)
	}
	hiddenRows := 0
	// The rows' order follows the shown counts only (a hidden one as 10):
	// a hidden count between two shown ones would be bounded by them.
	key := func(s string) int {
		if s == "<11" {
			return 10
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	for i := 1; i < len(res.Trials); i++ {
		a, b := res.Trials[i-1], res.Trials[i]
		if ka, kb := key(a.Might), key(b.Might); ka < kb || ka == kb && key(a.Eligible) < key(b.Eligible) {
			t.Errorf("trial %s (%s, %s) comes before %s (%s, %s)", a.ID, a.Might, a.Eligible, b.ID, b.Might, b.Eligible)
		}
	}
	for _, tr := range res.Trials {
		vals := map[string]string{"R": tr.Ranked, "E": tr.Eligible, "U": tr.Unknown, "N": tr.NotEligible, "M": tr.Might}
		hidden := 0
		for name, v := range vals {
			switch {
			case v == "<11":
				hidden++
			case !regexp.MustCompile(`^\d+$`).MatchString(v):
				t.Fatalf("trial %s: %s is %q", tr.ID, name, v)
			case v != "0" && len(v) == 1 || v == "10":
				t.Errorf("trial %s: %s = %s shown on an aggregate-only source", tr.ID, name, v)
			}
		}
		if hidden > 0 {
			hiddenRows++
		}
		// Each relation between the figures: if exactly one of its terms
		// is hidden, the others give it back.
		for _, rel := range [][]string{{"R", "E", "U", "N"}, {"M", "E", "U"}, {"R", "M", "N"}} {
			var h []string
			for _, name := range rel {
				if vals[name] == "<11" {
					h = append(h, name)
				}
			}
			if len(h) == 1 {
				t.Errorf("trial %s: %s is hidden but follows from %v: %+v", tr.ID, h[0], rel, tr)
			}
		}
	}
	if hiddenRows == 0 {
		t.Fatalf("no trial row has a hidden count: the test cannot tell (%q)", out)
	}
}

// TestCohortPrescreenSmallCohortSizeHidden pre-screens a cohort of 6
// patients (3 screened) on an aggregate-only source: the progress lines,
// the notes and the workbook's provenance never tell the 6 (nor the 3).
func TestCohortPrescreenSmallCohortSizeHidden(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "40"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "cohort", "save", "--db", "demo", "--sql", "SELECT subject_id FROM patients ORDER BY subject_id LIMIT 6", "--name", "Six"); code != 0 {
		t.Fatalf("save: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only", "--min-cell", "11"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	xlsx := filepath.Join(t.TempDir(), "six.xlsx")
	out, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "Six", "--trials", "demo", "--no-llm", "--top", "3", "--max-patients", "3", "--xlsx", xlsx)
	if code != 0 {
		t.Fatalf("prescreen: %s", stderr)
	}
	if !strings.Contains(stderr, "note: The cohort has <11 patients") || !strings.Contains(stderr, "100%") {
		t.Errorf("no suppressed note or no progress in %q", stderr)
	}
	leak := regexp.MustCompile(`\b[36] patients|\bof [36]\b|\b(16|17|33|50|66|67|83)%`)
	if m := leak.FindString(stderr + out); m != "" {
		t.Errorf("the cohort's size shows (%q) in %q", m, stderr+out)
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Provenance")
	var prov []string
	for _, r := range rows {
		prov = append(prov, strings.Join(r, " | "))
	}
	text := strings.Join(prov, "\n")
	if !strings.Contains(text, "<11 patients") {
		t.Errorf("the provenance has no suppressed note:\n%s", text)
	}
	if m := leak.FindString(text); m != "" {
		t.Errorf("the provenance tells the cohort's size (%q):\n%s", m, text)
	}
}
