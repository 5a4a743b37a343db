package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func TestResolveModelHost(t *testing.T) {
	tests := []struct {
		env, saved string
		want       string
		source     HostSource
		text       string
	}{
		{"", "", DefaultOllamaHost, HostDefault, "http://127.0.0.1:11434 (default)"},
		{"", DefaultOllamaHost, DefaultOllamaHost, HostDefault, "http://127.0.0.1:11434 (default)"},
		{"", "http://gpu-box:11434/", "http://gpu-box:11434", HostFromSettings, "http://gpu-box:11434 (from the workspace settings)"},
		{"  ", "http://gpu-box:11434", "http://gpu-box:11434", HostFromSettings, "http://gpu-box:11434 (from the workspace settings)"},
		{":11500", "http://gpu-box:11434", "http://127.0.0.1:11500", HostFromEnvironment, "http://127.0.0.1:11500 (from OLLAMA_HOST)"},
		{"127.0.0.1:11500", "", "http://127.0.0.1:11500", HostFromEnvironment, "http://127.0.0.1:11500 (from OLLAMA_HOST)"},
		{"0.0.0.0", DefaultOllamaHost, DefaultOllamaHost, HostFromEnvironment, "http://127.0.0.1:11434 (from OLLAMA_HOST)"},
	}
	for _, tt := range tests {
		h, err := resolveModelHost(tt.env, tt.saved)
		if err != nil || h.URL != tt.want || h.Source != tt.source || h.String() != tt.text {
			t.Errorf("env %q, saved %q: %+v (%q), %v", tt.env, tt.saved, h, h.String(), err)
		}
	}
	// An invalid OLLAMA_HOST is an error naming it, not a silent fallback
	// to the saved host.
	_, err := resolveModelHost("ftp://x", "http://gpu-box:11434")
	if localllm.KindOf(err) != localllm.Invalid || !strings.Contains(err.Error(), "OLLAMA_HOST") || !strings.Contains(err.Error(), "ftp://x") {
		t.Errorf("invalid OLLAMA_HOST: %v", err)
	}
	if _, err := resolveModelHost("", "http://ollama.com"); localllm.KindOf(err) != localllm.Invalid {
		t.Errorf("invalid saved host: %v", err)
	}
}

// TestOllamaHostFromEnvironmentWins: a workspace saved with host A, run
// with OLLAMA_HOST=B, talks to B for every model call (the client of every
// pipeline, the embedder, the status), and does not save B.
func TestOllamaHostFromEnvironmentWins(t *testing.T) {
	ctx := context.Background()
	models := []ollamatest.Model{{Name: "llama3.1:8b"}, {Name: "nomic-embed-text", Embedding: true}}
	a := ollamatest.New(t, models...)
	b := ollamatest.New(t, models...)
	t.Setenv(EnvOllamaHost, "")
	ws := openTemp(t)
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = a.URL }); err != nil {
		t.Fatal(err)
	}

	t.Setenv(EnvOllamaHost, strings.TrimPrefix(b.URL, "http://")) // the form ollama uses
	h, err := ws.ModelHost()
	if err != nil || h.URL != b.URL || h.Source != HostFromEnvironment || h.Saved != a.URL || !h.Overrides() {
		t.Fatalf("ModelHost = %+v, %v", h, err)
	}
	if got := h.String(); got != b.URL+" (from OLLAMA_HOST)" {
		t.Errorf("String() = %q", got)
	}

	// The client every pipeline builds.
	client, err := ws.ModelClient()
	if err != nil {
		t.Fatal(err)
	}
	if client.Host() != b.URL {
		t.Errorf("client host %s", client.Host())
	}
	b.QueueChat(ollamatest.ChatReply{Content: "ok"})
	if _, err := client.Chat(ctx, localllm.ChatRequest{Model: "llama3.1:8b", Messages: []localllm.Message{{Role: localllm.RoleUser, Content: "patient data"}}}, nil); err != nil {
		t.Fatal(err)
	}
	// Retrieval's embedder and the status.
	ch := ws.ChooseEmbedder(ctx, nil)
	if ch.Lexical {
		t.Fatalf("embedder: %+v", ch)
	}
	if _, err := ch.Embedder.Embed(ctx, []string{"sepsis"}); err != nil {
		t.Fatal(err)
	}
	if st := ws.Status(ctx, client); st.Host != h || !st.Health.Reachable {
		t.Errorf("status host %+v, health %+v", st.Host, st.Health)
	}
	if n := len(a.Requests()); n != 0 {
		t.Errorf("the saved host received %d requests", n)
	}
	if len(b.ChatRequests()) != 1 || len(b.EmbedRequests()) != 1 {
		t.Errorf("OLLAMA_HOST's server received %d chat and %d embed requests", len(b.ChatRequests()), len(b.EmbedRequests()))
	}

	// Nothing was saved; without the variable the saved host applies.
	raw, err := os.ReadFile(filepath.Join(ws.Dir(), "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), b.URL) || !strings.Contains(string(raw), a.URL) {
		t.Errorf("config.json: %s", raw)
	}
	t.Setenv(EnvOllamaHost, "")
	if h, err := ws.ModelHost(); err != nil || h.URL != a.URL || h.Source != HostFromSettings {
		t.Errorf("without OLLAMA_HOST: %+v, %v", h, err)
	}

	// An invalid OLLAMA_HOST stops every model call with a message that
	// names it.
	t.Setenv(EnvOllamaHost, "ftp://nowhere")
	if _, err := ws.ModelClient(); err == nil || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Errorf("invalid OLLAMA_HOST: %v", err)
	}
	if ch := ws.ChooseEmbedder(ctx, nil); !ch.Lexical || !strings.Contains(ch.Label, "OLLAMA_HOST") {
		t.Errorf("embedder with an invalid OLLAMA_HOST: %+v", ch)
	}
}
