package trials

import (
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// conceptTexts are the patient descriptions the extractor is checked on:
// the demo patients and the SIGIR topics (and the SIGIR-BIRCO ones).
func conceptTexts(t *testing.T) []string {
	var texts []string
	for i := range DemoPatients {
		texts = append(texts, SyntheticPatientN(1, i).Description)
	}
	for _, p := range [][]string{{"sigir", "queries.jsonl"}, {"sigir_birco_subset", "test_queries.jsonl"}} {
		for _, tp := range readTopicsFile(t, realdata.Path(t, append([]string{"trial-matching"}, p...)...)) {
			texts = append(texts, tp.Text)
		}
	}
	return texts
}

// fragmentReason says why a concept is a fragment, or "": a number alone,
// a stop word or filler word alone, or a negated weak word alone ("no
// symptoms", "no age"). A weak word that is not negated stays a search
// term (fillers.go).
func fragmentReason(c Concept) string {
	words := strings.Fields(c.Text)
	if len(words) == 0 {
		return "empty"
	}
	allDigits := strings.IndexFunc(c.Text, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' && r != ' ' }) < 0
	switch {
	case allDigits:
		return "a number alone"
	case len(words) == 1 && (textsearch.IsStopWord(c.Text) || narrativeStopwords.Has(c.Text) || fillerWords.Has(c.Text)):
		return "a stop word or filler"
	case c.Negated && len(words) == 1 && weakWords.Has(c.Text):
		return "a negated filler"
	}
	return ""
}

// TestExtractedConceptsAreNoFragments: on the 120 demo patients and the
// SIGIR topics, the deterministic extractor emits no concept that is a
// stop word, a number alone or a negated filler ("type", "no age", "no
// related").
func TestExtractedConceptsAreNoFragments(t *testing.T) {
	bad := map[string]int{}
	n := 0
	for _, text := range conceptTexts(t) {
		q, err := ExtractConcepts(text, nil, DefaultExtractOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range q.Concepts {
			n++
			if why := fragmentReason(c); why != "" {
				neg := ""
				if c.Negated {
					neg = "no "
				}
				bad[neg+c.Text+" ("+why+")"]++
			}
		}
	}
	if len(bad) > 0 {
		var list []string
		for k, v := range bad {
			list = append(list, k+" ×"+itoa(v))
		}
		sort.Strings(list)
		t.Errorf("%d fragment kinds among %d concepts:\n%s", len(bad), n, strings.Join(list, "\n"))
	}
	if n < 1000 {
		t.Errorf("only %d concepts extracted", n)
	}
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
		if n == 0 {
			return string(b)
		}
	}
}

// TestNegatedHyphenatedHistoryLeavesNoFragments: "denies any history of
// non-small cell lung cancer" (a demo patient's wording) gives no concept
// "non", and no negated "small" or "cell" alone (they were shown on the
// Trials screen as "no non; no small; no cell").
func TestNegatedHyphenatedHistoryLeavesNoFragments(t *testing.T) {
	q, err := ExtractConcepts("A 21-year-old woman presents with depressed mood. She denies any history of non-small cell lung cancer.", nil, DefaultExtractOptions())
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range q.Concepts {
		if c.Text == "non" || (c.Negated && (c.Text == "small" || c.Text == "cell")) {
			t.Errorf("fragment %q (negated %v)", c.Text, c.Negated)
		}
		if strings.Contains(c.Text, "lung cancer") {
			found = true
		}
	}
	if !found {
		t.Errorf("the phrase itself is lost: %+v", q.Concepts)
	}
}
