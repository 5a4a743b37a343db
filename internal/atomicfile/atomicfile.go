// Package atomicfile is the one way Clinsight writes a file: plots, Excel
// workbooks, CSV and JSON outputs, the workspace configuration and review
// projects all go through it, so that a failure in the middle of a write (a
// full disk, a file-size limit, a crash, a cancel) never leaves a truncated
// file where a good one was.
//
// A write goes to a temporary file in the destination's directory, named
// with Clinsight's own prefix (".clinsight-tmp-<pid>-<random>-<name>.tmp");
// when it is complete the file is flushed to disk (fsync), renamed over the
// destination, and the directory is flushed so the rename survives a power
// loss. On any error the temporary file is removed and the destination is
// untouched. A new file gets the permissions the caller asks for (minus the
// umask, as with os.Create); an existing destination keeps its own. A
// destination that is a symbolic link is written through the link, so the
// link stays.
//
// Temporary files a killed process left behind (kill -9 during an export)
// are removed on the next write into the same directory: only files that
// match the exact naming above, are regular files, are not locked by a live
// writer (every writer holds an exclusive flock on its temporary file until
// it is renamed), and either were made by a process that no longer exists
// or are older than a minute. Files of any other name are never touched.
// Workbooks the exporter of earlier versions left behind
// (".<name>.xlsx.<random>.tmp", a partial zip archive) are removed under the
// same lock rule once they are an hour old.
//
// [MoveAside] keeps a file that cannot be read (a corrupt configuration)
// under a new name without ever replacing another file.
//
// The package sits in internal/ so that every layer may use it — app and
// its pipelines, export, datasets, vectorstore — while it stays out of the
// product's public layout; it depends on nothing but the standard library.
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"
)

// Prefix starts the name of every temporary file this package creates.
const Prefix = ".clinsight-tmp-"

// tempSuffix ends the name of every temporary file this package creates.
const tempSuffix = ".tmp"

// maxBase is the longest destination name kept in a temporary file's name,
// leaving room for the affixes in a 255-byte file name.
const maxBase = 200

// File is a file being written: write to it, then Commit to put it in
// place, or Discard to drop it. Discard after Commit does nothing, so
// `defer f.Discard()` right after Create is the usual pattern.
type File struct {
	f    *os.File
	dest string      // the destination, symbolic links resolved
	tmp  string      // the temporary file's path
	mode fs.FileMode // permissions to set before the rename; 0 keeps the creation mode
	done bool        // committed or discarded
}

// Create starts writing the file at path. perm is the permission of a new
// file (before the umask); an existing file keeps its own. It first removes
// stale temporary files of this package in path's directory (see the
// package documentation).
func Create(path string, perm fs.FileMode) (*File, error) {
	dest, mode, err := destination(path)
	if err != nil {
		return nil, err
	}
	dir, base := filepath.Split(dest)
	if dir == "" {
		dir = "."
	}
	cleanStale(dir, time.Now())
	if mode == 0 {
		perm &= fs.ModePerm
	} else {
		perm = mode
	}
	for len(base) > maxBase {
		_, size := utf8.DecodeLastRuneInString(base)
		base = base[:len(base)-size]
	}
	for range 100 {
		tmp := filepath.Join(dir, tempName(os.Getpid(), rand.Uint64(), base))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cannot write in the folder %s: %w", dir, err)
		}
		lock(f) // best effort: a file system without locks falls back to the PID and age rule
		return &File{f: f, dest: dest, tmp: tmp, mode: mode}, nil
	}
	return nil, fmt.Errorf("cannot create a temporary file in the folder %s", dir)
}

// destination resolves path to the file to replace, following symbolic
// links, and returns the permissions of an existing regular file (0 when
// there is none).
func destination(path string) (string, fs.FileMode, error) {
	if path == "" {
		return "", 0, errors.New("no file name given")
	}
	dest := path
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, err := filepath.EvalSymlinks(path); err == nil {
			dest = target
		}
	}
	fi, err := os.Stat(dest)
	switch {
	case err != nil:
		// Missing, or its folder cannot be used: creating the temporary
		// file says why.
		return dest, 0, nil
	case fi.IsDir():
		return "", 0, fmt.Errorf("cannot write %s: it is a folder", path)
	case !fi.Mode().IsRegular():
		return "", 0, fmt.Errorf("cannot write %s: it is not a regular file", path)
	}
	return dest, fi.Mode().Perm(), nil
}

// tempName builds the temporary file name for base.
func tempName(pid int, r uint64, base string) string {
	return Prefix + strconv.Itoa(pid) + "-" + strconv.FormatUint(r, 36) + "-" + base + tempSuffix
}

// Name returns the temporary file's path.
func (t *File) Name() string { return t.tmp }

// Write writes to the temporary file.
func (t *File) Write(p []byte) (int, error) { return t.f.Write(p) }

// WriteAt writes to the temporary file at an offset.
func (t *File) WriteAt(p []byte, off int64) (int, error) { return t.f.WriteAt(p, off) }

// ReadAt reads back from the temporary file.
func (t *File) ReadAt(p []byte, off int64) (int, error) { return t.f.ReadAt(p, off) }

// Stat describes the temporary file.
func (t *File) Stat() (fs.FileInfo, error) { return t.f.Stat() }

// Commit flushes the temporary file to disk, gives it the destination's
// permissions and renames it over the destination, then flushes the
// directory. On an error the temporary file is removed and the destination
// is untouched (unless the rename itself succeeded and only the directory
// flush failed, which the error says).
func (t *File) Commit() error {
	if t.done {
		return errors.New("atomicfile: commit after commit or discard")
	}
	err := t.f.Sync()
	if err == nil && t.mode != 0 {
		err = t.f.Chmod(t.mode)
	}
	if err == nil && closeBeforeRename {
		err = t.f.Close()
	}
	if err == nil {
		err = os.Rename(t.tmp, t.dest)
	}
	if err != nil {
		t.Discard()
		return fmt.Errorf("cannot write %s: %w", t.dest, err)
	}
	t.done = true
	if !closeBeforeRename {
		// Closed only now, so the lock holds until the file has its name.
		if err := t.f.Close(); err != nil {
			return fmt.Errorf("cannot write %s: %w", t.dest, err)
		}
	}
	if err := SyncDir(filepath.Dir(t.dest)); err != nil {
		return fmt.Errorf("%s was written, but the folder could not be flushed to disk: %w", t.dest, err)
	}
	return nil
}

// Discard closes and removes the temporary file; the destination is
// untouched. It does nothing after Commit or an earlier Discard.
func (t *File) Discard() {
	if t.done {
		return
	}
	t.done = true
	_ = t.f.Close()
	_ = os.Remove(t.tmp)
}

// WriteFile writes data to path atomically (see [Create] for perm).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write writes the file at path atomically with what write produces; write
// gets a buffered writer. When write fails, the destination is untouched
// and write's error is returned, wrapped with the path.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) error {
	t, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer t.Discard()
	bw := bufio.NewWriterSize(t.f, 64<<10)
	if err := write(bw); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return t.Commit()
}

// SyncDir flushes a directory to disk, so that a rename or a new file in it
// survives a power loss. File systems that cannot flush a directory are
// not an error.
func SyncDir(dir string) error {
	if !syncDirs {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && ignoreSyncError(err) {
		return nil
	}
	return err
}
