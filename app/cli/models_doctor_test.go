package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func TestModelsDoctor(t *testing.T) {
	t.Setenv(app.EnvOllamaHost, "")
	chat := ollamatest.Model{Name: "llama3.1:8b", ContextLength: 131072}
	sql := ollamatest.Model{Name: "qwen2.5-coder:7b", ContextLength: 32768}
	embed := ollamatest.Model{Name: "nomic-embed-text", Embedding: true, Dimension: 768}
	cases := []struct {
		name        string
		models      []ollamatest.Model
		wantMissing []string // items printed as MISSING
		wantPulls   []string
	}{
		{"no models", nil, []string{"SQL generation model", "chat model", "embeddings model"},
			[]string{"qwen2.5-coder:7b", "llama3.1:8b", "nomic-embed-text"}},
		{"only a chat model", []ollamatest.Model{chat}, []string{"SQL generation model", "embeddings model"},
			[]string{"qwen2.5-coder:7b", "nomic-embed-text"}},
		{"all models", []ollamatest.Model{chat, sql, embed}, nil, nil},
		{"a chat model with a short context", []ollamatest.Model{{Name: "llama3.1:8b", ContextLength: 2048}, sql, embed},
			[]string{"chat model"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := ollamatest.New(t, c.models...)
			ws := workspaceWithHost(t, srv.URL)
			out, stderr, code := run(t, ws, "models", "doctor")
			if wantCode := map[bool]int{true: 0, false: 1}[len(c.wantMissing) == 0]; code != wantCode {
				t.Fatalf("exit %d, want %d: %s %s", code, wantCode, out, stderr)
			}
			if !strings.Contains(out, "ok       model server: Ollama "+ollamatest.DefaultVersion) {
				t.Errorf("server line missing:\n%s", out)
			}
			var missing []string
			for _, line := range strings.Split(out, "\n") {
				if rest, ok := strings.CutPrefix(line, "MISSING  "); ok {
					missing = append(missing, rest)
				}
			}
			if len(missing) != len(c.wantMissing) {
				t.Fatalf("missing %q, want %q\n%s", missing, c.wantMissing, out)
			}
			for i, w := range c.wantMissing {
				if !strings.HasPrefix(missing[i], w) {
					t.Errorf("missing[%d] = %q, want %q…", i, missing[i], w)
				}
			}
			for _, p := range c.wantPulls {
				if !strings.Contains(out, "online:  clinsight models pull "+p+"\n") || !strings.Contains(out, "clinsight models import "+p+" FILE.gguf") {
					t.Errorf("no fix commands for %s:\n%s", p, out)
				}
			}
			if len(c.wantMissing) == 0 && !strings.Contains(out, "everything the model features need is in place") {
				t.Errorf("no all-clear:\n%s", out)
			}
			if len(c.wantMissing) == 0 && !strings.Contains(out, "embeddings of 768 dimensions") {
				t.Errorf("embedding dimension not reported:\n%s", out)
			}
		})
	}
}

func TestModelsDoctorServerDownAndJSON(t *testing.T) {
	t.Setenv(app.EnvOllamaHost, "")
	ws := workspaceWithHost(t, closedPort(t))
	out, _, code := run(t, ws, "models", "doctor")
	if code != 1 || !strings.Contains(out, "MISSING  model server") || !strings.Contains(out, "make ollama") {
		t.Fatalf("server down: %d\n%s", code, out)
	}
	out, _, code = run(t, ws, "models", "doctor", "--json")
	var rep app.DoctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("--json: %d %v %q", code, err, out)
	}
	if rep.OK() || len(rep.Checks) != 5 || !rep.Checks[0].OK || rep.Checks[1].OK {
		t.Errorf("report: %+v", rep)
	}
}
