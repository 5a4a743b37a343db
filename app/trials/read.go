package trials

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/clinsight/clinsight/internal/inputfile"
)

// RecordError is an import error tied to a file and, when known, a line (or
// record number) and a trial id.
type RecordError struct {
	// File is the file (and "!member" of an archive).
	File string
	// Line is the line of a JSONL file, the position of a record in a JSON
	// array, or the line where an XML record starts; 0 when unknown.
	Line int
	// ID is the trial's identifier, when it could be read.
	ID string
	// Err is what is wrong.
	Err error
}

// Error reads "import trials.jsonl line 17 (NCT00001234): ...".
func (e *RecordError) Error() string {
	var b strings.Builder
	b.WriteString("import " + e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.ID != "" {
		fmt.Fprintf(&b, " (%s)", e.ID)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// finishTrial normalises a parsed record: cuts its texts and lists to
// their bounds (returning a Cut, without file and line, for each field
// cut), infers age and sex limits from the text when the record has no
// structured eligibility fields, and validates it.
func finishTrial(t *Trial, lim *readLimits) ([]Cut, error) {
	cuts := capTrial(t, lim)
	if t.Sex == "" {
		d := inferDemographics(t)
		t.Sex, t.MinAge, t.MaxAge = d.sex, d.minAge, d.maxAge
		t.DemographicsInferred = d.found
	}
	return cuts, t.Validate()
}

// recordCuts fills in the file, line and trial id of cuts, and adds those
// of the JSON strings cut while reading (clip).
func recordCuts(src string, line int, id string, clip []clipCut, cuts []Cut) []Cut {
	out := make([]Cut, 0, len(clip)+len(cuts))
	for _, c := range clip {
		out = append(out, Cut{Field: c.field, Bytes: c.bytes, Kept: c.kept})
	}
	out = append(out, cuts...)
	for i := range out {
		out[i].File, out[i].Line, out[i].ID = src, line, id
	}
	return out
}

// supportedExt reports whether a file name has an extension the reader
// understands.
func supportedExt(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".xml", ".json", ".jsonl", ".ndjson", ".zip":
		return true
	}
	return false
}

// inputFile is one file to read, with its size for progress.
type inputFile struct {
	path string
	size int64
}

// listInputs expands paths (files, directories walked recursively in name
// order) into the files to read. A named file with an unknown extension is
// an error; unknown files inside a directory are skipped.
func listInputs(paths []string) ([]inputFile, error) {
	var out []inputFile
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", p, err)
		}
		if !info.IsDir() {
			if err := inputfile.Regular(p, info); err != nil { // a named pipe would block for ever
				return nil, fmt.Errorf("import %s: %w", p, err)
			}
			if !supportedExt(p) {
				return nil, fmt.Errorf("import %s: unsupported file type (expected .xml, .json, .jsonl or .zip)", p)
			}
			out = append(out, inputFile{p, info.Size()})
			continue
		}
		var found []inputFile
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !supportedExt(path) || strings.HasPrefix(d.Name(), ".") {
				return nil
			}
			fi, err := os.Stat(path) // through a symbolic link
			if err != nil {
				return err
			}
			if !fi.Mode().IsRegular() {
				return nil // a named pipe, a device, a link to a folder
			}
			found = append(found, inputFile{path, fi.Size()})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("import %s: no .xml, .json, .jsonl or .zip file in the directory", p)
		}
		slices.SortFunc(found, func(a, b inputFile) int { return strings.Compare(a.path, b.path) })
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, errors.New("import: no file given")
	}
	return out, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// recordJob builds the trial of one record read: the costly part of
// reading (decoding, splitting the criteria, normalising), which may run
// on another goroutine than the reader's, with that goroutine's decoder.
// Its error is a *RecordError naming the file and line.
type recordJob func(d *recordDecoder) (Trial, []Cut, error)

// recordSink receives the jobs of the records read, in file order, with
// the size of each record in bytes. Its error stops the reading.
type recordSink func(job recordJob, size int) error

// parsed is what a record's job gave.
type parsed struct {
	t    Trial
	cuts []Cut
	err  error
	row  *storedRow // the trial's stored values, once computed
}

// Records are parsed in batches of at most batchRecords records or
// batchBytes bytes of input; a few batches per worker are in flight, so
// the memory a parallel read holds is bounded.
const (
	batchRecords = 256
	batchBytes   = 4 << 20
)

// parseBatch is a batch of records, parsed by one worker.
type parseBatch struct {
	jobs []recordJob
	size int
	out  []parsed
	done chan struct{} // closed once out is set
	err  error         // a reading error, after the records before it
}

