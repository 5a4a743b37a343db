package export

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Provenance records how exported results were produced. It is written to
// the workbook's last sheet as key | value rows, in the order of Entries.
type Provenance struct {
	// AppVersion is the Clinsight version that produced the results.
	AppVersion string
	// DataSource names the data: a database file, a corpus, a dataset name.
	DataSource string
	// Query is the SQL or boolean query that selected the data, if any.
	Query string
	// Models names the models involved (chat and embedding), in any order
	// the pipeline finds meaningful.
	Models []string
	// Created is when the results were produced; the zero time means the
	// moment of the export.
	Created time.Time
	// Extra holds further entries in order, such as a pipeline's parameters,
	// the user's question or the number of attempts.
	Extra []Entry
	// Late, when not nil, is called once the tables are written and its
	// entries follow Extra: what is known only after a streamed table's
	// last row (the rows read, what a limit left out).
	Late func() []Entry
}

// Entry is one key/value row of the Provenance sheet. Value is written like a
// table cell (a number stays a number, a string is wrapped text).
type Entry struct {
	Key   string
	Value any
}

// Add appends an extra entry.
func (p *Provenance) Add(key string, value any) {
	p.Extra = append(p.Extra, Entry{Key: key, Value: value})
}

// Entries returns the rows of the Provenance sheet supplied by the caller:
// Created (RFC 3339, with its time zone; the current time when zero), then
// the non-empty standard fields, then Extra. WriteWorkbook appends one row
// per table (rows written and their sheets), one naming the picture sheets
// when there are pictures and, when cells were cut, the number of truncated
// cells.
func (p Provenance) Entries() []Entry {
	es := []Entry{{"Created", createdOrNow(p.Created).Format(time.RFC3339)}}
	for _, e := range []Entry{
		{"Clinsight version", p.AppVersion},
		{"Data source", p.DataSource},
		{"Query", p.Query},
		{"Models", strings.Join(p.Models, ", ")},
	} {
		if e.Value != "" {
			es = append(es, e)
		}
	}
	return append(es, p.Extra...)
}

// writeProvenance writes the Provenance sheet: prov's entries, then a row
// per table and one naming the picture sheets, if any.
func (wb *workbook) writeProvenance(tables []Table, prov Provenance) error {
	entries := prov.Entries()
	if prov.Late != nil {
		entries = append(entries, prov.Late()...)
	}
	for i, t := range tables {
		var sheets []string
		var rows int64
		for _, s := range wb.sum.Sheets {
			if s.Table == i {
				sheets = append(sheets, s.Name)
				rows += s.Rows
			}
		}
		entries = append(entries, Entry{
			Key:   fmt.Sprintf("Table %d: %s", i+1, t.Name),
			Value: fmt.Sprintf("%s rows on sheet(s) %s", groupThousands(rows), strings.Join(sheets, ", ")),
		})
	}
	if len(wb.sum.ImageSheets) > 0 {
		entries = append(entries, Entry{Key: "Pictures", Value: "on sheet(s) " + strings.Join(wb.sum.ImageSheets, ", ")})
	}
	if truncated := wb.sum.TruncatedCells; truncated > 0 {
		entries = append(entries, Entry{
			Key: "Truncated cells",
			Value: fmt.Sprintf("%s cells were longer than Excel's %d characters; they end with %q",
				groupThousands(truncated), MaxCellChars, strings.TrimSpace(TruncationMarker)),
		})
	}

	name := wb.sum.ProvenanceSheet
	sw, err := wb.newSheet(name)
	if err == nil {
		err = wb.streamProvenance(sw, entries)
	}
	if err != nil {
		return fmt.Errorf("sheet %q: %w", name, err)
	}
	return nil
}

func (wb *workbook) streamProvenance(sw *excelize.StreamWriter, entries []Entry) error {
	if err := sw.SetColWidth(1, 1, 28); err != nil {
		return err
	}
	if err := sw.SetColWidth(2, 2, 100); err != nil {
		return err
	}
	if err := freezeHeader(sw); err != nil {
		return err
	}
	h := wb.styles.header
	if err := sw.SetRow("A1", []any{excelize.Cell{StyleID: h, Value: "Key"}, excelize.Cell{StyleID: h, Value: "Value"}}); err != nil {
		return err
	}
	for i, e := range entries {
		v, err := wb.cell(e.Value)
		if err != nil {
			return fmt.Errorf("entry %q: %w", e.Key, err)
		}
		if _, isCell := v.(excelize.Cell); !isCell { // dates keep their style
			v = excelize.Cell{StyleID: wb.styles.value, Value: v}
		}
		key := excelize.Cell{StyleID: wb.styles.key, Value: wb.text(e.Key)}
		if err := sw.SetRow("A"+strconv.Itoa(i+2), []any{key, v}); err != nil {
			return err
		}
	}
	return sw.Flush()
}

// groupThousands formats n with comma separators: 1,048,575.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
