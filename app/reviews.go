package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/inputfile"
	"github.com/clinsight/clinsight/localllm"
)

// ImportLiterature imports literature files (PubMed XML, MEDLINE, RIS, CSV)
// and full texts (JATS XML, plain text, PDF: see evidence.Import) into the
// literature corpus of a database (a source name or a path,
// created when missing), one file after another, each file atomic. each, if
// not nil, is called after every file. It returns the number of records in
// the corpus afterwards; on an error, the files imported before it are kept.
func (ws *Workspace) ImportLiterature(ctx context.Context, db string, files []string, opts evidence.ImportOptions, each func(evidence.ImportResult)) (int64, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (int64, error) {
		for _, file := range files {
			res, err := evidence.Import(ctx, conn, file, opts)
			if err != nil {
				return 0, err
			}
			if each != nil {
				each(res)
			}
		}
		return evidence.NewCorpus(conn).Count(ctx)
	})
}

// LiteratureSourceName is the source literature imported in the desktop
// app goes to.
const LiteratureSourceName = "literature"

// literatureFile is that source's database file in the data directory.
const literatureFile = "literature.sqlite"

// importLiteratureToWorkspace imports literature files and full texts (see
// ImportLiterature) into the workspace's "literature" database and
// registers it as a source. It returns the number of records in the corpus
// afterwards.
func (ws *Workspace) importLiteratureToWorkspace(ctx context.Context, files []string, opts evidence.ImportOptions, each func(evidence.ImportResult)) (int64, error) {
	path := filepath.Join(ws.DataDir(), literatureFile)
	n, err := ws.ImportLiterature(ctx, path, files, opts, each)
	if err != nil {
		return n, err
	}
	if _, ok := ws.Source(LiteratureSourceName); !ok {
		if _, err := ws.RegisterImported(LiteratureSourceName, path, SourceCSV, "literature imported in Clinsight (PubMed, MEDLINE, RIS, CSV, full texts)"); err != nil {
			return n, err
		}
	}
	return n, nil
}

// literatureSources lists the registered sources that hold a literature
// corpus: those a review project can search.
func (ws *Workspace) literatureSources(ctx context.Context) []string {
	return ws.sourcesHolding(ctx, hasCorpus)
}

// hasCorpus reports whether conn holds a literature corpus.
func hasCorpus(ctx context.Context, conn *sql.DB) (bool, error) {
	_, err := evidence.NewCorpus(conn).Count(ctx)
	return err == nil, nil
}

// addDemoReview saves the demo review project (evidence.DemoProject) over
// the demo literature, unless a project of that name exists: a demo review
// the user has worked on is kept when the demo data is recreated.
func (ws *Workspace) addDemoReview(ctx context.Context) error {
	path, err := ws.reviewPath(evidence.DemoProjectName)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	db, err := datasets.OpenReadOnly(ctx, ws.DemoPath())
	if err != nil {
		return err
	}
	defer db.Close()
	p, err := evidence.DemoProject(ctx, evidence.NewCorpus(db), DemoSourceName)
	if err != nil {
		return err
	}
	return ws.SaveReviewProject(p)
}

// reviewsDir is the workspace folder of the review projects.
const reviewsDir = "reviews"

// ReviewsDir returns the folder that holds the review projects
// (<workspace>/reviews, one <name>.json per project).
func (ws *Workspace) ReviewsDir() string { return filepath.Join(ws.dir, reviewsDir) }

// reviewPath returns the file of the review project named name.
func (ws *Workspace) reviewPath(name string) (string, error) {
	if err := evidence.ValidateProjectName(name); err != nil {
		return "", err
	}
	return filepath.Join(ws.ReviewsDir(), name+".json"), nil
}

// ReviewProjects returns the names of the saved review projects, the most
// recently saved first (none when the folder does not exist yet).
func (ws *Workspace) ReviewProjects() ([]string, error) {
	entries, err := os.ReadDir(ws.ReviewsDir())
	if errors.Is(err, os.ErrNotExist) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing the review projects: %w", err)
	}
	type item struct {
		name    string
		updated time.Time
	}
	var items []item
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || evidence.ValidateProjectName(name) != nil {
			continue
		}
		it := item{name: name}
		path := filepath.Join(ws.ReviewsDir(), e.Name())
		info, err := os.Stat(path) // through a link
		if err == nil {
			it.updated = info.ModTime()
			err = inputfile.Regular(path, info)
		}
		// The saved time stamp, when the file says it (the file's time
		// changes when it is copied). What is not a file (a named pipe
		// would block the list for ever) is listed unread, like an
		// unreadable file: opening it says what it is.
		if err == nil {
			if updated, err := reviewUpdated(path); err == nil && !updated.IsZero() {
				it.updated = updated
			}
		} else if !errors.Is(err, os.ErrNotExist) {
			ws.logger.Warn("review project listed unread", "path", path, "err", err)
		}
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(a, b item) int {
		if c := b.updated.Compare(a.updated); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = it.name
	}
	return names, nil
}

