package export

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// compressionLevel trades workbook size for speed: XML compresses well even
// at flate.BestSpeed, which is several times faster than the default level.
const compressionLevel = flate.BestSpeed

// tempFile is the workbook being assembled beside its destination, through
// Clinsight's one atomic writer (internal/atomicfile): a temporary file in
// the same folder, flushed and renamed over the destination only when
// complete. Creating it also removes temporary workbooks a killed export
// left in that folder.
type tempFile struct {
	f *atomicfile.File
}

// createTemp starts the workbook at path, with the permissions os.Create
// would give a new file (an existing one keeps its own).
func createTemp(path string) (*tempFile, error) {
	f, err := atomicfile.Create(path, 0o666)
	if err != nil {
		return nil, err
	}
	return &tempFile{f: f}, nil
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
	return markZip64(t.f, math.MaxUint32)
}

// sha256 is the SHA-256 (hex) of the saved temporary file.
func (t *tempFile) sha256() (string, error) {
	st, err := t.f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(t.f, 0, st.Size())); err != nil {
		return "", fmt.Errorf("hash the workbook: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// commit flushes the saved temporary file and renames it over its
// destination.
func (t *tempFile) commit() error { return t.f.Commit() }

// discard removes the temporary file unless it was committed.
func (t *tempFile) discard() { t.f.Discard() }

// zipFile is the file markZip64 patches.
type zipFile interface {
	io.ReaderAt
	io.WriterAt
	Stat() (fs.FileInfo, error)
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
func markZip64(f zipFile, limit uint64) error {
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
