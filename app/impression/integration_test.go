//go:build integration && unix

// Integration test against a real Ollama server (scripts/ollama-server.sh
// builds it): `clinsight impression` with a tiny random-weight llama model
// must complete, with a generated or a cleanly retrieved impression, never a
// crash or a hang. Run it with
//
//	CGO_ENABLED=0 go test -tags ci,integration -run Integration -v ./app/impression/
//
// The server and the tiny model come from localllm/ollamareal.

package impression_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cli"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

func TestIntegrationImpressionCLI(t *testing.T) {
	s := ollamareal.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	client := s.Client(t, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	const model = "tiny-llama:latest"
	s.TinyModels(t, client, model, "")

	wsDir := t.TempDir()
	ws, err := app.Open(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = s.URL; c.Models.Chat = model }); err != nil {
		t.Fatal(err)
	}
	ws.Close()
	corpus := filepath.Join(t.TempDir(), "reports.csv")
	f, err := os.Create(corpus)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"uid", "findings", "impression"})
	for _, r := range impression.SyntheticReports(200, 1) {
		w.Write([]string{r.UID, r.Findings, r.Impression})
	}
	w.Flush()
	f.Close()

	runCLI := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		fac := &cli.Factory{In: strings.NewReader(""), Out: &out, Err: &errb, Version: "integration"}
		code := cli.Run(ctx, fac, append([]string{"--workspace", wsDir}, args...))
		return out.String(), errb.String(), code
	}
	db := filepath.Join(t.TempDir(), "reports.sqlite")
	if out, stderr, code := runCLI("reports", "import", corpus, "--db", db); code != 0 {
		t.Fatalf("reports import: %d %s %s", code, out, stderr)
	}
	// Short examples keep the prompt within the tiny model's 1,024-token
	// context; either outcome (generated, or retrieved after a clean model
	// error) is a completion.
	start := time.Now()
	out, stderr, code := runCLI("impression", "--db", db, "--examples", "1", "--iterations", "2", "--seed", "1", "--json",
		"Mild cardiomegaly. Small left pleural effusion.")
	t.Logf("impression with %s in %s: exit %d\nstdout: %s\nstderr: %s", model, time.Since(start).Round(time.Millisecond), code, out, stderr)
	if code != 0 || !strings.Contains(out, `"impression":`) {
		t.Fatalf("clinsight impression failed: %d %s", code, stderr)
	}
	if ctx.Err() != nil {
		t.Fatal("timed out")
	}
}
