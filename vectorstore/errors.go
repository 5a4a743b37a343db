package vectorstore

import (
	"errors"
	"fmt"
)

// Errors a caller can test with [errors.Is].
var (
	// ErrInvalidName: a collection name is not 1-64 characters of a-z, 0-9, '_' and '-' starting with a letter or digit.
	ErrInvalidName = errors.New("invalid collection name")
	// ErrCorrupt: a collection file cannot be read back (damaged, truncated, or not a collection file).
	ErrCorrupt = errors.New("collection file is corrupt")
	// ErrUnsupportedVersion: a collection file was written in a format version this build cannot read.
	ErrUnsupportedVersion = errors.New("unsupported collection file version")
	// ErrDimension: a vector's length differs from the collection's dimension.
	ErrDimension = errors.New("vector dimension mismatch")
	// ErrEmbedderChanged: the collection was rebuilt with another embedder while a query was being embedded.
	ErrEmbedderChanged = errors.New("collection embedder changed during the query")
	// ErrDeleted: the collection was deleted.
	ErrDeleted = errors.New("collection deleted")
)

// FileError reports a failure to load or write a collection file. Path names
// the file; Err is the cause (often wrapping [ErrCorrupt]).
type FileError struct {
	// Op is "load" or "write".
	Op string
	// Path is the collection file.
	Path string
	// Err is the underlying error.
	Err error
}

// Error implements error. A corrupt file that failed to load is said to be
// rebuildable: a collection holds vectors computed from texts the caller
// keeps elsewhere.
func (e *FileError) Error() string {
	msg := fmt.Sprintf("vectorstore: %s collection file %s: %v", e.Op, e.Path, e.Err)
	if e.Op == "load" && errors.Is(e.Err, ErrCorrupt) {
		msg += "; it holds only vectors computed from the data: delete it and they are computed again on next use"
	}
	return msg
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }

// corruptf builds an error wrapping ErrCorrupt with a detail.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
