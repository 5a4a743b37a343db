package meta

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Error codes carried by *Error. They are stable, machine-readable values
// for the CLI and UI to branch on; the message is for the user.
const (
	// EINVALID means the input data or options are invalid; the message says
	// which row, study or option to fix.
	EINVALID = "invalid"
	// ENOTESTIMABLE means the data are valid but do not allow the requested
	// estimate (for example a Mantel–Haenszel odds ratio when no study has an
	// event in one arm).
	ENOTESTIMABLE = "not_estimable"
	// ENOTCONVERGED means the REML Fisher scoring algorithm did not converge.
	ENOTCONVERGED = "not_converged"
	// ECANCELLED means the work was stopped (Cancel, Ctrl-C, a deadline)
	// before it finished; the error wraps the context's error.
	ECANCELLED = "cancelled"
	// EINTERNAL is reported for errors that did not originate in this package.
	EINTERNAL = "internal"
)

// Error is an error of the meta-analysis engine with a machine-readable code
// and a message written for a clinician. Row and Study locate the offending
// input when it comes from a table.
type Error struct {
	// Code is one of the E* constants.
	Code string
	// Row is the 1-based data row (the header is not counted) of the input
	// table, or 0 when the error is not tied to a row.
	Row int
	// Study is the study label of that row, if known.
	Study string
	// Message says what is wrong, in plain words.
	Message string
	// Err is the underlying cause, if any.
	Err error
}

// Error implements the error interface: "data row 3 (study "Aronson"): ...".
func (e *Error) Error() string {
	var b strings.Builder
	if e.Row > 0 {
		fmt.Fprintf(&b, "data row %d", e.Row)
	}
	if e.Study != "" {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "(study %q)", e.Study)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing text of err: the full text when every
// error in it comes from this package, "Internal error." otherwise (the
// caller logs the details).
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	if ErrorCode(err) == EINTERNAL {
		return "Internal error."
	}
	return err.Error()
}

// stopped is the error of work stopped by ctx (Cancel): it names what was
// stopped and wraps ctx.Err(), so errors.Is(err, context.Canceled) holds.
func stopped(ctx context.Context, what string) *Error {
	return &Error{Code: ECANCELLED, Message: what + ": stopped before finishing", Err: ctx.Err()}
}

func errorf(code string, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// rowError builds an EINVALID error located at a study's row.
func rowError(s *Study, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Row: s.Row, Study: s.Label, Message: fmt.Sprintf(format, args...)}
}
