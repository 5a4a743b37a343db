package datasets

import (
	"context"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
)

// utf16Bytes encodes s as UTF-16 in the given byte order, with a byte order
// mark when bom is set.
func utf16Bytes(s string, order binary.ByteOrder, bom bool) string {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xfeff}, units...)
	}
	out := make([]byte, 2*len(units))
	for i, u := range units {
		order.PutUint16(out[2*i:], u)
	}
	return string(out)
}

// TestImportCSVUTF16 imports UTF-16 files, as spreadsheet programs save
// "Unicode text", with and without a byte order mark: the table holds the
// same names and values as the UTF-8 file.
func TestImportCSVUTF16(t *testing.T) {
	const content = "id,name,score\r\n1,Zoë,1.5\r\n2,漢字 😀,2\r\n"
	want := [][]string{{"1", "Zoë", "1.5"}, {"2", "漢字 😀", "2"}}
	for _, tc := range []struct{ name, file, content string }{
		{"little-endian with BOM", "le.csv", utf16Bytes(content, binary.LittleEndian, true)},
		{"big-endian with BOM", "be.csv", utf16Bytes(content, binary.BigEndian, true)},
		{"little-endian without BOM", "lenobom.csv", utf16Bytes(content, binary.LittleEndian, false)},
		{"big-endian without BOM", "benobom.csv", utf16Bytes(content, binary.BigEndian, false)},
		{"gzip of little-endian with BOM", "gz.csv.gz", string(gzipBytes(t, utf16Bytes(content, binary.LittleEndian, true)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newImportDB(t)
			p := writeTestFile(t, t.TempDir(), tc.file, tc.content)
			res, err := ImportCSV(context.Background(), db, p, CSVOptions{Table: "t"})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range res.Columns {
				names = append(names, c.Name)
			}
			if !reflect.DeepEqual(names, []string{"id", "name", "score"}) || res.Rows != 2 {
				t.Errorf("columns %q, %d rows", names, res.Rows)
			}
			if got := queryStrings(t, db, "SELECT id, name, score FROM t ORDER BY id"); !reflect.DeepEqual(got, want) {
				t.Errorf("rows %q, want %q", got, want)
			}
			if got := columnTypes(t, db, "t"); !reflect.DeepEqual(got, []string{"INTEGER", "TEXT", "REAL"}) {
				t.Errorf("types %v", got)
			}
		})
	}
}

// TestImportCSVHeaderMessages covers header problems that SQLite reported
// obscurely: a NUL byte ("unrecognized token" with no line) and more columns
// than a SQLite table can have ("too many columns").
func TestImportCSVHeaderMessages(t *testing.T) {
	wide := func(n int) string {
		cols := make([]string, n)
		vals := make([]string, n)
		for i := range cols {
			cols[i] = "c" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + strings.Repeat("0", i/26%5)
			vals[i] = "1"
		}
		return strings.Join(cols, ",") + "\n" + strings.Join(vals, ",") + "\n"
	}
	for _, tc := range []struct {
		name, file, content string
		want                []string
	}{
		{"NUL in the header", "nul.csv", "a,b\x00c,d\n1,2,3\n",
			[]string{"import nul.csv line 1:", "column 2", "NUL byte", "binary"}},
		{"NUL in a quoted header field", "nulq.csv", "\"a\",\"\x00\"\n1,2\n",
			[]string{"line 1:", "column 2", "NUL byte"}},
		{"2001 columns", "wide.csv", wide(2001),
			[]string{"import wide.csv line 1:", "2001 columns", "2000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := newImportDB(t)
			p := writeTestFile(t, t.TempDir(), tc.file, tc.content)
			_, err := ImportCSV(context.Background(), db, p, CSVOptions{})
			wantImportError(t, err, tc.file, 1, tc.want...)
			if tableExists(t, db, TableNameFromFile(tc.file)) {
				t.Error("table left behind")
			}
		})
	}

	// The limit itself is fine.
	db := newImportDB(t)
	p := writeTestFile(t, t.TempDir(), "w2000.csv", wide(2000))
	res, err := ImportCSV(context.Background(), db, p, CSVOptions{})
	if err != nil || len(res.Columns) != 2000 || res.Rows != 1 {
		t.Errorf("2000 columns: %d columns, %d rows, %v", len(res.Columns), res.Rows, err)
	}
}
