// Package export writes Clinsight results as Excel (.xlsx) workbooks: one or
// more streamed result tables, optional picture sheets (charts drawn by the
// caller, see [Image]) and a Provenance sheet that records how the results
// were produced.
//
// The package depends on no other Clinsight package but internal/atomicfile,
// Clinsight's one atomic file writer; callers adapt their results to [Table]
// and [Provenance]. Rows are streamed through excelize's
// StreamWriter, which spills them to a temporary file, so memory use does not
// grow with the number of rows. The workbook is assembled in a temporary file
// next to the destination and renamed over it only when everything succeeded
// (internal/atomicfile); temporary workbooks that a killed export left in
// the destination's folder are removed by the next export there.
//
// Cell values map to Excel types as follows:
//
//   - nil: an empty cell.
//   - bool: a boolean cell.
//   - int, int8 … int64, uint … uint64: a number. Integers beyond ±2^53
//     cannot be held exactly by Excel (it stores every number as a 64-bit
//     float) and are written as text so that identifiers are not corrupted.
//   - float32, float64: a number; NaN and ±Inf, which Excel cannot store, are
//     written as the text "NaN", "Infinity" and "-Infinity".
//   - string: text. Excel holds at most 32,767 characters (UTF-16 code units)
//     in a cell: longer strings are cut and end with [TruncationMarker]; the
//     number of cut cells is reported in [Summary] and on the Provenance sheet.
//     Text is never interpreted as a formula.
//   - time.Time: a date cell (an Excel serial number with the format
//     yyyy-mm-dd hh:mm:ss) holding the wall-clock time in the value's own
//     location, since Excel has no time zones. The zero time is an empty cell;
//     times outside Excel's range (1900-01-01 to 9999-12-31) are written as
//     RFC 3339 text.
//   - []byte: text when it is valid UTF-8 without control characters (other
//     than tab and line breaks), otherwise "0x" followed by lowercase hex.
//   - a driver.Valuer (sql.NullInt64, sql.NullTime, …): its Value, mapped as
//     above.
//   - an error: its message; a fmt.Stringer (for example a blob type printing
//     hex): its String() as text.
//   - other values: pointers are followed (nil is empty), named types map by
//     their kind (a type Code string is text), anything else is written with
//     fmt.Sprint as text.
package export

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/xuri/excelize/v2"
)

// Excel limits and the package's tuning constants.
const (
	// MaxSheetRows is the number of rows an Excel sheet can hold, header
	// included.
	MaxSheetRows = 1_048_576
	// MaxColumns is the number of columns an Excel sheet can hold.
	MaxColumns = 16_384
	// MaxCellChars is the number of UTF-16 code units an Excel cell can hold.
	MaxCellChars = 32_767
	// TruncationMarker ends every string that was cut to fit MaxCellChars.
	TruncationMarker = " …[truncated]"

	// checkEvery is how often (in rows) the context is checked.
	checkEvery = 1_000
	// progressEvery is how often (in rows) Options.Progress is called.
	progressEvery = 10_000
	// sampleRows is how many leading rows of each table are looked at to
	// size its columns; they are held in memory until the sheet starts.
	sampleRows = 100
	// minColWidth and maxColWidth clamp computed column widths (in Excel's
	// character units).
	minColWidth, maxColWidth = 8, 60
)

// Table is one result set to export. A table larger than a sheet continues on
// further sheets ("Results", "Results (2)", …), each starting with the header.
type Table struct {
	// Name is the name of the table's (first) sheet. It is adjusted to
	// Excel's rules: at most 31 characters, none of []:*?/\' (replaced by
	// '_'), not blank (defaults to "Results"), not "History", and unique in
	// the workbook without regard to case (" (2)", " (3)", … are appended,
	// as they are for the sheets a long table continues on). Summary
	// reports the names actually used.
	Name string
	// Columns are the header labels, one per value in each row; at least one
	// and at most MaxColumns.
	Columns []string
	// Rows yields the rows in order, each with exactly len(Columns) values
	// (see the package documentation for how values map to Excel types). A
	// non-nil error stops the export, which then fails. The yielded slice
	// and its values may be reused by the iterator once yield returns: they
	// are converted before that. The iterator runs on the caller's goroutine
	// and should honour its own context while it waits for data. A nil Rows
	// is an empty table (a header-only sheet).
	Rows iter.Seq2[[]any, error]
}

