package meta

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// bcgCSV is metadat's dat.bcg (13 BCG vaccine trials) in its original
// columns: tpos and tneg are the vaccinated with and without tuberculosis,
// cpos and cneg the unvaccinated.
const bcgCSV = `trial,author,year,tpos,tneg,cpos,cneg
1,Aronson,1948,4,119,11,128
2,Ferguson & Simes,1949,6,300,29,274
3,Rosenthal et al,1960,3,228,11,209
4,Hart & Sutherland,1977,62,13536,248,12619
5,Frimodt-Moller et al,1973,33,5036,47,5761
6,Stein & Aronson,1953,180,1361,372,1079
7,Vandiviere et al,1973,8,2537,10,619
8,TPT Madras,1980,505,87886,499,87892
9,Coetzee & Berjak,1968,29,7470,45,7232
10,Rosenthal et al,1961,17,1699,65,1600
11,Comstock et al,1974,186,50448,141,27197
12,Comstock & Webster,1969,5,2493,3,2338
13,Comstock et al,1976,27,16886,29,17825
`

// bcgSpec reads bcgCSV: ai=tpos, bi=tneg, ci=cpos, di=cneg.
func bcgSpec(t *testing.T) InputSpec {
	t.Helper()
	cols, err := ParseColumns("study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg", Binary)
	if err != nil {
		t.Fatal(err)
	}
	return InputSpec{Kind: Binary, Columns: cols}
}

