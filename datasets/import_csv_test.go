package datasets

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clinsight/clinsight/internal/progress"
)

func TestTableNameFromFile(t *testing.T) {
	tests := []struct{ path, want string }{
		{"labevents.csv.gz", "labevents"},
		{"/data/hosp/d_icd_diagnoses.csv", "d_icd_diagnoses"},
		{"Lab Events (2024).CSV", "lab_events_2024"},
		{"2024-data.csv", "t_2024_data"},
		{"sqlite_stat1.csv", "t_sqlite_stat1"},
		{"données.csv", "donn_es"},
		{"notes.tsv", "notes"},
		{"plain", "plain"},
		{"___.csv", "data"},
	}
	for _, tt := range tests {
		if got := TableNameFromFile(tt.path); got != tt.want {
			t.Errorf("TableNameFromFile(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestCleanHeader(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"id", "name"}, []string{"id", "name"}},
		{[]string{" id ", "\tname"}, []string{"id", "name"}},
		{[]string{"\ufeffid", "x"}, []string{"id", "x"}},
		{[]string{"a", "", " ", "b"}, []string{"a", "col_2", "col_3", "b"}},
		{[]string{"name", "Name", "name", "name_2"}, []string{"name", "Name_2", "name_3", "name_2_2"}},
		{[]string{"", "col_1"}, []string{"col_1", "col_1_2"}},
		{[]string{"with space", "quote\"d"}, []string{"with space", "quote\"d"}},
	}
	for _, tt := range tests {
		if got := CleanHeader(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("CleanHeader(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClassifyValue(t *testing.T) {
	tests := []struct {
		v    string
		want valueClass
	}{
		{"", classEmpty},
		{"0", classInt}, {"7", classInt}, {"-12", classInt}, {"10000032", classInt},
		{"9223372036854775807", classInt}, {"-9223372036854775808", classInt},
		{"9223372036854775808", classText}, {"123456789012345678901234", classText},
		{"007", classText}, {"+1", classText}, {"-0", classText}, {" 1", classText}, {"1 ", classText},
		{"1.5", classReal}, {"-0.25", classReal}, {"1.50", classReal}, {"0.0", classReal},
		{"1e5", classReal}, {"2.5E-3", classReal}, {"1e+10", classReal},
		{"1.", classText}, {".5", classText}, {"01.5", classText}, {"1e", classText},
		{"1e999", classText}, {"NaN", classText}, {"Inf", classText}, {"-", classText},
		{"2180-07-23", classText}, {"2180-07-23 12:35:00", classText}, {"12:35", classText},
		{"1,000", classText}, {"0x10", classText}, {"abc", classText},
	}
	for _, tt := range tests {
		if got := classifyValue(tt.v); got != tt.want {
			t.Errorf("classifyValue(%q) = %d, want %d", tt.v, got, tt.want)
		}
	}
}

func TestImportCSVTypeInference(t *testing.T) {
	tests := []struct {
		name  string
		csv   string
		types []string
	}{
		{"integers", "a\n1\n-2\n30\n", []string{"INTEGER"}},
		{"reals", "a\n1.5\n2\n-3e2\n", []string{"REAL"}},
		{"leading zeros stay text", "zip\n007\n123\n", []string{"TEXT"}},
		{"plus sign stays text", "a\n+1\n2\n", []string{"TEXT"}},
		{"ISO dates stay text", "d,t\n2180-07-23,2180-07-23 12:35:00\n2181-01-01,2181-01-01 00:00:00\n", []string{"TEXT", "TEXT"}},
		{"empties do not count", "a,b,c\n,1.5,\n2,,\n,3,\n", []string{"INTEGER", "REAL", "TEXT"}},
		{"one text value makes text", "a\n1\n2\nthree\n", []string{"TEXT"}},
		{"huge integers stay text", "a\n1\n99999999999999999999\n", []string{"TEXT"}},
		{"header only", "a,b\n", []string{"TEXT", "TEXT"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newImportDB(t)
			p := writeTestFile(t, t.TempDir(), "t.csv", tt.csv)
			res, err := ImportCSV(context.Background(), db, p, CSVOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := columnTypes(t, db, "t"); !reflect.DeepEqual(got, tt.types) {
				t.Errorf("declared types = %v, want %v", got, tt.types)
			}
			var got []string
			for _, c := range res.Columns {
				got = append(got, c.Type)
				if !c.Inferred {
					t.Errorf("column %s: Inferred = false", c.Name)
				}
			}
			if !reflect.DeepEqual(got, tt.types) {
				t.Errorf("result types = %v, want %v", got, tt.types)
			}
			if want := int64(strings.Count(tt.csv, "\n") - 1); res.Rows != want || countRows(t, db, "t") != want {
				t.Errorf("rows = %d (table %d), want %d", res.Rows, countRows(t, db, "t"), want)
			}
		})
	}
}

func TestImportCSVStoredValues(t *testing.T) {
	db := newImportDB(t)
	content := "id,zip,score,note,day\n" +
		"1,007,1.50,plain,2180-07-23\n" +
		"2,,2,\"with, comma\",\n" +
		"3,123,,\"two\nlines\",2180-07-24\n" +
		"4,\"\",-0.5,\"say \"\"hi\"\"\",\n"
	p := writeTestFile(t, t.TempDir(), "values.csv", content)
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := queryStrings(t, db, `SELECT id, typeof(id), zip, typeof(zip), score, typeof(score), note, day FROM "values" ORDER BY id`)
	want := [][]string{
		{"1", "integer", "007", "text", "1.5", "real", "plain", "2180-07-23"},
		{"2", "integer", "NULL", "null", "2", "real", "with, comma", "NULL"},
		{"3", "integer", "123", "text", "NULL", "null", "two\nlines", "2180-07-24"},
		{"4", "integer", "NULL", "null", "-0.5", "real", `say "hi"`, "NULL"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows =\n%q\nwant\n%q", got, want)
	}
	wantNulls := map[string]int64{"id": 0, "zip": 2, "score": 1, "note": 0, "day": 2}
	for _, c := range res.Columns {
		if c.Nulls != wantNulls[c.Name] {
			t.Errorf("column %s: Nulls = %d, want %d", c.Name, c.Nulls, wantNulls[c.Name])
		}
	}
}

func TestImportCSVGzip(t *testing.T) {
	const content = "subject_id,gender\n10000032,F\n10000048,M\n"
	dir := t.TempDir()
	tests := []struct {
		name string
		path string
	}{
		{"csv.gz", writeGzipFile(t, dir, "patients.csv.gz", content)},
		{"gzip detected by magic bytes", writeGzipFile(t, dir, "patients_gz.csv", content)},
		{"plain csv", writeTestFile(t, dir, "patients_plain.csv", content)},
		{"multi-member gzip", writeTestFile(t, dir, "patients_multi.csv.gz",
			string(gzipBytes(t, "subject_id,gender\n10000032,F\n"))+string(gzipBytes(t, "10000048,M\n")))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newImportDB(t)
			res, err := ImportCSV(context.Background(), db, tt.path, CSVOptions{Table: "patients"})
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(tt.path)
			if res.Rows != 2 || res.Bytes != fi.Size() {
				t.Errorf("rows %d bytes %d, want 2 and %d", res.Rows, res.Bytes, fi.Size())
			}
			got := queryStrings(t, db, "SELECT subject_id, typeof(subject_id), gender FROM patients ORDER BY 1")
			want := [][]string{{"10000032", "integer", "F"}, {"10000048", "integer", "M"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rows = %q, want %q", got, want)
			}
		})
	}
}

func TestImportCSVExplicitTypes(t *testing.T) {
	db := newImportDB(t)
	p := writeTestFile(t, t.TempDir(), "dx.csv",
		"icd_code,charttime,valuenum,seq\n0010,2180-07-23 12:35:00,5,1\n4019,2180-07-24 08:00:00,,2\n")
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{
		ColumnTypes: map[string]string{"ICD_CODE": "TEXT", "charttime": "TIMESTAMP", "valuenum": "REAL"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := columnTypes(t, db, "dx"), []string{"TEXT", "TIMESTAMP", "REAL", "INTEGER"}; !reflect.DeepEqual(got, want) {
		t.Errorf("declared types = %v, want %v", got, want)
	}
	inferred := []bool{false, false, false, true}
	for i, c := range res.Columns {
		if c.Inferred != inferred[i] {
			t.Errorf("column %s: Inferred = %v, want %v", c.Name, c.Inferred, inferred[i])
		}
	}
	// The driver turns TIMESTAMP columns into time.Time when scanning: read
	// the stored text.
	got := queryStrings(t, db, "SELECT icd_code, typeof(icd_code), charttime || '', typeof(charttime), valuenum, typeof(valuenum) FROM dx ORDER BY seq")
	want := [][]string{
		{"0010", "text", "2180-07-23 12:35:00", "text", "5", "real"},
		{"4019", "text", "2180-07-24 08:00:00", "text", "NULL", "null"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows = %q, want %q", got, want)
	}

	for _, bad := range []map[string]string{
		{"nosuchcolumn": "TEXT"},
		{"icd_code": "TEXT); DROP TABLE x; --"},
	} {
		_, err := ImportCSV(context.Background(), db, p, CSVOptions{Table: "dx2", ColumnTypes: bad})
		wantImportError(t, err, "dx.csv", 0)
		if tableExists(t, db, "dx2") {
			t.Errorf("ColumnTypes %v: table dx2 created despite the error", bad)
		}
	}
}

func TestImportCSVStrictAndMismatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,n\n")
	for i := 1; i <= 50; i++ {
		v := fmt.Sprint(i)
		if i == 40 {
			v = "n/a"
		}
		fmt.Fprintf(&b, "%d,%s\n", i, v)
	}
	p := writeTestFile(t, t.TempDir(), "m.csv", b.String())

	db := newImportDB(t)
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{SampleRows: 10})
	if err != nil {
		t.Fatal(err)
	}
	if res.Columns[1].Type != TypeInteger || res.Columns[1].Mismatches != 1 {
		t.Errorf("column n = %+v, want INTEGER with 1 mismatch", res.Columns[1])
	}
	if got := queryStrings(t, db, "SELECT n, typeof(n) FROM m WHERE id = 40"); !reflect.DeepEqual(got, [][]string{{"n/a", "text"}}) {
		t.Errorf("row 40 = %q, want n/a stored as text", got)
	}

	_, err = ImportCSV(context.Background(), db, p, CSVOptions{Table: "strict", SampleRows: 10, Strict: true})
	wantImportError(t, err, "m.csv", 41, `column "n": value "n/a" is not of type INTEGER`)
	if tableExists(t, db, "strict") {
		t.Error("table strict left behind after a failed import")
	}
}

func TestImportCSVIndexes(t *testing.T) {
	db := newImportDB(t)
	p := writeTestFile(t, t.TempDir(), "labs.csv", "subject_id,itemid,value\n1,50912,1.2\n2,50971,4\n")
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{Indexes: []string{"SUBJECT_ID", "itemid", "subject_id"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"idx_labs_subject_id", "idx_labs_itemid"}
	if !reflect.DeepEqual(res.Indexes, want) {
		t.Errorf("indexes = %v, want %v", res.Indexes, want)
	}
	got := queryStrings(t, db, "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'labs' ORDER BY name")
	if !reflect.DeepEqual(got, [][]string{{"idx_labs_itemid"}, {"idx_labs_subject_id"}}) {
		t.Errorf("indexes in schema = %q", got)
	}

	_, err = ImportCSV(context.Background(), db, p, CSVOptions{Table: "labs2", Indexes: []string{"hadm_id"}})
	wantImportError(t, err, "labs.csv", 0, `"hadm_id", which is not a column`)
	if tableExists(t, db, "labs2") {
		t.Error("table labs2 left behind after a failed import")
	}
}

func TestImportCSVReplace(t *testing.T) {
	ctx := context.Background()
	db := newImportDB(t)
	dir := t.TempDir()
	three := writeTestFile(t, dir, "three.csv", "a\n1\n2\n3\n")
	five := writeTestFile(t, dir, "five.csv", "b,c\n1,x\n2,y\n3,z\n4,w\n5,v\n")
	ragged := writeTestFile(t, dir, "ragged.csv", "b,c\n1,x\n2\n")

	if _, err := ImportCSV(ctx, db, three, CSVOptions{Table: "t"}); err != nil {
		t.Fatal(err)
	}
	_, err := ImportCSV(ctx, db, five, CSVOptions{Table: "T"})
	wantImportError(t, err, "five.csv", 0, "already exists", `"T"`)
	if !errors.Is(err, ErrTableExists) {
		t.Errorf("error %v does not wrap ErrTableExists", err)
	}
	if n := countRows(t, db, "t"); n != 3 {
		t.Errorf("refused import changed the table: %d rows, want 3", n)
	}

	if _, err := ImportCSV(ctx, db, five, CSVOptions{Table: "t", Replace: true}); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, "t"); n != 5 {
		t.Errorf("after replace: %d rows, want 5", n)
	}

	_, err = ImportCSV(ctx, db, ragged, CSVOptions{Table: "t", Replace: true, SampleRows: 1})
	wantImportError(t, err, "ragged.csv", 3, "expected 2 fields, found 1")
	if n := countRows(t, db, "t"); n != 5 {
		t.Errorf("failed replace did not keep the old table: %d rows, want 5", n)
	}

	if _, err := db.Exec("CREATE VIEW v AS SELECT 1"); err != nil {
		t.Fatal(err)
	}
	_, err = ImportCSV(ctx, db, three, CSVOptions{Table: "v", Replace: true})
	wantImportError(t, err, "three.csv", 0, "existing view")
}

func TestImportCSVMalformed(t *testing.T) {
	dir := t.TempDir()
	big := func(n, badLine int, bad string) string {
		var b strings.Builder
		b.WriteString("id,name,value\n")
		for line := 2; line <= n+1; line++ {
			if line == badLine {
				b.WriteString(bad)
				continue
			}
			fmt.Fprintf(&b, "%d,name %d,%d.5\n", line, line, line)
		}
		return b.String()
	}
	bigGzip := gzipBytes(t, big(20000, 0, ""))
	corruptMid := append([]byte(nil), bigGzip...)
	for i := len(corruptMid) / 2; i < len(corruptMid)/2+64; i++ {
		corruptMid[i] = 0xff
	}
	corruptHeader := append([]byte(nil), bigGzip...)
	corruptHeader[2] = 0x07 // compression method other than deflate
	notGzip := "id\n1\n"

	tests := []struct {
		name, file, content string
		opts                CSVOptions
		line                int // 0: no line expected
		want                []string
	}{
		{"ragged row in the sample", "ragged.csv", "a,b\n1,2\n3\n4,5\n", CSVOptions{}, 3,
			[]string{"import ragged.csv line 3: expected 2 fields, found 1"}},
		{"ragged row mid-file", "labevents.csv", big(5000, 4003, "4003,x\n"), CSVOptions{SampleRows: 100}, 4003,
			[]string{"import labevents.csv line 4003: expected 3 fields, found 2"}},
		{"too many fields mid-file", "wide.csv", big(3000, 2500, "1,2,3,4\n"), CSVOptions{SampleRows: 100}, 2500,
			[]string{"expected 3 fields, found 4"}},
		{"ragged row after a multi-line record", "multi.csv", "id,note\n1,\"a\nb\nc\"\n2\n", CSVOptions{}, 5,
			[]string{"expected 2 fields, found 1"}},
		{"bare quote", "quote.csv", "a,b\n1,x\"y\n", CSVOptions{}, 2, []string{"bare \""}},
		{"unterminated quote", "open.csv", big(50, 30, "30,\"never closed\n"), CSVOptions{SampleRows: 5}, 30,
			[]string{"quote"}},
		{"empty file", "empty.csv", "", CSVOptions{}, 0, []string{"header row is required"}},
		{"empty .gz file", "empty.csv.gz", "", CSVOptions{}, 0, []string{"header row is required"}},
		{"gzip of nothing", "nothing.csv.gz", string(gzipBytes(t, "")), CSVOptions{}, 0, []string{"header row is required"}},
		{"blank lines only", "blank.csv", "\n\n\n", CSVOptions{}, 0, []string{"header row is required"}},
		{"corrupt gzip header", "hdr.csv.gz", string(corruptHeader), CSVOptions{}, 1, []string{"corrupt gzip", "invalid header"}},
		{"corrupt gzip stream", "mid.csv.gz", string(corruptMid), CSVOptions{SampleRows: 100}, 0, []string{"line"}},
		{"truncated gzip", "cut.csv.gz", string(bigGzip[:len(bigGzip)/2]), CSVOptions{SampleRows: 100}, 0,
			[]string{"corrupt gzip stream after line", "unexpected EOF"}},
		{"named .gz but not gzip", "plain.csv.gz", notGzip, CSVOptions{}, 1, []string{"gzip magic bytes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newImportDB(t)
			p := writeTestFile(t, dir, tt.file, tt.content)
			_, err := ImportCSV(context.Background(), db, p, tt.opts)
			ie := wantImportError(t, err, tt.file, tt.line, tt.want...)
			if (tt.name == "corrupt gzip stream" || tt.name == "truncated gzip") && ie.Line < 2 {
				t.Errorf("error %q: line %d, want the last line reached", err, ie.Line)
			}
			if tableExists(t, db, TableNameFromFile(tt.file)) {
				t.Errorf("table %s left behind after a failed import", TableNameFromFile(tt.file))
			}
		})
	}
}

func TestImportCSVBadPaths(t *testing.T) {
	db := newImportDB(t)
	dir := t.TempDir()

	_, err := ImportCSV(context.Background(), db, filepath.Join(dir, "missing.csv"), CSVOptions{})
	wantImportError(t, err, "missing.csv", 0, "file not found")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}

	sub := filepath.Join(dir, "folder.csv")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err = ImportCSV(context.Background(), db, sub, CSVOptions{})
	wantImportError(t, err, "folder.csv", 0, "is a directory")

	notDir := writeTestFile(t, dir, "plain.csv", "a\n1\n")
	_, err = ImportCSV(context.Background(), db, filepath.Join(notDir, "inner.csv"), CSVOptions{})
	wantImportError(t, err, "inner.csv", 0, "cannot read file", "not a directory")

	if os.Geteuid() == 0 {
		t.Log("running as root: permissions do not deny reads, unreadable-file case skipped")
	} else {
		p := writeTestFile(t, dir, "secret.csv", "a\n1\n")
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
		_, err = ImportCSV(context.Background(), db, p, CSVOptions{})
		wantImportError(t, err, "secret.csv", 0, "cannot open file")
		if !errors.Is(err, fs.ErrPermission) {
			t.Errorf("error %v does not wrap fs.ErrPermission", err)
		}
	}
	for _, name := range []string{"missing", "folder", "secret"} {
		if tableExists(t, db, name) {
			t.Errorf("table %s created", name)
		}
	}
}

// bigCSV returns a CSV of n data rows with an integer, a text and a real column.
func bigCSV(n int) string {
	var b strings.Builder
	b.WriteString("id,label,value\n")
	for i := range n {
		fmt.Fprintf(&b, "%d,item %d,%d.25\n", i, i%97, i)
	}
	return b.String()
}

func TestImportCSVCancel(t *testing.T) {
	dir := t.TempDir()
	p := writeTestFile(t, dir, "big.csv", bigCSV(30000))

	t.Run("from the progress callback", func(t *testing.T) {
		db := newImportDB(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var calls atomic.Int32
		_, err := ImportCSV(ctx, db, p, CSVOptions{SampleRows: 500, Progress: func(progress.Report) {
			if calls.Add(1) == 3 {
				cancel()
			}
		}})
		wantImportError(t, err, "big.csv", 0, "context canceled")
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not wrap context.Canceled", err)
		}
		if tableExists(t, db, "big") {
			t.Error("table left behind after cancellation")
		}
	})

	t.Run("before the start", func(t *testing.T) {
		db := newImportDB(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := ImportCSV(ctx, db, p, CSVOptions{})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not wrap context.Canceled", err)
		}
		if tableExists(t, db, "big") {
			t.Error("table left behind after cancellation")
		}
	})

	t.Run("while replacing keeps the old table", func(t *testing.T) {
		db := newImportDB(t)
		old := writeTestFile(t, dir, "old.csv", "x\n1\n2\n")
		if _, err := ImportCSV(context.Background(), db, old, CSVOptions{Table: "big"}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := ImportCSV(ctx, db, p, CSVOptions{Replace: true, Progress: func(p progress.Report) {
			if p.Done > 0 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v does not wrap context.Canceled", err)
		}
		if n := countRows(t, db, "big"); n != 2 {
			t.Errorf("old table has %d rows after a cancelled replace, want 2", n)
		}
		// The connection is usable afterwards: no transaction left open.
		if _, err := ImportCSV(context.Background(), db, old, CSVOptions{Table: "again"}); err != nil {
			t.Errorf("import after a cancelled one: %v", err)
		}
	})
}

func TestImportCSVProgress(t *testing.T) {
	db := newImportDB(t)
	dir := t.TempDir()
	p := writeGzipFile(t, dir, "labs.csv.gz", bigCSV(25000))
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	var reports []progress.Report
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{Progress: func(p progress.Report) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 25000 || countRows(t, db, "labs") != 25000 {
		t.Fatalf("rows = %d, want 25000", res.Rows)
	}
	if len(reports) < 3 {
		t.Fatalf("%d progress reports, want several", len(reports))
	}
	var last int64
	for _, r := range reports {
		if r.Stage != "labs" || r.Total != fi.Size() || r.Unit != "bytes" {
			t.Fatalf("report %+v: want stage labs, total %d bytes", r, fi.Size())
		}
		if r.Done < last || r.Done > r.Total {
			t.Fatalf("report %+v after done %d: not monotonic within total", r, last)
		}
		last = r.Done
	}
	if last != fi.Size() {
		t.Errorf("final done = %d, want the file size %d", last, fi.Size())
	}
}

func FuzzImportCSV(f *testing.F) {
	seeds := []string{
		"a,b\n1,2\n3,4\n",
		"a,b\n1,2\n3\n",
		"id,note\n1,\"multi\nline\"\n2,\"q \"\"x\"\"\"\n",
		",,\n,,\n",
		"a\n\"open\n",
		"\ufeffname,name\n007,+1\n",
		"x\n1e999\nNaN\n-0\n9223372036854775808\n",
		"",
		"\x1f\x8b\x08\x00garbage",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add(gzipBytes(f, "a,b\n1,x\n2,y\n"))
	db := newImportDB(f)
	dir := f.TempDir()
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, data []byte) {
		i := n.Add(1)
		p := filepath.Join(dir, fmt.Sprintf("in%d.csv", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		table := fmt.Sprintf("fuzz_%d", i)
		res, err := ImportCSV(context.Background(), db, p, CSVOptions{Table: table, SampleRows: 3})
		if err != nil {
			var ie *ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v (%T) is not an *ImportError", err, err)
			}
			if tableExists(t, db, table) {
				t.Fatalf("table left behind after error %v", err)
			}
			return
		}
		if got := countRows(t, db, table); got != res.Rows {
			t.Fatalf("table has %d rows, result says %d", got, res.Rows)
		}
		if got := len(columnTypes(t, db, table)); got != len(res.Columns) {
			t.Fatalf("table has %d columns, result says %d", got, len(res.Columns))
		}
		// Without a gzip header the data rows are what encoding/csv reads.
		if len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
			if err == nil && len(recs) > 0 && int64(len(recs)-1) != res.Rows {
				t.Fatalf("imported %d rows, encoding/csv reads %d", res.Rows, len(recs)-1)
			}
		}
		if _, err := db.Exec("DROP TABLE " + QuoteIdent(table)); err != nil {
			t.Fatal(err)
		}
	})
}