// maxReviewFileBytes bounds a review project file as read (opened,
// listed, checked before a save). A saved review of evidence.MaxCandidates
// (100,000) candidates is 25.7 MB (README, "Every candidate can be
// screened": BenchmarkCandidateProject); ten times that leaves room for
// two reviewers' decisions at both stages, extractions and notes, and
// keeps a stray file of gigabytes from being read whole. A review that
// would save larger is refused at the save, so that what is saved can be
// opened again.
const maxReviewFileBytes = 256 << 20

// readReviewFile reads the review project file at path: a regular file
// (a named pipe would wait for a writer for ever, a device never end) of
// at most maxReviewFileBytes. A missing file gives an error matching
// os.ErrNotExist.
func readReviewFile(path string) ([]byte, error) {
	f, fi, err := inputfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s is larger than %d MB, the most a review project file may hold (a review of 100,000 candidates is about 26 MB): is it a review project?",
		filepath.Base(path), maxReviewFileBytes>>20)
	if fi.Size() > maxReviewFileBytes {
		return nil, tooLarge
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxReviewFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxReviewFileBytes { // it grew while read
		return nil, tooLarge
	}
	return raw, nil
}

// reviewUpdated returns the saved time stamp of the review project file
// at path (its "updated" key), reading the file only up to it: the fifth
// key of a saved project, in its first kilobyte.
func reviewUpdated(path string) (time.Time, error) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxReviewFileBytes))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return time.Time{}, errors.New("not a JSON object")
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return time.Time{}, err
		}
		if key == "updated" {
			var t time.Time
			err := dec.Decode(&t)
			return t, err
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return time.Time{}, err
		}
	}
	return time.Time{}, nil
}

// LoadReviewProject reads the review project named name. A file that is
// not a valid project is moved aside (<name>.json.corrupt-TIMESTAMP, so
// that nothing is lost and the name can be used again) and the error names
// both files; a project saved by a newer Clinsight is left in place and
// refused (evidence.ErrNewerProject).
func (ws *Workspace) LoadReviewProject(name string) (*evidence.Project, error) {
	path, err := ws.reviewPath(name)
	if err != nil {
		return nil, err
	}
	raw, err := readReviewFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("there is no review project named %q (looked for %s)", name, path)
	}
	if err != nil {
		// Left in place: a named pipe or a huge file is not a damaged
		// project to move aside.
		return nil, fmt.Errorf("reading review project %s: %w", path, err)
	}
	p, perr := evidence.ParseProject(raw)
	if perr == nil {
		if p.Name != name {
			ws.logger.Warn("review project renamed to its file's name", "path", path, "saved_name", p.Name)
			p.Name = name
		}
		return p, nil
	}
	if errors.Is(perr, evidence.ErrNewerProject) {
		return nil, fmt.Errorf("review project %s: %w", path, perr)
	}
	backup, err := moveAsideCorrupt(path)
	if err != nil {
		return nil, fmt.Errorf("review project %s is unreadable (%v) and could not be moved aside: %w", path, perr, err)
	}
	ws.logger.Warn("unreadable review project moved aside", "path", path, "backup", backup, "err", perr)
	return nil, fmt.Errorf("review project %s is unreadable: %v; it was kept as %s", path, perr, filepath.Base(backup))
}

// SaveReviewProject checks the project (Validate), stamps its Updated time
// and writes it atomically to <workspace>/reviews/<name>.json. It refuses
// to overwrite a file it cannot read as a project, or another project of
// the same name (a different Created time): nothing is overwritten that
// was not read first. On an error the project's Updated time is unchanged.
func (ws *Workspace) SaveReviewProject(p *evidence.Project) error {
	_, err := ws.saveReviewProject(p, fileStamp{})
	return err
}

