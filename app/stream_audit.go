package app

import (
	"errors"
	"sync"

	"github.com/clinsight/clinsight/datasets"
)

// auditedStream is Data.Stream's cursor: closing it records the statement
// a second time with what was read (the rows, what the limits left out,
// the error that ended it), so the audit trail says how many rows left the
// database and not only that the statement started.
type auditedStream struct {
	datasets.RowStream
	once   sync.Once
	record func(datasets.StreamStats, error) error
}

// Close closes the cursor and, the first time, writes the closing record.
func (s *auditedStream) Close() error {
	st, runErr := s.Stats(), s.Err()
	err := s.RowStream.Close()
	var recErr error
	s.once.Do(func() { recErr = s.record(st, runErr) })
	return errors.Join(err, recErr)
}
