package prescreen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/datasets/demo"
)

// testDemoPath is a small demo database (60 patients) shared by the tests
// of this package, generated once by TestMain and read-only afterwards.
var testDemoPath string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "prescreen-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDemoPath = filepath.Join(dir, "demo.sqlite")
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := demo.Generate(context.Background(), testDemoPath, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
