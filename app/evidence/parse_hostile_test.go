//go:build unix

package evidence

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clinsight/clinsight/internal/pipetest"
)

// TestImportRefusesWhatIsNotAFile imports a named pipe (opening it waited
// for a writer for ever, deaf to Cancel and Ctrl-C), a folder and a
// device: each is refused at once, saying what it is, and the corpus is
// unchanged.
func TestImportRefusesWhatIsNotAFile(t *testing.T) {
	db, _ := openDB(t)
	importFixtures(t, db)
	before := corpusDigest(t, db)
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.ris")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	folder := filepath.Join(dir, "folder.ris")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path, want string
		opts       ImportOptions
	}{
		{pipe, "pipe.ris is a named pipe, not a file", ImportOptions{}},
		{folder, "folder.ris is a folder, not a file", ImportOptions{}},
		{"/dev/zero", "zero is a device, not a file", ImportOptions{Format: RIS}},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		err := pipetest.CallWithin(t, pipe, func() error {
			_, err := Import(ctx, db, c.path, c.opts)
			return err
		})
		cancel()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("import %s: %v, want %q", c.path, err, c.want)
		}
	}
	if corpusDigest(t, db) != before {
		t.Error("the corpus changed")
	}
}