// writeXLSX writes rows to the named sheets of a new workbook, in order.
func writeXLSX(t *testing.T, path string, sheets []string, rows map[string][][]any) {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, name := range sheets {
		if i == 0 {
			if err := f.SetSheetName("Sheet1", name); err != nil {
				t.Fatal(err)
			}
		} else if _, err := f.NewSheet(name); err != nil {
			t.Fatal(err)
		}
		for r, row := range rows[name] {
			cell, _ := excelize.CoordinatesToCellName(1, r+1)
			if err := f.SetSheetRow(name, cell, &row); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := f.SaveAs(path); err != nil {
		t.Fatal(err)
	}
}

func TestLoadFileCSVAndTSV(t *testing.T) {
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "bcg.csv")
	if err := os.WriteFile(csvPath, []byte(bcgCSV), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := LoadFile(csvPath, bcgSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 13 || st[0].Label != "Aronson" || st[0].N1I != 123 || st[12].N2I != 17854 {
		t.Fatalf("studies: %+v", st[0])
	}
	res := mustAnalyze(t, st, Options{Measure: RR, Method: REML})
	near(t, "est", res.Est, -0.7145323, 1e-6)

	tsvPath := filepath.Join(dir, "bcg.tsv")
	if err := os.WriteFile(tsvPath, []byte(strings.ReplaceAll(bcgCSV, ",", "\t")), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := LoadFile(tsvPath, bcgSpec(t)); err != nil || len(st) != 13 {
		t.Errorf("TSV: %d studies, %v", len(st), err)
	}
}

func TestLoadFileXLSX(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "studies.xlsx")
	writeXLSX(t, path, []string{"Notes", "Data"}, map[string][][]any{
		"Notes": {{"study", "ai", "n1i", "ci", "n2i"}, {"First-sheet study", 1, 10, 2, 10}},
		"Data": {
			{}, // a blank row above the header is skipped
			{"Study", "AI", "N1I", "CI", "N2I", "comment"},
			{"Aronson", 4, 123, 11, 139},                     // trailing empty cells
			{"Ferguson & Simes", 6, 306, 29, 303, "ok", nil}, // an empty cell beyond the header
			{"Rosenthal et al", 3.0, 231, 11, 220, "x"},
		},
	})
	// The first sheet by default.
	st, err := LoadFile(path, InputSpec{})
	if err != nil || len(st) != 1 || st[0].Label != "First-sheet study" {
		t.Fatalf("first sheet: %+v %v", st, err)
	}
	// A named sheet, matched without regard to case.
	st, err = LoadFile(path, InputSpec{Sheet: "data"})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st[0].AI != 4 || st[0].N2I != 139 || st[2].AI != 3 || st[2].Row != 3 {
		t.Errorf("named sheet: %+v", st)
	}

	// Validation errors name the data row and study, as for CSV.
	bad := filepath.Join(dir, "bad.xlsx")
	writeXLSX(t, bad, []string{"S"}, map[string][][]any{"S": {
		{"study", "ai", "n1i", "ci", "n2i"}, {"Good", 1, 10, 2, 10}, {"Too many", 12, 10, 2, 10},
	}})
	_, err = LoadFile(bad, InputSpec{})
	if err == nil || err.Error() != `data row 2 (study "Too many"): ai = 12 events is more than the group total n1i = 10` {
		t.Errorf("row error: %v", err)
	}
	if ErrorCode(err) != EINVALID {
		t.Errorf("code %q", ErrorCode(err))
	}

	_, err = LoadFile(path, InputSpec{Sheet: "Results"})
	if err == nil || !strings.Contains(err.Error(), `sheet "Results" not found in studies.xlsx (sheets: "Notes", "Data")`) {
		t.Errorf("missing sheet: %v", err)
	}
}

func TestLoadFileErrors(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.xlsx")
	if err := os.WriteFile(junk, []byte("not a zip"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "missing.csv"), "cannot open the data file: open " + filepath.Join(dir, "missing.csv")},
		{junk, "cannot read the Excel workbook"},
		{filepath.Join(dir, "old.xls"), "old.xls is in the old Excel 97–2003 format (.xls); save it as .xlsx or CSV"},
		{filepath.Join(dir, "data.sav"), "cannot read data.sav: use a .csv, .tsv, .txt or .xlsx file"},
	} {
		_, err := LoadFile(c.path, InputSpec{})
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || ErrorCode(err) != EINVALID {
			t.Errorf("%s: %v (code %q), want %q", filepath.Base(c.path), err, ErrorCode(err), c.want)
		}
	}
	if _, err := LoadFile(filepath.Join(dir, "x.csv"), InputSpec{Kind: 9}); ErrorCode(err) != EINVALID {
		t.Errorf("bad spec: %v", err)
	}
}

func TestParseColumns(t *testing.T) {
	for _, c := range []struct {
		in   string
		kind Kind
		want Columns
	}{
		{"", Binary, Columns{}},
		{"tpos, n1 ,cpos,n2", Binary, Columns{AI: "tpos", N1I: "n1", CI: "cpos", N2I: "n2"}},
		{"m_t,s_t,n_t,m_c,s_c,n_c", Continuous, Columns{M1I: "m_t", SD1I: "s_t", N1I: "n_t", M2I: "m_c", SD2I: "s_c", N2I: "n_c"}},
		{"hr,lo,hi", Generic, Columns{Est: "hr", LB: "lo", UB: "hi"}},
		{"Study=author,AI=tpos,bi=tneg,ci=cpos,di=cneg", 0, Columns{Study: "author", AI: "tpos", BI: "tneg", CI: "cpos", DI: "cneg"}},
		{"est=hr,sei=se", Generic, Columns{Est: "hr", SE: "se"}},
	} {
		got, err := ParseColumns(c.in, c.kind)
		if err != nil || got != c.want {
			t.Errorf("ParseColumns(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, c := range []struct {
		in   string
		kind Kind
		want string
	}{
		{"a,b,c", Binary, `3 names given but binary data take 4 (ai,n1i,ci,n2i)`},
		{"a,b,c,d", 0, "name the fields"},
		{"a,,c,d", Binary, "the name for n1i is empty"},
		{"ai=x,n1i", Binary, `"n1i" is not of the form field=column`},
		{"ai=x,ai=y", Binary, "ai is mapped twice"},
		{"zi=x", Binary, `unknown field "zi"`},
	} {
		if _, err := ParseColumns(c.in, c.kind); err == nil || !strings.Contains(err.Error(), c.want) || ErrorCode(err) != EINVALID {
			t.Errorf("ParseColumns(%q): %v, want %q", c.in, err, c.want)
		}
	}
}

func TestNonEventsNamedExplicitlyWin(t *testing.T) {
	// Both totals (default names) and non-events: explicit bi/di are used.
	in := "study,ai,n1i,bi,ci,n2i,di\nA,1,99,9,2,99,8\n"
	st, err := LoadCSV(strings.NewReader(in), InputSpec{Columns: Columns{BI: "bi", DI: "di"}})
	if err != nil || st[0].N1I != 10 || st[0].N2I != 10 {
		t.Errorf("explicit bi/di: %+v %v", st, err)
	}
	st, err = LoadCSV(strings.NewReader(in), InputSpec{})
	if err != nil || st[0].N1I != 99 {
		t.Errorf("default: totals win: %+v %v", st, err)
	}
}

// FuzzParseColumns checks that any mapping text either parses or fails with
// an EINVALID error, never panics.
func FuzzParseColumns(f *testing.F) {
	for _, s := range []string{"", "a,b,c,d", "study=author,ai=tpos", "=x", "ai=,", ",,,", "m,s,n,m2,s2,n2"} {
		f.Add(s, int(Binary))
	}
	f.Fuzz(func(t *testing.T, s string, kind int) {
		_, err := ParseColumns(s, Kind(kind%4))
		if err != nil && ErrorCode(err) != EINVALID {
			t.Errorf("ParseColumns(%q): %v with code %q", s, err, ErrorCode(err))
		}
	})
}
