package textsearch

import "strings"

// PluralStem strips English plural endings and nothing else: "studies" →
// "study", "tumors" → "tumor", "classes" → "class", leaving words of three
// letters or fewer and words ending in "-ss", "-us", "-is" or "-ous"
// ("status", "diagnosis", "nervous") alone. It is the normaliser for
// short texts matched against each other (a PICO against titles), where
// Porter's suffix stripping would join words of different meaning
// ("organ", "organization", "organic").
func PluralStem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"), strings.HasSuffix(w, "ous"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}
