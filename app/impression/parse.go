package impression

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/internal/textenc"
	"github.com/clinsight/clinsight/internal/xmlbound"
)

// rawReport is a report read from an input, before labelling.
type rawReport struct {
	// line is where the report starts in its file (1-based; 0 for a
	// report that is the whole file).
	line                      int
	uid, findings, impression string
	// cuts are the fields cut to their bounds.
	cuts []Cut
}

// Input formats.
const (
	formatCSV  = "csv"
	formatXML  = "xml"
	formatText = "text"
)

// formatOf picks the reader for a file name; "" for files that are not
// reports.
func formatOf(name string) string {
	switch strings.ToLower(path.Ext(name)) {
	case ".csv", ".tsv":
		return formatCSV
	case ".xml":
		return formatXML
	case ".txt", ".text", ".rpt":
		return formatText
	}
	return ""
}

// readReports reads the reports of one file in the given format, calling
// emit for each with its fields cut to their bounds (see maxFieldBytes);
// a report larger than maxRecordBytes is refused. ctx is checked before
// each report.
func readReports(ctx context.Context, r io.Reader, name, format string, emit func(rawReport) error) error {
	checked := func(rr rawReport) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		capReport(&rr, name)
		return emit(rr)
	}
	switch format {
	case formatCSV:
		return readCSVReports(r, name, checked)
	case formatXML:
		return readXMLReports(r, name, checked)
	case formatText:
		raw, err := readAllBounded(r, maxRecordBytes, "the file")
		if err != nil {
			return err
		}
		f, imp := SplitSections(string(raw))
		if f == "" && imp == "" {
			return errors.New("no FINDINGS or IMPRESSION section header found (expected lines starting with FINDINGS: or IMPRESSION:)")
		}
		return checked(rawReport{uid: strings.TrimSuffix(path.Base(name), path.Ext(name)), findings: f, impression: imp})
	}
	return fmt.Errorf("unsupported file type %q", path.Ext(name))
}

// csvColumns are the accepted header names of each field.
var csvColumns = map[string][]string{
	"uid":        {"uid", "id", "report_id", "study_id", "accession", "accession_number"},
	"findings":   {"findings", "finding"},
	"impression": {"impression", "impressions", "conclusion", "conclusions"},
	"report":     {"report", "text", "report_text"},
}

// csvLineError is an error tied to a line of a CSV file.
type csvLineError struct {
	line int
	err  error
}

func (e *csvLineError) Error() string { return e.err.Error() }
func (e *csvLineError) Unwrap() error { return e.err }

// readCSVReports reads a CSV with a header row: findings and impression
// columns (the Open-i layout: uid,findings,impression, other columns
// ignored), or a report column holding whole texts split by section
// headers. A tab-separated file is recognised by its header. Fields are
// cut to maxFieldBytes as they stream in (noted in the report's cuts), and
// a record larger than maxRecordBytes even so is refused.
func readCSVReports(r io.Reader, name string, emit func(rawReport) error) error {
	return readCSVReportsLimits(r, name, maxFieldBytes, maxRecordBytes, emit)
}

func readCSVReportsLimits(r io.Reader, name string, field, record int64, emit func(rawReport) error) error {
	br := bufio.NewReader(textenc.UTF8(r)) // UTF-16 ("Unicode text") decoded
	first, _ := br.Peek(4096)
	comma := byte(',')
	if h, _, _ := strings.Cut(string(first), "\n"); strings.Count(h, "\t") > strings.Count(h, ",") {
		comma = '\t'
	}
	clip := newCSVClip(br, comma, field, record)
	cr := csv.NewReader(clip)
	cr.Comma = rune(comma)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	// readErr is the error of a failed read, at its line of the file.
	readErr := func(err error) error {
		var se *recordSizeError
		if errors.As(clip.err, &se) {
			return &csvLineError{line: se.line, err: se}
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &csvLineError{line: clip.fileLine(pe.StartLine), err: pe.Err}
		}
		return err
	}
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return errors.New("the file is empty")
	}
	if err != nil {
		return fmt.Errorf("read the header: %w", readErr(err))
	}
	header = slices.Clone(header)
	clip.takeCuts(1)
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		for field, names := range csvColumns {
			for _, n := range names {
				if h == n {
					if _, dup := col[field]; !dup {
						col[field] = i
					}
				}
			}
		}
	}
	_, hasF := col["findings"]
	_, hasI := col["impression"]
	_, hasR := col["report"]
	if !hasF && !hasI && !hasR {
		return fmt.Errorf("no findings, impression or report column in the header (%s)", strings.Join(header, ", "))
	}
	get := func(rec []string, field string) string {
		if i, ok := col[field]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for n := 1; ; n++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			err = readErr(err)
			var le *csvLineError
			if errors.As(err, &le) {
				return le
			}
			line, _ := cr.FieldPos(0)
			return &csvLineError{line: clip.fileLine(line), err: err}
		}
		line, _ := cr.FieldPos(0)
		line = clip.fileLine(line)
		rr := rawReport{line: line, uid: strings.TrimSpace(get(rec, "uid")),
			findings: get(rec, "findings"), impression: get(rec, "impression")}
		if rr.uid == "" {
			rr.uid = "row " + strconv.Itoa(n)
		}
		for _, c := range clip.takeCuts(line) {
			field := ""
			for f, i := range col {
				if i == c.col && (f != "report" || hasR && !hasF && !hasI) {
					field = f
				}
			}
			if field == "" || field == "uid" {
				continue // a column not stored
			}
			if field == "report" {
				field = header[c.col]
			}
			rr.cuts = append(rr.cuts, Cut{File: name, Line: line, UID: rr.uid, Field: field, Bytes: c.bytes, Kept: c.kept})
		}
		if hasR && !hasF && !hasI {
			rr.findings, rr.impression = SplitSections(get(rec, "report"))
		}
		if err := emit(rr); err != nil {
			return &csvLineError{line: line, err: err}
		}
	}
}

