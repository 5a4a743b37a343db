package meta

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/internal/csvbound"
	"github.com/clinsight/clinsight/internal/textenc"
)

// Columns maps Study fields to column names of an input table. Empty names
// take metafor's names (study, ai, bi, n1i, ci, di, n2i, m1i, sd1i, m2i, sd2i;
// xi and ni for single-arm proportions) or, for generic data, est, ci_lb,
// ci_ub and sei. Names match
// case-insensitively, ignoring surrounding spaces.
type Columns struct {
	// Study is the study-label column; when absent labels are "Study 1", ...
	Study string
	// AI, N1I, CI, N2I are the 2x2 columns: events and totals per group.
	AI, N1I, CI, N2I string
	// BI and DI are the non-events per group; either the totals (N1I, N2I)
	// or these must be present for 2x2 data. The totals are used when both
	// are present, unless BI (DI) is named here and N1I (N2I) is not.
	BI, DI string
	// M1I, SD1I, M2I, SD2I are the continuous columns (with N1I, N2I).
	M1I, SD1I, M2I, SD2I string
	// Est, LB, UB are a generic estimate and its confidence limits; SE an
	// optional standard error on the analysis scale.
	Est, LB, UB, SE string
	// XI and NI are the events and total of a single-arm study (proportions).
	XI, NI string
}

func (c Columns) withDefaults() Columns {
	def := func(s *string, d string) {
		if *s == "" {
			*s = d
		}
	}
	def(&c.Study, "study")
	def(&c.AI, "ai")
	def(&c.BI, "bi")
	def(&c.N1I, "n1i")
	def(&c.CI, "ci")
	def(&c.DI, "di")
	def(&c.N2I, "n2i")
	def(&c.M1I, "m1i")
	def(&c.SD1I, "sd1i")
	def(&c.M2I, "m2i")
	def(&c.SD2I, "sd2i")
	def(&c.Est, "est")
	def(&c.LB, "ci_lb")
	def(&c.UB, "ci_ub")
	def(&c.SE, "sei")
	def(&c.XI, "xi")
	def(&c.NI, "ni")
	return c
}

// InputSpec says how to read studies from a table.
type InputSpec struct {
	// Kind is the kind of data to read; 0 infers it from the header (2x2
	// when the ai and ci columns exist, else continuous when m1i exists, else
	// generic when est exists, else single-arm proportions when xi and ni
	// exist).
	Kind Kind
	// Columns names the columns; empty fields take metafor's names.
	Columns Columns
	// Where keeps only the rows whose column (key) equals the value, e.g.
	// {"dataset": "dat.bcg"} for the long format of studies_2x2.csv. Every
	// condition must hold.
	Where map[string]string
	// SkipMissing keeps rows with missing values (empty, NA, N/A, NaN, null)
	// as Missing studies that Analyze omits, as metafor's na.omit does.
	// When false such rows are an error.
	SkipMissing bool
	// Comma is the CSV field separator; 0 means ',' (a tab for .tsv files
	// read by LoadFile).
	Comma rune
	// Sheet names the sheet of an .xlsx file read by LoadFile (matched
	// without regard to case); empty means the first sheet. CSV ignores it.
	Sheet string
	// Covariates names study-level columns to keep with each study
	// (Study.Covariates), for subgroups and meta-regression: moderators
	// such as year or latitude, or a grouping such as allocation. Values are
	// kept as text; an empty or NA value is kept empty (the study is then
	// left out of analyses that use that column, as metafor's na.omit).
	Covariates []string
}

// Validate checks the spec: a known kind and a usable separator.
func (s InputSpec) Validate() error {
	if s.Kind != 0 && s.Kind != Binary && s.Kind != Continuous && s.Kind != Generic && s.Kind != Proportion {
		return errorf(EINVALID, "unknown kind of data %d", int(s.Kind))
	}
	if s.Comma == '"' || s.Comma == '\r' || s.Comma == '\n' || s.Comma == 0xFFFD {
		return errorf(EINVALID, "%q cannot separate CSV fields", s.Comma)
	}
	for col := range s.Where {
		if strings.TrimSpace(col) == "" {
			return errorf(EINVALID, "a filter names no column")
		}
	}
	return nil
}

