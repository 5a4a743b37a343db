package trials

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hugeText is n bytes of trial-like prose with no age or sex in it.
func hugeText(n int) string {
	const para = "The study evaluates the efficacy of the treatment on the primary outcome over the follow-up period of the trial. "
	return strings.Repeat(para, n/len(para)+1)[:n]
}

// writeZip writes a zip archive holding one member.
func writeZip(t testing.TB, path, member string, content []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(member)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hugeRecord is a BIRCO-style JSONL line whose text is n bytes, with an
// age statement after the first after bytes (none when after < 0).
func hugeRecord(id string, n, after int) []byte {
	text := hugeText(n)
	if after >= 0 {
		text = text[:after] + " Women aged 40 to 70 years. " + text[after:]
	}
	return []byte(`{"_id": "` + id + `", "title": "A huge record", "text": "` + text + `"}` + "\n")
}

// TestImportHugeRecord imports a zip holding one JSONL trial with a 20 MB
// text (the case: 39 s and 1.5 GB): the text is cut to the field
// bound with a note in the import result, the import allocates a small
// multiple of the bound (never the whole line), and the other trial of
// the file is imported whole.
func TestImportHugeRecord(t *testing.T) {
	dir := t.TempDir()
	const size = 20 << 20
	line := hugeRecord("NCT09000001", size, -1)
	small := `{"_id": "NCT09000002", "title": "Small", "text": "Adults aged 18 to 65 years with asthma."}` + "\n"
	zipPath := filepath.Join(dir, "huge.zip")
	writeZip(t, zipPath, "corpus.jsonl", append(line, small...))
	db := openDB(t)
	var res ImportResult
	var err error
	n := allocated(func() {
		res, err = Import(context.Background(), db, []string{zipPath}, ImportOptions{})
	})
	if err != nil || res.Trials != 2 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if n > 20*maxFieldBytes+16<<20 {
		t.Errorf("importing a %d MB record allocated %d MB", size>>20, n>>20)
	}
	tr, err := Get(context.Background(), db, "NCT09000001")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Description) > maxFieldBytes+utf8.UTFMax+len(cutMark) || !strings.HasSuffix(tr.Description, cutMark) ||
		!strings.HasPrefix(tr.Description, hugeText(1000)) {
		t.Errorf("stored description: %d bytes, ends %q", len(tr.Description), tr.Description[max(0, len(tr.Description)-40):])
	}
	if len(res.Cuts) != 1 {
		t.Fatalf("cuts %+v, want one", res.Cuts)
	}
	c := res.Cuts[0]
	if c.ID != "NCT09000001" || c.Field != "text" || c.Line != 1 || c.Bytes < size || c.Kept > maxFieldBytes+utf8.UTFMax || c.Kept < maxFieldBytes ||
		!strings.HasSuffix(c.File, "huge.zip!corpus.jsonl") {
		t.Errorf("cut %+v", c)
	}
	if s := c.String(); !strings.Contains(s, `"text" of NCT09000001`) || !strings.Contains(s, "20.0 MB") {
		t.Errorf("cut note %q", s)
	}
	other, err := Get(context.Background(), db, "NCT09000002")
	if err != nil || other.Description != "Adults aged 18 to 65 years with asthma." || other.MinAge != 18 || other.MaxAge != 65 {
		t.Errorf("the small record: %+v %v", other, err)
	}
}

