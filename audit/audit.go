// Package audit keeps Clinsight's audit trail: an append-only, hash-chained
// log of what was asked, run, sent to a model, imported and exported, one
// JSON record per line in the workspace (audit.jsonl).
//
// Each record holds the SHA-256 of the previous record's line exactly as
// written (Prev), so editing, deleting or reordering any record breaks the
// chain at the record after it. A small head file beside the log
// (audit.head) holds the sequence number and hash of the last record, so
// removing or editing the last record is detected too. [Verify] reports the
// first record where the chain breaks. The trail is tamper-evident, not
// tamper-proof: someone who can write the workspace can rewrite the whole
// chain, which is why a data steward keeps exported copies
// ([Log.Records] → a workbook) and compares them.
//
// Writing a record is part of the action it records: callers do the action
// only when [Log.Append] succeeds (an export is removed again when its
// record cannot be written).
package audit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gofrs/flock"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// File names in the workspace.
const (
	// LogFile is the audit trail, one JSON record per line.
	LogFile = "audit.jsonl"
	// HeadFile holds the sequence number and hash of the last record.
	HeadFile = "audit.head"
	lockFile = "audit.lock"
)

// Bounds on what one record may hold: a record describes an action, it does
// not carry its data.
const (
	// MaxDetailText is the longest text kept in one detail value; longer
	// text is cut and marked.
	MaxDetailText = 4096
	// MaxLineBytes is the longest record line written or read.
	MaxLineBytes = 256 << 10
)

// Actions recorded by Clinsight.
const (
	ActionAsk       = "ask"
	ActionSQL       = "sql"
	ActionModelCall = "model call"
	ActionExport    = "export"
	ActionImport    = "import"
	ActionSettings  = "settings change"
	ActionSource    = "source change"
	ActionResealed  = "trail resealed"
)

// Event is what a caller records: the action, the data source it concerns
// (empty when none) and details (small values: counts, names, hashes; never
// patient data, never a secret).
type Event struct {
	Action  string
	Source  string
	Details map[string]any
}

// Record is one line of the audit trail.
type Record struct {
	// Seq numbers the records from 1, without gaps.
	Seq int64 `json:"seq"`
	// Time is when the record was written (UTC).
	Time time.Time `json:"time"`
	// Action is what happened (see the Action constants).
	Action string `json:"action"`
	// Source is the data source the action concerns.
	Source string `json:"source,omitempty"`
	// User is the operating-system user who ran Clinsight.
	User string `json:"user"`
	// Host is the computer's host name.
	Host string `json:"host"`
	// Version is Clinsight's version.
	Version string `json:"version"`
	// ModelHost is the model server configured at the time, its TLS state
	// and whether result rows may be sent to it.
	ModelHost string `json:"model_host,omitempty"`
	ModelTLS  string `json:"model_tls,omitempty"`
	SendRows  *bool  `json:"send_rows,omitempty"`
	// Details describe the action (see Event.Details).
	Details map[string]any `json:"details,omitempty"`
	// Prev is the SHA-256 (hex) of the previous record's line as written,
	// or 64 zeros for the first record.
	Prev string `json:"prev"`
}

// Context is what every record says about where it was written.
type Context struct {
	User, Host, Version string
	ModelHost, ModelTLS string
	SendRows            *bool
}

// genesis is the Prev of the first record.
var genesis = strings.Repeat("0", 64)

// head is the content of the head file.
type head struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// Log is the audit trail of one workspace. It is safe for concurrent use,
// also by several processes (the desktop app and the command line): appends
// hold an exclusive file lock.
type Log struct {
	dir    string
	mu     sync.Mutex
	now    func() time.Time
	closed bool
}

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("the workspace is closed")

// Close waits for an append in progress and refuses later ones: nothing is
// written to the workspace after it is closed.
func (l *Log) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
}

// Open returns the audit trail kept in dir (the workspace directory). The
// files are created on the first Append.
func Open(dir string) *Log { return &Log{dir: dir, now: time.Now} }

// Path is the audit trail's file.
func (l *Log) Path() string { return filepath.Join(l.dir, LogFile) }

