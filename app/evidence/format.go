package evidence

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strings"
)

// Format is a literature file format.
type Format string

const (
	// PubMedXML is a PubmedArticleSet as PubMed's efetch or "Save → XML"
	// writes it.
	PubMedXML Format = "pubmed-xml"
	// MEDLINE is PubMed's MEDLINE text format (.nbib, .txt): "TAG - value"
	// lines, continuation lines indented by six spaces, records separated by
	// blank lines.
	MEDLINE Format = "medline"
	// RIS is the RIS citation format ("TY  - JOUR" ... "ER  - ").
	RIS Format = "ris"
	// CSV is a table with a header row: title (required), abstract, pmid,
	// mesh, publication_types, journal, year, authors, doi, keywords; PubMed's
	// own CSV export (PMID, Title, Authors, Journal/Book, Publication Year,
	// DOI) is read as well.
	CSV Format = "csv"
	// JATS is a full text in JATS / PMC XML (root <article>, or several
	// articles in a <pmc-articleset> as PMC's efetch writes them).
	JATS Format = "jats"
	// PlainText is a full text as plain UTF-8 text (.txt) of one record,
	// named after the record's PMID or ID ("12345678.txt", "demo-12.txt").
	PlainText Format = "text"
)

// IsFullText reports whether f is a full-text format (JATS, plain text,
// PDF) rather than one of bibliographic records.
func (f Format) IsFullText() bool {
	switch f {
	case JATS, PlainText, PDF:
		return true
	}
	return false
}

// ParseFormat accepts a format name case-insensitively: pubmed-xml (xml,
// pubmed), medline (nbib), ris, csv, and for full texts jats (pmc,
// jats-xml), text (txt) and pdf.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "pubmed-xml", "pubmed", "xml":
		return PubMedXML, nil
	case "medline", "nbib":
		return MEDLINE, nil
	case "ris":
		return RIS, nil
	case "csv":
		return CSV, nil
	case "jats", "jats-xml", "pmc":
		return JATS, nil
	case "text", "txt", "plain":
		return PlainText, nil
	case "pdf":
		return PDF, nil
	}
	return "", fmt.Errorf("unknown literature format %q (use pubmed-xml, medline, ris or csv for records; jats, text or pdf for full texts)", s)
}

// RecordReader reads records one at a time. Next returns io.EOF after the
// last record; other errors are *ParseError values naming the record and
// line.
type RecordReader interface {
	Next() (Record, error)
}

// NewReader returns the reader of format f over r (a format of records:
// full texts are read by NewJATSReader, ParseText and Import).
func NewReader(r io.Reader, f Format) (RecordReader, error) {
	switch f {
	case PubMedXML:
		return NewPubMedReader(r), nil
	case MEDLINE:
		return NewMEDLINEReader(r), nil
	case RIS:
		return NewRISReader(r), nil
	case CSV:
		return NewCSVReader(r)
	}
	return nil, fmt.Errorf("unknown literature format %q", f)
}

// DetectFormat chooses the format of a file from its first bytes, falling
// back on its extension: "%PDF-" → PDF, XML with the root <article> or
// <pmc-articleset> → JATS, other XML → PubMed XML, "PMID-" → MEDLINE, "TY
// -" → RIS, otherwise .xml/.nbib/.ris/.csv/.txt (plain full text)/.pdf.
func DetectFormat(name string, head []byte) (Format, error) {
	h := bytes.TrimPrefix(head, []byte("\ufeff"))
	if bytes.HasPrefix(h, []byte("%PDF-")) {
		return PDF, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(h))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "<"):
			switch xmlRoot(h) {
			case "article", "pmc-articleset":
				return JATS, nil
			}
			return PubMedXML, nil
		case strings.HasPrefix(line, "PMID-") || strings.HasPrefix(line, "PMID -"):
			return MEDLINE, nil
		case len(line) >= 5 && line[:2] == "TY" && strings.HasPrefix(strings.TrimLeft(line[2:], " "), "-"):
			return RIS, nil
		}
		break
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".xml":
		return PubMedXML, nil
	case ".nbib", ".medline":
		return MEDLINE, nil
	case ".ris":
		return RIS, nil
	case ".csv":
		return CSV, nil
	case ".txt", ".text":
		return PlainText, nil
	case ".pdf":
		return PDF, nil
	}
	return "", fmt.Errorf("cannot tell the format of %s: expected PubMed XML, MEDLINE (.nbib), RIS or CSV, or a full text as JATS XML, .txt or .pdf", filepath.Base(name))
}

// xmlRoot returns the local name of the first element in the XML text
// head, skipping the declaration, comments and the DOCTYPE; "" when head
// has none.
func xmlRoot(head []byte) string {
	s := string(head)
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 || i+1 >= len(s) {
			return ""
		}
		s = s[i+1:]
		switch {
		case strings.HasPrefix(s, "?"):
			end := strings.Index(s, "?>")
			if end < 0 {
				return ""
			}
			s = s[end+2:]
			continue
		case strings.HasPrefix(s, "!--"):
			end := strings.Index(s, "-->")
			if end < 0 {
				return ""
			}
			s = s[end+3:]
			continue
		case strings.HasPrefix(s, "!"):
			// A DOCTYPE, possibly with an internal subset in brackets.
			depth := 0
			j := 0
			for ; j < len(s); j++ {
				if s[j] == '[' {
					depth++
				} else if s[j] == ']' {
					depth--
				} else if s[j] == '>' && depth <= 0 {
					break
				}
			}
			if j >= len(s) {
				return ""
			}
			s = s[j+1:]
			continue
		}
		end := strings.IndexAny(s, " \t\r\n/>")
		if end < 0 {
			return ""
		}
		name := s[:end]
		if k := strings.IndexByte(name, ':'); k >= 0 {
			name = name[k+1:]
		}
		return name
	}
}

// ParseError is a record that cannot be read: which record (1-based, 0
// when the file itself is malformed), its identifier if known, the line
// and why.
type ParseError struct {
	// Record is the 1-based number of the record in the file, 0 when the
	// error is not tied to a record.
	Record int
	// ID is the record's PMID or DOI, "" when not known.
	ID string
	// Line is the 1-based line of the file, 0 when unknown.
	Line int
	// Err is the cause.
	Err error
}

// Error formats the error as "record 3 (PMID 123) line 45: cause".
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.Record > 0 {
		fmt.Fprintf(&b, "record %d", e.Record)
		if e.ID != "" {
			fmt.Fprintf(&b, " (%s)", e.ID)
		}
	}
	if e.Line > 0 {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "line %d", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

func recordErr(n int, r *Record, line int, err error) *ParseError {
	pe := &ParseError{Record: n, Line: line, Err: err}
	if r != nil {
		switch {
		case r.PMID != "":
			pe.ID = "PMID " + r.PMID
		case r.DOI != "":
			pe.ID = "DOI " + r.DOI
		}
	}
	return pe
}
