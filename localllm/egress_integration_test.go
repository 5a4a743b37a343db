//go:build integration && unix

package localllm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

// TestIntegrationEgressCloudModelRefused: a real Ollama server (cloud
// features on, as installed) forwards the chat requests of a remote model
// to the model's remote host, prompt included; here the remote host is a
// decoy on this computer, allowed by OLLAMA_REMOTES. A request sent to the
// server directly reaches the decoy; Clinsight refuses the model and the
// decoy receives nothing from it.
func TestIntegrationEgressCloudModelRefused(t *testing.T) {
	var mu sync.Mutex
	var relayed []string
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		relayed = append(relayed, r.URL.Path+" "+string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		io.WriteString(w, `{"model":"upstream:1b","message":{"role":"assistant","content":"ok"},"done":true,"done_reason":"stop"}`+"\n")
	}))
	t.Cleanup(decoy.Close)
	received := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), relayed...)
	}

	s := ollamareal.StartWith(t, "OLLAMA_NO_CLOUD=", "OLLAMA_REMOTES=127.0.0.1")
	post := func(path string, body any) string {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, err := http.Post(s.URL+path, "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(out)
	}
	const relay = "relay:1b"
	if out := post("/api/create", map[string]any{"model": relay, "from": "upstream:1b", "remote_host": decoy.URL, "stream": false}); !strings.Contains(out, "success") {
		t.Fatalf("creating the remote model: %s", out)
	}

	c := s.Client(t, localllm.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	models, err := c.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 || models[0].RemoteHost == "" {
		t.Errorf("models = %+v, want %s with its remote host", models, relay)
	}
	prompt := "Patient 10006 (F, 71): lactate 4.1, fever. Sepsis?"
	_, err = c.Chat(ctx, localllm.ChatRequest{Model: relay, Messages: []localllm.Message{{Role: localllm.RoleUser, Content: prompt}}}, nil)
	if localllm.KindOf(err) != localllm.Refused || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("chat with the remote model: %v, want a refusal naming its host", err)
	}
	if got := received(); len(got) != 0 {
		t.Fatalf("Clinsight's chat reached the remote host: %q", got)
	}

	// The same request sent to the server directly is forwarded, prompt
	// and all: what the refusal prevents.
	out := post("/api/chat", map[string]any{"model": relay, "messages": []map[string]string{{"role": "user", "content": prompt}}, "stream": false})
	got := received()
	if len(got) != 1 || !strings.Contains(got[0], "lactate 4.1") {
		t.Fatalf("a direct chat was not forwarded to the remote host (server answered %s; remote received %q): the check above proves nothing", out, got)
	}
}
