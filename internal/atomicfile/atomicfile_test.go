package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// hashFile returns the SHA-256 of a file's content.
func hashFile(t *testing.T, path string) [32]byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(raw)
}

// names lists a directory.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// failAfter writes up to n bytes, then fails.
type failAfter struct {
	w io.Writer
	n int
}

var errInjected = errors.New("injected write failure")

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		m, _ := f.w.Write(p[:f.n])
		f.n -= m
		return m, errInjected
	}
	m, err := f.w.Write(p)
	f.n -= m
	return m, err
}

func TestWriteFailureKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plot.png")
	if err := WriteFile(path, bytes.Repeat([]byte("good "), 10_000), 0o644); err != nil {
		t.Fatal(err)
	}
	before := hashFile(t, path)
	err := Write(path, 0o644, func(w io.Writer) error {
		fw := &failAfter{w: w, n: 70_000}
		_, err := fw.Write(bytes.Repeat([]byte("new! "), 100_000))
		return err
	})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), path) {
		t.Fatalf("error %v, want the injected failure naming the file", err)
	}
	if hashFile(t, path) != before {
		t.Error("the old file changed after a failed write")
	}
	if got := names(t, dir); !slices.Equal(got, []string{"plot.png"}) {
		t.Errorf("folder holds %q after a failed write, want only plot.png", got)
	}
}

func TestCommitReplacesKeepsModeAndFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	if err := WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v, want 0600", fi.Mode().Perm())
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file mode %v, want the old 0640", fi.Mode().Perm())
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("config.json", link); err != nil {
		t.Skip("no symbolic links:", err)
	}
	if err := WriteFile(link, []byte("three"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by a file")
	}
	if raw, _ := os.ReadFile(path); string(raw) != "three" {
		t.Errorf("link target holds %q, want three", raw)
	}
	if err := WriteFile(dir, []byte("x"), 0o600); err == nil {
		t.Error("writing over a folder succeeded")
	}
}

func TestDiscardLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "a.xlsx"), 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	if _, ok := parseTempName(filepath.Base(f.Name())); !ok {
		t.Errorf("temporary name %q does not match the package's pattern", f.Name())
	}
	f.Discard()
	f.Discard()
	if got := names(t, dir); len(got) != 0 {
		t.Errorf("folder holds %q after Discard", got)
	}
	if err := f.Commit(); err == nil {
		t.Error("Commit after Discard succeeded")
	}
}

