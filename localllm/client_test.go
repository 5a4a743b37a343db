package localllm_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

const (
	chatModel  = "qwen2.5-coder:7b"
	embedModel = "nomic-embed-text:latest"
)

// newServer starts a scripted server with a chat and an embedding model.
func newServer(t *testing.T) *ollamatest.Server {
	t.Helper()
	return ollamatest.New(t,
		ollamatest.Model{Name: chatModel, Family: "qwen2", ParameterSize: "7.6B", Quantization: "Q4_K_M", Size: 4_683_087_332},
		ollamatest.Model{Name: embedModel, Embedding: true, Family: "nomic-bert", ParameterSize: "137M", Quantization: "F16", Size: 274_302_450, Dimension: 32},
	)
}

// newClient returns a client for s with cfg's other fields.
func newClient(t *testing.T, s *ollamatest.Server, cfg localllm.Config) *localllm.Client {
	t.Helper()
	cfg.Host = s.URL
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := localllm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantKind fails unless err is an *localllm.Error of kind k.
func wantKind(t *testing.T, err error, k localllm.Kind) *localllm.Error {
	t.Helper()
	var e *localllm.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want a *localllm.Error of kind %s", err, err, k)
	}
	if e.Kind != k {
		t.Fatalf("kind = %s (message %q, cause %v), want %s", e.Kind, e.Message, e.Err, k)
	}
	return e
}

// closedURL returns the URL of a loopback port nobody listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestNormalizeHost(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"", "http://127.0.0.1:11434", false},
		{"127.0.0.1:11434", "http://127.0.0.1:11434", false},
		{":11434", "http://127.0.0.1:11434", false},
		{":9999", "http://127.0.0.1:9999", false},
		{"0.0.0.0:11434", "http://127.0.0.1:11434", false},
		{"[::]:11434", "http://[::1]:11434", false},
		{"localhost", "http://localhost:11434", false},
		{"http://host:1234", "http://host:1234", false},
		{"http://host:1234/", "http://host:1234", false},
		{"HTTP://host:1234", "http://host:1234", false},
		{"http://host", "http://host:80", false},
		{"https://models.example.org", "https://models.example.org:443", false},
		{"http://host:1234/ollama/", "http://host:1234/ollama", false},
		{"[::1]:11434", "http://[::1]:11434", false},
		{"::1", "http://[::1]:11434", false},
		{"  127.0.0.1:11434  ", "http://127.0.0.1:11434", false},
		{"ftp://host:21", "", true},
		{"host:notaport", "", true},
		{"host:70000", "", true},
		{"ollama.com", "", true},
		{"https://ollama.com", "", true},
		{"https://registry.ollama.ai", "", true},
		{"gpu\x1b]0;x\x07box:11434", "", true},
	}
	for _, tt := range tests {
		u, err := localllm.NormalizeHost(tt.in)
		if tt.wantErr {
			if err == nil {
				t.Errorf("NormalizeHost(%q) = %v, want an error", tt.in, u)
			}
			continue
		}
		if err != nil || u.String() != tt.want {
			t.Errorf("NormalizeHost(%q) = %v, %v, want %s", tt.in, u, err, tt.want)
		}
	}
}

func TestHostFromEnv(t *testing.T) {
	t.Setenv("OLLAMA_HOST", ":12345")
	if got := localllm.HostFromEnv(); got != "http://127.0.0.1:12345" {
		t.Errorf("HostFromEnv() = %s", got)
	}
	t.Setenv("OLLAMA_HOST", "")
	if got := localllm.HostFromEnv(); got != localllm.DefaultHost {
		t.Errorf("HostFromEnv() = %s, want the default", got)
	}
	c, err := localllm.New(localllm.Config{})
	if err != nil || c.Host() != localllm.DefaultHost {
		t.Errorf("New(zero config).Host() = %v, %v", c, err)
	}
	if _, err := localllm.New(localllm.Config{Host: "ollama.com"}); localllm.KindOf(err) != localllm.Invalid {
		t.Errorf("New(ollama.com) error = %v, want Invalid", err)
	}
	// An invalid $OLLAMA_HOST is an error, not a silent switch to the
	// default server.
	t.Setenv("OLLAMA_HOST", "ftp://nowhere")
	if _, err := localllm.New(localllm.Config{}); localllm.KindOf(err) != localllm.Invalid || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Errorf("New with an invalid OLLAMA_HOST: %v", err)
	}
}

