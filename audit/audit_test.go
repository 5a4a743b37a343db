package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeTrail appends n records and returns the log.
func writeTrail(t *testing.T, n int) *Log {
	t.Helper()
	l := Open(t.TempDir())
	for i := range n {
		if _, err := l.Append(Event{Action: ActionSQL, Source: "demo", Details: map[string]any{"rows": i, "sql": "SELECT 1"}},
			Context{User: "ana", Host: "laptop", Version: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func lines(t *testing.T, l *Log) [][]byte {
	t.Helper()
	b, err := os.ReadFile(l.Path())
	if err != nil {
		t.Fatal(err)
	}
	return bytes.SplitAfter(b, []byte("\n"))[:bytes.Count(b, []byte("\n"))]
}

func rewrite(t *testing.T, l *Log, ls [][]byte) {
	t.Helper()
	if err := os.WriteFile(l.Path(), bytes.Join(ls, nil), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyPassesOnAnUntouchedTrail(t *testing.T) {
	l := writeTrail(t, 5)
	rep, err := l.Verify()
	if err != nil || !rep.OK() || rep.Records != 5 {
		t.Fatalf("Verify = %+v, %v; want 5 records, intact", rep, err)
	}
	recs, err := l.Records(time.Time{}, 0)
	if err != nil || len(recs) != 5 {
		t.Fatalf("Records = %d, %v", len(recs), err)
	}
	for i, r := range recs {
		if r.Seq != int64(i+1) || r.User != "ana" || r.Host != "laptop" || r.Source != "demo" || r.Action != ActionSQL {
			t.Errorf("record %d = %+v", i, r)
		}
	}
	if recs[0].Prev != genesis || recs[1].Prev == genesis {
		t.Errorf("chain starts wrongly: %q, %q", recs[0].Prev, recs[1].Prev)
	}
	// An empty workspace has an intact, empty trail.
	rep, err = Open(t.TempDir()).Verify()
	if err != nil || !rep.OK() || rep.Records != 0 {
		t.Fatalf("empty Verify = %+v, %v", rep, err)
	}
}

func TestVerifyNamesTheRecordAfterEachKindOfTampering(t *testing.T) {
	cases := []struct {
		name     string
		tamper   func(t *testing.T, l *Log)
		wantLine int
		wantSeq  int64
		wantText string
	}{
		{"one byte changed in the middle", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			ls[2] = bytes.Replace(ls[2], []byte(`"rows":2`), []byte(`"rows":7`), 1)
			rewrite(t, l, ls)
		}, 3, 3, "changed"},
		{"one byte changed in the last record", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			ls[4] = bytes.Replace(ls[4], []byte(`"rows":4`), []byte(`"rows":5`), 1)
			rewrite(t, l, ls)
		}, 5, 5, "last record was changed"},
		{"a byte that breaks the JSON", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			ls[1] = bytes.Replace(ls[1], []byte(`{`), []byte(`[`), 1)
			rewrite(t, l, ls)
		}, 2, 0, "not valid"},
		{"one record deleted", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			rewrite(t, l, append(ls[:1:1], ls[2:]...))
		}, 2, 3, "expected record 2"},
		{"the last record deleted", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			rewrite(t, l, ls[:4])
		}, 4, 4, "deleted"},
		{"two records swapped", func(t *testing.T, l *Log) {
			ls := lines(t, l)
			ls[1], ls[2] = ls[2], ls[1]
			rewrite(t, l, ls)
		}, 2, 3, "expected record 2"},
		{"the last record truncated", func(t *testing.T, l *Log) {
			b, _ := os.ReadFile(l.Path())
			if err := os.WriteFile(l.Path(), b[:len(b)-10], 0o600); err != nil {
				t.Fatal(err)
			}
		}, 5, 0, "incomplete"},
		{"the trail deleted", func(t *testing.T, l *Log) {
			if err := os.Remove(l.Path()); err != nil {
				t.Fatal(err)
			}
		}, 1, 0, "missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := writeTrail(t, 5)
			c.tamper(t, l)
			rep, err := l.Verify()
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() {
				t.Fatal("Verify passed a tampered trail")
			}
			p := rep.Problem
			if p.Line != c.wantLine || p.Seq != c.wantSeq || !strings.Contains(p.String(), c.wantText) {
				t.Errorf("problem = %q (line %d, seq %d); want line %d, seq %d, mentioning %q", p, p.Line, p.Seq, c.wantLine, c.wantSeq, c.wantText)
			}
		})
	}
}

func TestAppendRefusesToBuryADamagedEnd(t *testing.T) {
	l := writeTrail(t, 2)
	b, _ := os.ReadFile(l.Path())
	if err := os.WriteFile(l.Path(), b[:len(b)-3], 0o600); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(l.Path())
	if _, err := l.Append(Event{Action: ActionExport}, Context{}); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Fatalf("Append on a cut trail = %v; want an error", err)
	}
	after, _ := os.ReadFile(l.Path())
	if !bytes.Equal(before, after) {
		t.Error("Append changed a damaged trail")
	}
}

