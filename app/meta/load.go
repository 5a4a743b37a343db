package meta

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/internal/inputfile"
)

// LoadFile reads studies from a data file: CSV (.csv, .txt; .tsv is
// tab-separated unless spec.Comma says otherwise) or an Excel workbook
// (.xlsx, .xlsm), whose first sheet, or spec.Sheet, holds a header row and
// one study per row. Rows are checked and named in errors as LoadCSV and
// ParseRows do (data row 1 is the row below the header). Errors are *Error
// values; a file that cannot be read is EINVALID with the cause wrapped.
func LoadFile(path string, spec InputSpec) ([]Study, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".xlsx", ".xlsm":
		if _, err := inputfile.Check(path); err != nil {
			return nil, &Error{Code: EINVALID, Message: "cannot open the data file", Err: err}
		}
		return loadWorkbook(path, spec)
	case ".csv", ".txt", ".tsv":
		f, _, err := inputfile.Open(path) // a named pipe would block for ever
		if err != nil {
			return nil, &Error{Code: EINVALID, Message: "cannot open the data file", Err: err}
		}
		defer f.Close()
		if ext == ".tsv" && spec.Comma == 0 {
			spec.Comma = '\t'
		}
		return LoadCSV(f, spec)
	case ".xls":
		return nil, errorf(EINVALID, "%s is in the old Excel 97–2003 format (.xls); save it as .xlsx or CSV", filepath.Base(path))
	default:
		return nil, errorf(EINVALID, "cannot read %s: use a .csv, .tsv, .txt or .xlsx file", filepath.Base(path))
	}
}

// loadWorkbook reads the studies of one sheet of an .xlsx file. The first
// non-blank row is the header; cell values are read raw (unformatted), so
// a count shown as "1,234" or a proportion shown as "12%" reads as the
// number stored.
func loadWorkbook(path string, spec InputSpec) ([]Study, error) {
	if err := checkWorkbookSize(path); err != nil {
		return nil, err
	}
	f, err := excelize.OpenFile(path, excelize.Options{UnzipSizeLimit: maxWorkbookBytes})
	if err != nil {
		return nil, &Error{Code: EINVALID, Message: "cannot read the Excel workbook", Err: err}
	}
	defer func() { _ = f.Close() }()
	sheets := f.GetSheetList()
	if len(sheets) == 0 {
		return nil, errorf(EINVALID, "the workbook %s has no sheets", filepath.Base(path))
	}
	sheet := sheets[0]
	if want := strings.TrimSpace(spec.Sheet); want != "" {
		sheet = ""
		for _, name := range sheets {
			if strings.EqualFold(name, want) {
				sheet = name
				break
			}
		}
		if sheet == "" {
			return nil, errorf(EINVALID, "sheet %q not found in %s (sheets: %s)", want, filepath.Base(path), quoteList(sheets))
		}
	}
	rows, err := f.GetRows(sheet, excelize.Options{RawCellValue: true})
	if err != nil {
		return nil, &Error{Code: EINVALID, Message: fmt.Sprintf("cannot read sheet %q", sheet), Err: err}
	}
	for len(rows) > 0 && isBlankRecord(rows[0]) {
		rows = rows[1:]
	}
	if err := checkRows(rows); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, errorf(EINVALID, "sheet %q is empty: a header row and at least one study are needed", sheet)
	}
	header := rows[0]
	data := rows[1:]
	for i, rec := range data {
		data[i] = fitRow(rec, len(header))
	}
	return ParseRows(header, data, spec)
}

// fitRow pads a sheet row to n cells (excelize omits trailing empty cells)
// and drops empty cells beyond n, so that only a value outside the table is
// reported as a row of the wrong width.
func fitRow(rec []string, n int) []string {
	for len(rec) > n && strings.TrimSpace(rec[len(rec)-1]) == "" {
		rec = rec[:len(rec)-1]
	}
	for len(rec) < n {
		rec = append(rec, "")
	}
	return rec
}