func TestHealth(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	h, err := c.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !h.Reachable || h.Version != ollamatest.DefaultVersion || h.Host != s.URL {
		t.Errorf("Health = %+v", h)
	}
}

func TestServerNotListening(t *testing.T) {
	url := closedURL(t)
	c, err := localllm.New(localllm.Config{Host: url, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	h, err := c.Health(ctx)
	e := wantKind(t, err, localllm.ServerDown)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Health took %s, want < 3s", d)
	}
	if h.Reachable {
		t.Error("Reachable = true")
	}
	want := "Ollama is not running at " + url + ": start it (`ollama serve`) or change the host in Settings"
	if e.Message != want {
		t.Errorf("message = %q\nwant      %q", e.Message, want)
	}
	// Every call fails the same way.
	_, err = c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: []localllm.Message{{Role: "user", Content: "hi"}}}, nil)
	wantKind(t, err, localllm.ServerDown)
	_, _, err = c.Embed(ctx, embedModel, []string{"a"})
	wantKind(t, err, localllm.ServerDown)
	_, err = c.Models(ctx)
	wantKind(t, err, localllm.ServerDown)
}

func TestServerStopped(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	start := time.Now()
	_, err := c.Models(context.Background())
	wantKind(t, err, localllm.ServerDown)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestModels(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	ms, err := c.Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 {
		t.Fatalf("Models = %+v", ms)
	}
	m := ms[0]
	if m.Name != chatModel || m.Size != 4_683_087_332 || m.Family != "qwen2" || m.ParameterSize != "7.6B" ||
		m.Quantization != "Q4_K_M" || m.Format != "gguf" || m.Digest == "" {
		t.Errorf("Models[0] = %+v", m)
	}
	if ms[1].Name != embedModel || ms[1].Family != "nomic-bert" {
		t.Errorf("Models[1] = %+v", ms[1])
	}
}

func TestShow(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	d, err := c.Show(context.Background(), embedModel)
	if err != nil {
		t.Fatal(err)
	}
	if d.ContextLength != 4096 || d.EmbeddingLength != 32 || len(d.Capabilities) != 1 || d.Capabilities[0] != "embedding" {
		t.Errorf("Show = %+v", d)
	}
	_, err = c.Show(context.Background(), "nope:1b")
	e := wantKind(t, err, localllm.ModelMissing)
	if !strings.Contains(e.Message, "ollama pull nope:1b") {
		t.Errorf("message = %q", e.Message)
	}
}

func TestHTTPErrorsOnOtherEndpoints(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueFault("/api/tags", ollamatest.Fault{Status: 500, Error: "out of memory"})
	_, err := c.Models(context.Background())
	e := wantKind(t, err, localllm.Server)
	if !strings.Contains(e.Message, "out of memory") || !strings.Contains(e.Message, "HTTP 500") {
		t.Errorf("message = %q", e.Message)
	}
	s.QueueFault("/api/version", ollamatest.Fault{Raw: `{"version": `})
	_, err = c.Health(context.Background())
	wantKind(t, err, localllm.BadReply)
	// Two: the transport retries an idempotent GET once on a reused
	// connection.
	s.QueueFault("/api/tags", ollamatest.Fault{HangUp: true}, ollamatest.Fault{HangUp: true})
	_, err = c.Models(context.Background())
	wantKind(t, err, localllm.ServerDown)
}

func TestKindOfAndMessageOf(t *testing.T) {
	cause := errors.New("dial tcp: refused")
	err := errors.Join(errors.New("outer"), &localllm.Error{Kind: localllm.ServerDown, Message: "start it", Err: cause})
	if localllm.KindOf(err) != localllm.ServerDown || localllm.MessageOf(err) != "start it" {
		t.Errorf("KindOf/MessageOf = %s/%s", localllm.KindOf(err), localllm.MessageOf(err))
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not reachable with errors.Is")
	}
	if localllm.KindOf(cause) != "" || localllm.MessageOf(cause) != cause.Error() || localllm.MessageOf(nil) != "" {
		t.Error("KindOf/MessageOf of a plain error")
	}
}