// readParallel runs read, which passes the jobs of the records it reads
// to its sink (and stops when its context is cancelled), on a goroutine of
// its own, and the jobs on workers
// goroutines, each with its own decoder; deliver receives the parsed
// records batch by batch, in reading order, on the calling goroutine (the
// one writer). The first error in reading order (a record's, the
// reading's, or deliver's) stops the reading and the workers and is
// returned, as is the cancellation of ctx. The reading runs at most
// 2*workers+2 batches ahead of deliver.
func readParallel(ctx context.Context, workers int, read func(context.Context, recordSink) error, deliver func([]parsed) error) error {
	workers = max(1, workers)
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(stop)
	work := make(chan *parseBatch)
	order := make(chan *parseBatch, 2*workers)
	newBatch := func() *parseBatch { return &parseBatch{done: make(chan struct{})} }
	g.Go(func() error {
		defer close(order)
		defer close(work)
		cur := newBatch()
		send := func() error {
			b := cur
			cur = newBatch()
			select {
			case order <- b:
			case <-gctx.Done():
				return gctx.Err()
			}
			select {
			case work <- b:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		err := read(gctx, func(job recordJob, size int) error {
			cur.jobs = append(cur.jobs, job)
			cur.size += max(size, 0)
			if len(cur.jobs) >= batchRecords || cur.size >= batchBytes {
				return send()
			}
			return nil
		})
		if err == nil && len(cur.jobs) > 0 {
			err = send()
		}
		if err != nil {
			b := &parseBatch{err: err, done: make(chan struct{})}
			close(b.done)
			select {
			case order <- b:
			case <-gctx.Done():
			}
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			var d recordDecoder
			for b := range work {
				out := make([]parsed, 0, len(b.jobs))
				for _, job := range b.jobs {
					if gctx.Err() != nil {
						break
					}
					t, cuts, err := job(&d)
					p := parsed{t: t, cuts: cuts, err: err}
					if err != nil {
						out = append(out, p)
						break
					}
					p.row = newStoredRow(&p.t)
					out = append(out, p)
				}
				b.jobs, b.out = nil, out
				close(b.done)
			}
			return nil
		})
	}
	var err error
	for b := range order {
		select {
		case <-b.done:
		case <-gctx.Done():
		}
		if err = gctx.Err(); err != nil {
			break
		}
		if b.err != nil {
			err = b.err
			break
		}
		if err = deliver(b.out); err != nil {
			break
		}
	}
	cancel() // stops the reader and the workers if deliver stopped first
	_ = g.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// readFileTo is readFile passing the records' jobs to sink.
func readFileTo(ctx context.Context, path string, read *atomic.Int64, lim *readLimits, sink recordSink) (int, error) {
	if strings.EqualFold(filepath.Ext(path), ".zip") {
		return readZipTo(ctx, path, read, lim, sink)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("import %s: %w", path, err)
	}
	defer f.Close()
	return 1, readStreamTo(ctx, countingReader{f, read}, path, lim, sink)
}

// readZipTo is readZip passing the records' jobs to sink.
func readZipTo(ctx context.Context, path string, read *atomic.Int64, lim *readLimits, sink recordSink) (int, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return 0, fmt.Errorf("import %s: not a readable zip archive: %w", path, err)
	}
	defer zr.Close()
	members := slices.Clone(zr.File)
	slices.SortFunc(members, func(a, b *zip.File) int { return strings.Compare(a.Name, b.Name) })
	n := 0
	for _, m := range members {
		if m.FileInfo().IsDir() || !supportedExt(m.Name) || strings.EqualFold(filepath.Ext(m.Name), ".zip") ||
			strings.HasPrefix(filepath.Base(m.Name), ".") || strings.HasPrefix(m.Name, "__MACOSX/") {
			read.Add(int64(m.CompressedSize64))
			continue
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		bound := lim.memberBytes(m.CompressedSize64)
		if m.UncompressedSize64 > bound {
			return n, zipBombErr(path, m.Name, m.UncompressedSize64, m.CompressedSize64)
		}
		rc, err := m.Open()
		if err != nil {
			return n, fmt.Errorf("import %s!%s: %w", path, m.Name, err)
		}
		err = readStreamTo(ctx, &boundedReader{r: rc, left: int64(bound), err: zipBombErr(path, m.Name, bound+1, m.CompressedSize64)},
			path+"!"+m.Name, lim, sink)
		if errors.Is(err, zip.ErrFormat) || errors.Is(err, zip.ErrChecksum) {
			err = fmt.Errorf("import %s!%s: the archive member is damaged (%w): it does not unpack as its header says", path, m.Name, err)
		}
		rc.Close()
		read.Add(int64(m.CompressedSize64))
		n++
		if err != nil {
			return n, err
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("import %s: no .xml, .json or .jsonl member in the archive", path)
	}
	return n, nil
}

// readStreamTo is readStream passing the records' jobs to sink.
func readStreamTo(ctx context.Context, r io.Reader, name string, lim *readLimits, sink recordSink) error {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(4096)
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case len(head) == 0:
		return &RecordError{File: name, Err: errors.New("the file is empty")}
	case head[0] == '<':
		return readCTGovXML(ctx, br, name, lim, sink)
	case head[0] == '[':
		return readJSONDocument(ctx, br, name, lim, sink)
	case head[0] == '{' && (ext == ".json" && !isOneLineJSON(head)):
		return readJSONDocument(ctx, br, name, lim, sink)
	case head[0] == '{':
		return readJSONLines(ctx, br, name, lim, sink)
	}
	return &RecordError{File: name, Err: errors.New("not a ClinicalTrials.gov XML or JSON file, nor JSON lines")}
}

// isOneLineJSON reports whether the first line of head holds a complete
// JSON value (a JSONL file named .json).
func isOneLineJSON(head []byte) bool {
	line, _, found := bytes.Cut(head, []byte("\n"))
	if !found {
		return false
	}
	line = bytes.TrimSpace(line)
	return len(line) > 1 && line[len(line)-1] == '}' && bytes.Count(head, []byte("\n{")) > 0
}

// zipBombErr says that an archive member unpacks to far more than it
// takes.
func zipBombErr(path, member string, size, compressed uint64) error {
	return fmt.Errorf("import %s!%s: the archive member unpacks to %s or more from %s: this looks like a zip bomb, not trial records "+
		"(unpack the archive yourself and import its files if you trust it)",
		path, member, sizeText(int64(min(size, 1<<62))), sizeText(int64(min(compressed, 1<<62))))
}

// boundedReader fails with err once more than left bytes were read.
type boundedReader struct {
	r    io.Reader
	left int64
	err  error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left+1] // one more byte tells a member of exactly the bound from a larger one
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, b.err
	}
	return n, err
}
