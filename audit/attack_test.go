package audit

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestAppendRefusesToCoverTampering: a trail whose end was changed, cut,
// extended, emptied or left without its head is not appended to, since a
// new record (chained to whatever is last) and a new head would make the
// trail verify again and hide the edit; the check still names the damage.
func TestAppendRefusesToCoverTampering(t *testing.T) {
	ev := Event{Action: ActionExport, Source: "demo", Details: map[string]any{"path": "/tmp/x.xlsx"}}
	cases := map[string]func(t *testing.T, l *Log){
		"last record changed": func(t *testing.T, l *Log) {
			ls := lines(t, l)
			ls[len(ls)-1] = bytes.Replace(ls[len(ls)-1], []byte(`"rows":2`), []byte(`"rows":9`), 1)
			rewrite(t, l, ls)
		},
		"last record deleted": func(t *testing.T, l *Log) {
			ls := lines(t, l)
			rewrite(t, l, ls[:len(ls)-1])
		},
		"record added outside": func(t *testing.T, l *Log) {
			// A well-chained record written by another program that does
			// not update the head file.
			headPath := filepath.Join(filepath.Dir(l.Path()), HeadFile)
			h, err := os.ReadFile(headPath)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Append(Event{Action: ActionSQL, Details: map[string]any{"sql": "forged"}}, Context{}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(headPath, h, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		"head deleted": func(t *testing.T, l *Log) {
			if err := os.Remove(filepath.Join(filepath.Dir(l.Path()), HeadFile)); err != nil {
				t.Fatal(err)
			}
		},
		"trail deleted": func(t *testing.T, l *Log) {
			if err := os.Remove(l.Path()); err != nil {
				t.Fatal(err)
			}
		},
		"trail emptied": func(t *testing.T, l *Log) {
			rewrite(t, l, nil)
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			l := writeTrail(t, 3)
			tamper(t, l)
			if rep, err := l.Verify(); err != nil || rep.OK() {
				t.Fatalf("Verify after tampering = %+v, %v; want a problem", rep, err)
			}
			if _, err := l.Append(ev, Context{User: "ana"}); err == nil || !strings.Contains(err.Error(), "nothing was recorded") {
				t.Errorf("Append on a tampered trail = %v, want a refusal", err)
			}
			if rep, err := l.Verify(); err != nil || rep.OK() {
				t.Errorf("Verify after an append on the tampered trail = %+v, %v: the tampering was hidden", rep, err)
			}
		})
	}
}

// TestAppendFromTwoLogsAtOnce: two Logs on one workspace (as the desktop
// app and the command line, each with its own file descriptor and lock)
// appending at the same time leave one intact chain with every record.
func TestAppendFromTwoLogsAtOnce(t *testing.T) {
	dir := t.TempDir()
	a, b := Open(dir), Open(dir)
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for _, l := range []*Log{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := l.Append(Event{Action: ActionSQL, Details: map[string]any{"sql": "SELECT 1"}}, Context{}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	rep, err := a.Verify()
	if err != nil || !rep.OK() || rep.Records != 2*n {
		t.Fatalf("Verify = %+v (%v), %v; want %d records, intact", rep, rep.Problem, err, 2*n)
	}
}

// TestHugeDetailIsBounded: a detail value of megabytes (a pasted
// statement) is cut, and the record is written and verifies.
func TestHugeDetailIsBounded(t *testing.T) {
	l := Open(t.TempDir())
	big := strings.Repeat("é", 3<<20)
	rec, err := l.Append(Event{Action: ActionSQL, Details: map[string]any{"sql": big}}, Context{})
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := rec.Details["sql"].(string); len(s) > MaxDetailText+64 || !strings.Contains(s, "bytes cut]") {
		t.Errorf("detail of %d bytes kept", len(s))
	}
	if st, err := os.Stat(l.Path()); err != nil || st.Size() > MaxLineBytes {
		t.Errorf("trail size %v, %v", st, err)
	}
	if rep, err := l.Verify(); err != nil || !rep.OK() {
		t.Errorf("Verify = %+v, %v", rep, err)
	}
}