// Append writes one record for ev with the context c, chained to the last
// record. It returns the record written. An error means nothing was
// recorded, and the caller must not go on with the action.
func (l *Log) Append(ev Event, c Context) (Record, error) {
	if strings.TrimSpace(ev.Action) == "" {
		return Record{}, errors.New("audit record without an action")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Record{}, ErrClosed
	}
	lock := flock.New(filepath.Join(l.dir, lockFile))
	if err := lock.Lock(); err != nil {
		return Record{}, fmt.Errorf("lock the audit trail: %w", err)
	}
	defer lock.Unlock()

	f, err := os.OpenFile(l.Path(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return Record{}, fmt.Errorf("open the audit trail: %w", err)
	}
	defer f.Close()
	last, end, err := lastLine(f)
	if err != nil {
		return Record{}, err
	}
	if err := l.checkHead(last); err != nil {
		return Record{}, err
	}
	rec := Record{Seq: 1, Prev: genesis}
	if last != nil {
		var prev Record
		if err := json.Unmarshal(last, &prev); err != nil {
			return Record{}, fmt.Errorf("the last record of the audit trail %s is damaged (%v): run the audit check; nothing was recorded", l.Path(), err)
		}
		rec.Seq, rec.Prev = prev.Seq+1, hashLine(last)
	}
	rec.Time = l.now().UTC()
	rec.Action, rec.Source, rec.Details = ev.Action, ev.Source, boundDetails(ev.Details)
	rec.User, rec.Host, rec.Version = c.User, c.Host, c.Version
	rec.ModelHost, rec.ModelTLS, rec.SendRows = c.ModelHost, c.ModelTLS, c.SendRows
	line, err := json.Marshal(rec)
	if err != nil {
		return Record{}, fmt.Errorf("write an audit record: %w", err)
	}
	if len(line) >= MaxLineBytes {
		return Record{}, fmt.Errorf("audit record of %d bytes is too long", len(line))
	}
	line = append(line, '\n')
	if _, err := f.WriteAt(line, end); err != nil {
		_ = f.Truncate(end) // leave no half record behind
		return Record{}, fmt.Errorf("write the audit trail %s: %w", l.Path(), err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Truncate(end)
		return Record{}, fmt.Errorf("write the audit trail %s: %w", l.Path(), err)
	}
	h, _ := json.Marshal(head{Seq: rec.Seq, Hash: hashLine(line[:len(line)-1])})
	if err := atomicfile.WriteFile(filepath.Join(l.dir, HeadFile), h, 0o600); err != nil {
		_ = f.Truncate(end)
		return Record{}, fmt.Errorf("write the audit trail head: %w", err)
	}
	return rec, nil
}

// checkHead refuses to append when the trail's last record (last, nil for
// an empty trail) is not the one the head file names: appending would
// write a new head over the evidence of a changed or deleted last record,
// a deleted trail or a deleted head.
func (l *Log) checkHead(last []byte) error {
	hb, err := os.ReadFile(filepath.Join(l.dir, HeadFile))
	if errors.Is(err, os.ErrNotExist) && last == nil {
		return nil
	}
	broken := func(what string) error {
		return fmt.Errorf("the audit trail %s %s: run the audit check; nothing was recorded", l.Path(), what)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return broken("has records but its head file is missing")
		}
		return fmt.Errorf("read the audit trail head: %w", err)
	}
	var h head
	if err := json.Unmarshal(hb, &h); err != nil {
		return broken("has a damaged head file")
	}
	var lastSeq int64
	switch {
	case last == nil && h.Seq > 0:
		return broken("is empty or missing but its head file says records were written")
	case last != nil && (h.Hash != hashLine(last) || json.Unmarshal(last, &struct{ Seq *int64 }{&lastSeq}) != nil || lastSeq != h.Seq):
		return broken("does not end with the record its head file names (the last records were changed, deleted or added)")
	}
	return nil
}

// lastLine returns the last complete line of f (without its newline) and
// the offset where the next record goes. A trail whose end is not a
// newline (a record cut short) is an error: appending would bury the damage.
func lastLine(f *os.File) ([]byte, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, fmt.Errorf("read the audit trail: %w", err)
	}
	size := st.Size()
	if size == 0 {
		return nil, 0, nil
	}
	n := min(size, int64(MaxLineBytes)+1)
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("read the audit trail: %w", err)
	}
	if buf[len(buf)-1] != '\n' {
		return nil, 0, fmt.Errorf("the audit trail %s ends with an incomplete record: run the audit check; nothing was recorded", f.Name())
	}
	body := buf[:len(buf)-1]
	i := bytes.LastIndexByte(body, '\n')
	if i < 0 && n < size {
		return nil, 0, fmt.Errorf("the last record of the audit trail %s is longer than %d bytes", f.Name(), MaxLineBytes)
	}
	return body[i+1:], size, nil
}

