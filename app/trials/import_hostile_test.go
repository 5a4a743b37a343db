//go:build unix

package trials

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// importWithin imports paths, failing the test when the import has not
// returned after 10 seconds (then the named pipe at pipe is opened for
// writing and closed, so that a reader blocked on it ends).
func importWithin(t *testing.T, pipe string, paths ...string) (ImportResult, error) {
	t.Helper()
	type out struct {
		res ImportResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Import(context.Background(), openDB(t), paths, ImportOptions{})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("the import was still reading after 10 s")
		return ImportResult{}, nil
	}
}

// TestImportRefusesNamedPipes imports a named pipe given by name (opening
// it waited for a writer for ever, deaf to Cancel and Ctrl-C): refused at
// once; and a folder holding one beside a trial file: the pipe is skipped
// as the folder's other non-trial files are, the trial imported.
func TestImportRefusesNamedPipes(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.jsonl")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	_, err := importWithin(t, pipe, pipe)
	if err == nil || !strings.Contains(err.Error(), "pipe.jsonl is a named pipe, not a file") {
		t.Errorf("import of a named pipe: %v", err)
	}
	writeFile(t, dir, "NCT01000001.json", v2Study1)
	res, err := importWithin(t, pipe, dir)
	if err != nil || res.Trials != 1 || res.Files != 1 {
		t.Errorf("import of a folder with a named pipe: %+v, %v", res, err)
	}
}

// A ClinicalTrials.gov XML record nested deeper than xmlbound's bound is
// refused, naming the file, instead of being followed level by level
// (encoding/xml keeps an entry per open element).
func TestReadXMLRefusesDeepNesting(t *testing.T) {
	record := func(levels int) string {
		return "<clinical_study><id_info><nct_id>NCT00000001</nct_id></id_info><brief_title>t</brief_title><keyword>" +
			strings.Repeat("<a>", levels) + strings.Repeat("</a>", levels) + "</keyword></clinical_study>"
	}
	read := func(doc string) (int, error) {
		passed := 0
		err := readCTGovXML(context.Background(), strings.NewReader(doc), "deep.xml", nil, inOrder(func(Trial, []Cut) error {
			passed++
			return nil
		}))
		return passed, err
	}
	passed, err := read(record(100_000))
	var re *RecordError
	if !errors.As(err, &re) || re.File != "deep.xml" || !strings.Contains(err.Error(), "nested more than") {
		t.Fatalf("deeply nested record: err = %v, want a RecordError of deep.xml saying it is nested too deep", err)
	}
	if passed != 0 {
		t.Fatalf("%d trials passed on from a refused record", passed)
	}
	// A record nested as real ones are still reads.
	if passed, err := read(record(20)); err != nil || passed != 1 {
		t.Fatalf("record nested 20 levels: %d trials, err %v; want 1, nil", passed, err)
	}
}
