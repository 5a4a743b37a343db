package app

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"
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
}

func (e *ReviewSaveError) Error() string {
	return fmt.Sprintf("review %s could not be saved: %s. Your changes are kept while the review stays open; saving is tried again in a moment, at your next change and when you close the review", e.Review, e.Problem)
}

func (e *ReviewSaveError) Unwrap() error { return e.Err }

// reviewSaveError turns a failed save of the review project named name
// into a ReviewSaveError when the system refused the write (a full disk,
// a file-size limit, a read-only folder); other errors are already
// written for the user (another project of that name, a file that is not
// a project, an exclusion without a reason) and are returned as they are.
func reviewSaveError(name string, err error) error {
	var problem string
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		problem = "the disk is full; free some space on it"
	case errors.Is(err, syscall.EFBIG):
		problem = "the file would be larger than this computer allows"
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS):
		problem = "the workspace's folder of review projects cannot be written to (it is read-only)"
	case errors.Is(err, syscall.EIO):
		problem = "the disk reported an error"
	default:
		return err
	}
	return &ReviewSaveError{Review: name, Problem: problem, Err: err}
}
