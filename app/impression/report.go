package impression

import (
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// Eligibility thresholds of the paper's corpus filter: a report serves as
// an example only with FINDINGS of at least 10 words and an IMPRESSION of
// at least 3.
const (
	MinFindingsWords   = 10
	MinImpressionWords = 3
)

// Report is one radiology report of the corpus.
type Report struct {
	// ID is the report's row id in the corpus table (0 before import).
	ID int64
	// Source names where the report came from (the imported file).
	Source string
	// UID identifies the report within its source (the CSV uid, the XML
	// uId, the text file's name, or the line number).
	UID string
	// Findings and Impression are the report's sections.
	Findings, Impression string
	// Labels are the observations of FINDINGS + IMPRESSION.
	Labels Labels
	// Eligible is true when the report may serve as an example (see
	// Eligibility); ineligible reports are kept and searchable in SQL but
	// never used as examples.
	Eligible bool
	// IneligibleReason says why not ("findings under 10 words").
	IneligibleReason string
}

// Eligibility applies the paper's filter: reports without findings, with
// findings under 10 words or impressions under 3 words are not used as
// examples.
func Eligibility(findings, impression string) (ok bool, reason string) {
	fw, iw := wordCount(findings), wordCount(impression)
	switch {
	case fw == 0:
		return false, "no findings"
	case fw < MinFindingsWords:
		return false, fmt.Sprintf("findings under %d words", MinFindingsWords)
	case iw == 0:
		return false, "no impression"
	case iw < MinImpressionWords:
		return false, fmt.Sprintf("impression under %d words", MinImpressionWords)
	}
	return true, ""
}

// wordCount counts whitespace-separated words.
func wordCount(s string) int { return len(strings.Fields(s)) }

// prepare cleans the sections, labels the report and sets its
// eligibility.
func (r *Report) prepare() {
	r.Findings = strings.TrimSpace(r.Findings)
	r.Impression = strings.TrimSpace(r.Impression)
	r.Labels = LabelText(r.Findings + "\n" + r.Impression)
	r.Eligible, r.IneligibleReason = Eligibility(r.Findings, r.Impression)
}

// sectionHeader matches a section header at the start of a line:
// "FINDINGS:", "IMPRESSION:", "FINAL REPORT", "CONCLUSION :".
var sectionHeader = lazyre.New(`(?m)^[ \t]*([A-Z][A-Z /&()-]{2,40}?)[ \t]*:`)

// impressionHeaders and findingsHeaders name the sections kept.
var (
	findingsHeaders   = map[string]bool{"FINDINGS": true, "FINDING": true, "REPORT": true, "DESCRIPTION": true}
	impressionHeaders = map[string]bool{"IMPRESSION": true, "IMPRESSIONS": true, "CONCLUSION": true, "CONCLUSIONS": true, "SUMMARY": true, "OPINION": true, "DIAGNOSIS": true, "INTERPRETATION": true}
)

// SplitSections splits a plain-text report into its FINDINGS and
// IMPRESSION by section headers at the start of lines (FINDINGS:,
// IMPRESSION:, CONCLUSION:, ... as in MIMIC-CXR). Other sections
// (INDICATION:, COMPARISON:, ...) are dropped; text before the first header
// is ignored. A section that appears twice is joined.
func SplitSections(text string) (findings, impression string) {
	locs := sectionHeader().FindAllStringSubmatchIndex(text, -1)
	var f, imp []string
	for i, loc := range locs {
		name := strings.Join(strings.Fields(strings.ToUpper(text[loc[2]:loc[3]])), " ")
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		body := strings.TrimSpace(text[loc[1]:end])
		switch {
		case findingsHeaders[name]:
			f = append(f, body)
		case impressionHeaders[name]:
			imp = append(imp, body)
		}
	}
	return collapseSpace(strings.Join(f, "\n")), collapseSpace(strings.Join(imp, "\n"))
}

// collapseSpace turns line breaks and runs of spaces of a section into
// single spaces (reports are wrapped at a fixed width).
func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }
