package export

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/xuri/excelize/v2"
)

// blob is a Stringer printing hex, like a BLOB column type of a caller.
type blob []byte

func (b blob) String() string { return "0x" + hex.EncodeToString(b) }

// rowsOf yields fixed rows, reusing one slice as database scanners do.
func rowsOf(rows [][]any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		var buf []any
		for _, r := range rows {
			buf = append(buf[:0], r...)
			if !yield(buf, nil) {
				return
			}
		}
	}
}

// generated yields n rows of ncol values filled in by fill, reusing one
// slice.
func generated(n, ncol int, fill func(i int, row []any)) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		row := make([]any, ncol)
		for i := range n {
			fill(i, row)
			if !yield(row, nil) {
				return
			}
		}
	}
}

// oneCol returns a one-column iterator of the ints 1..n.
func oneCol(n int, err error) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		row := make([]any, 1)
		for i := 1; i <= n; i++ {
			row[0] = i
			if !yield(row, nil) {
				return
			}
		}
		if err != nil {
			yield(nil, err)
		}
	}
}

func openBook(t *testing.T, path string) *excelize.File {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// zipEntry returns the decompressed content of an entry of the workbook.
func zipEntry(t *testing.T, path, name string) []byte {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name == name {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			b, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatalf("%s has no entry %s", path, name)
	return nil
}

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestRoundTrip(t *testing.T) {
	dir, tmp := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "cohort.xlsx")
	admit := time.Date(2024, 3, 5, 14, 30, 0, 0, time.FixedZone("CET", 3600))
	cols := []string{"subject_id", "age", "score", "name", "note", "flag", "admitted", "raw", "big_id", "ratio", "bytes", "los", "tags"}
	rows := [][]any{
		{int64(10001), 71, 0.125, "Zoë Ångström 患者 🩺", nil, true, admit, blob{0xde, 0xad}, int64(1) << 60, math.NaN(), []byte{0, 1, 2}, sql.NullInt64{Int64: 4, Valid: true}, []byte("a,b")},
		{int64(10002), int32(-5), -1e300, "", nil, false, time.Time{}, blob(nil), int64(-(1 << 53)), math.Inf(1), []byte("text"), sql.NullInt64{}, nil},
		{int64(10003), uint8(200), float32(0.1), "=SUM(A1:A2)", nil, false, time.Date(1850, 1, 1, 0, 0, 0, 0, time.UTC), blob{1}, uint64(1) << 63, math.Inf(-1), []byte{}, (*int)(nil), "  padded  "},
	}
	var prov Provenance
	prov.AppVersion = "0.3.1"
	prov.DataSource = "demo.sqlite"
	prov.Query = "SELECT subject_id,\n       age\nFROM patients\nWHERE age > 65"
	prov.Models = []string{"llama3.2:3b", "nomic-embed-text"}
	prov.Created = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	prov.Add("Question", "How many patients over 65?")
	prov.Add("Attempts", 3)
	var progress []int64
	sum, err := WriteWorkbook(context.Background(), path, []Table{{Name: "Cohort", Columns: cols, Rows: rowsOf(rows)}}, prov,
		Options{TempDir: tmp, Progress: func(n int64) { progress = append(progress, n) }})
	if err != nil {
		t.Fatal(err)
	}
	wantSum := Summary{Path: path, Sheets: []SheetSummary{{Name: "Cohort", Table: 0, Rows: 3}}, Rows: 3, ProvenanceSheet: "Provenance"}
	if !reflect.DeepEqual(sum, wantSum) {
		t.Errorf("summary = %+v, want %+v", sum, wantSum)
	}
	if !reflect.DeepEqual(progress, []int64{3}) {
		t.Errorf("progress calls = %v, want [3]", progress)
	}
	if got := dirNames(t, dir); !reflect.DeepEqual(got, []string{"cohort.xlsx"}) {
		t.Errorf("destination directory holds %v", got)
	}
	if got := dirNames(t, tmp); len(got) != 0 {
		t.Errorf("temp directory holds %v", got)
	}

	f := openBook(t, path)
	if got := f.GetSheetList(); !reflect.DeepEqual(got, []string{"Cohort", "Provenance"}) {
		t.Fatalf("sheets = %v", got)
	}
	const sh = "Cohort"

	// Header: labels, bold, frozen, autofilter over header and data.
	for i, c := range cols {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		if v, _ := f.GetCellValue(sh, cell); v != c {
			t.Errorf("header %s = %q, want %q", cell, v, c)
		}
		if !isBold(t, f, sh, cell) {
			t.Errorf("header %s is not bold", cell)
		}
	}
	if isBold(t, f, sh, "A2") {
		t.Error("data cell A2 is bold")
	}
	panes, err := f.GetPanes(sh)
	if err != nil {
		t.Fatal(err)
	}
	if !panes.Freeze || panes.YSplit != 1 || panes.XSplit != 0 || panes.TopLeftCell != "A2" {
		t.Errorf("panes = %+v, want header row frozen", panes)
	}
	sheetXML := string(zipEntry(t, path, "xl/worksheets/sheet1.xml"))
	if !strings.Contains(sheetXML, `<autoFilter ref="$A$1:$M$4">`) { // excelize writes absolute references
		t.Errorf("sheet XML has no autoFilter over A1:M4: %s", sheetXML[strings.Index(sheetXML, "</sheetData>"):])
	}
	var filter string
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" {
			filter = dn.RefersTo
		}
	}
	if filter != "'Cohort'!$A$1:$M$4" {
		t.Errorf("filter database = %q", filter)
	}

	// Cells: types and values. Numbers have no type attribute (CellTypeUnset).
	const (
		num  = excelize.CellTypeUnset
		text = excelize.CellTypeInlineString
		boo  = excelize.CellTypeBool
	)
	for _, c := range []struct {
		cell string
		typ  excelize.CellType
		raw  string // excelize's raw value
	}{
		{"A2", num, "10001"},
		{"B2", num, "71"},
		{"C2", num, "0.125"},
		{"D2", text, "Zoë Ångström 患者 🩺"},
		{"E2", num, ""}, // nil: no cell
		{"F2", boo, "1"},
		{"G2", num, "45356.604166666664"}, // 14:30 wall clock in CET
		{"H2", text, "0xdead"},
		{"I2", text, "1152921504606846976"}, // beyond 2^53: text, exact
		{"J2", text, "NaN"},
		{"K2", text, "0x000102"},
		{"L2", num, "4"},
		{"M2", text, "a,b"},
		{"B3", num, "-5"},
		{"C3", num, "-1" + strings.Repeat("0", 300)}, // excelize writes floats in full
		{"D3", text, ""},                             // an empty string, unlike nil
		{"F3", boo, "0"},
		{"G3", num, ""}, // zero time: empty
		{"H3", text, "0x"},
		{"I3", num, "-9007199254740992"}, // -2^53 is exact
		{"J3", text, "Infinity"},
		{"K3", text, "text"},
		{"L3", num, ""}, // invalid NullInt64
		{"B4", num, "200"},
		{"C4", num, "0.1"}, // float32 with its own precision
		{"D4", text, "=SUM(A1:A2)"},
		{"G4", text, "1850-01-01T00:00:00Z"}, // before Excel's epoch
		{"I4", text, "9223372036854775808"},
		{"J4", text, "-Infinity"},
		{"K4", text, ""}, // empty []byte
		{"L4", num, ""},  // nil pointer
		{"M4", text, "  padded  "},
	} {
		typ, err := f.GetCellType(sh, c.cell)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := f.GetCellValue(sh, c.cell, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		if typ != c.typ || raw != c.raw {
			t.Errorf("%s = %q of type %v, want %q of type %v", c.cell, raw, typ, c.raw, c.typ)
		}
	}
	if n := strings.Count(sheetXML, "<f>"); n != 0 {
		t.Errorf("sheet has %d formulas, want none", n)
	}
	if v, _ := f.GetCellValue(sh, "G2"); v != "2024-03-05 14:30:00" {
		t.Errorf("formatted date = %q", v)
	}
	if v, _ := f.GetCellValue(sh, "D4"); v != "=SUM(A1:A2)" {
		t.Errorf("formula-like text = %q", v)
	}

	// Column widths: clamped, the date column wide enough for its format.
	for i := range cols {
		col, _ := excelize.ColumnNumberToName(i + 1)
		w, err := f.GetColWidth(sh, col)
		if err != nil {
			t.Fatal(err)
		}
		if w < minColWidth || w > maxColWidth {
			t.Errorf("column %s width %v outside %d..%d", col, w, minColWidth, maxColWidth)
		}
	}
	if w, _ := f.GetColWidth(sh, "G"); w < 19 {
		t.Errorf("date column width %v < 19", w)
	}

	// Provenance.
	got, err := f.GetRows("Provenance")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"Key", "Value"},
		{"Created", "2025-01-02T03:04:05Z"},
		{"Clinsight version", "0.3.1"},
		{"Data source", "demo.sqlite"},
		{"Query", prov.Query},
		{"Models", "llama3.2:3b, nomic-embed-text"},
		{"Question", "How many patients over 65?"},
		{"Attempts", "3"},
		{"Table 1: Cohort", "3 rows on sheet(s) Cohort"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("provenance rows:\n got %q\nwant %q", got, want)
	}
	if typ, _ := f.GetCellType("Provenance", "B8"); typ != num {
		t.Errorf("attempts cell type %v, want a number", typ)
	}
	if !isBold(t, f, "Provenance", "A1") || !isBold(t, f, "Provenance", "B1") {
		t.Error("provenance header is not bold")
	}
	st := cellStyle(t, f, "Provenance", "B5")
	if st.Alignment == nil || !st.Alignment.WrapText {
		t.Error("provenance query value is not wrapped")
	}
}

func cellStyle(t *testing.T, f *excelize.File, sheet, cell string) *excelize.Style {
	t.Helper()
	id, err := f.GetCellStyle(sheet, cell)
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.GetStyle(id)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func isBold(t *testing.T, f *excelize.File, sheet, cell string) bool {
	t.Helper()
	st := cellStyle(t, f, sheet, cell)
	return st.Font != nil && st.Font.Bold
}

func TestLongStringsTruncated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "long.xlsx")
	long := strings.Repeat("x", MaxCellChars-utf16Len(TruncationMarker)-1) + "🩺" + strings.Repeat("y", 100)
	exact := strings.Repeat("é", MaxCellChars) // 2 bytes each in UTF-8, fits in UTF-16
	sum, err := WriteWorkbook(context.Background(), path, []Table{{
		Name: "Notes", Columns: []string{"note", "exact"},
		Rows: rowsOf([][]any{{long, exact}}),
	}}, Provenance{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.TruncatedCells != 1 {
		t.Errorf("TruncatedCells = %d, want 1", sum.TruncatedCells)
	}
	f := openBook(t, path)
	v, _ := f.GetCellValue("Notes", "A2")
	if n := len(utf16.Encode([]rune(v))); n > MaxCellChars {
		t.Errorf("cell has %d UTF-16 units", n)
	}
	// The emoji (two UTF-16 units) does not fit before the marker and is
	// not split.
	if want := long[:strings.Index(long, "🩺")] + TruncationMarker; v != want {
		t.Errorf("truncated cell ends %q, want it to end %q", v[len(v)-20:], want[len(want)-20:])
	}
	if v, _ := f.GetCellValue("Notes", "B2"); v != exact {
		t.Errorf("a string of exactly %d UTF-16 units was changed (length %d)", MaxCellChars, len(v))
	}
	rows, _ := f.GetRows("Provenance")
	last := rows[len(rows)-1]
	if last[0] != "Truncated cells" || !strings.HasPrefix(last[1], "1 cells were longer") {
		t.Errorf("provenance does not report the truncation: %q", last)
	}
}

func TestSplitAcrossSheets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "split.xlsx")
	tables := []Table{
		{Name: "Results", Columns: []string{"n", "square"}, Rows: generated(25, 2, func(i int, row []any) {
			row[0], row[1] = i+1, (i+1)*(i+1)
		})},
		{Name: "results", Columns: []string{"n"}, Rows: oneCol(18, nil)}, // exactly 2 full sheets
		{Name: "Empty", Columns: []string{"n"}},
	}
	sum, err := WriteWorkbook(context.Background(), path, tables, Provenance{}, Options{MaxRowsPerSheet: 10})
	if err != nil {
		t.Fatal(err)
	}
	wantSheets := []SheetSummary{
		{"Results", 0, 9}, {"Results (2)", 0, 9}, {"Results (3)", 0, 7},
		{"results (4)", 1, 9}, {"results (5)", 1, 9}, // continued from the table's own name
		{"Empty", 2, 0},
	}
	if !reflect.DeepEqual(sum.Sheets, wantSheets) || sum.Rows != 25+18 {
		t.Errorf("summary = %+v", sum)
	}
	f := openBook(t, path)
	wantList := []string{"Results", "Results (2)", "Results (3)", "results (4)", "results (5)", "Empty", "Provenance"}
	if got := f.GetSheetList(); !reflect.DeepEqual(got, wantList) {
		t.Fatalf("sheets = %v, want %v", got, wantList)
	}
	next := 1
	for _, s := range wantSheets[:3] {
		rows, err := f.GetRows(s.Name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != int(s.Rows)+1 || !reflect.DeepEqual(rows[0], []string{"n", "square"}) {
			t.Errorf("sheet %s: %d rows, header %q", s.Name, len(rows), rows[0])
			continue
		}
		for _, r := range rows[1:] {
			if want := []string{strconv.Itoa(next), strconv.Itoa(next * next)}; !reflect.DeepEqual(r, want) {
				t.Errorf("sheet %s: row %q, want %q", s.Name, r, want)
			}
			next++
		}
		if !isBold(t, f, s.Name, "A1") {
			t.Errorf("sheet %s: header not bold", s.Name)
		}
		if p, _ := f.GetPanes(s.Name); !p.Freeze || p.YSplit != 1 {
			t.Errorf("sheet %s: header not frozen", s.Name)
		}
	}
	if rows, _ := f.GetRows("Empty"); !reflect.DeepEqual(rows, [][]string{{"n"}}) {
		t.Errorf("empty table sheet = %q", rows)
	}
	prov, _ := f.GetRows("Provenance")
	if got := prov[len(prov)-3]; !reflect.DeepEqual(got, []string{"Table 1: Results", "25 rows on sheet(s) Results, Results (2), Results (3)"}) {
		t.Errorf("provenance table row = %q", got)
	}
	var filters []string
	for _, dn := range f.GetDefinedName() {
		if dn.Name == "_xlnm._FilterDatabase" {
			filters = append(filters, dn.Scope+"="+dn.RefersTo)
		}
	}
	wantFilters := []string{
		"Results='Results'!$A$1:$B$10", "Results (2)='Results (2)'!$A$1:$B$10", "Results (3)='Results (3)'!$A$1:$B$8",
		"results (4)='results (4)'!$A$1:$A$10", "results (5)='results (5)'!$A$1:$A$10", "Empty='Empty'!$A$1:$A$1",
	}
	if !reflect.DeepEqual(filters, wantFilters) {
		t.Errorf("autofilters = %q\nwant %q", filters, wantFilters)
	}
}

// TestSplitAtExcelLimit writes 1,200,000 rows with Excel's real sheet limit.
func TestSplitAtExcelLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1.2M rows")
	}
	const n = 1_200_000
	path := filepath.Join(t.TempDir(), "big.xlsx")
	start := time.Now()
	sum, err := WriteWorkbook(context.Background(), path, []Table{{Name: "Results", Columns: []string{"n"}, Rows: oneCol(n, nil)}}, Provenance{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d rows in %v", n, time.Since(start).Round(time.Millisecond))
	want := []SheetSummary{{"Results", 0, MaxSheetRows - 1}, {"Results (2)", 0, n - (MaxSheetRows - 1)}}
	if !reflect.DeepEqual(sum.Sheets, want) || sum.Rows != n {
		t.Fatalf("summary = %+v", sum)
	}
	// Check the raw sheet XML rather than loading a million rows through
	// excelize: first and last rows of each sheet, and their row counts.
	for i, c := range []struct{ first, last string }{
		{`<row r="2"><c r="A2"><v>1</v></c></row>`, `<row r="1048576"><c r="A1048576"><v>1048575</v></c></row>`},
		{`<row r="2"><c r="A2"><v>1048576</v></c></row>`, `<row r="151426"><c r="A151426"><v>1200000</v></c></row>`},
	} {
		x := zipEntry(t, path, fmt.Sprintf("xl/worksheets/sheet%d.xml", i+1))
		if !bytes.Contains(x, []byte(`<c r="A1" s="`)) || !bytes.Contains(x, []byte(c.first)) || !bytes.Contains(x, []byte(c.last+"</sheetData>")) {
			t.Errorf("sheet %d lacks its header, first row %s or last row %s", i+1, c.first, c.last)
		}
		if got, want := bytes.Count(x, []byte("<row ")), int(want[i].Rows)+1; got != want {
			t.Errorf("sheet %d has %d rows, want %d", i+1, got, want)
		}
	}
}

var errSource = errors.New("database went away")

func TestNoPartialFile(t *testing.T) {
	const old = "previous export"
	for _, tc := range []struct {
		name    string
		rows    func(cancel context.CancelFunc) iter.Seq2[[]any, error]
		cancel  func(ctx context.Context, cancel context.CancelFunc) Options
		wantErr error
		wantMsg string
	}{{
		name:    "iterator error",
		rows:    func(context.CancelFunc) iter.Seq2[[]any, error] { return oneCol(5000, errSource) },
		wantErr: errSource,
		wantMsg: `table "Results": row 5001: database went away`,
	}, {
		name: "cancelled while rows are read",
		rows: func(cancel context.CancelFunc) iter.Seq2[[]any, error] {
			return func(yield func([]any, error) bool) {
				for i := range 1_000_000 {
					if i == 2500 {
						cancel()
					}
					if !yield([]any{i}, nil) {
						return
					}
				}
			}
		},
		wantErr: context.Canceled,
		wantMsg: "context canceled",
	}, {
		name: "cancelled while the workbook is compressed",
		rows: func(context.CancelFunc) iter.Seq2[[]any, error] { return oneCol(100, nil) },
		cancel: func(_ context.Context, cancel context.CancelFunc) Options {
			return Options{Progress: func(int64) { cancel() }} // called after the last row
		},
		wantErr: context.Canceled,
	}, {
		name: "already cancelled",
		rows: func(cancel context.CancelFunc) iter.Seq2[[]any, error] {
			cancel()
			return oneCol(10, nil)
		},
		wantErr: context.Canceled,
	}} {
		for _, existing := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/existing=%v", tc.name, existing), func(t *testing.T) {
				dir, tmp := t.TempDir(), t.TempDir()
				path := filepath.Join(dir, "out.xlsx")
				if existing {
					if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				rows := tc.rows(cancel)
				opts := Options{}
				if tc.cancel != nil {
					opts = tc.cancel(ctx, cancel)
				}
				opts.TempDir = tmp
				_, err := WriteWorkbook(ctx, path, []Table{{Columns: []string{"n"}, Rows: rows}}, Provenance{}, opts)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "export "+path+": ") || !strings.Contains(err.Error(), tc.wantMsg) {
					t.Errorf("error %q lacks the path or %q", err, tc.wantMsg)
				}
				var want []string
				if existing {
					want = []string{"out.xlsx"}
					if b, _ := os.ReadFile(path); string(b) != old {
						t.Errorf("existing file changed to %q", b)
					}
				}
				if got := dirNames(t, dir); !reflect.DeepEqual(got, want) {
					t.Errorf("destination directory holds %v, want %v", got, want)
				}
				if got := dirNames(t, tmp); len(got) != 0 {
					t.Errorf("temp directory holds %v", got)
				}
			})
		}
	}
}

func TestReplacesExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.xlsx")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteWorkbook(context.Background(), path, []Table{{Columns: []string{"n"}, Rows: oneCol(3, nil)}}, Provenance{}, Options{}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := openBook(t, path).GetRows("Results"); len(rows) != 4 {
		t.Errorf("replaced workbook has %d rows", len(rows))
	}
}

func TestUnwritableDestination(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	readOnly := filepath.Join(dir, "ro")
	if err := os.Mkdir(readOnly, 0o555); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, msg string }{
		{"missing directory", filepath.Join(dir, "missing", "out.xlsx"), "cannot write in the folder " + filepath.Join(dir, "missing")},
		{"parent is a file", filepath.Join(file, "out.xlsx"), "cannot write in the folder " + file},
		{"read-only directory", filepath.Join(readOnly, "out.xlsx"), "cannot write in the folder " + readOnly},
		{"path is a directory", readOnly + ".xlsx", "destination is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "read-only directory" && os.Geteuid() == 0 {
				t.Skip("root ignores directory permissions")
			}
			if tc.name == "path is a directory" {
				if err := os.Mkdir(tc.path, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			_, err := WriteWorkbook(context.Background(), tc.path, []Table{{Columns: []string{"n"}, Rows: oneCol(3, nil)}}, Provenance{}, Options{})
			if err == nil || !strings.HasPrefix(err.Error(), "export "+tc.path+": "+tc.msg) {
				t.Errorf("err = %v, want it to start %q", err, "export "+tc.path+": "+tc.msg)
			}
		})
	}
}

func TestInvalidInput(t *testing.T) {
	dir := t.TempDir()
	good := []Table{{Columns: []string{"n"}, Rows: oneCol(3, nil)}}
	for _, tc := range []struct {
		name   string
		path   string
		tables []Table
		opts   Options
		msg    string
	}{
		{"extension", "out.csv", good, Options{}, "file name must end in .xlsx"},
		{"no tables", "out.xlsx", nil, Options{}, "no tables to export"},
		{"no columns", "out.xlsx", []Table{{Name: "T"}}, Options{}, `table "T" has no columns`},
		{"too many columns", "out.xlsx", []Table{{Name: "T", Columns: make([]string, MaxColumns+1)}}, Options{}, "more than Excel's 16384"},
		{"one row per sheet", "out.xlsx", good, Options{MaxRowsPerSheet: 1}, "MaxRowsPerSheet 1 is outside 2..1048576"},
		{"too many rows per sheet", "out.xlsx", good, Options{MaxRowsPerSheet: MaxSheetRows + 1}, "outside"},
		{"short row", "out.xlsx", []Table{{Name: "T", Columns: []string{"a", "b"}, Rows: oneCol(3, nil)}}, Options{}, `table "T": row 1 has 1 values for 2 columns`},
		{"missing temp dir", "out.xlsx", good, Options{TempDir: filepath.Join(dir, "nope")}, "temporary directory for rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.path)
			_, err := WriteWorkbook(context.Background(), path, tc.tables, Provenance{}, tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want it to contain %q", err, tc.msg)
			}
			if got := dirNames(t, dir); len(got) != 0 {
				t.Errorf("directory holds %v", got)
			}
		})
	}
}

func TestSanitizeSheetName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Cohort", "Cohort"},
		{"", "Results"},
		{"   ", "Results"},
		{"  padded  ", "padded"},
		{"a[b]c:d*e?f/g\\h", "a_b_c_d_e_f_g_h"},
		{"'quoted'", "_quoted_"},
		{"O'Brien", "O_Brien"},
		{"tab\there\nnew", "tab_here_new"},
		{"History", "History_"},
		{"history", "history_"},
		{"Historical", "Historical"},
		{strings.Repeat("a", 40), strings.Repeat("a", 31)},
		{strings.Repeat("é", 40), strings.Repeat("é", 31)},              // runes, not bytes
		{strings.Repeat("a", 30) + "🩺", strings.Repeat("a", 30)},        // no split surrogate pair
		{strings.Repeat("a", 29) + "🩺x", strings.Repeat("a", 29) + "🩺"}, // the emoji counts 2
		{strings.Repeat("a", 30) + " b", strings.Repeat("a", 30)},       // no trailing space after the cut
		{"患者コホート", "患者コホート"},
	} {
		if got := sanitizeSheetName(tc.in); got != tc.want {
			t.Errorf("sanitizeSheetName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSheetNamerUnique(t *testing.T) {
	long := strings.Repeat("b", 31)
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"distinct", []string{"A", "B"}, []string{"A", "B"}},
		{"duplicates", []string{"A", "A", "A"}, []string{"A", "A (2)", "A (3)"}},
		{"case-insensitive", []string{"Results", "RESULTS", "results"}, []string{"Results", "RESULTS (2)", "results (3)"}},
		{"suffix already taken", []string{"A (2)", "A", "A"}, []string{"A (2)", "A", "A (3)"}},
		{"long name shortened for the suffix", []string{long, long}, []string{long, strings.Repeat("b", 27) + " (2)"}},
		{"double-digit suffix", slicesRepeat(long, 11), append([]string{long}, func() []string {
			var s []string
			for n := 2; n <= 9; n++ {
				s = append(s, strings.Repeat("b", 27)+" ("+strconv.Itoa(n)+")")
			}
			return append(s, strings.Repeat("b", 26)+" (10)", strings.Repeat("b", 26)+" (11)")
		}()...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sn sheetNamer
			var got []string
			for _, in := range tc.in {
				name := sn.unique(in)
				if utf16Len(name) > maxSheetName {
					t.Errorf("%q is longer than %d", name, maxSheetName)
				}
				got = append(got, name)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// stringer has a pointer receiver, so a nil *stringer must not be called.
type stringer struct{ s string }

func (s *stringer) String() string { return s.s }

type code string

func TestCellConversion(t *testing.T) {
	wb := &workbook{styles: styles{date: 7}}
	date := func(serial float64) any { return excelize.Cell{StyleID: 7, Value: serial} }
	n := 42
	for _, tc := range []struct {
		in   any
		want any
	}{
		{nil, nil},
		{"s", "s"},
		{7, int64(7)},
		{int8(-7), int64(-7)},
		{uint16(7), int64(7)},
		{int64(1) << 53, int64(1) << 53},
		{int64(1)<<53 + 1, "9007199254740993"},
		{int64(math.MinInt64), "-9223372036854775808"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{1.5, 1.5},
		{math.NaN(), "NaN"},
		{float32(math.Inf(1)), "Infinity"},
		{true, true},
		{[]byte("héllo\tworld\n"), "héllo\tworld\n"},
		{[]byte{0xff}, "0xff"},
		{[]byte("nul\x00"), "0x6e756c00"},
		{blob{0xab}, "0xab"},
		{&stringer{"x"}, "x"},
		{(*stringer)(nil), nil},
		{errors.New("boom"), "boom"},
		{code("E11"), "E11"},
		{&n, int64(42)},
		{(*int)(nil), nil},
		{sql.NullString{String: "v", Valid: true}, "v"},
		{sql.NullFloat64{}, nil},
		{sql.NullTime{Time: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), Valid: true}, date(36526)},
		{struct{ A int }{1}, "{1}"},
		{time.Duration(90) * time.Second, "1m30s"},
		{time.Time{}, nil},
		{time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC), date(1)},
		{time.Date(1900, 2, 28, 12, 0, 0, 0, time.UTC), date(59.5)},
		{time.Date(1900, 3, 1, 0, 0, 0, 0, time.UTC), date(61)},
		{time.Date(2024, 1, 1, 6, 0, 0, 0, time.UTC), date(45292.25)},
		{time.Date(2150, 6, 1, 0, 0, 0, 0, time.UTC), date(91464)}, // MIMIC-style shifted dates
		{time.Date(2024, 1, 1, 6, 0, 0, 0, time.FixedZone("", -5*3600)), date(45292.25)},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), date(2958465)},
		{time.Date(1899, 12, 31, 23, 0, 0, 0, time.UTC), "1899-12-31T23:00:00Z"},
		{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), "10000-01-01T00:00:00Z"},
	} {
		got, err := wb.cell(tc.in)
		if err != nil {
			t.Errorf("cell(%#v): %v", tc.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("cell(%#v) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		cut  bool
	}{
		{"short", "abc", false},
		{"exact ASCII", strings.Repeat("a", MaxCellChars), false},
		{"one over", strings.Repeat("a", MaxCellChars+1), true},
		{"exact 3-byte runes", strings.Repeat("患", MaxCellChars), false},
		{"surrogate pairs", strings.Repeat("🩺", MaxCellChars/2+1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, cut := truncate(tc.in)
			if cut != tc.cut {
				t.Fatalf("cut = %v, want %v", cut, tc.cut)
			}
			if !cut {
				if got != tc.in {
					t.Error("changed a string that fits")
				}
				return
			}
			if n := utf16Len(got); n > MaxCellChars || n < MaxCellChars-1 {
				t.Errorf("%d UTF-16 units", n)
			}
			if !strings.HasSuffix(got, TruncationMarker) || !strings.HasPrefix(tc.in, strings.TrimSuffix(got, TruncationMarker)) {
				t.Error("not a prefix followed by the marker")
			}
		})
	}
}

func TestMarkZip64(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "z.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, name := range []string{"small", "xl/worksheets/sheet1.xml"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(w, "%s", strings.Repeat(name, 100))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	// A limit of 1000 bytes stands in for 4 GiB: only the sheet reaches it.
	if err := markZip64(f, 1000); err != nil {
		t.Fatal(err)
	}
	fi, _ := f.Stat()
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		off, _ := zf.DataOffset()
		var v [2]byte
		if _, err := f.ReadAt(v[:], off-30-int64(len(zf.Name))+4); err != nil {
			t.Fatal(err)
		}
		want := uint16(20)
		if zf.Name != "small" {
			want = 45
		}
		if got := binary.LittleEndian.Uint16(v[:]); got != want {
			t.Errorf("%s: version %d, want %d", zf.Name, got, want)
		}
		r, _ := zf.Open()
		if b, err := io.ReadAll(r); err != nil || len(b) != 100*len(zf.Name) {
			t.Errorf("%s unreadable after marking: %v", zf.Name, err)
		}
	}
}

func TestGroupThousands(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1048575: "1,048,575", -1234: "-1,234"} {
		if got := groupThousands(in); got != want {
			t.Errorf("groupThousands(%d) = %q, want %q", in, got, want)
		}
	}
}

func FuzzSanitizeSheetName(f *testing.F) {
	for _, s := range []string{"", "Results", "a[b]:c", "'x'", "History", strings.Repeat("🩺", 20), " \t ", "\xff\xfe", "Sheet1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		name := sanitizeSheetName(in)
		if name == "" || utf16Len(name) > maxSheetName || name != strings.TrimSpace(name) || strings.ContainsAny(name, `[]:*?/\'`) {
			t.Fatalf("sanitizeSheetName(%q) = %q breaks Excel's rules", in, name)
		}
		if again := sanitizeSheetName(name); again != name {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, name, again)
		}
		var sn sheetNamer
		sn.unique(name)
		second := sn.unique(name)
		if strings.EqualFold(second, name) || utf16Len(second) > maxSheetName {
			t.Fatalf("unique(%q) twice gave %q", name, second)
		}
		x := excelize.NewFile()
		defer x.Close()
		for _, s := range []string{name, second} {
			if _, err := x.NewSheet(s); err != nil {
				t.Fatalf("excelize refuses %q: %v", s, err)
			}
		}
	})
}

func TestBeforeCommitSeesTheFinalBytesAndCanStopTheExport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.xlsx")
	tables := []Table{{Name: "R", Columns: []string{"a"}, Rows: rowsOf([][]any{{1}, {2}})}}
	var seen string
	sum, err := WriteWorkbook(context.Background(), path, tables, Provenance{}, Options{BeforeCommit: func(h string, s Summary) error {
		if s.Rows != 2 {
			t.Errorf("summary rows = %d", s.Rows)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Error("the workbook is in place before BeforeCommit returned")
		}
		seen = h
		return nil
	}})
	if err != nil || sum.Rows != 2 {
		t.Fatal(sum, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%x", sha256.Sum256(b)); got != seen {
		t.Errorf("BeforeCommit hash %s, file %s", seen, got)
	}
	// An error from BeforeCommit leaves no file and keeps an old one.
	other := filepath.Join(dir, "other.xlsx")
	stop := errors.New("audit trail not writable")
	if _, err := WriteWorkbook(context.Background(), other, tables, Provenance{}, Options{BeforeCommit: func(string, Summary) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Error("a stopped export left its file")
	}
	if _, err := WriteWorkbook(context.Background(), path, tables, Provenance{}, Options{BeforeCommit: func(string, Summary) error { return stop }}); !errors.Is(err, stop) {
		t.Fatalf("err = %v", err)
	}
	if b2, _ := os.ReadFile(path); !bytes.Equal(b, b2) {
		t.Error("a stopped export changed the existing file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}
