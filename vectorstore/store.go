package vectorstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// DefaultBatchSize is the number of texts per Embed call when
// [Options.BatchSize] is not set.
const DefaultBatchSize = 32

// Options configure a [Store]. The zero value is usable.
type Options struct {
	// BatchSize is the number of texts per Embedder.Embed call when documents
	// are added or a collection is rebuilt; 0 means [DefaultBatchSize].
	BatchSize int
	// Progress, if set, is called after each embedded batch of a long build.
	// It runs on the building goroutine and must not block (a UI hands the
	// value over to its own goroutine).
	Progress func(Progress)
	// OnRebuild, if set, is called after a collection was rebuilt because it
	// was opened with an embedder other than the one that built it.
	OnRebuild func(RebuildEvent)
	// OnCorrupt, if set, makes [Open] keep a corrupt collection file
	// ([ErrCorrupt]: damaged, truncated, not a collection file) under a new
	// name beside it, "<name>.clvs.corrupt-YYYYMMDD-HHMMSS" (never replacing
	// another file), and treat the collection as absent, so that it is built
	// again on first use; OnCorrupt is then called, during Open, with what
	// was done. For stores that hold only vectors computed from other data
	// (a cache), which a caller can always rebuild. Without OnCorrupt, or
	// when the file cannot be moved, the file stays and the collection
	// reports its *[FileError].
	OnCorrupt func(CorruptEvent)
}

// CorruptEvent reports a corrupt collection file that [Open] moved aside
// (see [Options.OnCorrupt]).
type CorruptEvent struct {
	// Collection is the collection's name.
	Collection string
	// Path is the collection file, which no longer exists.
	Path string
	// Backup is where the corrupt file was kept.
	Backup string
	// Err is why the file could not be loaded (a *[FileError]).
	Err error
}

// Phase names the kind of work a [Progress] reports.
type Phase string

// The phases of a build.
const (
	// PhaseEmbed: embedding the documents given to [Collection.Add].
	PhaseEmbed Phase = "embed"
	// PhaseRebuild: re-embedding every stored text with a new embedder.
	PhaseRebuild Phase = "rebuild"
)

// Progress reports how far a build has come.
type Progress struct {
	// Collection is the collection's name.
	Collection string
	// Phase says what is being done.
	Phase Phase
	// Done is the number of texts embedded so far, out of Total.
	Done, Total int
}

// RebuildEvent reports that a collection was rebuilt with a new embedder.
type RebuildEvent struct {
	// Collection is the collection's name.
	Collection string
	// From and To are the names of the old and the new embedder.
	From, To string
	// Documents is the number of documents re-embedded.
	Documents int
	// Duration is the time the rebuild took.
	Duration time.Duration
}

// CollectionInfo describes a collection of a [Store], or a collection file
// that could not be loaded.
type CollectionInfo struct {
	// Name is the collection's name.
	Name string
	// Path is the collection's file.
	Path string
	// Embedder is the name of the embedder that built the vectors.
	Embedder string
	// Dim is the vector dimension (0 while the collection is empty).
	Dim int
	// Count is the number of documents.
	Count int
	// Rebuilt reports whether the vectors were rebuilt since the store was opened.
	Rebuilt bool
	// Err is set when the file could not be loaded; the other fields but
	// Name and Path are then zero.
	Err error
}

// Store is a directory of collections. Create it with [Open].
type Store struct {
	dir  string
	opts Options

	// wrapWriter, if set, wraps the writer of every collection file written
	// (a test hook to inject write failures).
	wrapWriter func(io.Writer) io.Writer

	mu     sync.Mutex
	cols   map[string]*Collection
	broken map[string]error // collection files that failed to load, by name
}

// Open opens the store in dir, creating the directory if needed, and loads
// every collection file in it. A collection file that cannot be read does not
// make Open fail: [Store.Collection] returns its error (a *[FileError] naming
// the file), [Store.Collections] lists it, and the other collections stay
// usable. Open fails only when the directory itself cannot be used.
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("vectorstore: open: empty directory name")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("vectorstore: open %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("vectorstore: open %s: %w", dir, err)
	}
	s := &Store{
		dir:    dir,
		opts:   opts,
		cols:   make(map[string]*Collection),
		broken: make(map[string]error),
	}
	for _, e := range entries {
		name := e.Name()
		if isTempFile(name) {
			// Left over by a write that was interrupted (the collection file
			// itself was not touched), or being written right now by another
			// process sharing the workspace. Temporary files of the current
			// writer are removed by internal/atomicfile on the next write,
			// and only once no live writer holds them; an earlier version's
			// leftovers only once they are too old to be in use.
			if isLegacyTempFile(name) {
				if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > legacyTempAge {
					_ = os.Remove(filepath.Join(dir, name))
				}
			}
			continue
		}
		if e.IsDir() || !strings.HasSuffix(name, fileExt) {
			continue
		}
		cname := strings.TrimSuffix(name, fileExt)
		path := filepath.Join(dir, name)
		if err := validName(cname); err != nil {
			s.broken[cname] = &FileError{Op: "load", Path: path, Err: err}
			continue
		}
		c, err := s.load(cname, path)
		if err != nil {
			ferr := &FileError{Op: "load", Path: path, Err: err}
			if errors.Is(err, ErrCorrupt) && opts.OnCorrupt != nil {
				backup, merr := atomicfile.MoveAside(path, atomicfile.Stamped(path, "corrupt", time.Now()))
				if merr == nil {
					opts.OnCorrupt(CorruptEvent{Collection: cname, Path: path, Backup: backup, Err: ferr})
					continue // absent now: built again on first use
				}
				ferr.Err = fmt.Errorf("%w (it could not be moved aside: %v)", err, merr)
			}
			s.broken[cname] = ferr
			continue
		}
		s.cols[cname] = c
	}
	return s, nil
}

