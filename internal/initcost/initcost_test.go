package initcost

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cli"
)

// maxInitBytes is what one of Clinsight's packages may allocate while
// initialising. At this change the largest was datasets with 6 KB; before
// it app/evidence allocated 188 KB (its result schemas parsed at start),
// app/cohort 129 KB and app 52 KB (a regular expression with {0,63}).
const maxInitBytes = 16 << 10

// initLine is one package's line of GODEBUG=inittrace=1.
type initLine struct {
	pkg           string
	bytes, allocs int
}

// parseInitTrace reads the lines "init PKG @T ms, C ms clock, B bytes, A
// allocs" of GODEBUG=inittrace=1.
func parseInitTrace(out []byte) []initLine {
	var lines []initLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			continue
		}
		lines = append(lines, initLine{pkg: f[1], bytes: b, allocs: a})
	}
	return lines
}

// TestHelp runs clinsight --help. It is here so that this test binary
// reaches the code the clinsight binary reaches from main: the linker
// drops the initialisation of a package-level map that nothing reachable
// uses, so without it the trace below would leave out the tables only the
// commands use.
func TestHelp(t *testing.T) {
	var out, errOut bytes.Buffer
	f := &cli.Factory{In: strings.NewReader(""), Out: &out, Err: &errOut, Version: "test"}
	if code := cli.Run(context.Background(), f, []string{"--help"}); code != 0 {
		t.Fatalf("clinsight --help: exit code %d, stderr %q", code, errOut.String())
	}
	if !strings.Contains(out.String(), "Usage:") {
		t.Errorf("clinsight --help printed no usage:\n%s", out.String())
	}
}

func TestClinsightPackagesInitialiseCheaply(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("running the test binary with GODEBUG=inittrace=1: %v\n%s", err, out)
	}
	var own, total int
	for _, l := range parseInitTrace(out) {
		if !strings.HasPrefix(l.pkg, "github.com/clinsight/clinsight/") {
			continue
		}
		own++
		total += l.bytes
		if l.bytes > maxInitBytes {
			t.Errorf("%s allocates %d bytes (%d allocations) while initialising, more than %d: build its package-level regular expressions and tables on first use (internal/lazyre, sync.OnceValue, textsearch.WordSet)",
				l.pkg, l.bytes, l.allocs, maxInitBytes)
		}
	}
	// app/cli links app, app/evidence, app/cohort, datasets, ...: if few
	// are listed the trace was not read.
	if own < 10 {
		t.Fatalf("the init trace lists %d of Clinsight's packages, want at least 10:\n%s", own, out)
	}
	t.Logf("%d of Clinsight's packages allocate %d bytes in all while initialising", own, total)
}

func TestParseInitTrace(t *testing.T) {
	got := parseInitTrace([]byte("init internal/bytealg @0.006 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/clinsight/clinsight/app @39 ms, 1.0 ms clock, 51840 bytes, 735 allocs\nsomething else\n"))
	if len(got) != 2 || got[1] != (initLine{"github.com/clinsight/clinsight/app", 51840, 735}) {
		t.Errorf("parseInitTrace = %+v", got)
	}
}
