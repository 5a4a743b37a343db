//go:build integration && unix

package cli

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

// TestIntegrationEvidenceCLITinyModel runs the evidence commands that call
// the model (search terms from a PICO, screening, field and result
// extraction) on the demo literature against a real Ollama server with a
// tiny random-weight model: each must end in a clean result or a clean
// failure, never a crash or a hang.
func TestIntegrationEvidenceCLITinyModel(t *testing.T) {
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
	files := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pico := write("pico.json", `{"P":"patients with hepatocellular carcinoma","I":"microwave ablation","C":"radiofrequency ablation","O":"local tumor progression"}`)
	criteria := write("criteria.json", `["The study treats hepatocellular carcinoma","The study compares microwave with radiofrequency ablation"]`)
	fields := write("fields.json", `[{"name":"patients","description":"number of patients enrolled"}]`)
	result := write("result.json", `{"outcome":"local tumor progression","cohort":"microwave ablation (treatment) vs radiofrequency ablation (control)","measure":"two-groups"}`)
	const query = `(microwave OR radiofrequency) AND ablation AND hepatocellular`

	// The search finds demo studies to screen and extract.
	out, stderr, code := runWithin(t, time.Minute, dir, "evidence", "search", "--db", "demo", "--query", query, "--limit", "3", "--json")
	if code != 0 {
		t.Fatalf("evidence search: %s", stderr)
	}
	var found struct {
		Hits []struct {
			ID string `json:"id"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(out), &found); err != nil || len(found.Hits) == 0 {
		t.Fatalf("evidence search printed %q (%v)", out, err)
	}
	ids := []string{}
	for _, h := range found.Hits {
		ids = append(ids, "--id", h.ID)
	}

	for _, args := range [][]string{
		{"evidence", "search", "--db", "demo", "--pico", pico, "--limit", "5"},
		{"evidence", "screen", "--db", "demo", "--pico", pico, "--query", query, "--criteria", criteria, "--limit", "3", "--json"},
		{"evidence", "screen", "--db", "demo", "--pico", pico, "--query", query, "--limit", "2"},
		append([]string{"evidence", "extract", "--db", "demo", "--fields", fields}, ids...),
		append([]string{"evidence", "extract", "--db", "demo", "--result", result, "--meta", "--json"}, ids...),
	} {
		_, stderr, code := runWithin(t, 10*time.Minute, dir, args...)
		cleanEnd(t, strings.Join(args[:2], " "), code, stderr)
	}
}