// Validate reports whether t can be exported.
func (t Table) Validate() error {
	switch {
	case len(t.Columns) == 0:
		return fmt.Errorf("table %q has no columns", t.Name)
	case len(t.Columns) > MaxColumns:
		return fmt.Errorf("table %q has %d columns, more than Excel's %d", t.Name, len(t.Columns), MaxColumns)
	}
	return nil
}

// Options tune WriteWorkbook. The zero value is ready to use.
type Options struct {
	// Progress, when not nil, is called on the exporting goroutine with the
	// number of data rows written so far (over all tables) every 10,000 rows
	// and once after the last row. Compressing the workbook, which follows
	// the last call, takes a few seconds for a million rows. A UI must hand
	// the value to its own goroutine (fyne.Do) and return quickly.
	Progress func(rowsWritten int64)
	// MaxRowsPerSheet is the largest number of rows, header included, on one
	// sheet: 0 means Excel's limit MaxSheetRows; otherwise it must be between
	// 2 and MaxSheetRows. Smaller values are mostly useful in tests.
	MaxRowsPerSheet int
	// TempDir is where excelize keeps the rows of each sheet until the
	// workbook is assembled (about 35 bytes per cell); empty means
	// os.TempDir(). The workbook itself is assembled next to its destination.
	TempDir string
	// Images are PNG pictures placed on sheets of their own after the
	// result sheets (see Image).
	Images []Image
	// BeforeCommit, when not nil, is called with the SHA-256 (hex) of the
	// complete workbook and its summary just before it is renamed over
	// path. An error stops the export: no file is left, and the error is
	// returned. The audit trail records an export here, so that an export
	// whose record cannot be written does not happen.
	BeforeCommit func(sha256 string, sum Summary) error
}

// Summary describes a written workbook.
type Summary struct {
	// Path is the workbook's path as given to WriteWorkbook.
	Path string
	// Sheets lists the result sheets in workbook order.
	Sheets []SheetSummary
	// Rows is the number of data rows written over all tables, headers
	// excluded.
	Rows int64
	// TruncatedCells counts strings cut to fit MaxCellChars.
	TruncatedCells int64
	// ImageSheets lists the sheets holding Options.Images, in workbook
	// order; they follow the result sheets.
	ImageSheets []string
	// ProvenanceSheet is the name of the provenance sheet, the last one.
	ProvenanceSheet string
}

// SheetSummary describes one result sheet.
type SheetSummary struct {
	// Name is the sheet's name in the workbook.
	Name string
	// Table is the index in the tables passed to WriteWorkbook of the table
	// the sheet belongs to.
	Table int
	// Rows is the number of data rows on the sheet, header excluded.
	Rows int64
}

// WriteWorkbook writes tables, each on its own sheet(s), and prov on a final
// Provenance sheet to the .xlsx file at path, replacing any file there.
//
// The workbook is written to a temporary file in path's directory and
// renamed over path only on success: when a row iterator fails, a write
// fails or ctx is cancelled (checked every 1,000 rows and while the workbook
// is compressed), no file is left behind and an existing file at path is not
// touched. Errors read "export <path>: …" and wrap the cause, so
// errors.Is(err, context.Canceled) works.
func WriteWorkbook(ctx context.Context, path string, tables []Table, prov Provenance, opts Options) (Summary, error) {
	sum, err := writeWorkbook(ctx, path, tables, prov, opts)
	if err != nil {
		return Summary{}, fmt.Errorf("export %s: %w", path, err)
	}
	return sum, nil
}

