package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// allCells returns every cell value of every sheet of a workbook.
func allCells(t *testing.T, path string) []string {
	t.Helper()
	wb, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	var out []string
	for _, s := range wb.GetSheetList() {
		rows, err := wb.GetRows(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			out = append(out, r...)
		}
	}
	return out
}

// TestExportIdentifiersThroughExpressions: an identifier passed through an
// expression in the select list (name concatenated with an empty string,
// upper(name), substr(ssn, …), CAST(mrn AS TEXT), json_object('a', mrn), a
// date of birth formatted by strftime) is still an identifier: the
// unconfirmed export names it, and the confirmed one (streamed and in
// memory) writes no raw value of it to any cell of the workbook.
func TestExportIdentifiersThroughExpressions(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	dir := t.TempDir()
	csv := filepath.Join(dir, "people.csv")
	var b strings.Builder
	b.WriteString("mrn,name,ssn,dob,ward\n")
	for i := range 20 {
		fmt.Fprintf(&b, "M%06d,Person Number%02d,123-45-%04d,19%02d-03-%02d,ward%d\n", 100000+i, i, 6000+i, 40+i, 10+i, i%3)
	}
	if err := os.WriteFile(csv, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSV(ctx, csv, datasets.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, ImportedSourceName)
	raw := rawQuery(t, ws, src, "SELECT mrn, name, ssn, dob FROM people")
	for _, tc := range []struct{ name, query, col string }{
		{"concat", "SELECT name || '' AS x, ward FROM people", "x"},
		{"upper", "SELECT upper(name) AS x, ward FROM people", "x"},
		{"substr", "SELECT substr(ssn, 1, 11) AS x, ward FROM people", "x"},
		{"cast", "SELECT CAST(mrn AS TEXT) AS x, ward FROM people", "x"},
		{"json", "SELECT json_object('a', mrn) AS x, ward FROM people", "x"},
		{"strftime", "SELECT strftime('%Y-%m-%d', dob) AS x, ward FROM people", "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ws.Data().ExportQuery(ctx, filepath.Join(dir, tc.name+"-refused.xlsx"), src, tc.query,
				datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{Source: src, Query: tc.query})
			var pl *disclosure.PatientLevelError
			if !errors.As(err, &pl) || !strings.Contains(strings.Join(pl.Direct(), ","), tc.col) {
				t.Fatalf("unconfirmed export: want the identifier column %s named, got %v", tc.col, err)
			}
			opts := ExportOptions{Source: src, Query: tc.query, PatientLevel: true}
			paths := []string{filepath.Join(dir, tc.name+"-query.xlsx"), filepath.Join(dir, tc.name+"-mem.xlsx")}
			if _, err := ws.Data().ExportQuery(ctx, paths[0], src, tc.query, datasets.RunnerOptions{}, export.Provenance{}, opts); err != nil {
				t.Fatal(err)
			}
			if _, err := ws.Data().Export(ctx, paths[1], rawQuery(t, ws, src, tc.query), export.Provenance{Query: tc.query}, opts); err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				for _, cell := range allCells(t, p) {
					for _, r := range raw.Rows {
						for _, v := range r {
							s := fmt.Sprint(v)
							if strings.Contains(strings.ToUpper(cell), strings.ToUpper(s)) {
								t.Fatalf("%s: cell %q holds the identifier %q", filepath.Base(p), cell, s)
							}
						}
					}
				}
			}
		})
	}
}
