//go:build integration && unix

// Integration tests against a real Ollama server, built from the Go module
// proxy by scripts/ollama-server.sh. They are excluded from the normal
// suite; run them with
//
//	scripts/ollama-server.sh build   # once: 10-15 minutes on 2 cores
//	CGO_ENABLED=0 go test -tags ci,integration -run Integration -v ./localllm/
//
// The server and the tiny random-weight GGUF models come from package
// ollamareal: the binary is $CLINSIGHT_OLLAMA_BIN, or else the one the
// script builds into ${XDG_CACHE_HOME:-$HOME/.cache}/clinsight/ollama-0.17.4/.
// Each run starts its own server on a free loopback port with a temporary
// OLLAMA_MODELS and HOME, loads the models through Client.Import, and stops
// the server (and its runners) at the end.

package localllm_test

import (
	"context"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

// startOllama starts a real server for the test (see package ollamareal).
func startOllama(t *testing.T) *ollamareal.Server { return ollamareal.Start(t) }

// timed logs how long step took.
func timed(t *testing.T, name string, step func()) {
	t.Helper()
	start := time.Now()
	step()
	t.Logf("%s: %s", name, time.Since(start).Round(time.Millisecond))
}

func TestIntegrationOllama(t *testing.T) {
	start := time.Now()
	var s *ollamareal.Server
	timed(t, "start server", func() { s = startOllama(t) })
	c := s.Client(t, localllm.Config{EmbedBatchSize: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

	h, err := c.Health(ctx)
	if err != nil || h.Version != "0.17.4" {
		t.Fatalf("Health = %+v, %v", h, err)
	}

	dir := t.TempDir()
	llamaPath, bertPath := filepath.Join(dir, "tiny-llama.gguf"), filepath.Join(dir, "tiny-bert.gguf")
	ollamareal.WriteTinyLlama(t, llamaPath)
	dim := ollamareal.WriteTinyBert(t, bertPath)

	const chat, embed = "tiny-llama:latest", "tiny-bert:latest"
	params := map[string]any{"num_thread": 1}
	var statuses []string
	timed(t, "import llama", func() {
		err = c.ImportGGUF(ctx, localllm.ImportRequest{Name: chat, Path: llamaPath, Parameters: params},
			func(p localllm.Progress) {
				if len(statuses) == 0 || statuses[len(statuses)-1] != p.Status {
					statuses = append(statuses, p.Status)
				}
			})
	})
	if err != nil {
		t.Fatalf("Import llama: %v (%v)", err, errors.Unwrap(err))
	}
	if statuses[0] != "hashing" || statuses[1] != "uploading" || statuses[len(statuses)-1] != "success" {
		t.Errorf("import statuses = %q", statuses)
	}
	timed(t, "import bert", func() {
		err = c.ImportGGUF(ctx, localllm.ImportRequest{Name: embed, Path: bertPath, Parameters: params}, nil)
	})
	if err != nil {
		t.Fatalf("Import bert: %v (%v)", err, errors.Unwrap(err))
	}
	// The blob is on the server now: a second import reuses it.
	timed(t, "re-import llama", func() { err = c.Import(ctx, "tiny-llama:copy", llamaPath, nil) })
	if err != nil {
		t.Fatalf("re-import: %v", err)
	}

	t.Run("Models", func(t *testing.T) {
		ms, err := c.Models(ctx)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]localllm.Model{}
		for _, m := range ms {
			byName[m.Name] = m
		}
		if m := byName[chat]; m.Family != "llama" || m.Format != "gguf" || m.Size == 0 || m.Quantization == "" || m.ParameterSize == "" {
			t.Errorf("llama = %+v", m)
		}
		if m := byName[embed]; m.Family != "bert" || m.Size == 0 {
			t.Errorf("bert = %+v", m)
		}
		if _, ok := byName["tiny-llama:copy"]; !ok || len(ms) != 3 {
			t.Errorf("models = %+v", ms)
		}
		d, err := c.Show(ctx, embed)
		if err != nil || !slices.Contains(d.Capabilities, "embedding") || d.EmbeddingLength != dim {
			t.Errorf("Show(bert) = %+v, %v", d, err)
		}
		d, err = c.Show(ctx, chat)
		if err != nil || !slices.Contains(d.Capabilities, "completion") || d.ContextLength != ollamareal.LlamaContext {
			t.Errorf("Show(llama) = %+v, %v", d, err)
		}
	})

	opts := localllm.Options{Temperature: new(0.8), Seed: new(7), NumCtx: 512, NumPredict: 24}
	t.Run("ChatStreaming", func(t *testing.T) {
		var deltas []string
		var res localllm.ChatResult
		var err error
		timed(t, "chat (streaming, includes model load)", func() {
			res, err = c.Chat(ctx, localllm.ChatRequest{Model: chat, Options: opts,
				Messages: []localllm.Message{{Role: "system", Content: "You are a test."}, {Role: "user", Content: "Say hello to the patient."}}},
				func(d string) { deltas = append(deltas, d) })
		})
		if err != nil {
			t.Fatalf("Chat: %v (%v)", err, errors.Unwrap(err))
		}
		if strings.Join(deltas, "") != res.Content {
			t.Errorf("deltas %q do not add up to the content %q", deltas, res.Content)
		}
		u := res.Usage
		if u.Calls != 1 || u.PromptTokens == 0 || u.CompletionTokens == 0 || u.CompletionTokens > 24 ||
			u.TotalDuration == 0 || u.EvalDuration == 0 || u.Model != chat {
			t.Errorf("usage = %+v", u)
		}
		if res.DoneReason != "stop" && res.DoneReason != "length" {
			t.Errorf("done_reason = %q", res.DoneReason)
		}
		t.Logf("reply (%s, %d tokens): %q", res.DoneReason, u.CompletionTokens, res.Content)
	})

	t.Run("ChatNonStreaming", func(t *testing.T) {
		res, err := c.Chat(ctx, localllm.ChatRequest{Model: chat, Options: opts, Messages: userMsg("Hello?")}, nil)
		if err != nil {
			t.Fatalf("Chat: %v (%v)", err, errors.Unwrap(err))
		}
		if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 {
			t.Errorf("result = %+v", res)
		}
		// num_predict 1: the reply is cut off (unless the first token is
		// the end of the text).
		res, err = c.Chat(ctx, localllm.ChatRequest{Model: chat, Options: localllm.Options{Seed: new(1), NumPredict: 1, NumCtx: 512},
			Messages: userMsg("Hello?")}, nil)
		if err != nil || res.Usage.CompletionTokens > 1 || res.DoneReason == "length" != res.CutOff() {
			t.Errorf("num_predict 1: %+v, %v", res, err)
		}
	})

	t.Run("ChatJSON", func(t *testing.T) {
		schema := localllm.MustParseSchema(`{"type":"object","properties":{"eligible":{"type":"string","enum":["YES","NO","UNCERTAIN"]},"n":{"type":"integer"}},"required":["eligible","n"],"additionalProperties":false}`)
		var out struct {
			Eligible string `json:"eligible"`
			N        int    `json:"n"`
		}
		var res localllm.ChatResult
		var err error
		timed(t, "chat JSON", func() {
			res, err = c.ChatJSON(ctx, localllm.ChatRequest{Model: chat, Options: localllm.Options{Temperature: new(0.0), Seed: new(3), NumCtx: 1024, NumPredict: 64},
				Messages: userMsg("Is the patient eligible?")}, schema, &out)
		})
		if err != nil {
			// Noise under a grammar can still run past num_predict (a long
			// integer): that must be a clean BadReply within the bound.
			if localllm.KindOf(err) != localllm.BadReply || res.Attempts < 1 || res.Attempts > 3 {
				t.Fatalf("ChatJSON: kind %q, %v (attempts %d)", localllm.KindOf(err), err, res.Attempts)
			}
			t.Logf("ChatJSON failed cleanly after %d attempts: %v", res.Attempts, err)
			return
		}
		if !slices.Contains([]string{"YES", "NO", "UNCERTAIN"}, out.Eligible) {
			t.Errorf("decoded %+v from %s", out, res.Content)
		}
		t.Logf("ChatJSON: %s after %d attempt(s), %d tokens", res.Content, res.Attempts, res.Usage.Tokens())
	})

	t.Run("Embed", func(t *testing.T) {
		texts := []string{"sepsis in the icu", "knee replacement", "acute kidney injury", "sepsis", "heart failure"}
		var vecs [][]float32
		var u localllm.Usage
		var err error
		timed(t, "embed 5 texts in batches of 2 (includes model load)", func() { vecs, u, err = c.Embed(ctx, embed, texts) })
		if err != nil {
			t.Fatalf("Embed: %v (%v)", err, errors.Unwrap(err))
		}
		if len(vecs) != 5 || u.Calls != 3 || u.PromptTokens == 0 {
			t.Fatalf("%d vectors, usage %+v", len(vecs), u)
		}
		for i, v := range vecs {
			var norm float64
			for _, x := range v {
				norm += float64(x) * float64(x)
			}
			if len(v) != dim || math.Abs(norm-1) > 1e-3 {
				t.Errorf("vector %d: dimension %d, norm² %f", i, len(v), norm)
			}
		}
		// Order is preserved: the same text embeds the same alone.
		one, _, err := c.Embed(ctx, embed, texts[3:4])
		if err != nil || !closeVec(one[0], vecs[3]) || closeVec(one[0], vecs[2]) {
			t.Errorf("embedding of text 3 alone differs from its batched one: %v", err)
		}
		// The same embedder through the interface.
		var e localllm.Embedder = c.Embedder(embed, localllm.Options{}, nil)
		if vs, err := e.Embed(ctx, texts[:1]); err != nil || len(vs) != 1 || !closeVec(vs[0], vecs[0]) {
			t.Errorf("Embedder: %v", err)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		_, err := c.Chat(ctx, localllm.ChatRequest{Model: "absent-model:1b", Messages: userMsg("hi")}, nil)
		e := wantKind(t, err, localllm.ModelMissing)
		if !strings.Contains(e.Message, "ollama pull absent-model:1b") {
			t.Errorf("message = %s", e.Message)
		}
		_, _, err = c.Embed(ctx, "absent-embed", []string{"x"})
		wantKind(t, err, localllm.ModelMissing)
		// A prompt longer than num_ctx is refused, not truncated.
		long := strings.Repeat("the patient has a fever and a cough. ", 60)
		_, err = c.Chat(ctx, localllm.ChatRequest{Model: chat, Messages: userMsg(long), Options: localllm.Options{NumCtx: 128, NumPredict: 4}}, nil)
		wantKind(t, err, localllm.ContextOverflow)
		// Cancel during generation.
		cctx, ccancel := context.WithCancel(ctx)
		_, err = c.Chat(cctx, localllm.ChatRequest{Model: chat, Messages: userMsg("go on"), Options: opts},
			func(string) { ccancel() })
		ccancel()
		wantKind(t, err, localllm.Cancelled)
	})

	t.Run("ServerStopped", func(t *testing.T) {
		s.Stop(t)
		start := time.Now()
		_, err := c.Health(ctx)
		wantKind(t, err, localllm.ServerDown)
		_, err = c.Chat(ctx, localllm.ChatRequest{Model: chat, Messages: userMsg("hi")}, nil)
		wantKind(t, err, localllm.ServerDown)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("ServerDown took %s", d)
		}
	})
	t.Logf("integration test total: %s", time.Since(start).Round(time.Millisecond))
}

// closeVec reports whether two vectors are nearly equal.
func closeVec(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-4 {
			return false
		}
	}
	return true
}