// ParseFilter parses a "column=value" filter such as "dataset=dat.bcg" into
// a Where map entry.
func ParseFilter(s string) (column, value string, err error) {
	col, val, ok := strings.Cut(s, "=")
	col = strings.TrimSpace(col)
	if !ok || col == "" {
		return "", "", errorf(EINVALID, "filter %q is not of the form column=value", s)
	}
	return col, strings.TrimSpace(val), nil
}

// LoadCSV reads studies from CSV with a header row, as ParseRows does.
// Errors name the 1-based data row (the header is not counted) and the
// study label.
func LoadCSV(r io.Reader, spec InputSpec) ([]Study, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	// Excel's "Unicode text" is UTF-16; a row of thousands of columns is
	// refused before encoding/csv holds them.
	br := bufio.NewReader(csvbound.NewReader(textenc.UTF8(&tableBound{r: r, left: maxTableBytes}), spec.Comma, 0, maxTableColumns))
	if bom, err := br.Peek(3); err == nil && string(bom) == "\ufeff" {
		_, _ = br.Discard(3) // Excel writes a UTF-8 byte-order mark
	}
	cr := csv.NewReader(br)
	if spec.Comma != 0 {
		cr.Comma = spec.Comma
	}
	cr.FieldsPerRecord = -1
	records, err := readTable(cr.Read)
	if err != nil {
		if me := (*Error)(nil); errors.As(err, &me) {
			return nil, err
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, &Error{Code: EINVALID, Row: max(pe.StartLine-1, 0), Message: "the file is not valid CSV", Err: pe.Err}
		}
		return nil, fmt.Errorf("meta: reading CSV: %w", err)
	}
	if len(records) == 0 {
		return nil, errorf(EINVALID, "the file is empty: a header row and at least one study are needed")
	}
	return ParseRows(records[0], records[1:], spec)
}