// hashLine is the SHA-256 (hex) of a record's line as written, without its
// newline.
func hashLine(line []byte) string {
	s := sha256.Sum256(line)
	return hex.EncodeToString(s[:])
}

// boundDetails copies details, cutting long text so a record stays small.
func boundDetails(d map[string]any) map[string]any {
	if len(d) == 0 {
		return nil
	}
	out := make(map[string]any, len(d))
	for k, v := range d {
		if s, ok := v.(string); ok && len(s) > MaxDetailText {
			cut := MaxDetailText
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			v = s[:cut] + fmt.Sprintf("… [%d bytes cut]", len(s)-cut)
		}
		out[k] = v
	}
	return out
}

// Problem says where the audit trail's chain breaks.
type Problem struct {
	// Line is the 1-based line of the file, Seq the record's sequence
	// number as written there (0 when it could not be read).
	Line int
	Seq  int64
	// What happened, for people.
	What string
}

func (p Problem) String() string {
	if p.Seq > 0 {
		return fmt.Sprintf("line %d (record %d): %s", p.Line, p.Seq, p.What)
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.What)
}

// Report is the result of [Log.Verify].
type Report struct {
	// Records is the number of records read.
	Records int
	// Problem is the first break in the chain; nil when the trail is
	// intact.
	Problem *Problem
}

// OK reports whether the trail is intact.
func (r Report) OK() bool { return r.Problem == nil }

// Verify reads the whole trail and checks the chain: every line a record,
// sequence numbers 1, 2, 3 … without gaps, each Prev the hash of the line
// before, and the last record the one the head file names. An absent trail
// is intact and empty. The error is for failures to read; a broken chain is
// reported in the Report.
func (l *Log) Verify() (Report, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rep Report
	f, err := os.Open(l.Path())
	if errors.Is(err, os.ErrNotExist) {
		if _, herr := os.Stat(filepath.Join(l.dir, HeadFile)); herr == nil {
			rep.Problem = &Problem{Line: 1, What: "the audit trail is missing but its head file says records were written"}
		}
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("open the audit trail: %w", err)
	}
	defer f.Close()
	prevHash, seq, line := genesis, int64(0), 0
	fail := func(s int64, format string, args ...any) (Report, error) {
		rep.Problem = &Problem{Line: line, Seq: s, What: fmt.Sprintf(format, args...)}
		return rep, nil
	}
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		raw, err := readLine(r)
		if errors.Is(err, io.EOF) && len(raw) == 0 {
			break
		}
		line++
		if err != nil && !errors.Is(err, io.EOF) {
			return fail(0, "%v", err)
		}
		if errors.Is(err, io.EOF) {
			return fail(0, "the record is incomplete (the trail was cut short)")
		}
		var rec Record
		if err := json.Unmarshal(raw, &rec); err != nil {
			return fail(0, "the record is not valid (changed or damaged): %v", err)
		}
		switch {
		case rec.Seq != seq+1:
			return fail(rec.Seq, "expected record %d here: a record was deleted, reordered or inserted", seq+1)
		case rec.Prev != prevHash:
			line--
			return fail(seq, "this record was changed: its hash no longer matches the one record %d holds", rec.Seq)
		}
		seq, prevHash = rec.Seq, hashLine(raw)
		rep.Records++
	}
	hb, err := os.ReadFile(filepath.Join(l.dir, HeadFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && seq == 0 {
			return rep, nil
		}
		return fail(seq, "the head file that names the last record cannot be read (%v)", err)
	}
	var h head
	if err := json.Unmarshal(hb, &h); err != nil {
		return fail(seq, "the head file that names the last record is damaged")
	}
	switch {
	case h.Seq > seq:
		return fail(seq, "the trail ends at record %d but %d records were written: the last records were deleted", seq, h.Seq)
	case h.Seq < seq:
		return fail(seq, "the trail has records after record %d, the last one written: records were added outside Clinsight", h.Seq)
	case h.Hash != prevHash:
		return fail(seq, "the last record was changed")
	}
	return rep, nil
}

