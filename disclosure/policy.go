package disclosure

import (
	"fmt"
	"strconv"
	"strings"
)

// Access is what a data agreement lets a user see of a data source.
type Access string

// Access levels.
const (
	// RowLevel: records may be seen; exact values on screen and in --json.
	// Exports are still suppressed unless exact counts are asked for.
	RowLevel Access = "row-level"
	// AggregateOnly: only suppressed aggregates are ever shown, charted,
	// exported or sent to a model; no patient-level rows.
	AggregateOnly Access = "aggregate-only"
)

// DefaultMinCell is the default minimum cell size k: counts under 11 are
// suppressed, as the CMS and MIMIC small-cell policies require.
const DefaultMinCell = 11

// MaxMinCell bounds the minimum cell size.
const MaxMinCell = 1000

// Policy is a data source's disclosure policy.
type Policy struct {
	// Access is RowLevel (also when empty) or AggregateOnly.
	Access Access `json:"access"`
	// MinCell is the minimum cell size k; 0 means DefaultMinCell.
	MinCell int `json:"min_cell"`
}

// ParseAccess reads an access level as written by a user ("row-level",
// "aggregate-only"; case and spaces ignored, "" is row-level).
func ParseAccess(s string) (Access, error) {
	switch a := Access(strings.ToLower(strings.TrimSpace(s))); a {
	case "", RowLevel:
		return RowLevel, nil
	case AggregateOnly:
		return a, nil
	}
	return "", fmt.Errorf("access %q is neither %q nor %q", s, RowLevel, AggregateOnly)
}

// Validate checks a policy.
func (p Policy) Validate() error {
	if _, err := ParseAccess(string(p.Access)); err != nil {
		return err
	}
	if p.MinCell != 0 && (p.MinCell < 2 || p.MinCell > MaxMinCell) {
		return fmt.Errorf("the minimum cell size must be between 2 and %d, got %d", MaxMinCell, p.MinCell)
	}
	return nil
}

// Normalized returns the policy with its defaults filled in.
func (p Policy) Normalized() Policy {
	if a, err := ParseAccess(string(p.Access)); err == nil {
		p.Access = a
	}
	p.MinCell = p.K()
	return p
}

// K is the minimum cell size.
func (p Policy) K() int {
	if p.MinCell <= 0 {
		return DefaultMinCell
	}
	return p.MinCell
}

// AggregateOnly reports whether only suppressed aggregates may be shown.
func (p Policy) AggregateOnly() bool {
	a, _ := ParseAccess(string(p.Access))
	return a == AggregateOnly
}

// String describes the policy for people ("aggregate-only, k = 11").
func (p Policy) String() string {
	p = p.Normalized()
	return string(p.Access) + ", minimum cell size " + strconv.Itoa(p.K())
}

// AggregateOnlyError refuses patient-level rows of an aggregate-only
// source.
type AggregateOnlyError struct {
	// Source names the data source.
	Source string
	// Why says what made the result patient-level.
	Why string
}

func (e *AggregateOnlyError) Error() string {
	name := "this data source"
	if e.Source != "" {
		name = fmt.Sprintf("data source %q", e.Source)
	}
	msg := name + " is aggregate-only: ask for counts or statistics"
	if e.Why != "" {
		msg += " (" + e.Why + ")"
	}
	return msg
}

// PatientLevelError refuses a patient-level export that was not confirmed.
// The front end asks for a confirmation that lists Identifiers.
type PatientLevelError struct {
	// Identifiers are the result's direct and quasi-identifier columns.
	Identifiers []Identifier
	// RowLevel is set when the result has one row per record (not an
	// aggregate).
	RowLevel bool
}

// Direct returns the names of the direct identifier columns.
func (e *PatientLevelError) Direct() []string { return names(e.Identifiers, Direct) }

// Quasi returns the names of the quasi-identifier columns.
func (e *PatientLevelError) Quasi() []string { return names(e.Identifiers, Quasi) }

func (e *PatientLevelError) Error() string {
	var b strings.Builder
	b.WriteString("this is a patient-level result")
	if e.RowLevel {
		b.WriteString(" (one row per record)")
	}
	if d := e.Direct(); len(d) > 0 {
		b.WriteString("; identifier columns: " + strings.Join(d, ", "))
	} else {
		b.WriteString("; no identifier column was recognised")
	}
	if q := e.Quasi(); len(q) > 0 {
		b.WriteString("; quasi-identifiers: " + strings.Join(q, ", "))
	}
	b.WriteString(". A patient-level export must be confirmed; its identifiers are then replaced by pseudonyms")
	return b.String()
}

func names(ids []Identifier, kind IdentifierKind) []string {
	var out []string
	for _, id := range ids {
		if id.Kind == kind {
			out = append(out, id.Column)
		}
	}
	return out
}
