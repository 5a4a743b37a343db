package vectorstore

import (
	"bytes"
	"slices"
	"testing"
	"time"
)

func encodeForTest(tb testing.TB, h fileHeader, recs []*record) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := encodeCollection(&buf, h, recs); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func sampleRecords() (fileHeader, []*record) {
	vecs := randomVectors(3, 3, 4)
	recs := []*record{
		{id: "a", text: "alpha", meta: map[string]string{"k": "v", "z": ""}, vec: vecs[0]},
		{id: "b", text: "bêta ✓", vec: vecs[1]},
		{id: "c", text: "gamma", meta: map[string]string{"": "x"}, vec: vecs[2]},
	}
	return fileHeader{Name: "sample", Embedder: "test/4", Dim: 4, SavedAt: time.Unix(0, 0).UTC()}, recs
}

func TestFormatRoundTrip(t *testing.T) {
	h, recs := sampleRecords()
	data := encodeForTest(t, h, recs)
	if string(data[:8]) != fileMagic || data[8] != formatVersion {
		t.Fatalf("file starts with %q", data[:12])
	}
	h2, recs2, _, err := decodeCollection(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	h.Count = len(recs)
	if h2 != h {
		t.Errorf("header %+v, want %+v", h2, h)
	}
	if !slices.EqualFunc(recs, recs2, recordEqual) {
		t.Errorf("records differ after round trip")
	}
	// Deterministic: the same content encodes to the same bytes.
	if again := encodeForTest(t, h, recs2); !bytes.Equal(again, data) {
		t.Error("re-encoding changed the bytes")
	}
	// Vector dimension and header must agree.
	h.Dim = 5
	if err := encodeCollection(&bytes.Buffer{}, h, recs); err == nil {
		t.Error("encoding vectors of the wrong dimension: no error")
	}
}

func recordEqual(a, b *record) bool {
	return a.id == b.id && a.text == b.text && mapsEqual(a.meta, b.meta) && slices.Equal(a.vec, b.vec)
}

// FuzzDecodeCollection feeds damaged files to the decoder: it must return an
// error or a consistent collection, never panic or allocate wildly.
func FuzzDecodeCollection(f *testing.F) {
	h, recs := sampleRecords()
	valid := encodeForTest(f, h, recs)
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:30])
	f.Add(encodeForTest(f, fileHeader{Name: "empty", Embedder: "e"}, nil))
	f.Add([]byte(fileMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, recs, _, err := decodeCollection(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if len(recs) != h.Count {
			t.Fatalf("%d records, header says %d", len(recs), h.Count)
		}
		for _, r := range recs {
			if len(r.vec) != h.Dim {
				t.Fatalf("vector of %d, header says %d", len(r.vec), h.Dim)
			}
		}
		// What decodes re-encodes to a file that decodes the same.
		again := encodeForTest(t, h, recs)
		_, recs2, _, err := decodeCollection(bytes.NewReader(again), int64(len(again)))
		if err != nil || !slices.EqualFunc(recs, recs2, recordEqual) {
			t.Fatalf("re-encoded file differs: %v", err)
		}
	})
}