func writeWorkbook(ctx context.Context, path string, tables []Table, prov Provenance, opts Options) (Summary, error) {
	if err := validate(path, tables, opts); err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	if err := checkTempDir(opts.TempDir); err != nil {
		return Summary{}, err
	}
	out, err := createTemp(path)
	if err != nil {
		return Summary{}, err
	}
	defer out.discard() // no-op after commit

	f := excelize.NewFile(excelize.Options{TmpDir: opts.TempDir})
	defer func() { _ = f.Close() }() // removes excelize's row files
	wb, err := newWorkbook(ctx, f, opts)
	if err != nil {
		return Summary{}, err
	}
	for i, t := range tables {
		if err := wb.writeTable(i, t); err != nil {
			return Summary{}, err
		}
	}
	wb.progress()
	if err := wb.writeImages(opts.Images); err != nil {
		return Summary{}, err
	}
	if err := wb.writeProvenance(tables, prov); err != nil {
		return Summary{}, err
	}
	if err := out.save(ctx, f); err != nil {
		return Summary{}, err
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, err
	}
	wb.sum.Path = path
	if opts.BeforeCommit != nil {
		sum, err := out.sha256()
		if err != nil {
			return Summary{}, err
		}
		if err := opts.BeforeCommit(sum, wb.sum); err != nil {
			return Summary{}, err
		}
	}
	if err := out.commit(); err != nil {
		return Summary{}, err
	}
	return wb.sum, nil
}

// validate checks the arguments before any work is done.
func validate(path string, tables []Table, opts Options) error {
	if !strings.EqualFold(filepath.Ext(path), ".xlsx") {
		return errors.New("file name must end in .xlsx")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return errors.New("destination is a directory")
	}
	if len(tables) == 0 {
		return errors.New("no tables to export")
	}
	for _, t := range tables {
		if err := t.Validate(); err != nil {
			return err
		}
	}
	if opts.MaxRowsPerSheet != 0 && (opts.MaxRowsPerSheet < 2 || opts.MaxRowsPerSheet > MaxSheetRows) {
		return fmt.Errorf("MaxRowsPerSheet %d is outside 2..%d", opts.MaxRowsPerSheet, MaxSheetRows)
	}
	return validateImages(opts.Images)
}

// checkTempDir makes sure excelize can spill rows to dir: when it cannot,
// excelize silently keeps every row in memory instead.
func checkTempDir(dir string) error {
	probe, err := os.CreateTemp(dir, "clinsight-export-probe-")
	if err != nil {
		return fmt.Errorf("temporary directory for rows: %w", err)
	}
	name := probe.Name()
	_ = probe.Close()
	return os.Remove(name)
}

// workbook is the state of one WriteWorkbook call.
type workbook struct {
	ctx     context.Context
	f       *excelize.File
	opts    Options
	maxRows int // rows per sheet, header included
	names   sheetNamer
	styles  styles
	sum     Summary
	started bool // whether the default "Sheet1" has been claimed
}

// styles are the style IDs registered in the workbook.
type styles struct {
	header int // bold
	date   int // yyyy-mm-dd hh:mm:ss
	key    int // provenance keys: bold, top-aligned
	value  int // provenance values: wrapped, top-aligned
}

func newWorkbook(ctx context.Context, f *excelize.File, opts Options) (*workbook, error) {
	wb := &workbook{ctx: ctx, f: f, opts: opts, maxRows: opts.MaxRowsPerSheet}
	if wb.maxRows == 0 {
		wb.maxRows = MaxSheetRows
	}
	// Claim the provenance sheet's name first so that a table named
	// "Provenance" gets another name rather than the other way round.
	wb.sum.ProvenanceSheet = wb.names.unique("Provenance")
	top := &excelize.Alignment{Vertical: "top"}
	for _, s := range []struct {
		id    *int
		style excelize.Style
	}{
		{&wb.styles.header, excelize.Style{Font: &excelize.Font{Bold: true}}},
		{&wb.styles.date, excelize.Style{CustomNumFmt: ptr("yyyy-mm-dd hh:mm:ss")}},
		{&wb.styles.key, excelize.Style{Font: &excelize.Font{Bold: true}, Alignment: top}},
		{&wb.styles.value, excelize.Style{Alignment: &excelize.Alignment{Vertical: "top", WrapText: true}}},
	} {
		id, err := f.NewStyle(&s.style)
		if err != nil {
			return nil, err
		}
		*s.id = id
	}
	return wb, nil
}