// readLine reads one line without its newline; io.EOF with data means the
// line had no newline. Lines longer than MaxLineBytes are an error.
func readLine(r *bufio.Reader) ([]byte, error) {
	var out []byte
	for {
		chunk, err := r.ReadSlice('\n')
		out = append(out, chunk...)
		if len(out) > MaxLineBytes {
			return nil, fmt.Errorf("a record is longer than %d bytes", MaxLineBytes)
		}
		switch {
		case err == nil:
			return out[:len(out)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return out, err
		}
	}
}

// Records returns the records written at or after since (all when since is
// zero), oldest first, at most max (the newest max when there are more;
// max ≤ 0 means all). Lines that cannot be read are skipped: [Log.Verify]
// reports them.
func (l *Log) Records(since time.Time, max int) ([]Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.Path())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open the audit trail: %w", err)
	}
	defer f.Close()
	var out []Record
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		raw, err := readLine(r)
		if len(raw) > 0 && err == nil {
			var rec Record
			if json.Unmarshal(raw, &rec) == nil && !rec.Time.Before(since) {
				out = append(out, rec)
				if max > 0 && len(out) > 2*max {
					out = append(out[:0], out[len(out)-max:]...)
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return out, fmt.Errorf("read the audit trail: %w", err)
		}
	}
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	return out, nil
}

// Reseal starts a new chain after the trail was found broken (edited,
// cut short by a crash between the record and its head, deleted), so that
// Clinsight can record again: the broken trail and head are kept beside it
// unchanged (audit.jsonl.broken-TIMESTAMP, audit.head.broken-TIMESTAMP),
// and the new chain's first record names them, their SHA-256, the problem
// found and the reason given. An intact trail is not resealed.
func (l *Log) Reseal(reason string, c Context) (Record, error) {
	if strings.TrimSpace(reason) == "" {
		return Record{}, errors.New("give the reason for resealing the audit trail (who checked it, and why)")
	}
	lock := flock.New(filepath.Join(l.dir, lockFile))
	if err := lock.Lock(); err != nil {
		return Record{}, fmt.Errorf("lock the audit trail: %w", err)
	}
	rep, err := l.Verify()
	if err != nil {
		lock.Unlock()
		return Record{}, err
	}
	if rep.OK() {
		lock.Unlock()
		return Record{}, errors.New("the audit trail is intact: there is nothing to reseal")
	}
	details := map[string]any{"problem": rep.Problem.String(), "reason": reason, "records_read": rep.Records}
	now := l.now()
	for key, name := range map[string]string{"previous_trail": LogFile, "previous_head": HeadFile} {
		path := filepath.Join(l.dir, name)
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			lock.Unlock()
			return Record{}, fmt.Errorf("read %s: %w", path, err)
		}
		kept, err := atomicfile.MoveAside(path, atomicfile.Stamped(path, "broken", now))
		if err != nil {
			lock.Unlock()
			return Record{}, fmt.Errorf("keep the broken %s aside: %w", name, err)
		}
		sum := sha256.Sum256(b)
		details[key] = kept
		details[key+"_sha256"] = hex.EncodeToString(sum[:])
	}
	lock.Unlock()
	return l.Append(Event{Action: ActionResealed, Details: details}, c)
}