// ParseRows turns already-parsed rows (from CSV, an xlsx sheet, ...) into
// studies. header names the columns; rows[i] is data row i+1. Values are
// numbers with '.' as the decimal point; empty, NA, N/A, NaN and null are
// missing. Every row is checked (Study.Validate) and up to 20 errors, each
// naming its row and study, are returned together.
func ParseRows(header []string, rows [][]string, spec InputSpec) ([]Study, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	idx := make(map[string]int, len(header))
	for i, h := range header {
		h = normName(h)
		if _, dup := idx[h]; !dup && h != "" {
			idx[h] = i
		}
	}
	col := func(name string) int {
		if i, ok := idx[normName(name)]; ok {
			return i
		}
		return -1
	}
	c := spec.Columns.withDefaults()
	// Non-events named explicitly win over default-named totals.
	useBI := spec.Columns.BI != "" && spec.Columns.N1I == ""
	useDI := spec.Columns.DI != "" && spec.Columns.N2I == ""

	kind := spec.Kind
	if kind == 0 {
		switch {
		case col(c.AI) >= 0 && col(c.CI) >= 0:
			kind = Binary
		case col(c.M1I) >= 0:
			kind = Continuous
		case col(c.Est) >= 0:
			kind = Generic
		case col(c.XI) >= 0 && col(c.NI) >= 0:
			kind = Proportion
		default:
			return nil, errorf(EINVALID, "cannot tell the kind of data from the columns %s: expected %s and %s (2x2 counts), %s (means), %s (estimate and CI) or %s and %s (events and total of one group)",
				quoteList(header), c.AI, c.CI, c.M1I, c.Est, c.XI, c.NI)
		}
	}

	type field struct {
		name string
		idx  int
		dst  func(*Study) *float64
	}
	var fields []field
	need := func(name string, dst func(*Study) *float64) error {
		i := col(name)
		if i < 0 {
			return errorf(EINVALID, "column %q not found (columns: %s)", name, quoteList(header))
		}
		fields = append(fields, field{name, i, dst})
		return nil
	}
	var err error
	var biIdx, diIdx = -1, -1
	switch kind {
	case Binary:
		err = errors.Join(need(c.AI, func(s *Study) *float64 { return &s.AI }), need(c.CI, func(s *Study) *float64 { return &s.CI }))
		if col(c.N1I) >= 0 && !(useBI && col(c.BI) >= 0) {
			err = errors.Join(err, need(c.N1I, func(s *Study) *float64 { return &s.N1I }))
		} else if biIdx = col(c.BI); biIdx < 0 {
			err = errors.Join(err, errorf(EINVALID, "column %q (or %q) not found (columns: %s)", c.N1I, c.BI, quoteList(header)))
		}
		if col(c.N2I) >= 0 && !(useDI && col(c.DI) >= 0) {
			err = errors.Join(err, need(c.N2I, func(s *Study) *float64 { return &s.N2I }))
		} else if diIdx = col(c.DI); diIdx < 0 {
			err = errors.Join(err, errorf(EINVALID, "column %q (or %q) not found (columns: %s)", c.N2I, c.DI, quoteList(header)))
		}
	case Continuous:
		err = errors.Join(
			need(c.M1I, func(s *Study) *float64 { return &s.M1I }), need(c.SD1I, func(s *Study) *float64 { return &s.SD1I }),
			need(c.N1I, func(s *Study) *float64 { return &s.N1I }), need(c.M2I, func(s *Study) *float64 { return &s.M2I }),
			need(c.SD2I, func(s *Study) *float64 { return &s.SD2I }), need(c.N2I, func(s *Study) *float64 { return &s.N2I }))
	case Generic:
		err = need(c.Est, func(s *Study) *float64 { return &s.Est })
	case Proportion:
		err = errors.Join(need(c.XI, func(s *Study) *float64 { return &s.XI }), need(c.NI, func(s *Study) *float64 { return &s.NI }))
	}
	if err != nil {
		return nil, err
	}
	var lbIdx, ubIdx, seIdx = -1, -1, -1
	if kind == Generic {
		lbIdx, ubIdx, seIdx = col(c.LB), col(c.UB), col(c.SE)
		if seIdx < 0 && (lbIdx < 0 || ubIdx < 0) {
			return nil, errorf(EINVALID, "columns %q and %q (or %q) not found (columns: %s)", c.LB, c.UB, c.SE, quoteList(header))
		}
	}

	type cond struct {
		idx   int
		value string
	}
	var conds []cond
	filterCols := make([]string, 0, len(spec.Where))
	for name := range spec.Where {
		filterCols = append(filterCols, name)
	}
	sort.Strings(filterCols)
	for _, name := range filterCols {
		i := col(name)
		if i < 0 {
			return nil, errorf(EINVALID, "filter column %q not found (columns: %s)", name, quoteList(header))
		}
		conds = append(conds, cond{i, strings.TrimSpace(spec.Where[name])})
	}
	studyIdx := col(c.Study)
	yearIdx := col("year") // the year goes into the label, as metafor's slab = paste(author, year)
	covIdx := make([]int, len(spec.Covariates))
	for i, name := range spec.Covariates {
		if covIdx[i] = col(name); covIdx[i] < 0 {
			return nil, errorf(EINVALID, "column %q not found (columns: %s)", name, quoteList(header))
		}
	}

	var studies []Study
	var errs []error
	seen := map[string]bool{} // values of the first filter column, for the "no match" message
rows:
	for r, rec := range rows {
		rowNo := r + 1
		get := func(i int) string {
			if i < 0 || i >= len(rec) {
				return ""
			}
			return strings.TrimSpace(rec[i])
		}
		if isBlankRecord(rec) {
			continue
		}
		for j, cd := range conds {
			v := get(cd.idx)
			if j == 0 && len(seen) < 50 {
				seen[v] = true
			}
			if v != cd.value {
				continue rows
			}
		}
		s := Study{Row: rowNo, Kind: kind, Label: get(studyIdx), Year: plausibleYear(get(yearIdx))}
		if len(covIdx) > 0 {
			s.Covariates = make(map[string]string, len(covIdx))
			for i, ci := range covIdx {
				v := get(ci)
				if _, missing, _ := parseNumber(v); missing {
					v = ""
				}
				s.Covariates[normName(spec.Covariates[i])] = v
			}
		}
		if s.Label == "" {
			s.Label = fmt.Sprintf("Study %d", rowNo)
		}
		if len(rec) != len(header) {
			errs = append(errs, rowError(&s, "has %d fields but the header has %d", len(rec), len(header)))
			continue
		}
		var rowErr error
		parse := func(name string, i int, dst *float64, optional bool) {
			if rowErr != nil {
				return
			}
			v, missing, err := parseNumber(get(i))
			switch {
			case err != nil:
				rowErr = rowError(&s, "column %q: %v", name, err)
			case missing && !optional:
				if spec.SkipMissing {
					s.Missing = true
				} else {
					rowErr = rowError(&s, "column %q is empty or NA; fill it in, or skip rows with missing values", name)
				}
			default:
				*dst = v
			}
		}
		for _, f := range fields {
			parse(f.name, f.idx, f.dst(&s), false)
		}
		if kind == Binary {
			var bi, di float64
			if biIdx >= 0 {
				parse(c.BI, biIdx, &bi, false)
				s.N1I = s.AI + bi
			}
			if diIdx >= 0 {
				parse(c.DI, diIdx, &di, false)
				s.N2I = s.CI + di
			}
		}
		if kind == Generic {
			parse(c.SE, seIdx, &s.SE, true)
			parse(c.LB, lbIdx, &s.LB, s.SE > 0)
			parse(c.UB, ubIdx, &s.UB, s.SE > 0)
		}
		if rowErr == nil {
			rowErr = s.Validate()
		}
		if rowErr != nil {
			errs = append(errs, rowErr)
			if len(errs) >= maxReportedErrors {
				break
			}
			continue
		}
		studies = append(studies, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(studies) == 0 {
		if len(conds) > 0 {
			vals := make([]string, 0, len(seen))
			for v := range seen {
				vals = append(vals, v)
			}
			sort.Strings(vals)
			return nil, errorf(EINVALID, "no rows match the filter %s (values of %q include: %s)", filterString(spec.Where, filterCols), filterCols[0], quoteList(vals))
		}
		return nil, errorf(EINVALID, "the table has no study rows")
	}
	return studies, nil
}

// parseNumber parses a finite number; missing tokens report missing.
func parseNumber(s string) (v float64, missing bool, err error) {
	switch strings.ToLower(s) {
	case "", "na", "n/a", "nan", "null", "none", ".":
		return 0, true, nil
	}
	v, err = strconv.ParseFloat(s, 64)
	if err != nil || !isFinite(v) {
		return 0, false, fmt.Errorf("%q is not a number", s)
	}
	return v, false, nil
}

func normName(s string) string {
	return strings.ToLower(strings.TrimSpace(strings.TrimPrefix(s, "\ufeff")))
}

func isBlankRecord(rec []string) bool {
	for _, f := range rec {
		if strings.TrimSpace(f) != "" {
			return false
		}
	}
	return true
}

func quoteList(xs []string) string {
	const maxShown = 12
	var b strings.Builder
	for i, x := range xs {
		if i == maxShown {
			fmt.Fprintf(&b, ", … (%d more)", len(xs)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", x)
	}
	return b.String()
}

func filterString(where map[string]string, cols []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = c + "=" + where[c]
	}
	return strings.Join(parts, ", ")
}

// plausibleYear is year when it is a four-digit year, "" otherwise.
func plausibleYear(year string) string {
	if len(year) != 4 {
		return ""
	}
	if y, err := strconv.Atoi(year); err != nil || y < 1700 || y > 2200 {
		return ""
	}
	return year
}

// LabelWithYear is the study label with its year, as metafor's forest
// plots write it ("Aronson, 1948"), unless the label already holds it.
func LabelWithYear(label, year string) string {
	if label == "" || year == "" || strings.Contains(label, year) {
		return label
	}
	return label + ", " + year
}