// fileStamp tells a file as written: its size and modification time.
type fileStamp struct {
	size int64
	mod  time.Time
}

// stampOf returns the stamp of the file at path, the zero stamp when it
// cannot be read.
func stampOf(path string) fileStamp {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() {
		return fileStamp{}
	}
	return fileStamp{size: st.Size(), mod: st.ModTime()}
}

// saveReviewProject is SaveReviewProject for a review that knows the
// stamp of the file it wrote last (written; the zero stamp when it knows
// none): while the file still has that stamp it is that file, read and
// checked when it was written, so it is not read again (a review of
// evidence.MaxCandidates candidates saves in two thirds of the time). It
// returns the stamp of the file it writes.
func (ws *Workspace) saveReviewProject(p *evidence.Project, written fileStamp) (fileStamp, error) {
	if err := p.Validate(); err != nil {
		return fileStamp{}, fmt.Errorf("the review project cannot be saved: %w", err)
	}
	path, err := ws.reviewPath(p.Name)
	if err != nil {
		return fileStamp{}, err
	}
	if err := os.MkdirAll(ws.ReviewsDir(), 0o755); err != nil {
		return fileStamp{}, fmt.Errorf("saving review project %s: %w", p.Name, err)
	}
	if written != (fileStamp{}) && stampOf(path) == written {
		// The file this review wrote last: nobody replaced it.
	} else if raw, err := readReviewFile(path); err == nil {
		old, perr := evidence.ParseProject(raw)
		switch {
		case perr != nil:
			return fileStamp{}, fmt.Errorf("not saving over %s, which is not a review project this Clinsight can read (%v): move it away or choose another name", path, perr)
		case !old.Created.Equal(p.Created):
			return fileStamp{}, fmt.Errorf("a review project named %q already exists (created %s): choose another name", p.Name, old.Created.Local().Format("2006-01-02 15:04"))
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fileStamp{}, fmt.Errorf("not saving over %s, which cannot be read as a review project (%v): move it away or choose another name", path, err)
	}
	prev := p.Updated
	p.Updated = time.Now().UTC()
	raw, err := encodeReviewProject(p) // review_save.go
	if err == nil {
		err = writeFileAtomic(path, raw)
	}
	if err != nil {
		p.Updated = prev
		return fileStamp{}, fmt.Errorf("saving review project %s: %w", p.Name, err)
	}
	return stampOf(path), nil
}

// openSession opens a session on the review project for one step of a
// Review: its source's corpus read-only, the workspace's model client and
// chat model (none configured is fine here: the steps that need the model
// then say so), and the workspace's logger. Close the session to release
// the database.
func (ws *Workspace) openSession(ctx context.Context, p *evidence.Project) (*evidence.Session, error) {
	if strings.TrimSpace(p.Source) == "" {
		return nil, fmt.Errorf("the review %s has no literature source: choose one", p.Name)
	}
	src, err := ws.ResolveExisting(p.Source)
	if err != nil {
		return nil, fmt.Errorf("opening the literature of review %s: %w", p.Name, err)
	}
	path, err := ws.file(src)
	if err != nil {
		return nil, fmt.Errorf("opening the literature of review %s: %w", p.Name, err)
	}
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening the literature of review %s: %w", p.Name, err)
	}
	corpus := evidence.NewCorpus(db)
	if _, err := corpus.Count(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening the literature of review %s (%s): %w", p.Name, path, err)
	}
	client, err := ws.ModelClient()
	if err != nil {
		db.Close()
		return nil, err
	}
	return &evidence.Session{
		Project:     p,
		Corpus:      corpus,
		Chat:        client,
		Model:       ws.Config().Models.Chat,
		Options:     localllm.Options{NumCtx: ReviewNumCtx},
		Concurrency: ReviewConcurrency,
		Logger:      ws.logger,
		Closer:      db,
	}, nil
}

// ReviewConcurrency is the number of model calls a review session has in
// flight at most (Ollama serves a few requests in parallel).
const ReviewConcurrency = 4

// ReviewNumCtx is the context window (num_ctx, in tokens) of a review
// session's model calls: room for an extraction prompt's 12,000 characters
// of study text (evidence.DefaultTextBudget), the instructions and the
// reply. Ollama's default (often 2,048 or 4,096) would refuse them.
const ReviewNumCtx = 8192