func ptr[T any](v T) *T { return &v }

// newSheet adds a sheet called name (already sanitised and unique) and
// returns its stream writer.
func (wb *workbook) newSheet(name string) (*excelize.StreamWriter, error) {
	if err := wb.addSheet(name); err != nil {
		return nil, err
	}
	return wb.f.NewStreamWriter(name)
}

// addSheet adds a sheet called name (already sanitised and unique) at the
// end of the workbook; the first one renames the default "Sheet1".
func (wb *workbook) addSheet(name string) error {
	if !wb.started {
		wb.started = true
		return wb.f.SetSheetName("Sheet1", name)
	}
	_, err := wb.f.NewSheet(name)
	return err
}

// progress reports the rows written so far.
func (wb *workbook) progress() {
	if wb.opts.Progress != nil {
		wb.opts.Progress(wb.sum.Rows)
	}
}

// tableWriter streams one table onto one or more sheets.
type tableWriter struct {
	wb     *workbook
	index  int // in the tables passed to WriteWorkbook
	table  Table
	stem   string    // the table's sanitised name, which continuation sheets extend
	base   string    // name of the table's first sheet
	widths []float64 // column widths, from the header and the sampled rows
	sw     *excelize.StreamWriter
	sheet  *SheetSummary // the sheet being written, in wb.sum.Sheets
	row    []any         // reused conversion buffer
}

// writeTable writes table t, the index-th one.
func (wb *workbook) writeTable(index int, t Table) error {
	stem := sanitizeSheetName(t.Name)
	tw := &tableWriter{wb: wb, index: index, table: t, stem: stem, base: wb.names.unique(stem)}
	if err := tw.write(); err != nil {
		return fmt.Errorf("table %q: %w", tw.base, err)
	}
	return nil
}

func (tw *tableWriter) write() error {
	ncol := len(tw.table.Columns)
	var (
		sample   [][]any // converted leading rows, until the first sheet starts
		sampling = true
		n        int64 // rows read from the iterator
	)
	if tw.table.Rows != nil {
		for vals, err := range tw.table.Rows {
			n++
			if err != nil {
				return fmt.Errorf("row %d: %w", n, err)
			}
			if len(vals) != ncol {
				return fmt.Errorf("row %d has %d values for %d columns", n, len(vals), ncol)
			}
			if sampling {
				cells := make([]any, ncol)
				if err := tw.wb.convertRow(cells, vals); err != nil {
					return fmt.Errorf("row %d: %w", n, err)
				}
				if sample = append(sample, cells); len(sample) < sampleRows {
					continue
				}
				sampling = false
				if err := tw.start(sample); err != nil {
					return err
				}
				sample = nil
				continue
			}
			if err := tw.wb.convertRow(tw.row, vals); err != nil {
				return fmt.Errorf("row %d: %w", n, err)
			}
			if err := tw.writeRow(tw.row); err != nil {
				return err
			}
		}
	}
	if sampling {
		if err := tw.start(sample); err != nil {
			return err
		}
	}
	return tw.finishSheet()
}

// start sizes the columns from the header and sample, opens the first sheet
// and writes the sampled rows.
func (tw *tableWriter) start(sample [][]any) error {
	tw.widths = columnWidths(tw.table.Columns, sample)
	tw.row = make([]any, len(tw.table.Columns))
	if err := tw.openSheet(tw.base); err != nil {
		return err
	}
	for _, cells := range sample {
		if err := tw.writeRow(cells); err != nil {
			return err
		}
	}
	return nil
}

// openSheet starts a sheet called name: widths, frozen header, header row.
func (tw *tableWriter) openSheet(name string) error {
	sw, err := tw.wb.newSheet(name)
	if err != nil {
		return fmt.Errorf("sheet %q: %w", name, err)
	}
	tw.sw = sw
	tw.wb.sum.Sheets = append(tw.wb.sum.Sheets, SheetSummary{Name: name, Table: tw.index})
	tw.sheet = &tw.wb.sum.Sheets[len(tw.wb.sum.Sheets)-1]
	for i, w := range tw.widths {
		if err := sw.SetColWidth(i+1, i+1, w); err != nil {
			return err
		}
	}
	if err := freezeHeader(sw); err != nil {
		return err
	}
	header := make([]any, len(tw.table.Columns))
	for i, c := range tw.table.Columns {
		header[i] = excelize.Cell{StyleID: tw.wb.styles.header, Value: tw.wb.text(c)}
	}
	return sw.SetRow("A1", header)
}

