package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskRebuildsADamagedVectorFile: "ask" on a data source whose vector
// file was damaged answers, and says on stderr which file was damaged, where
// it was kept, and that the index is rebuilt.
func TestAskRebuildsADamagedVectorFile(t *testing.T) {
	ws, srv := cohortWorkspace(t, false)
	ask := func() (string, string) {
		srv.QueueChat(classifyReply(cliFemaleSQL), classifyReply(cliFemaleSQL)) // the second is the explanation
		out, stderr, code := run(t, ws, "ask", "--db", "demo", "How many female patients are there?")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		return out, stderr
	}
	ask()
	files, _ := filepath.Glob(filepath.Join(ws, "vectors", "*.clvs"))
	if len(files) != 1 {
		t.Fatalf("vector files %v", files)
	}
	if err := os.Truncate(files[0], 100); err != nil {
		t.Fatal(err)
	}
	_, stderr := ask()
	if !strings.Contains(stderr, "warning: The search index file "+files[0]+" was damaged") ||
		!strings.Contains(stderr, "rebuilt") || !strings.Contains(stderr, filepath.Base(files[0])+".corrupt-") {
		t.Errorf("stderr does not tell about the damaged file:\n%s", stderr)
	}
	if _, stderr = ask(); strings.Contains(stderr, "warning") {
		t.Errorf("the rebuilt file is damaged again:\n%s", stderr)
	}
}
