package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// envRunMain makes the test binary run main() instead of the tests, so a
// test can run the real clinsight binary's start-up, package initializers
// included, in a child process with an environment of its choosing.
const envRunMain = "CLINSIGHT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(envRunMain) == "1" {
		os.Args = append([]string{"clinsight"}, strings.Fields(os.Getenv(envRunMain+"_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// runMain runs clinsight with args in a child process under the locale
// variables in env and returns its stdout and stderr.
func runMain(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envRunMain+"=1", envRunMain+"_ARGS="+strings.Join(args, " "),
		"CLINSIGHT_WORKSPACE="+t.TempDir(), "OLLAMA_HOST=127.0.0.1:1", "LC_ALL=", "LC_MESSAGES=", "LANGUAGE=", "LANG=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

// TestNoFyneOutputUnderCLocale runs CLI commands under the locales of
// Debian containers, servers and CI: Fyne's initializer must not print on
// stderr (it printed "Fyne error: Error parsing user locale C" three lines
// per run), and the locale seen by the program afterwards is the user's.
func TestNoFyneOutputUnderCLocale(t *testing.T) {
	for _, env := range [][]string{
		{"LANG=C.UTF-8"},
		{"LC_ALL=C.UTF-8"},
		{"LANG=C.utf8"},
		{"LANG=POSIX"},
		{"LANG=C"},
		{"LANG=en_US.UTF-8", "LANGUAGE=C.UTF-8"},
		{"LANG=de_DE.UTF-8", "LC_MESSAGES=POSIX.UTF-8"},
	} {
		for _, args := range [][]string{{"--help"}, {"version"}, {"tables", "--json"}} {
			out, stderr, err := runMain(t, env, args...)
			if err != nil || stderr != "" || out == "" {
				t.Errorf("%v clinsight %v: %v, stderr %q, stdout %d bytes", env, args, err, stderr, len(out))
			}
		}
	}
}