// load reads one collection file into an unbound collection.
func (s *Store) load(name, path string) (*Collection, error) {
	h, recs, mat, err := readCollectionFile(path)
	if err != nil {
		return nil, err
	}
	if h.Name != name {
		return nil, corruptf("file holds collection %q", h.Name)
	}
	if h.Embedder == "" {
		return nil, corruptf("no embedder name in the header")
	}
	index := make(map[string]int, len(recs))
	for i, r := range recs {
		if r.id == "" || r.text == "" {
			return nil, corruptf("document %d has an empty ID or text", i+1)
		}
		if _, dup := index[r.id]; dup {
			return nil, corruptf("document ID %q appears twice", r.id)
		}
		index[r.id] = i
	}
	chroma, err := buildChroma(name, recs)
	if err != nil {
		return nil, err
	}
	c := s.newCollection(name)
	c.embName, c.dim, c.recs, c.index, c.mat, c.chroma = h.Embedder, h.Dim, recs, index, mat, chroma
	return c, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Collection returns the named collection, creating it (empty, with its file)
// if it does not exist. The collection embeds with embedder from now on. If
// it was built by an embedder of another name, every stored text is embedded
// again with embedder first (a rebuild: [Options.OnRebuild] is called and
// [Collection.Rebuilt] reports true); when that fails or ctx is cancelled,
// the collection and its file are left as they were and the error returned.
// A collection file that could not be loaded gives its *[FileError].
func (s *Store) Collection(ctx context.Context, name string, embedder Embedder) (*Collection, error) {
	if err := validName(name); err != nil {
		return nil, fmt.Errorf("vectorstore: collection %q: %w", name, err)
	}
	if embedder == nil {
		return nil, fmt.Errorf("vectorstore: collection %q: nil embedder", name)
	}
	embName := embedder.EmbedderName()
	if embName == "" {
		return nil, fmt.Errorf("vectorstore: collection %q: the embedder has an empty name", name)
	}

	s.mu.Lock()
	if err, ok := s.broken[name]; ok {
		s.mu.Unlock()
		return nil, err
	}
	c, ok := s.cols[name]
	if !ok {
		defer s.mu.Unlock()
		c = s.newCollection(name)
		chroma, err := buildChroma(name, nil)
		if err != nil {
			return nil, err
		}
		c.embedder, c.embName, c.index, c.chroma = embedder, embName, map[string]int{}, chroma
		if err := c.persist(embName, 0, nil); err != nil {
			return nil, err
		}
		s.cols[name] = c
		return c, nil
	}
	s.mu.Unlock()
	if err := c.bind(ctx, embedder, embName); err != nil {
		return nil, err
	}
	return c, nil
}

// Collections lists the collections of the store, and the collection files
// that could not be loaded (with Err set), sorted by name.
func (s *Store) Collections() []CollectionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]CollectionInfo, 0, len(s.cols)+len(s.broken))
	for _, c := range s.cols {
		out = append(out, c.Info())
	}
	for name, err := range s.broken {
		out = append(out, CollectionInfo{Name: name, Path: s.path(name), Err: err})
	}
	slices.SortFunc(out, func(a, b CollectionInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// DeleteCollection removes a collection and its file; it also clears a
// collection file that could not be loaded, so that the collection can be
// built again. Deleting a collection that does not exist is not an error.
// Handles to the deleted collection return [ErrDeleted].
func (s *Store) DeleteCollection(name string) error {
	if err := validName(name); err != nil {
		return fmt.Errorf("vectorstore: delete collection %q: %w", name, err)
	}
	s.mu.Lock()
	c := s.cols[name]
	s.mu.Unlock()
	if c != nil {
		// Wait for a change in progress; lock order: writeMu, s.mu, c.mu.
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c != nil && s.cols[name] == c {
		delete(s.cols, name)
		c.mu.Lock()
		c.deleted = true
		c.recs, c.index, c.mat, c.chroma = nil, nil, nil, nil
		c.mu.Unlock()
	}
	delete(s.broken, name)
	if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("vectorstore: delete collection %q: %w", name, err)
	}
	return nil
}

// path returns the file of a collection.
func (s *Store) path(name string) string { return filepath.Join(s.dir, name+fileExt) }

func (s *Store) newCollection(name string) *Collection {
	return &Collection{store: s, name: name, path: s.path(name)}
}

// validName checks a collection name: it becomes a file name, so it is kept
// portable (lower case only, for case-insensitive file systems).
func validName(name string) error {
	if len(name) == 0 || len(name) > 64 {
		return fmt.Errorf("%w: must be 1-64 characters", ErrInvalidName)
	}
	for i, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '_' || r == '-') && i > 0:
		default:
			return fmt.Errorf("%w: %q: use a-z, 0-9, '_' and '-', starting with a letter or digit", ErrInvalidName, name)
		}
	}
	return nil
}
