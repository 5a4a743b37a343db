package evidence

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/internal/csvbound"
	"github.com/clinsight/clinsight/internal/textenc"
)

// csvAliases maps the CSV header names the reader recognises (compared in
// lower case, spaces and underscores ignored) to record fields.
var csvAliases = map[string]string{
	"pmid": "pmid", "pubmedid": "pmid",
	"title": "title", "articletitle": "title",
	"abstract": "abstract", "abstracttext": "abstract",
	"mesh": "mesh", "meshterms": "mesh", "meshheadings": "mesh",
	"publicationtypes": "pubtypes", "publicationtype": "pubtypes", "pubtypes": "pubtypes",
	"journal": "journal", "journal/book": "journal", "journaltitle": "journal", "source": "journal",
	"year": "year", "publicationyear": "year", "pubyear": "year",
	"authors": "authors", "author": "authors",
	"doi":      "doi",
	"keywords": "keywords",
}

// CSVReader reads records from a CSV file with a header row. List columns
// (mesh, publication_types, keywords) are separated by ";", authors by ";"
// or, as in PubMed's export, by ", ".
type CSVReader struct {
	r      *csv.Reader
	budget *recordBudget
	col    map[string]int
	n      int
	ncol   int
}

// NewCSVReader reads the header of r and returns the reader; the header
// must name a title column.
func NewCSVReader(r io.Reader) (*CSVReader, error) {
	budget := newRecordBudget(r, maxRecordBytes, errRecordTooLarge)
	// UTF-16 ("Unicode text") decoded; a row of thousands of columns
	// refused before encoding/csv holds them (7 million took 21 s and 1 GB).
	br := bufio.NewReader(csvbound.NewReader(textenc.UTF8(budget), ',', 0, maxCSVColumns))
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err == io.EOF {
		return nil, &ParseError{Line: 1, Err: errors.New("empty file: a header row naming at least a title column is needed")}
	}
	if err != nil {
		return nil, csvErr(0, err)
	}
	c := &CSVReader{r: cr, budget: budget, col: map[string]int{}, ncol: len(header)}
	for i, h := range header {
		key := strings.NewReplacer(" ", "", "_", "", "-", "").Replace(strings.ToLower(strings.TrimSpace(h)))
		if f, ok := csvAliases[key]; ok {
			if _, dup := c.col[f]; !dup {
				c.col[f] = i
			}
		}
	}
	if _, ok := c.col["title"]; !ok {
		return nil, &ParseError{Line: 1, Err: fmt.Errorf("no title column in the header %q (expected title, and optionally abstract, pmid, mesh, publication_types, journal, year, authors, doi, keywords)", strings.Join(header, ","))}
	}
	return c, nil
}

// maxCSVColumns bounds the columns of a literature CSV file (PubMed's
// export has 11; a reference manager's a few dozen).
const maxCSVColumns = 1000

func csvErr(n int, err error) error {
	var tf *csvbound.TooManyFieldsError
	if errors.As(err, &tf) {
		return &ParseError{Record: n, Line: tf.Line, Err: fmt.Errorf("%w: is this a literature file, and is it comma-separated?", err)}
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) && tooLarge(pe.Err) {
		return &ParseError{Record: n, Line: pe.StartLine, Err: pe.Err}
	}
	if errors.As(err, &pe) {
		return &ParseError{Record: n, Line: pe.StartLine, Err: fmt.Errorf("malformed CSV: %v", pe.Err)}
	}
	return &ParseError{Record: n, Err: err}
}

// Next returns the next record, io.EOF after the last one. Blank rows are
// skipped.
func (c *CSVReader) Next() (Record, error) {
	for {
		c.budget.reset()
		rec, err := c.r.Read()
		if err == io.EOF {
			return Record{}, io.EOF
		}
		if err != nil {
			return Record{}, csvErr(c.n+1, err)
		}
		line, _ := c.r.FieldPos(0)
		blank := true
		for _, f := range rec {
			if strings.TrimSpace(f) != "" {
				blank = false
				break
			}
		}
		if blank {
			continue
		}
		c.n++
		if len(rec) != c.ncol {
			return Record{}, &ParseError{Record: c.n, Line: line, Err: fmt.Errorf("expected %d fields, found %d", c.ncol, len(rec))}
		}
		get := func(f string) string {
			if i, ok := c.col[f]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		r := Record{Line: line, PMID: get("pmid"), Title: cleanSpace(get("title")), Journal: cleanSpace(get("journal")), DOI: get("doi")}
		if y := get("year"); y != "" {
			if r.Year = parseYear(y); r.Year == 0 {
				return Record{}, recordErr(c.n, &r, line, fmt.Errorf("year %q is not a year", y))
			}
		}
		if ab := cleanSpace(get("abstract")); ab != "" {
			r.Sections = splitStructured(ab)
		}
		r.MeSH = splitList(get("mesh"), ";")
		r.PublicationTypes = splitList(get("pubtypes"), ";")
		r.Keywords = splitList(get("keywords"), ";")
		au := get("authors")
		if strings.Contains(au, ";") {
			r.Authors = splitList(au, ";")
		} else {
			r.Authors = splitList(strings.TrimSuffix(au, "."), ", ")
		}
		if r.PMID != "" && !isPMID(r.PMID) {
			return Record{}, recordErr(c.n, nil, line, fmt.Errorf("PMID %q is not a number", r.PMID))
		}
		if err := r.Validate(); err != nil {
			return Record{}, recordErr(c.n, &r, line, err)
		}
		return r, nil
	}
}

func splitList(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p = cleanSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
