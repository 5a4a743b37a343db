package evidence

import (
	"errors"
	"fmt"
	"strings"
)

// Record is one bibliographic record of the literature corpus.
type Record struct {
	// ID is the record's key in the corpus: "pmid:<PMID>" when the PMID is
	// known, else "doi:<DOI>", else "<source>:<line>".
	ID string
	// PMID is the PubMed identifier, "" when unknown.
	PMID string
	// Title is the article title (required).
	Title string
	// Sections are the abstract's sections in order; an unstructured
	// abstract is one section without a label. Empty when the record has no
	// abstract.
	Sections []Section
	// MeSH lists the MeSH headings as "Descriptor" or
	// "Descriptor/Qualifier", major topics not marked.
	MeSH []string
	// PublicationTypes lists the publication types ("Randomized Controlled
	// Trial", "Review", ...).
	PublicationTypes []string
	// Journal is the journal title (or its abbreviation when only that is
	// given).
	Journal string
	// Year is the publication year, 0 when unknown.
	Year int
	// Authors lists the authors as "Last First" or a collective name.
	Authors []string
	// DOI is the digital object identifier, "" when unknown.
	DOI string
	// Keywords are the author keywords.
	Keywords []string
	// Line is the 1-based line of the source file where the record starts
	// (0 when not read from a file).
	Line int
}

// Section is one section of an abstract.
type Section struct {
	// Label is the section heading as printed ("BACKGROUND", "Methods"), ""
	// for an unstructured abstract.
	Label string `json:"label,omitempty"`
	// Category is PubMed's normalised NlmCategory (BACKGROUND, OBJECTIVE,
	// METHODS, RESULTS, CONCLUSIONS, UNASSIGNED), "" when not given.
	Category string `json:"category,omitempty"`
	// Text is the section's text.
	Text string `json:"text"`
}

// Abstract returns the abstract as text: the sections in order, each
// labelled "LABEL: text", separated by blank lines.
func (r *Record) Abstract() string {
	var b strings.Builder
	for i, s := range r.Sections {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if s.Label != "" {
			b.WriteString(s.Label)
			b.WriteString(": ")
		}
		b.WriteString(s.Text)
	}
	return b.String()
}

// Validate checks that the record can be stored: a title (or, for records
// without one, an abstract to stand in) and a year that is 0 or plausible.
func (r *Record) Validate() error {
	if strings.TrimSpace(r.Title) == "" && len(r.Sections) == 0 {
		return errors.New("the record has neither a title nor an abstract")
	}
	if r.Year != 0 && (r.Year < 1000 || r.Year > 3000) {
		return fmt.Errorf("publication year %d is not plausible", r.Year)
	}
	return nil
}

// key fills in ID from the PMID or DOI, or from the source and line.
func (r *Record) key(source string) {
	switch {
	case r.ID != "":
	case r.PMID != "":
		r.ID = "pmid:" + r.PMID
	case r.DOI != "":
		r.ID = "doi:" + strings.ToLower(r.DOI)
	default:
		r.ID = fmt.Sprintf("%s:%d", source, r.Line)
	}
}

// cleanSpace collapses runs of white space to one space and trims.
func cleanSpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// parseYear returns the first plausible four-digit year in s, 0 if none.
func parseYear(s string) int {
	for i := 0; i+4 <= len(s); i++ {
		if i > 0 && isDigit(s[i-1]) {
			continue
		}
		if isDigit(s[i]) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) && (i+4 == len(s) || !isDigit(s[i+4])) {
			y := int(s[i]-'0')*1000 + int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0')
			if y >= 1000 && y <= 3000 {
				return y
			}
		}
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isPMID reports whether s looks like a PubMed identifier (1 to 9 digits).
func isPMID(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
