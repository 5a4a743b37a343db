package realdata

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordingTB records whether Path failed or skipped; unlike a real test,
// its Fatalf and Skipf return.
type recordingTB struct {
	testing.TB
	fatal, skip []string
}

func (r *recordingTB) Helper() {}
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Skipf(format string, args ...any) {
	r.skip = append(r.skip, fmt.Sprintf(format, args...))
}

func TestMissingDataFailsInCI(t *testing.T) {
	present := t.TempDir()
	if err := os.WriteFile(filepath.Join(present, "there.csv"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	absent := filepath.Join(t.TempDir(), "no-such-data")
	for _, tc := range []struct {
		ci, data, file string
		wantFatal      bool
		wantSkip       bool
		wantIn         string
	}{
		{ci: "true", data: absent, file: "x.csv", wantFatal: true, wantIn: absent},
		{ci: "1", data: absent, file: "x.csv", wantFatal: true, wantIn: absent},
		{ci: "true", data: present, file: "x.csv", wantFatal: true, wantIn: filepath.Join(present, "x.csv")},
		{ci: "", data: absent, file: "x.csv", wantSkip: true, wantIn: absent},
		{ci: "false", data: present, file: "x.csv", wantSkip: true, wantIn: filepath.Join(present, "x.csv")},
		{ci: "true", data: present, file: "there.csv"},
	} {
		t.Setenv(EnvCI, tc.ci)
		t.Setenv(EnvVar, tc.data)
		tb := &recordingTB{}
		got := Path(tb, tc.file)
		what := fmt.Sprintf("CI=%q %s=%s %s", tc.ci, EnvVar, tc.data, tc.file)
		if (len(tb.fatal) > 0) != tc.wantFatal || (len(tb.skip) > 0) != tc.wantSkip {
			t.Errorf("%s: Fatalf %q, Skipf %q", what, tb.fatal, tb.skip)
			continue
		}
		msgs := strings.Join(append(tb.fatal, tb.skip...), "\n")
		if !strings.Contains(msgs, tc.wantIn) {
			t.Errorf("%s: message %q does not name %s", what, msgs, tc.wantIn)
		}
		if want := filepath.Join(present, "there.csv"); !tc.wantFatal && !tc.wantSkip && got != want {
			t.Errorf("%s: Path = %q, want %q", what, got, want)
		}
	}
}

// TestMissingDataNamesEveryPlaceLooked checks the search beside the
// working directory: every shared/data candidate is named.
func TestMissingDataNamesEveryPlaceLooked(t *testing.T) {
	t.Setenv(EnvCI, "true")
	t.Setenv(EnvVar, "")
	dir := t.TempDir()
	t.Chdir(dir)
	if _, ok := Root(); ok {
		t.Skip("a shared/data exists above the temporary directory")
	}
	tb := &recordingTB{}
	Path(tb, "x")
	if len(tb.fatal) != 1 || !strings.Contains(tb.fatal[0], filepath.Join(dir, "shared", "data")) || !strings.Contains(tb.fatal[0], "/shared/data") {
		t.Errorf("Fatalf %q, Skipf %q", tb.fatal, tb.skip)
	}
}