// columnField returns the field of c named by metafor's name, or nil.
func columnField(c *Columns, name string) *string {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "study":
		return &c.Study
	case "ai":
		return &c.AI
	case "bi":
		return &c.BI
	case "ci":
		return &c.CI
	case "di":
		return &c.DI
	case "n1i":
		return &c.N1I
	case "n2i":
		return &c.N2I
	case "m1i":
		return &c.M1I
	case "sd1i":
		return &c.SD1I
	case "m2i":
		return &c.M2I
	case "sd2i":
		return &c.SD2I
	case "est":
		return &c.Est
	case "ci_lb":
		return &c.LB
	case "ci_ub":
		return &c.UB
	case "sei":
		return &c.SE
	case "xi":
		return &c.XI
	case "ni":
		return &c.NI
	}
	return nil
}

// Set maps a Study field, by metafor's name (study, ai, bi, ci, di, n1i,
// n2i, m1i, sd1i, m2i, sd2i, est, ci_lb, ci_ub, sei, xi, ni; case-insensitive), to
// a column of the input table. An empty column restores the default.
func (c *Columns) Set(field, column string) error {
	f := columnField(c, field)
	if f == nil {
		return errorf(EINVALID, "unknown field %q (use study, ai, bi, ci, di, n1i, n2i, m1i, sd1i, m2i, sd2i, est, ci_lb, ci_ub, sei, xi or ni)", field)
	}
	*f = strings.TrimSpace(column)
	return nil
}

// PositionalColumns lists the fields that a bare list of column names maps,
// in order, for a kind of data (see ParseColumns); nil for an unknown kind.
func PositionalColumns(kind Kind) []string {
	switch kind {
	case Binary:
		return []string{"ai", "n1i", "ci", "n2i"}
	case Continuous:
		return []string{"m1i", "sd1i", "n1i", "m2i", "sd2i", "n2i"}
	case Generic:
		return []string{"est", "ci_lb", "ci_ub"}
	case Proportion:
		return []string{"xi", "ni"}
	}
	return nil
}

// ParseColumns parses a column mapping such as "tpos,n1,cpos,n2" or
// "study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg". A bare list names the
// columns of kind's fields in order: ai,n1i,ci,n2i for 2x2 counts;
// m1i,sd1i,n1i,m2i,sd2i,n2i for means; est,ci_lb,ci_ub for an estimate
// with its CI; xi,ni for the events and total of single-arm studies. field=column pairs map any fields (see Columns.Set); the two
// forms cannot be mixed. An empty string is the default mapping.
func ParseColumns(s string, kind Kind) (Columns, error) {
	var c Columns
	if strings.TrimSpace(s) == "" {
		return c, nil
	}
	parts := strings.Split(s, ",")
	pairs := strings.Contains(s, "=")
	if !pairs {
		fields := PositionalColumns(kind)
		if fields == nil {
			return c, errorf(EINVALID, "columns %q: name the fields (ai=..., n1i=...) when the kind of data is not known", s)
		}
		if len(parts) != len(fields) {
			return c, errorf(EINVALID, "columns %q: %d names given but %s data take %d (%s), or use field=column pairs such as %s=...",
				s, len(parts), kind, len(fields), strings.Join(fields, ","), fields[0])
		}
		for i, p := range parts {
			if strings.TrimSpace(p) == "" {
				return c, errorf(EINVALID, "columns %q: the name for %s is empty", s, fields[i])
			}
			_ = c.Set(fields[i], p)
		}
		return c, nil
	}
	seen := map[string]bool{}
	for _, p := range parts {
		field, col, ok := strings.Cut(p, "=")
		field = strings.ToLower(strings.TrimSpace(field))
		if !ok || field == "" || strings.TrimSpace(col) == "" {
			return c, errorf(EINVALID, "columns %q: %q is not of the form field=column (do not mix it with a bare list)", s, strings.TrimSpace(p))
		}
		if seen[field] {
			return c, errorf(EINVALID, "columns %q: %s is mapped twice", s, field)
		}
		seen[field] = true
		if err := c.Set(field, col); err != nil {
			return c, err
		}
	}
	return c, nil
}
