package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/clinsight/clinsight/app/evidence"
)

// reviewRetryDelay is how long a review waits after a failed save before
// it tries again by itself (a change or Close tries at once): long enough
// not to fill the log while the disk stays full, short enough that the
// reviewer who freed space sees "saved" without making a change.
const reviewRetryDelay = 30 * time.Second

// ReviewSaveError says why a review could not be saved, for the person
// screening: what went wrong in words and what to do; the cause (the
// system's error, with the file's path) is wrapped and logged.
type ReviewSaveError struct {
	// Review names the review project.
	Review string
	// Problem is what went wrong, in words.
	Problem string
	// Err is the cause.
	Err error
	// Closing says that the save was the last one, by Close: nothing
	// tries again by itself. Saved is when the review was last saved
	// (zero when unknown): what was changed since is not in its file.
	Closing bool
	Saved   time.Time
}

func (e *ReviewSaveError) Error() string {
	if e.Closing {
		since := "since it was last saved"
		if !e.Saved.IsZero() {
			since = "since it was last saved (" + e.Saved.Local().Format("2 Jan 15:04") + ")"
		}
		return fmt.Sprintf("review %s could not be saved: %s. The changes made %s are not in its file", e.Review, e.Problem, since)
	}
	return fmt.Sprintf("review %s could not be saved: %s. Your changes are kept while the review stays open; saving is tried again in a moment, at your next change and when you close the review", e.Review, e.Problem)
}

func (e *ReviewSaveError) Unwrap() error { return e.Err }

// reviewSaveError turns a failed save of the review project named name
// into a ReviewSaveError when the system refused the write (a full disk,
// a file-size limit, a read-only folder); other errors are already
// written for the user (another project of that name, a file that is not
// a project, an exclusion without a reason) and are returned as they are.
func reviewSaveError(name string, err error) error {
	if err == nil {
		return nil
	}
	problem := writeProblem(err, "the workspace's folder of review projects")
	if problem == "" {
		return err
	}
	return &ReviewSaveError{Review: name, Problem: problem, Err: err}
}

// writeProblem says in words why the system refused a write into folder
// (named for the reader: "the workspace's folder of review projects"),
// "" when err is not such a refusal.
func writeProblem(err error, folder string) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "the disk is full; free some space on it"
	case errors.Is(err, syscall.EFBIG):
		return "the file would be larger than this computer allows"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		return folder + " cannot be written to (it is read-only)"
	case errors.Is(err, syscall.ENOTDIR):
		return folder + " is not a folder any more (something replaced it)"
	case errors.Is(err, syscall.EIO):
		return "the disk reported an error"
	}
	return ""
}

// encodeReviewProject encodes a project as a review project file: the one
// encoding of the workspace's saves (saveReviewProject) and of the copies
// written elsewhere (SaveCopy, SaveRecoveryCopy), so that a copy opens
// like a saved project. A project whose file would be larger than
// maxReviewFileBytes is refused: it could not be opened again.
func encodeReviewProject(p *evidence.Project) ([]byte, error) {
	raw, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(raw) >= maxReviewFileBytes {
		return nil, fmt.Errorf("the review is %d MB, more than the %d MB a review project file may hold", len(raw)>>20, maxReviewFileBytes>>20)
	}
	return append(raw, '\n'), nil
}

// SaveStatus returns where the saving of the review stands now: Saved is
// when it was last saved (when it was opened, the time its file was
// saved), Err why the last save failed.
func (r *Review) SaveStatus() SaveStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// SaveCopy writes the project as it is in memory, every change made, to
// the file at path, as a review project file (the save's encoding,
// written atomically: a failed write leaves what was at path as it was).
// The review's own file and where its saving stands do not change: it is
// the way out when the review cannot be saved in the workspace (a full
// disk, a read-only folder). Put in a workspace's folder of review
// projects, the copy opens as a review project named after its file.
func (r *Review) SaveCopy(path string) error {
	r.mu.Lock()
	cp := r.p.Snapshot()
	r.mu.Unlock()
	return writeReviewCopy(cp, path, "that folder")
}

