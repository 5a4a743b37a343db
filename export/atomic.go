package export

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"
)

// compressionLevel trades workbook size for speed: XML compresses well even
// at flate.BestSpeed, which is several times faster than the default level.
const compressionLevel = flate.BestSpeed

// tempFile is the workbook being assembled beside its destination.
type tempFile struct {
	f         *os.File
	name      string
	committed bool
}

// createTemp creates an empty temporary file in path's directory, named
// ".<name>.<random>.tmp" and with the permissions os.Create would give.
func createTemp(path string) (*tempFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	for len(base) > 200 { // leave room in a 255-byte file name for the affixes
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
	}
	for range 100 {
		name := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot write in directory %s: %w", dir, err)
		}
		return &tempFile{f: f, name: name}, nil
	}
	return nil, fmt.Errorf("cannot create a temporary file in directory %s", dir)
}

// save writes the workbook f into the temporary file, stopping when ctx is
// cancelled.
func (t *tempFile) save(ctx context.Context, f *excelize.File) error {
	bw := bufio.NewWriterSize(ctxWriter{ctx: ctx, w: t.f}, 1<<20)
	// excelize assembles the whole zip archive in a bytes.Buffer before
	// copying it to a writer, which for a million rows means ~100 MB in
	// memory. Its ZipWriter hook receives that buffer; ignoring it and
	// returning a zip writer on the file streams the archive to disk
	// instead, and the buffer it then copies to io.Discard stays empty.
	f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(bw)
		zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(w, compressionLevel)
		})
		return zw
	})
	if err := f.Write(io.Discard); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := markZip64(t.f, math.MaxUint32); err != nil {
		return err
	}
	if err := t.f.Sync(); err != nil {
		return err
	}
	return t.f.Close()
}

// commit renames the saved temporary file to path.
func (t *tempFile) commit(path string) error {
	if err := os.Rename(t.name, path); err != nil {
		return err
	}
	t.committed = true
	return nil
}

// discard removes the temporary file unless it was committed.
func (t *tempFile) discard() {
	if t.committed {
		return
	}
	_ = t.f.Close()
	_ = os.Remove(t.name)
}

// ctxWriter fails writes once its context is done.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

// markZip64 sets "version needed to extract" to 4.5 in the local header of
// every zip entry of f whose size reaches limit. archive/zip marks such
// (ZIP64) entries only in the central directory, and Excel reports the
// mismatch as a corrupt file; excelize fixes its in-memory archive the same
// way, which the streaming save above bypasses. Only sheets whose XML
// exceeds 4 GiB are affected.
func markZip64(f *os.File, limit uint64) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil {
		return err
	}
	const headerLen, signature, zip64Version = 30, 0x04034b50, 45
	for _, zf := range zr.File {
		if zf.UncompressedSize64 < limit && zf.CompressedSize64 < limit {
			continue
		}
		data, err := zf.DataOffset()
		if err != nil {
			return err
		}
		// archive/zip writes streamed entries without a local extra field.
		off := data - headerLen - int64(len(zf.Name))
		var h [headerLen]byte
		if _, err := f.ReadAt(h[:], off); err != nil {
			return err
		}
		le := binary.LittleEndian
		if le.Uint32(h[0:]) != signature || int(le.Uint16(h[26:])) != len(zf.Name) || le.Uint16(h[28:]) != 0 {
			return fmt.Errorf("zip64 entry %s: unexpected local header", zf.Name)
		}
		if _, err := f.WriteAt(le.AppendUint16(nil, zip64Version), off+4); err != nil {
			return err
		}
	}
	return nil
}
