package impression

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// allocated is the bytes fn allocates (the heap it asks for, freed or not).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// repeatReader yields n bytes of pat repeated, without holding them.
type repeatReader struct {
	pat string
	n   int64
	off int64
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.off >= r.n {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && r.off < r.n {
		c := copy(p[k:min(len(p), k+int(r.n-r.off))], r.pat[r.off%int64(len(r.pat)):])
		k += c
		r.off += int64(c)
	}
	return k, nil
}

// prose is report text with its sentences on lines of their own.
const prose = "The heart is normal in size. There is a small left pleural effusion.\n"

// writeHugeCSV writes a CSV whose first report has a findings field of
// size bytes of prose (quoted, so with line breaks inside) and whose
// second report is ordinary; it returns the line the second report starts
// on.
func writeHugeCSV(t *testing.T, path string, size int64, tail string) int {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("uid,findings,impression,MeSH\nr1,\"")
	if _, err := io.Copy(w, &repeatReader{pat: prose, n: size}); err != nil {
		t.Fatal(err)
	}
	w.WriteString("\",Mild cardiomegaly.,Cardiomegaly/mild\n" + tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return 2 + int(size/int64(len(prose))) + 1
}

// TestImportHugeFindingsField imports a CSV with one 50 MB findings field:
// the import allocates a bounded amount, stores the field cut to 64 KB
// with the cut mark, notes the cut in the result, and goes on with the
// next report at its own line.
func TestImportHugeFindingsField(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	path := filepath.Join(t.TempDir(), "huge.csv")
	const size = 50 << 20
	writeHugeCSV(t, path, size, "r2,\"Small left pleural effusion. The heart is normal in size. No pneumothorax is seen.\",Small left effusion.,Pleural Effusion/left\n")
	var res ImportResult
	var err error
	alloc := allocated(func() { res, err = Import(ctx, db, path, ImportOptions{}) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("importing a 50 MB field allocated %.1f MB", float64(alloc)/(1<<20))
	if alloc > 16<<20 {
		t.Errorf("importing a 50 MB field allocated %.1f MB, want under 16 MB", float64(alloc)/(1<<20))
	}
	if res.Reports != 2 || res.Positive[PleuralEffusion] != 2 {
		t.Errorf("result %+v", res)
	}
	var findings string
	if err := db.QueryRow("SELECT findings FROM " + ReportsTable + " WHERE uid = 'r1'").Scan(&findings); err != nil {
		t.Fatal(err)
	}
	if len(findings) > maxFieldBytes+len(cutMark) || !strings.HasSuffix(findings, cutMark) || !strings.HasPrefix(findings, strings.TrimSpace(prose)) {
		t.Errorf("stored findings: %d bytes, ending %q", len(findings), findings[max(0, len(findings)-20):])
	}
	want := Cut{File: "huge.csv", Line: 2, UID: "r1", Field: "findings", Bytes: size}
	if res.CutFields != 1 || len(res.Cuts) != 1 || res.Cuts[0].Kept < maxFieldBytes-4 || res.Cuts[0].Kept > maxFieldBytes {
		t.Fatalf("cuts %d %+v", res.CutFields, res.Cuts)
	}
	want.Kept = res.Cuts[0].Kept
	if res.Cuts[0] != want {
		t.Errorf("cut %+v, want %+v", res.Cuts[0], want)
	}
	if got := res.Cuts[0].String(); got != `huge.csv line 2: field "findings" of r1 cut from 50.0 MB to 63 KB` && got != `huge.csv line 2: field "findings" of r1 cut from 50.0 MB to 64 KB` {
		t.Errorf("cut note %q", got)
	}
}

// TestHugeFieldKeepsLineNumbers: the line breaks of a cut field still
// count, so an error after it names the line of the file.
func TestHugeFieldKeepsLineNumbers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.csv")
	line := writeHugeCSV(t, path, 1<<20, "r2,ok,fine,normal\nr3,\"unterminated,x\n")
	_, err := Import(context.Background(), openDB(t), path, ImportOptions{})
	var ie *datasets.ImportError
	if !errors.As(err, &ie) || ie.Line != line+1 || !strings.Contains(err.Error(), "extraneous or missing") {
		t.Errorf("got %v (line %d), want the error at line %d", err, lineOf(err), line+1)
	}
}

// TestReadHugeLineIsNotHeld reads a 200 MB line without a line break: one
// field is cut to its bound; a record of 200 MB of short fields is refused
// naming its line. Neither is held in memory.
func TestReadHugeLineIsNotHeld(t *testing.T) {
	ctx := context.Background()
	const size = 200 << 20
	var got []rawReport
	var err error
	alloc := allocated(func() {
		in := io.MultiReader(strings.NewReader("uid,findings,impression\nr1,"), &repeatReader{pat: "no acute cardiopulmonary abnormality ", n: size})
		err = readReports(ctx, in, "line.csv", formatCSV, func(rr rawReport) error { got = append(got, rr); return nil })
	})
	t.Logf("a 200 MB field: %.1f MB allocated", float64(alloc)/(1<<20))
	if err != nil || len(got) != 1 {
		t.Fatalf("%v, %d reports", err, len(got))
	}
	if alloc > 8<<20 {
		t.Errorf("reading a 200 MB field allocated %.1f MB, want under 8 MB", float64(alloc)/(1<<20))
	}
	if f := got[0].findings; len(f) > maxFieldBytes+len(cutMark) || !strings.HasSuffix(f, cutMark) {
		t.Errorf("findings %d bytes", len(f))
	}
	if len(got[0].cuts) != 1 || got[0].cuts[0].Bytes != size || got[0].cuts[0].Line != 2 || got[0].cuts[0].Field != "findings" {
		t.Errorf("cuts %+v", got[0].cuts)
	}

	// A record of many fields, or of fields under the bound adding up past
	// the record bound.
	for _, c := range []struct{ pat, want string }{
		{"a,", "the record on line 3 has more than 4096 fields"},
		{strings.Repeat("x", 20000) + ",", "the record on line 3, even with its fields cut to 64 KB, is larger than 1.0 MB"},
	} {
		alloc = allocated(func() {
			in := io.MultiReader(strings.NewReader("uid,findings\nr1,ok\n"), &repeatReader{pat: c.pat, n: size})
			err = readReports(ctx, in, "commas.csv", formatCSV, func(rawReport) error { return nil })
		})
		t.Logf("a 200 MB record of %d-byte fields: %.1f MB allocated", len(c.pat), float64(alloc)/(1<<20))
		var le *csvLineError
		if !errors.Is(err, errRecordTooLarge) || !errors.As(err, &le) || le.line != 3 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("200 MB of %d-byte fields: %v", len(c.pat), err)
		}
		// The CSV reader grows its buffers by a quarter at a time: about
		// ten times the record it reads before the bound stops it.
		if alloc > 16<<20 {
			t.Errorf("refusing a 200 MB record allocated %.1f MB, want under 16 MB", float64(alloc)/(1<<20))
		}
	}
}

// TestReadWholeFilesBounded: a plain-text report and an Open-i XML report
// are refused past the record bound without being held, and an XML
// section over the field bound is cut with a note.
func TestReadWholeFilesBounded(t *testing.T) {
	ctx := context.Background()
	const size = 200 << 20
	for _, c := range []struct {
		name, head, format, want string
		line                     int
	}{
		{"huge.txt", "FINDINGS: ", formatText, "the file is larger than 1.0 MB", 0},
		{"huge.xml", "<root>\n<eCitation><uId id=\"CXR1\"/><AbstractText Label=\"FINDINGS\">", formatXML, "the report starting on line 2 is larger than 1.0 MB", 2},
		{"whole.xml", "<root><AbstractText Label=\"FINDINGS\">", formatXML, "the file is larger than 1.0 MB", 1},
	} {
		var err error
		alloc := allocated(func() {
			in := io.MultiReader(strings.NewReader(c.head), &repeatReader{pat: "The lungs are clear. ", n: size})
			err = readReports(ctx, in, c.name, c.format, func(rawReport) error { return nil })
		})
		t.Logf("%s: %.1f MB allocated", c.name, float64(alloc)/(1<<20))
		var le *csvLineError
		gotLine := 0
		if errors.As(err, &le) {
			gotLine = le.line
		}
		if !errors.Is(err, errRecordTooLarge) || !strings.Contains(err.Error(), c.want) || gotLine != c.line {
			t.Errorf("%s: %v (line %d), want %q at line %d", c.name, err, gotLine, c.want, c.line)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: refusing a 200 MB report allocated %.1f MB", c.name, float64(alloc)/(1<<20))
		}
	}

	// An XML section of 1 MB is cut, with a note.
	xml := "<eCitation><uId id=\"CXR9\"/><AbstractText Label=\"FINDINGS\">" + strings.Repeat("The lungs are clear. ", 50000) +
		"</AbstractText><AbstractText Label=\"IMPRESSION\">Normal chest.</AbstractText></eCitation>"
	var got []rawReport
	if err := readReports(ctx, strings.NewReader(xml), "r.xml", formatXML, func(rr rawReport) error { got = append(got, rr); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got[0].findings) > maxFieldBytes+len(cutMark) || got[0].impression != "Normal chest." ||
		len(got[0].cuts) != 1 || got[0].cuts[0].Field != "findings" || got[0].cuts[0].UID != "CXR9" || got[0].cuts[0].Bytes < 1000000 {
		t.Errorf("got %d reports, cuts %+v", len(got), got[0].cuts)
	}
}

// TestReadReportsChecksContextPerReport: a cancellation stops reading at
// the next report, not after hundreds.
func TestReadReportsChecksContextPerReport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sb strings.Builder
	sb.WriteString("uid,findings,impression\n")
	for i := range 100 {
		sb.WriteString(strconv.Itoa(i) + ",The heart is normal in size.,Normal.\n")
	}
	n := 0
	err := readReports(ctx, strings.NewReader(sb.String()), "r.csv", formatCSV, func(rawReport) error {
		n++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 1 {
		t.Errorf("after a cancellation at the first report: %v, %d reports read", err, n)
	}
}

// TestLabelerHugeTextBounded labels 20 MB of text (prose, and one
// sentence without a full stop) in bounded memory, reading only its start.
func TestLabelerHugeTextBounded(t *testing.T) {
	for _, c := range []struct{ name, pat string }{
		{"prose", "Mild cardiomegaly. No pleural effusion or pneumothorax. "},
		{"one sentence", "no opacity or effusion and possible edema , heart size is enlarged "},
	} {
		text := strings.Repeat(c.pat, (20<<20)/len(c.pat))
		var labels Labels
		alloc := allocated(func() { labels = LabelText(text) })
		t.Logf("%s: labelling 20 MB allocated %.1f MB", c.name, float64(alloc)/(1<<20))
		if alloc > 16<<20 {
			t.Errorf("%s: labelling 20 MB allocated %.1f MB, want under 16 MB", c.name, float64(alloc)/(1<<20))
		}
		if want := LabelText(text[:maxLabelBytes]); labels != want {
			t.Errorf("%s: labels %v, want those of the text's start %v", c.name, labels, want)
		}
	}
}

// TestCSVClipKeepsSmallFields: a CSV whose fields are all under the bound
// reads the same through the cutter (quotes, doubled quotes, line breaks
// in fields, CRLF, tabs).
func TestCSVClipKeepsSmallFields(t *testing.T) {
	in := "uid,findings,impression\r\n1,\"a \"\"quoted\"\" word,\nand a line\",x\r\n2,,\"\"\r\n3,plain,\"\"\"\"\n"
	var got []rawReport
	if err := readCSVReports(strings.NewReader(in), "s.csv", func(rr rawReport) error { got = append(got, rr); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].findings != "a \"quoted\" word,\nand a line" || got[0].impression != "x" || got[2].impression != `"` ||
		got[1].line != 4 || got[2].line != 5 || len(got[0].cuts) != 0 {
		t.Errorf("got %+v", got)
	}
	// Small bounds: each field is cut at a character, doubled quotes kept
	// whole.
	got = nil
	in = "uid\tfindings\timpression\n1\t\"abcdefghi\"\"\"\"x\"\taaaaaaaaaéxyz\n"
	if err := readCSVReportsLimits(strings.NewReader(in), "t.tsv", 10, 1<<10, func(rr rawReport) error { got = append(got, rr); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].findings != "abcdefghi\""+cutMark || got[0].impression != "aaaaaaaaaé"+cutMark || len(got[0].cuts) != 2 {
		t.Errorf("got %+v", got)
	}
}

// FuzzCSVClip: through the cutter, a CSV the CSV reader reads gives the
// same records, each field the same or a prefix of it followed by the cut
// mark, on the same lines of the file; with bounds nothing reaches, the
// text passes unchanged.
func FuzzCSVClip(f *testing.F) {
	f.Add("uid,findings,impression\r\n1,\"a \"\"q\"\",\nb\",x\r\n2,,\"\"\r\n")
	f.Add("a,\"bbbbbbbbbbbbbbbb\nbbbbbbbb\"\nc,ééééééé\n")
	f.Fuzz(func(t *testing.T, s string) {
		all, err := io.ReadAll(newCSVClip(strings.NewReader(s), ',', 1<<20, 1<<30))
		if err != nil || string(all) != s {
			t.Fatalf("unbounded clip changed the text: %q → %q, %v", s, all, err)
		}
		read := func(r io.Reader, clip *csvClip) (recs [][]string, lines []int, err error) {
			cr := csv.NewReader(r)
			cr.FieldsPerRecord = -1
			for {
				rec, err := cr.Read()
				if errors.Is(err, io.EOF) {
					return recs, lines, nil
				}
				if err != nil {
					return nil, nil, err
				}
				line, _ := cr.FieldPos(0)
				if clip != nil {
					line = clip.fileLine(line)
				}
				recs, lines = append(recs, rec), append(lines, line)
			}
		}
		want, wantLines, err := read(strings.NewReader(s), nil)
		if err != nil {
			return
		}
		clip := newCSVClip(strings.NewReader(s), ',', 8, 1<<30)
		got, gotLines, err := read(clip, clip)
		if err != nil || len(got) != len(want) {
			t.Fatalf("%q: %d records, %v; want %d", s, len(got), err, len(want))
		}
		for i := range want {
			if len(got[i]) != len(want[i]) || gotLines[i] != wantLines[i] {
				t.Fatalf("%q record %d: %q at line %d, want %q at line %d", s, i, got[i], gotLines[i], want[i], wantLines[i])
			}
			for j, w := range want[i] {
				g := got[i][j]
				if g != w && !(strings.HasSuffix(g, cutMark) && strings.HasPrefix(w, strings.TrimSuffix(g, cutMark))) {
					t.Fatalf("%q record %d field %d: %q, want %q or a prefix of it", s, i, j, g, w)
				}
			}
		}
	})
}