// writeReviewCopy writes cp (a copy the caller owns, stamped now) to path;
// folder names path's folder in the error.
func writeReviewCopy(cp *evidence.Project, path, folder string) error {
	if err := cp.Validate(); err != nil {
		return fmt.Errorf("the review project cannot be saved: %w", err)
	}
	cp.Updated = time.Now().UTC()
	raw, err := encodeReviewProject(cp)
	if err != nil {
		return fmt.Errorf("the copy of review %s could not be written: %w", cp.Name, err)
	}
	if err := writeFileAtomic(path, raw); err != nil {
		if problem := writeProblem(err, folder); problem != "" {
			return fmt.Errorf("the copy of review %s could not be written to %s: %s: %w", cp.Name, path, problem, err)
		}
		return fmt.Errorf("the copy of review %s could not be written to %s: %w", cp.Name, path, err)
	}
	return nil
}

// SaveRecoveryCopy writes the project as it is in memory to a recovery
// copy outside the workspace, for a review about to be closed without
// being saved (its save failed), logs where and returns the copy's path.
// It is tried in the user's cache folder (<cache>/clinsight/unsaved-reviews,
// kept across restarts), then in a new private folder in the system's
// temporary folder (often another disk, or memory, which a full workspace
// disk does not fill; cleared at restart); the copy is named after the
// review and the time ("NAME unsaved 2026-11-27 00.05.12.json", itself a
// valid project name to open it under).
//
// Writing the review outside the workspace is safe enough to do without
// asking: a review project holds literature records (titles, abstracts,
// authors of published studies), the question, criteria, the reviewers'
// names, decisions and values extracted from the studies — no patient
// data (those stay in the workspace's data sources, which a review only
// names). The copy is private to the user (a 0700 folder, a 0600 file),
// as the workspace's files are. Not writing it would lose the decisions
// for good; writing it keeps them where the user is told to look.
func (r *Review) SaveRecoveryCopy() (string, error) {
	r.mu.Lock()
	cp := r.p.Snapshot()
	r.mu.Unlock()
	file := recoveryFileName(cp.Name, time.Now())
	var errs []error
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "clinsight", "unsaved-reviews")
		err := os.MkdirAll(dir, 0o700)
		if err == nil {
			path := filepath.Join(dir, file)
			if err = writeReviewCopy(cp, path, "the cache folder"); err == nil {
				r.ws.logger.Warn("review: not saved; a recovery copy was written", "project", cp.Name, "copy", path)
				return path, nil
			}
		}
		errs = append(errs, err)
	}
	dir, err := os.MkdirTemp("", "clinsight-unsaved-")
	if err == nil {
		path := filepath.Join(dir, file)
		if err = writeReviewCopy(cp, path, "the temporary folder"); err == nil {
			r.ws.logger.Warn("review: not saved; a recovery copy was written", "project", cp.Name, "copy", path)
			return path, nil
		}
		_ = os.Remove(dir)
	}
	errs = append(errs, err)
	err = fmt.Errorf("no recovery copy of review %s could be written: %w", cp.Name, errors.Join(errs...))
	r.ws.logger.Error("review: not saved, and no recovery copy", "project", cp.Name, "err", err)
	return "", err
}

// recoveryFileName names the recovery copy of the review named name made
// at t: "NAME unsaved 2006-01-02 15.04.05.json", the name shortened so that
// the file's name is a valid project name too.
func recoveryFileName(name string, t time.Time) string {
	suffix := " unsaved " + t.Local().Format("2006-01-02 15.04.05")
	const maxName = 100 // evidence.ValidateProjectName's bound
	if n := maxName - utf8.RuneCountInString(suffix); utf8.RuneCountInString(name) > n {
		name = strings.TrimSpace(string([]rune(name)[:n]))
	}
	return name + suffix + ".json"
}