// readXMLReports reads Open-i XML: each eCitation element is a report,
// with <uId id="CXR1"/> and <AbstractText Label="FINDINGS"> /
// <AbstractText Label="IMPRESSION">. A file without eCitation elements is
// one report named after the file. A report (or a file without
// eCitation elements) larger than maxRecordBytes is refused.
func readXMLReports(r io.Reader, name string, emit func(rawReport) error) error {
	return readXMLReportsLimit(r, name, maxRecordBytes, emit)
}

func readXMLReportsLimit(r io.Reader, name string, limit int64, emit func(rawReport) error) error {
	var raw *xml.Decoder
	what := "the file"
	// The decoder reads ahead a buffer of the next report.
	budget := &recordBudget{r: r, limit: limit + 4096, err: func() error {
		line, _ := raw.InputPos()
		return &recordSizeError{what: what, line: line, limit: limit}
	}}
	raw = xml.NewDecoder(budget)
	raw.Strict = false
	// Open-i reports nest a few levels; encoding/xml keeps an entry per
	// open element, so the nesting is bounded (xmlbound).
	dec := xmlbound.NewDecoder(raw, xmlbound.MaxDepth)
	var cur *rawReport
	var label string
	var text strings.Builder
	inText := false
	emitted := 0
	file := rawReport{uid: strings.TrimSuffix(path.Base(name), path.Ext(name))}
	target := func() *rawReport {
		if cur != nil {
			return cur
		}
		return &file
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *recordSizeError
			if errors.As(err, &se) {
				if cur != nil {
					se.line = cur.line
				}
				return &csvLineError{line: se.line, err: se}
			}
			var de *xmlbound.DepthError
			if errors.As(err, &de) {
				return &csvLineError{line: de.Line, err: fmt.Errorf("%w: is this a file of reports?", err)}
			}
			line, _ := raw.InputPos()
			return &csvLineError{line: line, err: fmt.Errorf("malformed XML: %w", err)}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "eCitation":
				line, _ := raw.InputPos()
				cur = &rawReport{line: line}
				budget.n, what = 0, fmt.Sprintf("the report starting on line %d", line)
			case "uId":
				for _, a := range t.Attr {
					if a.Name.Local == "id" && a.Value != "" {
						target().uid = a.Value
					}
				}
			case "AbstractText":
				label = ""
				for _, a := range t.Attr {
					if a.Name.Local == "Label" {
						label = strings.ToUpper(strings.TrimSpace(a.Value))
					}
				}
				inText = true
				text.Reset()
			}
		case xml.CharData:
			if inText {
				text.Write(t)
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "AbstractText":
				inText = false
				body := collapseSpace(text.String())
				switch {
				case findingsHeaders[label]:
					target().findings = joinNonEmpty(target().findings, body)
				case impressionHeaders[label]:
					target().impression = joinNonEmpty(target().impression, body)
				}
			case "eCitation":
				if cur != nil {
					if cur.uid == "" {
						cur.uid = fmt.Sprintf("%s#%d", file.uid, emitted+1)
					}
					if err := emit(*cur); err != nil {
						return &csvLineError{line: cur.line, err: err}
					}
					emitted++
					cur = nil
				}
			}
		}
	}
	if emitted == 0 {
		if file.findings == "" && file.impression == "" {
			return errors.New("no report found (expected <AbstractText Label=\"FINDINGS\"> or \"IMPRESSION\")")
		}
		return emit(file)
	}
	return nil
}

func joinNonEmpty(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " " + b
}

// tarEntries calls fn for each report file (by extension) in a tar or
// tar.gz archive.
func tarEntries(r io.Reader, gz bool, fn func(name string, r io.Reader) error) error {
	if gz {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return fmt.Errorf("corrupt gzip data: %w", err)
		}
		defer zr.Close()
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read the archive: %w", err)
		}
		if h.Typeflag != tar.TypeReg || formatOf(h.Name) == "" || strings.HasPrefix(path.Base(h.Name), ".") {
			continue
		}
		if err := fn(h.Name, tr); err != nil {
			return err
		}
	}
}
