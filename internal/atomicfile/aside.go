package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// maxAsideTries bounds the names MoveAside tries.
const maxAsideTries = 10_000

// MoveAside renames the file at path to the first of name(0), name(1), …
// (file names in path's directory) that does not exist yet, and returns
// the new path. It never replaces a file: the new name is claimed with a
// hard link, or where links are not supported with an exclusive create
// that the rename then replaces.
func MoveAside(path string, name func(n int) string) (string, error) {
	dir := filepath.Dir(path)
	for n := range maxAsideTries {
		cand := filepath.Join(dir, name(n))
		if cand == filepath.Clean(path) {
			continue
		}
		err := os.Link(path, cand)
		switch {
		case err == nil:
			if err := os.Remove(path); err != nil {
				_ = os.Remove(cand)
				return "", fmt.Errorf("cannot move %s aside: %w", path, err)
			}
			_ = SyncDir(dir)
			return cand, nil
		case errors.Is(err, fs.ErrExist):
			continue
		case errors.Is(err, fs.ErrNotExist):
			if _, serr := os.Lstat(path); serr != nil {
				return "", fmt.Errorf("cannot move %s aside: %w", path, serr)
			}
		}
		// No hard links here: claim the name, then rename over the claim.
		f, err := os.OpenFile(cand, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("cannot move %s aside: %w", path, err)
		}
		f.Close()
		if err := os.Rename(path, cand); err != nil {
			_ = os.Remove(cand)
			return "", fmt.Errorf("cannot move %s aside: %w", path, err)
		}
		_ = SyncDir(dir)
		return cand, nil
	}
	return "", fmt.Errorf("cannot move %s aside: %d names are taken", path, maxAsideTries)
}

// Stamped names the copies of path that MoveAside keeps:
// "<name>.<tag>-YYYYMMDD-HHMMSS", then with "-2", "-3", … added when that
// name is taken (several in the same second).
func Stamped(path, tag string, t time.Time) func(int) string {
	base := filepath.Base(path) + "." + tag + "-" + t.Format("20060102-150405")
	return func(n int) string {
		if n == 0 {
			return base
		}
		return base + "-" + strconv.Itoa(n+1)
	}
}