func TestParseTempName(t *testing.T) {
	for name, want := range map[string]bool{
		".clinsight-tmp-123-k3j4-report.xlsx.tmp":    true,
		".clinsight-tmp-1-0-a.tmp":                   true,
		".clinsight-tmp-123-k3j4-a-b-c.png.tmp":      true,
		".clinsight-tmp-123-k3j4-report.xlsx":        false, // no .tmp
		".clinsight-tmp-0123-k3j4-report.xlsx.tmp":   false, // leading zero
		".clinsight-tmp--k3j4-report.xlsx.tmp":       false,
		".clinsight-tmp-123-K3J4-report.xlsx.tmp":    false, // upper case
		".clinsight-tmp-123-k3j4-.tmp":               false, // no name
		".clinsight-tmp-12a-k3j4-report.xlsx.tmp":    false,
		"clinsight-tmp-123-k3j4-report.xlsx.tmp":     false,
		".clinsight-tmpx-123-k3j4-report.xlsx.tmp":   false,
		".clinsight-tmp-123-k3j4_report.xlsx.tmp":    false,
		".clinsight-tmp-99999999999-k-report.tmp":    false, // 11-digit PID
		".clinsight-tmp-1-kkkkkkkkkkkkkk-report.tmp": false, // 14 random chars
	} {
		if _, got := parseTempName(name); got != want {
			t.Errorf("parseTempName(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{
		".report.xlsx.k3j4.tmp": true,
		".report.XLSX.k3j4.tmp": true,
		".report.xlsx.K3J4.tmp": false,
		".report.csv.k3j4.tmp":  false,
		".xlsx.k3j4.tmp":        false,
		"report.xlsx.k3j4.tmp":  false,
		".report.xlsx.tmp":      false,
		".report.xlsx..tmp":     false,
	} {
		if got := isLegacyWorkbookTemp(name); got != want {
			t.Errorf("isLegacyWorkbookTemp(%q) = %v, want %v", name, got, want)
		}
	}
}

// writeAged writes a file and sets its modification time age ago.
func writeAged(t *testing.T, path string, data []byte, age time.Duration) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-age)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

func TestStaleTemporaryFilesAreRemovedOnTheNextWrite(t *testing.T) {
	dir := t.TempDir()
	zip := []byte("PK\x03\x04 partial workbook")
	gone := []string{
		// A process that no longer exists (PID far above pid_max).
		".clinsight-tmp-2147483646-abc-report.xlsx.tmp",
		// This process's PID, unlocked for over a minute: a PID reused
		// after a crash.
		tempName(os.Getpid(), 77, "plot.png"),
		// The exporter of earlier versions, an hour old.
		".report.xlsx.k3j4h2.tmp",
		".empty.xlsx.1.tmp",
	}
	kept := []string{
		// Similar names that are not ours.
		".clinsight-tmp-2147483646-abc-report.xlsx",
		".clinsight-tmp-2147483646-ABC-report.xlsx.tmp",
		"clinsight-tmp-2147483646-abc-report.xlsx.tmp",
		".report.csv.k3j4h2.tmp",
		".notes.xlsx.k3j4h2.tmp.bak",
		"report.xlsx",
		// An earlier exporter's workbook that is not a zip: not ours.
		".text.xlsx.k3j4h2.tmp",
	}
	for _, n := range gone {
		data := zip
		if strings.HasPrefix(n, ".empty") {
			data = nil
		}
		writeAged(t, filepath.Join(dir, n), data, 2*time.Hour)
	}
	for _, n := range kept {
		data := zip
		if strings.HasPrefix(n, ".text") {
			data = []byte("plain text, not a workbook")
		}
		writeAged(t, filepath.Join(dir, n), data, 48*time.Hour)
	}
	// A fresh legacy workbook may still be written by an old version.
	fresh := ".fresh.xlsx.k3j4h2.tmp"
	writeAged(t, filepath.Join(dir, fresh), zip, time.Minute)
	kept = append(kept, fresh)
	// A fresh temporary file of a live process (this one), not yet
	// locked: the instant between create and lock.
	young := tempName(os.Getpid(), 78, "plot.png")
	writeAged(t, filepath.Join(dir, young), nil, 0)
	kept = append(kept, young)
	// A writer in progress holds its lock, however old the file.
	live, err := Create(filepath.Join(dir, "live.xlsx"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Discard()
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(live.Name(), old, old); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, filepath.Base(live.Name()))
	// A subfolder with a matching name is not a file.
	sub := ".clinsight-tmp-2147483646-abd-folder.tmp"
	if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, sub)

	if err := WriteFile(filepath.Join(dir, "report.xlsx"), zip, 0o644); err != nil {
		t.Fatal(err)
	}
	got := names(t, dir)
	for _, n := range gone {
		if slices.Contains(got, n) {
			t.Errorf("stale %s was not removed", n)
		}
	}
	for _, n := range kept {
		if !slices.Contains(got, n) {
			t.Errorf("%s was removed, but is not a stale temporary file of Clinsight", n)
		}
	}
	if len(got) != len(kept) {
		t.Errorf("folder holds %q, want %q", got, kept)
	}
}

func TestMoveAsideNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	now := time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)
	var backups []string
	for _, content := range []string{"{broken one", "{broken two", "{broken three"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		b, err := MoveAside(path, Stamped(path, "corrupt", now)) // the same second each time
		if err != nil {
			t.Fatal(err)
		}
		backups = append(backups, b)
		if raw, err := os.ReadFile(b); err != nil || string(raw) != content {
			t.Errorf("%s holds %q (%v), want %q", b, raw, err, content)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists after MoveAside", path)
		}
	}
	want := []string{"config.json.corrupt-20250304-050607", "config.json.corrupt-20250304-050607-2", "config.json.corrupt-20250304-050607-3"}
	for i, b := range backups {
		if filepath.Base(b) != want[i] {
			t.Errorf("backup %d is %s, want %s", i, filepath.Base(b), want[i])
		}
	}
	for i, content := range []string{"{broken one", "{broken two", "{broken three"} {
		if raw, _ := os.ReadFile(backups[i]); string(raw) != content {
			t.Errorf("backup %s was overwritten: %q", backups[i], raw)
		}
	}
	if _, err := MoveAside(path, Stamped(path, "corrupt", now)); err == nil {
		t.Error("moving a missing file aside succeeded")
	}
}
