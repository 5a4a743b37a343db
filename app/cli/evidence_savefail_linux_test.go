//go:build linux

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/internal/fsizelimit"
)

// TestEvidenceDecideSaveFailureFails: a decision whose save fails (under
// a file-size limit smaller than the review, as on a full disk) makes
// "evidence decide" fail with the save's reason in words, saying that the
// change is not in the review's file, and leaves the file as it was.
func TestEvidenceDecideSaveFailureFails(t *testing.T) {
	wsDir := fsizelimit.Dir(t)
	const name = "hcc"
	path := filepath.Join(wsDir, "reviews", name+".json")
	var before []byte
	var id string
	if !fsizelimit.InChild() {
		id = searchedReview(t, wsDir, name, 1)[0]
		var err error
		if before, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CLINSIGHT_TEST_DECIDE_ID", id) // the child's environment
	}
	limit := uint64(len(before)) - 1
	if fsizelimit.InChild() {
		id = os.Getenv("CLINSIGHT_TEST_DECIDE_ID")
	}
	err := fsizelimit.Run(t, wsDir, limit, func() error {
		out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", id, "--include")
		if code == 0 {
			return nil
		}
		return errors.New(strings.TrimSpace(out + " " + stderr))
	})
	if fsizelimit.InChild() {
		return
	}
	if err == nil {
		t.Fatal("evidence decide succeeded although its save failed")
	}
	msg := err.Error()
	if !strings.Contains(msg, "review hcc could not be saved: the file would be larger than this computer allows") || !strings.Contains(msg, "are not in its file") {
		t.Errorf("the message: %s", msg)
	}
	if after, err := os.ReadFile(path); err != nil || string(after) != string(before) {
		t.Errorf("the review's file changed (%v)", err)
	}
}
