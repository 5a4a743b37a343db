package datasets

import (
	"github.com/clinsight/clinsight/internal/csvbound"
	"github.com/clinsight/clinsight/internal/progress"
)

// RecordTooLongError reports a CSV record larger than an importer's bound
// (see csvbound).
type RecordTooLongError = csvbound.RecordTooLongError

// fileOfMany reports one file's import progress as part of an import of
// several files of total bytes, of which done were read before this file:
// send gets the bytes read over all files. It is nil when send is nil.
func fileOfMany(send progress.Func, done, total int64) progress.Func {
	if send == nil {
		return nil
	}
	return func(p progress.Report) {
		send(progress.Report{Stage: p.Stage, Done: done + p.Done, Total: total, Unit: "bytes"})
	}
}
