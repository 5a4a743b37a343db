package omop

import (
	"os"
	"testing"

	"github.com/clinsight/clinsight/internal/pgtest"
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
	code := pgtest.Main(m) // stops the PostgreSQL test cluster, if one was started
	if testTemp != "" {
		os.RemoveAll(testTemp)
	}
	os.Exit(code)
}
