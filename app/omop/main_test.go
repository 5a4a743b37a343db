package omop

import (
	"os"
	"testing"
)

// testTemp is a folder removed when the test binary ends, for the
// databases shared between tests.
var testTemp string

func tempDir() (string, error) {
	if testTemp != "" {
		return testTemp, nil
	}
	d, err := os.MkdirTemp("", "clinsight-omop-test-")
	testTemp = d
	return d, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testTemp != "" {
		os.RemoveAll(testTemp)
	}
	os.Exit(code)
}
