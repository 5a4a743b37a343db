//go:build integration && unix

package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

// runWithin executes the CLI in-process with a deadline: a hang fails the
// test instead of blocking it.
func runWithin(t *testing.T, d time.Duration, wsDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out, errb bytes.Buffer
	start := time.Now()
	f := &Factory{In: strings.NewReader(""), Out: &out, Err: &errb, Version: "test"}
	code = Run(ctx, f, append([]string{"--workspace", wsDir}, args...))
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish within %s (hang): stderr %s", args, d, errb.String())
	}
	t.Logf("%v: exit %d in %s", args, code, time.Since(start).Round(time.Millisecond))
	return out.String(), errb.String(), code
}

// cleanEnd checks that a command ended in a clean result or a clean
// failure: exit 0, or exit 1 with a last stderr line "clinsight: ...".
func cleanEnd(t *testing.T, what string, code int, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	switch {
	case code == 0:
	case code == 1 && strings.HasPrefix(lines[len(lines)-1], "clinsight: "):
		t.Logf("%s failed cleanly: %s", what, lines[len(lines)-1])
	default:
		t.Errorf("%s: exit %d, stderr %q", what, code, stderr)
	}
}

// TestIntegrationCohortTinyModel runs "ask" and "eval ehrsql --limit 5"
// against a real Ollama server with a tiny random-weight model: its output
// is noise, so the runs must end in clean results or clean failures, never
// a crash or a hang.
func TestIntegrationCohortTinyModel(t *testing.T) {
	srv := ollamareal.Start(t)
	client := srv.Client(t, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	const model = "tiny-llama:latest"
	srv.TinyModels(t, client, model, "")

	dir := t.TempDir()
	ws, err := app.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) {
		c.OllamaHost = srv.URL
		c.Models = app.Models{SQL: model, Chat: model, Embedding: "absent-embedding-model"}
	}); err != nil {
		t.Fatal(err)
	}
	ws.Close()
	if _, stderr, code := runWithin(t, 2*time.Minute, dir, "demo", "init", "--patients", "60"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}

	for _, args := range [][]string{
		{"ask", "--db", "demo", "--json", "How many female patients had a heart attack?"},
		{"ask", "--db", "demo", "--k", "1", "How many patients are there?"},
	} {
		out, stderr, code := runWithin(t, 10*time.Minute, dir, args...)
		cleanEnd(t, "ask", code, stderr)
		if code == 0 && args[3] == "--json" {
			var ans map[string]any
			if err := json.Unmarshal([]byte(out), &ans); err != nil {
				t.Errorf("ask --json printed %q: %v", out, err)
			}
			t.Logf("ask: status %v, message %v", ans["status"], ans["message"])
		}
	}

	ehrsql := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	out, stderr, code := runWithin(t, 15*time.Minute, dir, "eval", "ehrsql", "--ehrsql", ehrsql, "--limit", "5",
		"--model", model, "--out", filepath.Join(t.TempDir(), "tiny"), "--json")
	cleanEnd(t, "eval ehrsql", code, stderr)
	if code == 0 {
		var m map[string]float64
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["n"] != 5 {
			t.Errorf("eval ehrsql printed %q (%v)", out, err)
		}
		t.Logf("eval ehrsql with the tiny model: %s", strings.TrimSpace(out))
	}
}
