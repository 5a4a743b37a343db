package textsearch

import "testing"

func TestPorterStemMatchesNLTK(t *testing.T) {
	// Expected stems printed by NLTK 3.8's PorterStemmer() (mode
	// NLTK_EXTENSIONS), the stemmer rouge-score uses.
	for w, want := range map[string]string{
		"effusions": "effus", "effusion": "effus", "resolving": "resolv",
		"generalizations": "gener", "opacities": "opac", "atelectasis": "atelectasi",
		"enlarged": "enlarg", "cardiomegaly": "cardiomegali", "were": "were",
		"dying": "die", "skies": "sky", "flies": "fli", "dies": "die", "spied": "spi",
		"agreed": "agre", "hopping": "hop", "falling": "fall", "filing": "file",
		"happy": "happi", "enjoy": "enjoy", "relational": "relat", "conditional": "condit",
		"electrical": "electr", "hopeful": "hope", "adjustment": "adjust", "adoption": "adopt",
		"controll": "control", "roll": "roll", "geology": "geolog", "news": "news", "at": "at",
	} {
		if got := PorterStem(w); got != want {
			t.Errorf("PorterStem(%q) = %q, want %q", w, got, want)
		}
	}
}

func TestPorterStemLeavesOtherScriptsAlone(t *testing.T) {
	for _, w := range []string{"müller", "ß₂ing", "β", "120", "x"} {
		if got := PorterStem(w); got != w {
			t.Errorf("PorterStem(%q) = %q, want it unchanged", w, got)
		}
	}
}

func TestPluralStem(t *testing.T) {
	for w, want := range map[string]string{
		"studies": "study", "tumors": "tumor", "classes": "class", "class": "class",
		"status": "status", "diagnosis": "diagnosis", "nervous": "nervous",
		"gas": "gas", "blockers": "blocker", "is": "is", "organization": "organization",
	} {
		if got := PluralStem(w); got != want {
			t.Errorf("PluralStem(%q) = %q, want %q", w, got, want)
		}
	}
}
