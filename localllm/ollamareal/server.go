//go:build unix

package ollamareal

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
)

// Version is the Ollama version scripts/ollama-server.sh builds.
const Version = "0.17.4"

// EnvBinary names the environment variable that overrides the server
// binary's path.
const EnvBinary = "CLINSIGHT_OLLAMA_BIN"

// Binary returns the server binary: $CLINSIGHT_OLLAMA_BIN, or the one the
// script builds into ${XDG_CACHE_HOME:-$HOME/.cache}/clinsight/ollama-0.17.4/.
// The test fails when there is none.
func Binary(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv(EnvBinary); bin != "" {
		return bin
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	bin := filepath.Join(cache, "clinsight", "ollama-"+Version, "ollama")
	if _, err := os.Stat(bin); err != nil {
		tb.Fatalf("no Ollama server binary: run scripts/ollama-server.sh build, or set %s (%v)", EnvBinary, err)
	}
	return bin
}

// Server is a real Ollama server started for a test.
type Server struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:40123".
	URL string

	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
}

// syncBuffer is a bytes.Buffer safe for the server's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Start starts `ollama serve` on a free loopback port with its own models
// directory and waits (up to 30 s) until it answers. It is stopped when the
// test ends; its output is logged when the test failed.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb)
}

// StartWith is [Start] with env added to the server's environment, after
// (and so overriding) Start's own variables, e.g. "OLLAMA_NO_CLOUD=" to let
// it forward remote models' requests.
func StartWith(tb testing.TB, env ...string) *Server {
	tb.Helper()
	bin := Binary(tb)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := tb.TempDir()
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), logs: &syncBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = append(os.Environ(),
		"OLLAMA_HOST=127.0.0.1:"+strconv.Itoa(port),
		"OLLAMA_MODELS="+filepath.Join(dir, "models"),
		"OLLAMA_NO_CLOUD=1",
		"OLLAMA_NUM_PARALLEL=1",
		"OLLAMA_MAX_LOADED_MODELS=2",
		"HOME="+dir, // ollama serve writes its key pair under $HOME/.ollama
	)
	s.cmd.Env = append(s.cmd.Env, env...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	// Its own process group, so that the runners it spawns are stopped too.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	tb.Cleanup(func() {
		s.Stop(tb)
		if tb.Failed() {
			tb.Logf("ollama serve output (tail):\n%s", Tail(s.logs.String(), 4000))
		}
	})
	c := s.Client(tb, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := c.Health(ctx)
		cancel()
		if err == nil {
			return s
		}
		select {
		case <-s.done:
			tb.Fatalf("ollama serve exited: %v\n%s", s.cmd.ProcessState, Tail(s.logs.String(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("ollama serve did not answer within 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Stop terminates the server and its runners (idempotent).
func (s *Server) Stop(tb testing.TB) {
	select {
	case <-s.done:
		return
	default:
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		tb.Log("ollama serve did not stop on SIGTERM; killing it")
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	// Runners left in the group, if any.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// Logs returns the server's output so far.
func (s *Server) Logs() string { return s.logs.String() }

// Client returns a client for the server; cfg.Host is set to its URL, and
// without a logger the client logs to the test.
func (s *Server) Client(tb testing.TB, cfg localllm.Config) *localllm.Client {
	tb.Helper()
	cfg.Host = s.URL
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(TestWriter{tb}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	c, err := localllm.New(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// TestWriter writes each line to the test log.
type TestWriter struct{ TB testing.TB }

// Write implements io.Writer.
func (w TestWriter) Write(p []byte) (int, error) {
	w.TB.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Tail returns the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TinyModels writes the tiny llama and BERT models into a temporary
// directory and imports them into the server through the client as
// chatModel and embedModel (with num_thread 1), returning the embedding
// dimension.
func (s *Server) TinyModels(tb testing.TB, c *localllm.Client, chatModel, embedModel string) int {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := tb.TempDir()
	llama, bert := filepath.Join(dir, "tiny-llama.gguf"), filepath.Join(dir, "tiny-bert.gguf")
	WriteTinyLlama(tb, llama)
	dim := WriteTinyBert(tb, bert)
	params := map[string]any{"num_thread": 1}
	if err := c.ImportGGUF(ctx, localllm.ImportRequest{Name: chatModel, Path: llama, Parameters: params}, nil); err != nil {
		tb.Fatalf("import %s: %v", chatModel, err)
	}
	if embedModel != "" {
		if err := c.ImportGGUF(ctx, localllm.ImportRequest{Name: embedModel, Path: bert, Parameters: params}, nil); err != nil {
			tb.Fatalf("import %s: %v", embedModel, err)
		}
	}
	return dim
}
