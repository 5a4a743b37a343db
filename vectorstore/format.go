package vectorstore

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// The collection file format; see the package documentation.
const (
	fileExt       = ".clvs"
	formatVersion = 1
	maxHeaderLen  = 1 << 20
	// maxDim bounds the vector dimension a file may declare.
	maxDim = 1 << 16
	// ioBuffer is the buffer size of file reads and writes.
	ioBuffer = 1 << 20
)

// fileMagic starts every collection file.
const fileMagic = "CLVS\r\n\x1a\n"

// crcTable is the CRC-32 polynomial of the file trailer (crc32 caches it).
func crcTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

// record is one stored document. Records are immutable once built: a change
// replaces the record, so readers may hold on to one without a lock.
type record struct {
	id   string
	text string
	meta map[string]string
	vec  []float32 // normalised, len == collection dim
}

// fileHeader is the JSON header of a collection file.
type fileHeader struct {
	Name     string    `json:"name"`
	Embedder string    `json:"embedder"`
	Dim      int       `json:"dim"`
	Count    int       `json:"count"`
	SavedAt  time.Time `json:"saved_at"`
}

// crcWriter forwards writes and keeps a running CRC of them.
type crcWriter struct {
	w     io.Writer
	table *crc32.Table
	crc   uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, c.table, p[:n])
	return n, err
}

// encodeCollection writes h and recs to w in the collection file format.
func encodeCollection(w io.Writer, h fileHeader, recs []*record) error {
	h.Count = len(recs)
	hdr, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encoding header: %w", err)
	}
	bw := bufio.NewWriterSize(w, ioBuffer)
	cw := &crcWriter{w: bw, table: crcTable()}
	var fixed [16]byte
	copy(fixed[:8], fileMagic)
	binary.LittleEndian.PutUint32(fixed[8:12], formatVersion)
	binary.LittleEndian.PutUint32(fixed[12:16], uint32(len(hdr)))
	if _, err := cw.Write(fixed[:]); err != nil {
		return err
	}
	if _, err := cw.Write(hdr); err != nil {
		return err
	}

	// Vectors, through a fixed buffer.
	buf := make([]byte, 0, 64<<10)
	for _, r := range recs {
		if len(r.vec) != h.Dim {
			return fmt.Errorf("document %q: %w: %d, header says %d", r.id, ErrDimension, len(r.vec), h.Dim)
		}
		for _, x := range r.vec {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(x))
			if len(buf) == cap(buf) {
				if _, err := cw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
	}

	// Documents.
	appendString := func(b []byte, s string) []byte {
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	keys := make([]string, 0, 8)
	for _, r := range recs {
		buf = appendString(buf, r.id)
		buf = appendString(buf, r.text)
		buf = binary.AppendUvarint(buf, uint64(len(r.meta)))
		keys = keys[:0]
		for k := range r.meta {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			buf = appendString(buf, k)
			buf = appendString(buf, r.meta[k])
		}
		if len(buf) >= 32<<10 {
			if _, err := cw.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if _, err := cw.Write(buf); err != nil {
		return err
	}
	var trailer [4]byte
	binary.LittleEndian.PutUint32(trailer[:], cw.crc)
	if _, err := bw.Write(trailer[:]); err != nil {
		return err
	}
	return bw.Flush()
}

// decoder reads the body of a collection file (all but the checksum),
// counting the bytes left so that sizes read from the file can be checked
// before anything is allocated for them.
type decoder struct {
	r    *bufio.Reader
	left int64
}

func (d *decoder) full(p []byte) error {
	if int64(len(p)) > d.left {
		return corruptf("truncated: %d more bytes expected, %d left", len(p), d.left)
	}
	if _, err := io.ReadFull(d.r, p); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return corruptf("truncated")
		}
		return err
	}
	d.left -= int64(len(p))
	return nil
}

// ReadByte implements io.ByteReader for binary.ReadUvarint.
func (d *decoder) ReadByte() (byte, error) {
	if d.left <= 0 {
		return 0, corruptf("truncated")
	}
	b, err := d.r.ReadByte()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, corruptf("truncated")
		}
		return 0, err
	}
	d.left--
	return b, nil
}

// count reads a uvarint that must not exceed limit.
func (d *decoder) count(what string, limit int64) (int, error) {
	n, err := binary.ReadUvarint(d)
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return 0, err
		}
		return 0, corruptf("%s: %v", what, err)
	}
	if n > uint64(limit) {
		return 0, corruptf("%s %d exceeds the %d bytes left", what, n, limit)
	}
	return int(n), nil
}

func (d *decoder) string(what string) (string, error) {
	n, err := d.count(what+" length", d.left)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", nil
	}
	b := make([]byte, n)
	if err := d.full(b); err != nil {
		return "", err
	}
	return string(b), nil
}