func TestAppendFailsWhenTheTrailCannotBeWritten(t *testing.T) {
	dir := t.TempDir()
	l := Open(filepath.Join(dir, "missing", "dir"))
	if _, err := l.Append(Event{Action: ActionExport}, Context{}); err == nil {
		t.Fatal("Append into a missing directory succeeded")
	}
}

func TestConcurrentAppendsKeepOneChain(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	// Two Logs on one directory stand for two processes (the app and the
	// command line): only the file lock orders them.
	for w := range 4 {
		l := Open(dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := l.Append(Event{Action: ActionModelCall, Details: map[string]any{"w": w, "i": i}}, Context{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := Open(dir).Verify()
	if err != nil || !rep.OK() || rep.Records != 100 {
		t.Fatalf("Verify = %+v, %v; want 100 intact records", rep, err)
	}
}

func TestDetailsAreBounded(t *testing.T) {
	l := Open(t.TempDir())
	long := strings.Repeat("é", MaxDetailText)
	rec, err := l.Append(Event{Action: ActionAsk, Details: map[string]any{"question": long}}, Context{})
	if err != nil {
		t.Fatal(err)
	}
	q := rec.Details["question"].(string)
	if len(q) > MaxDetailText+40 || !strings.Contains(q, "bytes cut") {
		t.Errorf("detail kept %d bytes: %q…", len(q), q[:20])
	}
	recs, _ := l.Records(time.Time{}, 0)
	if len(recs) != 1 || recs[0].Details["question"] != q {
		t.Errorf("read back %v", recs)
	}
}

func TestRecordsSinceAndMax(t *testing.T) {
	l := Open(t.TempDir())
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		l.now = func() time.Time { return base.Add(time.Duration(i) * time.Hour) }
		if _, err := l.Append(Event{Action: fmt.Sprint("a", i)}, Context{}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := l.Records(base.Add(5*time.Hour), 0)
	if err != nil || len(recs) != 5 || recs[0].Action != "a5" {
		t.Fatalf("since: %d records, first %v, %v", len(recs), recs, err)
	}
	recs, _ = l.Records(time.Time{}, 3)
	if len(recs) != 3 || recs[0].Action != "a7" || recs[2].Action != "a9" {
		t.Fatalf("max 3: %v", recs)
	}
}

func TestNothingIsWrittenAfterClose(t *testing.T) {
	dir := t.TempDir()
	l := Open(dir)
	if _, err := l.Append(Event{Action: ActionSQL}, Context{}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(l.Path())
	l.Close()
	if _, err := l.Append(Event{Action: ActionSQL}, Context{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close = %v", err)
	}
	after, _ := os.ReadFile(l.Path())
	if !bytes.Equal(before, after) {
		t.Error("the trail changed after Close")
	}
}

func TestResealStartsANewChainAndKeepsTheBrokenOne(t *testing.T) {
	l := writeTrail(t, 3)
	if _, err := l.Reseal("checked", Context{}); err == nil {
		t.Fatal("an intact trail was resealed")
	}
	// A crash between a record and its head: the head is one record behind.
	b, _ := os.ReadFile(l.Path())
	extra := []byte(`{"seq":4,"action":"sql","prev":"x"}` + "\n")
	if err := os.WriteFile(l.Path(), append(b, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	broken, _ := os.ReadFile(l.Path())
	if _, err := l.Append(Event{Action: ActionSQL}, Context{}); err == nil {
		t.Fatal("appended to a broken trail")
	}
	if _, err := l.Reseal("", Context{}); err == nil {
		t.Fatal("resealed without a reason")
	}
	rec, err := l.Reseal("ana checked the crash of 26 November", Context{User: "ana"})
	if err != nil {
		t.Fatal(err)
	}
	if rec.Seq != 1 || rec.Action != ActionResealed || rec.Details["reason"] != "ana checked the crash of 26 November" || rec.Details["problem"] == "" {
		t.Fatalf("reseal record = %+v", rec)
	}
	kept, _ := rec.Details["previous_trail"].(string)
	if got, err := os.ReadFile(kept); err != nil || !bytes.Equal(got, broken) {
		t.Fatalf("the broken trail was not kept as it was (%s): %v", kept, err)
	}
	if _, err := l.Append(Event{Action: ActionSQL}, Context{}); err != nil {
		t.Fatalf("append after the reseal: %v", err)
	}
	rep, err := l.Verify()
	if err != nil || !rep.OK() || rep.Records != 2 {
		t.Fatalf("Verify after the reseal = %+v, %v", rep, err)
	}
}