// TestImportHugeLineIsNotHeld reads a JSONL line of 64 MB (a long text in
// many fields) through the reader: each field is cut as it streams, so
// reading allocates far less than the line.
func TestImportHugeLineIsNotHeld(t *testing.T) {
	const size = 64 << 20
	var b strings.Builder
	b.WriteString(`{"_id": "NCT09000003", "title": "T", "metadata": {"brief_summary": "`)
	b.WriteString(hugeText(size / 2))
	b.WriteString(`", "inclusion_criteria": "`)
	b.WriteString(hugeText(size / 2))
	b.WriteString(`"}}`)
	in := b.String()
	var got []Trial
	var cuts []Cut
	n := allocated(func() {
		err := readStream(context.Background(), strings.NewReader(in), "big.jsonl", nil, func(tr Trial, c []Cut) error {
			got = append(got, tr)
			cuts = append(cuts, c...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != 1 || len(cuts) < 2 || cuts[0].Field != "brief_summary" || cuts[1].Field != "inclusion_criteria" ||
		cuts[0].Bytes != size/2 || cuts[0].Kept != maxFieldBytes {
		t.Fatalf("%d trials, cuts %v", len(got), cuts)
	}
	if s := got[0].Summary; len(s) > maxFieldBytes+len(cutMark) || !strings.HasSuffix(s, cutMark) {
		t.Errorf("summary of %d bytes", len(s))
	}
	if n > size/4 {
		t.Errorf("reading a %d MB line allocated %d MB", size>>20, n>>20)
	}
}

// TestImportRecordTooLarge checks a record that is large by its
// structure, not by one text (a million conditions): refused with a clear
// error, in bounded memory, and nothing is imported.
func TestImportRecordTooLarge(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(`{"_id": "NCT09000004", "title": "T", "metadata": {"diseases_list": [`)
	for i := 0; i < 4<<20; i++ {
		b.WriteString(`"asthma",`)
	}
	b.WriteString(`"asthma"]}}` + "\n")
	path := writeFile(t, dir, "wide.jsonl", b.String())
	db := openDB(t)
	var err error
	n := allocated(func() { _, err = Import(context.Background(), db, []string{path}, ImportOptions{}) })
	var re *RecordError
	if !errors.As(err, &re) || re.Line != 1 || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("error %v", err)
	}
	if n > 3*maxRecordBytes+16<<20 {
		t.Errorf("refusing a %d MB record allocated %d MB", b.Len()>>20, n>>20)
	}
	if c, _ := Count(context.Background(), db); c != 0 {
		t.Errorf("%d trials after a failed import", c)
	}
}

// TestZipBomb imports an archive member that inflates far beyond its
// compressed size: a clear error once the bound is read, not the whole
// member.
func TestZipBomb(t *testing.T) {
	dir := t.TempDir()
	// 64 MB of one byte compress to about 64 KB: a ratio of 1,000.
	content := bytes.Repeat([]byte(" "), 64<<20)
	content[0] = '{'
	path := filepath.Join(dir, "bomb.zip")
	writeZip(t, path, "bomb.jsonl", content)
	lim := &readLimits{memberMin: 1 << 20}
	var read int64
	err := func() error {
		ctr := newCounter()
		defer func() { read = ctr.Load() }()
		_, err := readZip(context.Background(), path, ctr, lim, func(Trial, []Cut) error { return nil })
		return err
	}()
	if err == nil || !strings.Contains(err.Error(), "zip bomb") || !strings.Contains(err.Error(), "bomb.zip!bomb.jsonl") {
		t.Errorf("error %v", err)
	}
	_ = read
	// A member whose header claims more than the bound is refused before
	// it is read.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "big.jsonl", Method: zip.Store, CompressedSize64: 2, UncompressedSize64: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("{}"))
	zw.Close()
	liar := filepath.Join(dir, "liar.zip")
	os.WriteFile(liar, buf.Bytes(), 0o644)
	if _, err := Import(context.Background(), openDB(t), []string{liar}, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "zip bomb") {
		t.Errorf("declared 1 TB: %v", err)
	}
}

// TestInferenceReadsABoundedPrefix gives the age and sex inference a 20 MB
// description whose only age statement comes after the bound: it is not
// seen (the inference reads a bounded prefix), and the same statement
// within the bound is.
func TestInferenceReadsABoundedPrefix(t *testing.T) {
	late := Trial{ID: "NCT1", Title: "T", Description: hugeText(20 << 20)[:maxInferBytes+1000] + " Women aged 40 to 70 years. " + hugeText(20<<20)}
	start := time.Now()
	d := inferDemographics(&late)
	t.Logf("inference over %d MB: %v", len(late.Description)>>20, time.Since(start))
	if d.found || d.minAge != 0 || d.sex != SexAll {
		t.Errorf("an age after the bound was read: %+v", d)
	}
	early := Trial{ID: "NCT1", Title: "T", Description: hugeText(maxInferBytes-1000) + " Women aged 40 to 70 years. " + hugeText(20<<20)}
	if d := inferDemographics(&early); !d.found || d.minAge != 40 || d.maxAge != 70 || d.sex != SexFemale {
		t.Errorf("the age within the bound: %+v", d)
	}
	// The criteria are bounded as well: an age in the 5,000th criterion is
	// not read.
	crit := Trial{ID: "NCT1", Title: "T"}
	for i := 0; i < 5000; i++ {
		crit.Inclusion = append(crit.Inclusion, "Stable disease for at least one month")
	}
	crit.Inclusion = append(crit.Inclusion, "Aged 40 to 70 years")
	if d := inferDemographics(&crit); d.found {
		t.Errorf("an age after the criteria bound was read: %+v", d)
	}
}

// BenchmarkImportHugeRecord imports a zip with one JSONL trial whose text
// is 20 MB.
func BenchmarkImportHugeRecord(b *testing.B) {
	dir := b.TempDir()
	zipPath := filepath.Join(dir, "huge.zip")
	writeZip(b, zipPath, "corpus.jsonl", hugeRecord("NCT09000001", 20<<20, 10<<20))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		db := openDB(b)
		if _, err := Import(context.Background(), db, []string{zipPath}, ImportOptions{}); err != nil {
			b.Fatal(err)
		}
		db.Close()
	}
}

// FuzzJSONClip checks the string cutter on any JSON text: its output is
// JSON, each string of it is cut to about the bound, the output does not
// depend on how the input is split into chunks, and strings within the
// bound are kept as they are.
func FuzzJSONClip(f *testing.F) {
	f.Add(`{"a": "hello world", "b": ["\u00e9\u00e9\u00e9", "x\"y\\z"], "c": {"d": "ééééé"}}`, 3, 10)
	f.Add(`["\ud83d\ude00\ud83d\ude00", "😀😀😀", 12, null, {"k\"": "v"}]`, 2, 5)
	f.Fuzz(func(t *testing.T, in string, bound, split int) {
		if !json.Valid([]byte(in)) {
			return
		}
		if bound < 0 {
			bound = -bound
		}
		bound = bound%16 + 1
		whole := &jsonClip{max: bound}
		whole.write([]byte(in))
		if split < 0 {
			split = -split
		}
		split %= len(in) + 1
		parts := &jsonClip{max: bound}
		parts.write([]byte(in[:split]))
		parts.write([]byte(in[split:]))
		if !bytes.Equal(whole.out, parts.out) {
			t.Fatalf("split at %d: %q, whole: %q", split, parts.out, whole.out)
		}
		if !json.Valid(whole.out) {
			t.Fatalf("not JSON: %q from %q", whole.out, in)
		}
		var in1, out1 any
		json.Unmarshal([]byte(in), &in1)
		json.Unmarshal(whole.out, &out1)
		var check func(a, b any)
		check = func(a, b any) {
			switch a := a.(type) {
			case string:
				s, _ := b.(string)
				if s != a && (!strings.HasSuffix(s, cutMark) || !strings.HasPrefix(a, strings.TrimSuffix(s, cutMark)[:max(0, len(strings.TrimSuffix(s, cutMark))-utf8.UTFMax)])) {
					t.Fatalf("%q became %q", a, s)
				}
				// Bytes that are not UTF-8 decode to U+FFFD, 3 bytes each.
				if len(s) > 3*(bound+utf8.UTFMax)+len(cutMark) {
					t.Fatalf("%q is longer than the bound %d", s, bound)
				}
			case []any:
				b, _ := b.([]any)
				for i := range a {
					check(a[i], b[i])
				}
			case map[string]any:
				b, _ := b.(map[string]any)
				for k, v := range a {
					if bv, ok := b[k]; ok {
						check(v, bv)
					}
				}
			}
		}
		check(in1, out1)
	})
}

// TestImportHugeXMLRecord checks the same bounds on ClinicalTrials.gov
// XML: a description within the record bound is cut to the field bound
// (and the inference reads a bounded prefix); a record beyond the record
// bound is refused with its line, without reading it all.
func TestImportHugeXMLRecord(t *testing.T) {
	dir := t.TempDir()
	record := func(id string, n int) string {
		return strings.Replace(strings.Replace(classicXML, "NCT01000001", id, 1),
			"<overall_status>", "<detailed_description><textblock>"+hugeText(n)+"</textblock></detailed_description><overall_status>", 1)
	}
	fits := writeFile(t, dir, "fits/NCT01000011.xml", strings.Replace(record("NCT01000011", 8<<20), "6 Months", "65 Years", 1))
	db := openDB(t)
	var res ImportResult
	var err error
	n := allocated(func() { res, err = Import(context.Background(), db, []string{fits}, ImportOptions{}) })
	if err != nil || res.Trials != 1 || res.CutFields != 1 || res.Cuts[0].Field != "description" || res.Cuts[0].Bytes < 8<<20-16 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if n > 8*maxRecordBytes {
		t.Errorf("importing an 8 MB record allocated %d MB", n>>20)
	}
	tr, err := Get(context.Background(), db, "NCT01000011")
	if err != nil || len(tr.Description) > maxFieldBytes+utf8.UTFMax+len(cutMark) || !strings.HasSuffix(tr.Description, cutMark) {
		t.Errorf("stored description of %d bytes, %v", len(tr.Description), err)
	}
	big := writeFile(t, dir, "big/NCT01000012.xml", record("NCT01000012", 2*maxRecordBytes))
	n = allocated(func() { _, err = Import(context.Background(), db, []string{big}, ImportOptions{}) })
	var re *RecordError
	if !errors.As(err, &re) || !errors.Is(err, errRecordTooLarge) || re.Line != 2 {
		t.Errorf("a record over the bound: %v", err)
	}
	if n > 4*maxRecordBytes {
		t.Errorf("refusing a %d MB record allocated %d MB", 2*maxRecordBytes>>20, n>>20)
	}
}
