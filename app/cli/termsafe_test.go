package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// terminalHostile is text that would retitle the window (OSC 0 ended by
// BEL), clear the screen (CSI 2J), start a CSI through the C1 control U+009B
// and reverse the rest of the line (U+202E) if printed raw.
const terminalHostile = "\x1b]0;pwned\x07\x1b[2J \u009b31m \u202eevil\u202c \x7f"

// assertTerminalSafe fails when s holds a byte or character a terminal
// would act on.
func assertTerminalSafe(t *testing.T, what, s string) {
	t.Helper()
	for _, bad := range []string{"\x1b", "\x07", "\x7f", "\u009b", "\u202e", "\u202c", "\r"} {
		if strings.Contains(s, bad) {
			t.Errorf("%s holds %q raw:\n%q", what, bad, s)
		}
	}
}

func TestSQLOutputEscapesTerminalControls(t *testing.T) {
	ws, _ := cohortWorkspace(t, false)
	query := "SELECT char(27)||']0;pwned'||char(7)||char(27)||'[2J' AS x, char(155)||'31m' AS c1, char(8238)||'evil' AS bidi"
	out, stderr, code := run(t, ws, "sql", "--db", "demo", query)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertTerminalSafe(t, "sql output", out)
	for _, want := range []string{`\u001b]0;pwned\u0007\u001b[2J`, `\u009b31m`, `\u202eevil`} {
		if !strings.Contains(out, want) {
			t.Errorf("sql output lacks the escaped form %s:\n%s", want, out)
		}
	}

	// --json keeps the exact strings for programs.
	out, stderr, code = run(t, ws, "sql", "--db", "demo", "--json", query)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertTerminalSafe(t, "sql --json output", out)
	var res struct{ Rows [][]string }
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if want := []string{"\x1b]0;pwned\x07\x1b[2J", "\u009b31m", "\u202eevil"}; len(res.Rows) != 1 || strings.Join(res.Rows[0], "|") != strings.Join(want, "|") {
		t.Errorf("--json rows = %q, want %q", res.Rows, want)
	}

	// Error messages quote data (here a table name) and are escaped too.
	_, stderr, code = run(t, ws, "sql", "--db", "demo", `SELECT * FROM "`+terminalHostile+`"`)
	if code == 0 || !strings.Contains(stderr, `\u001b]0;pwned`) {
		t.Errorf("exit %d, stderr %q: want the error with the table name escaped", code, stderr)
	}
	assertTerminalSafe(t, "sql error", stderr)
}

func TestAskOutputEscapesTerminalControls(t *testing.T) {
	ws, srv := cohortWorkspace(t, false)
	answer := "There are 3 women." + terminalHostile
	// The explanation is streamed in pieces that split the escape sequences.
	chunks := []string{"There are 3 ", "women.\x1b]0;pw", "ned\x07\x1b", "[2J \u009b31m \u202e", "evil\u202c \x7f"}
	srv.QueueChat(classifyReply(cliFemaleSQL), ollamatest.ChatReply{Chunks: chunks})
	out, stderr, code := run(t, ws, "ask", "--db", "demo", "How many female patients are there?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	assertTerminalSafe(t, "ask output", out)
	assertTerminalSafe(t, "ask stderr", stderr)
	if !strings.Contains(out, `women.\u001b]0;pwned\u0007\u001b[2J \u009b31m \u202eevil\u202c \u007f`) {
		t.Errorf("ask output lacks the escaped answer:\n%s", out)
	}

	srv.QueueChat(classifyReply(cliFemaleSQL), ollamatest.ChatReply{Chunks: chunks})
	out, stderr, code = run(t, ws, "ask", "--db", "demo", "--json", "How many female patients are there?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ans struct{ Answer string }
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if ans.Answer != answer {
		t.Errorf("--json answer = %q, want %q", ans.Answer, answer)
	}
}

func TestTermWriterHoldsSplitCharacters(t *testing.T) {
	in := "é 漢 😀 \x1b[2J \u009b \u2067x\u2069 ok\n\tend"
	var buf bytes.Buffer
	w := newTermWriter(&buf)
	for i := 0; i < len(in); i++ { // one byte per write, as a stream may split them
		if n, err := w.Write([]byte{in[i]}); n != 1 || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "é 漢 😀 \\u001b[2J \\u009b \\u2067x\\u2069 ok\n\tend"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}

	// Bytes that are not UTF-8 are shown as \xNN; an incomplete character
	// left at the end is shown when flushed.
	buf.Reset()
	w.Write([]byte("a\xffb\xc0\x80c\xe6\xbc"))
	if got := buf.String(); got != `a\xffb\xc0\x80c` {
		t.Errorf("before Flush: %q", got)
	}
	w.Flush()
	if got := buf.String(); got != `a\xffb\xc0\x80c\xe6\xbc` {
		t.Errorf("after Flush: %q", got)
	}
}

func TestRunRestoresFactoryStreams(t *testing.T) {
	var out, errb bytes.Buffer
	f := &Factory{In: strings.NewReader(""), Out: &out, Err: &errb, Version: "t\x1b[2J"}
	if code := Run(t.Context(), f, []string{"--workspace", t.TempDir(), "version"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if f.Out != &out || f.Err != &errb {
		t.Error("Run left its terminal writers in the Factory")
	}
	if strings.Contains(out.String(), "\x1b") || !strings.Contains(out.String(), `t\u001b[2J`) {
		t.Errorf("version printed %q", out.String())
	}
}
