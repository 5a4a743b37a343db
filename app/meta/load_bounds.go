package meta

import (
	"archive/zip"
	"errors"
	"io"
	"path/filepath"

	"github.com/clinsight/clinsight/internal/csvbound"
)

// Bounds on a study table, so that a damaged or hostile file (a workbook
// that unpacks to gigabytes, a CSV file of millions of rows) is refused
// before it takes the machine's memory. A meta-analysis has one row per
// study: the largest published ones have a few thousand.
const (
	// maxStudyRows bounds the data rows of a table.
	maxStudyRows = 50_000
	// maxTableBytes bounds the text of a CSV table.
	maxTableBytes = 32 << 20
	// maxTableColumns bounds the columns of a table (a study's counts,
	// labels and moderators: a few dozen).
	maxTableColumns = 1000
	// maxWorkbookBytes bounds what the parts of an .xlsx workbook unpack
	// to (its sheets, shared strings, styles, pictures).
	maxWorkbookBytes = 128 << 20
)

// errTableTooLarge is what tableBound fails with.
var errTableTooLarge = errors.New("the table is too large")

// tooManyRows is the error of a table of more than maxStudyRows rows.
func tooManyRows() *Error {
	return errorf(EINVALID, "the table has more than %d rows, but a meta-analysis takes one row per study: is this the study table?", maxStudyRows)
}

// tableTooLarge is the error of a CSV table of more than maxTableBytes.
func tableTooLarge() *Error {
	return errorf(EINVALID, "the table is larger than %d MB, but a meta-analysis takes one row per study: is this the study table?", maxTableBytes>>20)
}

// tableBound passes at most maxTableBytes of text, then fails with
// errTableTooLarge.
type tableBound struct {
	r    io.Reader
	left int64
}

func (b *tableBound) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, errTableTooLarge
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

// checkWorkbookSize refuses an .xlsx file whose parts unpack to more than
// maxWorkbookBytes, as their headers say (the zip reader fails a part that
// unpacks to more than its header says). The Excel reader would hold them
// in memory, or write them to temporary files: a 1.5 MB workbook unpacking
// to 1.5 GB took 4.6 GB of memory and 52 s.
func checkWorkbookSize(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil // not a zip archive: the Excel reader says what is wrong
	}
	defer zr.Close()
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
		if total > maxWorkbookBytes || f.UncompressedSize64 > maxWorkbookBytes {
			return errorf(EINVALID, "the workbook %s unpacks to more than %d MB, far more than a study table: copy the studies into a new workbook or save the sheet as CSV",
				filepath.Base(path), maxWorkbookBytes>>20)
		}
	}
	return nil
}

// readTable reads the records of a CSV table, at most maxStudyRows data
// rows after the header; a table beyond its bounds is an *Error.
func readTable(next func() ([]string, error)) ([][]string, error) {
	var records [][]string
	for {
		rec, err := next()
		switch {
		case errors.Is(err, io.EOF):
			return records, nil
		case errors.Is(err, errTableTooLarge):
			return nil, tableTooLarge()
		case errors.As(err, new(*csvbound.TooManyFieldsError)):
			return nil, errorf(EINVALID, "%v, but a study table has a few dozen: is this the study table, and is its separator right?", err)
		case err != nil:
			return nil, err
		}
		if len(records) > maxStudyRows { // the header and maxStudyRows rows read
			return nil, tooManyRows()
		}
		records = append(records, rec)
	}
}

// checkRows refuses a sheet of more than maxStudyRows data rows after its
// header.
func checkRows(rows [][]string) error {
	if len(rows) > maxStudyRows+1 {
		return tooManyRows()
	}
	return nil
}