// freezeHeader freezes the first row of the sheet.
func freezeHeader(sw *excelize.StreamWriter) error {
	return sw.SetPanes(&excelize.Panes{
		Freeze:      true,
		YSplit:      1,
		TopLeftCell: "A2",
		ActivePane:  "bottomLeft",
		Selection:   []excelize.Selection{{SQRef: "A2", ActiveCell: "A2", Pane: "bottomLeft"}},
	})
}

// writeRow writes converted cells as the next data row, moving on to a new
// sheet when the current one is full.
func (tw *tableWriter) writeRow(cells []any) error {
	if tw.sheet.Rows+1 >= int64(tw.wb.maxRows) {
		if err := tw.finishSheet(); err != nil {
			return err
		}
		if err := tw.openSheet(tw.wb.names.unique(tw.stem)); err != nil {
			return err
		}
	}
	r := int(tw.sheet.Rows) + 2 // 1-based, below the header
	if err := tw.sw.SetRow("A"+strconv.Itoa(r), cells); err != nil {
		return fmt.Errorf("sheet %q row %d: %w", tw.sheet.Name, r, err)
	}
	tw.sheet.Rows++
	wb := tw.wb
	wb.sum.Rows++
	if wb.sum.Rows%checkEvery == 0 {
		if err := wb.ctx.Err(); err != nil {
			return err
		}
		if wb.sum.Rows%progressEvery == 0 {
			wb.progress()
		}
	}
	return nil
}

// finishSheet adds the autofilter over the header and data and flushes the
// current sheet.
func (tw *tableWriter) finishSheet() error {
	last, err := excelize.CoordinatesToCellName(len(tw.table.Columns), int(tw.sheet.Rows)+1)
	if err != nil {
		return err
	}
	// AutoFilter is not a stream-mode function, but it only records the
	// filter range on the worksheet that the stream writer emits at Flush
	// (and a workbook-level defined name), so it is safe before Flush.
	if err := tw.wb.f.AutoFilter(tw.sheet.Name, "A1:"+last, nil); err != nil {
		return fmt.Errorf("sheet %q: autofilter: %w", tw.sheet.Name, err)
	}
	if err := tw.sw.Flush(); err != nil {
		return fmt.Errorf("sheet %q: %w", tw.sheet.Name, err)
	}
	return nil
}

// columnWidths sizes columns from their header and the sampled rows.
func columnWidths(header []string, sample [][]any) []float64 {
	widths := make([]float64, len(header))
	for i, h := range header {
		w := displayWidth(h) + 4 // bold text and the autofilter button
		for _, row := range sample {
			w = max(w, displayWidth(row[i])+2)
		}
		widths[i] = float64(min(max(w, minColWidth), maxColWidth))
	}
	return widths
}

// displayWidth estimates how many characters a converted cell value shows,
// up to maxColWidth.
func displayWidth(v any) int {
	switch v := v.(type) {
	case nil:
		return 0
	case string:
		longest, n := 0, 0
		for _, r := range v {
			if r == '\n' {
				n = 0
				continue
			}
			if n++; n > longest {
				if longest = n; longest >= maxColWidth {
					break
				}
			}
		}
		return longest
	case bool:
		return len("FALSE")
	case int64:
		return len(strconv.FormatInt(v, 10))
	case float64:
		return min(len(strconv.FormatFloat(v, 'g', -1, 64)), 12) // General shows ≤ 11 digits
	case float32:
		return min(len(strconv.FormatFloat(float64(v), 'g', -1, 32)), 12)
	case excelize.Cell: // a date
		return len("2006-01-02 15:04:05")
	default:
		return len(fmt.Sprint(v))
	}
}

// createdOrNow returns t, or the current time when t is zero.
func createdOrNow(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}