// decodeCollection reads a collection file of size bytes from r. The
// records' vectors are the rows of the returned matrix.
func decodeCollection(r io.Reader, size int64) (fileHeader, []*record, []float32, error) {
	var h fileHeader
	if size < 16+4 {
		return h, nil, nil, corruptf("not a collection file (%d bytes)", size)
	}
	crc := crc32.New(crcTable())
	body := size - 4
	d := &decoder{r: bufio.NewReaderSize(io.TeeReader(io.LimitReader(r, body), crc), ioBuffer), left: body}
	var fixed [16]byte
	if err := d.full(fixed[:]); err != nil {
		return h, nil, nil, corruptf("not a collection file (too short)")
	}
	if string(fixed[:8]) != fileMagic {
		return h, nil, nil, corruptf("not a collection file (bad magic)")
	}
	if v := binary.LittleEndian.Uint32(fixed[8:12]); v != formatVersion {
		return h, nil, nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrUnsupportedVersion, v, formatVersion)
	}
	hdrLen := int64(binary.LittleEndian.Uint32(fixed[12:16]))
	if hdrLen > maxHeaderLen || hdrLen > d.left {
		return h, nil, nil, corruptf("header length %d", hdrLen)
	}
	hdr := make([]byte, hdrLen)
	if err := d.full(hdr); err != nil {
		return h, nil, nil, err
	}
	if err := json.Unmarshal(hdr, &h); err != nil {
		return h, nil, nil, corruptf("header: %v", err)
	}
	if h.Count < 0 || h.Dim < 0 || h.Dim > maxDim || (h.Count > 0 && h.Dim == 0) {
		return h, nil, nil, corruptf("header: count %d, dimension %d", h.Count, h.Dim)
	}
	// Each document takes at least 3 bytes besides its vector.
	if int64(h.Count) > d.left/(4*int64(h.Dim)+3) {
		return h, nil, nil, corruptf("header declares %d documents of dimension %d, but only %d bytes follow", h.Count, h.Dim, d.left)
	}

	recs := make([]*record, h.Count)
	slab := make([]float32, h.Count*h.Dim)
	chunk := make([]byte, 64<<10)
	for off := 0; off < len(slab); {
		n := min(len(chunk)/4, len(slab)-off)
		b := chunk[:4*n]
		if err := d.full(b); err != nil {
			return h, nil, nil, err
		}
		for i := range n {
			slab[off+i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		off += n
	}
	for i := range recs {
		r := &record{vec: slab[i*h.Dim : (i+1)*h.Dim : (i+1)*h.Dim]}
		var err error
		if r.id, err = d.string("document ID"); err != nil {
			return h, nil, nil, err
		}
		if r.text, err = d.string("document text"); err != nil {
			return h, nil, nil, err
		}
		nmeta, err := d.count("metadata count", d.left/2)
		if err != nil {
			return h, nil, nil, err
		}
		if nmeta > 0 {
			r.meta = make(map[string]string, nmeta)
			for range nmeta {
				k, err := d.string("metadata key")
				if err != nil {
					return h, nil, nil, err
				}
				v, err := d.string("metadata value")
				if err != nil {
					return h, nil, nil, err
				}
				r.meta[k] = v
			}
		}
		recs[i] = r
	}
	if d.left != 0 {
		return h, nil, nil, corruptf("%d unexpected bytes after the documents", d.left)
	}
	var trailer [5]byte
	n, err := io.ReadFull(r, trailer[:])
	switch {
	case n < 4:
		return h, nil, nil, corruptf("truncated checksum")
	case n > 4:
		return h, nil, nil, corruptf("unexpected bytes after the checksum")
	case err != nil && !errors.Is(err, io.ErrUnexpectedEOF):
		return h, nil, nil, err
	}
	if binary.LittleEndian.Uint32(trailer[:4]) != crc.Sum32() {
		return h, nil, nil, corruptf("checksum mismatch (file damaged)")
	}
	return h, recs, slab, nil
}

// writeAtomic writes a file through write with Clinsight's one atomic
// writer (internal/atomicfile): into a temporary file of the same
// directory, fsynced, then renamed over path. On any error the old file (if
// any) is untouched and the temporary file removed. wrap, if not nil, wraps
// the file's writer (a test hook to inject failures).
func writeAtomic(path string, wrap func(io.Writer) io.Writer, write func(io.Writer) error) error {
	f, err := atomicfile.Create(path, 0o600)
	if err != nil {
		return err
	}
	defer f.Discard()
	var w io.Writer = f
	if wrap != nil {
		w = wrap(w)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// legacyTempAge is the age after which a legacy temporary file counts as
// abandoned: far longer than any collection write takes.
const legacyTempAge = time.Hour

// isLegacyTempFile reports whether a directory entry is a temporary file of
// an earlier version's writer.
func isLegacyTempFile(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, fileExt+".tmp-")
}

// isTempFile reports whether a directory entry is a temporary file of a
// collection write, of this version or an earlier one.
func isTempFile(name string) bool {
	return isLegacyTempFile(name) || (strings.HasPrefix(name, atomicfile.Prefix) && strings.Contains(name, fileExt))
}

// readCollectionFile loads one collection file.
func readCollectionFile(path string) (fileHeader, []*record, []float32, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileHeader{}, nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fileHeader{}, nil, nil, err
	}
	return decodeCollection(f, st.Size())
}
