//go:build linux

package export

import (
	"bufio"
	"context"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

const envKilledChild = "CLINSIGHT_EXPORT_KILLED_CHILD"

// TestKilledExportLeavesNothingForever kills -9 a process in the middle of
// an export: its temporary workbook stays behind, and the next export into
// the same folder removes it, while files that only look similar are kept.
func TestKilledExportLeavesNothingForever(t *testing.T) {
	if dir := os.Getenv(envKilledChild); dir != "" {
		// The child: export rows that never end, saying when it started.
		rows := iter.Seq2[[]any, error](func(yield func([]any, error) bool) {
			os.Stdout.WriteString("exporting\n")
			<-time.After(time.Hour) // until killed
		})
		_, err := WriteWorkbook(context.Background(), filepath.Join(dir, "cohort.xlsx"), []Table{{Columns: []string{"n"}, Rows: rows}}, Provenance{}, Options{})
		t.Fatalf("the export ended: %v", err)
	}
	dir := t.TempDir()
	similar := []string{".cohort.xlsx.notes", "cohort.xlsx.k3j4.tmp", ".clinsight-tmp-1-a-cohort.xlsx.bak"}
	for _, n := range similar {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("PK\x03\x04 not ours"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledExportLeavesNothingForever$", "-test.count=1")
	cmd.Env = append(os.Environ(), envKilledChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "exporting" {
	}
	if sc.Text() != "exporting" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child did not start exporting: %v", sc.Err())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	left := slices.DeleteFunc(dirNames(t, dir), func(n string) bool { return slices.Contains(similar, n) })
	if len(left) != 1 || !strings.HasSuffix(left[0], ".tmp") {
		t.Fatalf("after kill -9 the folder holds %q, want one temporary workbook", left)
	}

	if _, err := WriteWorkbook(context.Background(), filepath.Join(dir, "other.xlsx"), []Table{{Columns: []string{"n"}, Rows: oneCol(3, nil)}}, Provenance{}, Options{}); err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(similar), "other.xlsx")
	slices.Sort(want)
	if got := dirNames(t, dir); !slices.Equal(got, want) {
		t.Errorf("after the next export the folder holds %q, want %q", got, want)
	}
}
