package trials

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// readPaths reads every trial of the files, directories and zip archives
// in paths, in order, passing each to fn with the fields cut from it. read
// counts the input bytes consumed (for progress; the total is the sum of
// file sizes).
func readPaths(ctx context.Context, paths []string, read *atomic.Int64, fn func(Trial, []Cut) error) (files int, total int64, err error) {
	inputs, err := listInputs(paths)
	if err != nil {
		return 0, 0, err
	}
	for _, in := range inputs {
		total += in.size
	}
	for _, in := range inputs {
		if err := ctx.Err(); err != nil {
			return files, total, err
		}
		n, err := readFile(ctx, in.path, read, nil, fn)
		files += n
		if err != nil {
			return files, total, err
		}
	}
	return files, total, nil
}

// inOrder returns a sink that runs each job at once, on the reader's
// goroutine, and passes its trial to fn.
func inOrder(fn func(Trial, []Cut) error) recordSink {
	var d recordDecoder
	return func(job recordJob, _ int) error {
		t, cuts, err := job(&d)
		if err != nil {
			return err
		}
		return fn(t, cuts)
	}
}

// readFile reads one file (a zip archive: each supported member), returning
// the number of record files read.
func readFile(ctx context.Context, path string, read *atomic.Int64, lim *readLimits, fn func(Trial, []Cut) error) (int, error) {
	return readFileTo(ctx, path, read, lim, inOrder(fn))
}

// readZip reads the supported members of a zip archive in name order. The
// compressed bytes of each member count as read once it is done. A member
// that unpacks to more than its bound (readLimits.memberBytes: a "zip
// bomb") is refused before it is read; archive/zip stops a member that
// unpacks to more than its header says, and the reading is bounded by the
// bound as well.
func readZip(ctx context.Context, path string, read *atomic.Int64, lim *readLimits, fn func(Trial, []Cut) error) (int, error) {
	return readZipTo(ctx, path, read, lim, inOrder(fn))
}

// readStream reads one file's records, choosing the parser by extension and
// first byte: "<" XML, "[" or a multi-line "{" JSON document, else JSONL.
func readStream(ctx context.Context, r io.Reader, name string, lim *readLimits, fn func(Trial, []Cut) error) error {
	return readStreamTo(ctx, r, name, lim, inOrder(fn))
}

// Get reads one trial with its criteria.
func Get(ctx context.Context, db *sql.DB, id string) (*Trial, error) {
	_, t, err := scanTrial(db.QueryRowContext(ctx, `SELECT `+trialColumns+` FROM trials WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no trial %s in this database", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read trial %s: %w", id, err)
	}
	if err := loadCriteria(ctx, db, []*Trial{&t}); err != nil {
		return nil, err
	}
	return &t, nil
}
