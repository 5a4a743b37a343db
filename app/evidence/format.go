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
)

// ParseFormat accepts a format name case-insensitively: pubmed-xml (xml,
// pubmed), medline (nbib), ris, csv.
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
	}
	return "", fmt.Errorf("unknown literature format %q (use pubmed-xml, medline, ris or csv)", s)
}

// RecordReader reads records one at a time. Next returns io.EOF after the
// last record; other errors are *ParseError values naming the record and
// line.
type RecordReader interface {
	Next() (Record, error)
}

// NewReader returns the reader of format f over r.
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
// back on its extension: "<" → PubMed XML, "PMID-" → MEDLINE, "TY  -" →
// RIS, otherwise .xml/.nbib/.ris/.csv.
func DetectFormat(name string, head []byte) (Format, error) {
	h := bytes.TrimPrefix(head, []byte("\ufeff"))
	sc := bufio.NewScanner(bytes.NewReader(h))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, "<"):
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
	}
	return "", fmt.Errorf("cannot tell the format of %s: expected PubMed XML, MEDLINE (.nbib), RIS or CSV", filepath.Base(name))
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
