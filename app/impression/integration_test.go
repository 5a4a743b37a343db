//go:build integration && unix

// Integration test against a real Ollama server (scripts/ollama-server.sh
// builds it): `clinsight impression` with a tiny random-weight llama model
// must complete, with a generated or a cleanly retrieved impression, never a
// crash or a hang. Run it with
//
//	CGO_ENABLED=0 go test -tags ci,integration -run Integration -v ./app/impression/
//
// The server start and the GGUF writer are copied from
// localllm/integration_test.go and localllm/integration_gguf_test.go.

package impression_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/csv"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/fs/ggml"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cli"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/localllm"
)

func TestIntegrationImpressionCLI(t *testing.T) {
	s := startOllama(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	client, err := localllm.New(localllm.Config{Host: s.url, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	gguf := filepath.Join(t.TempDir(), "tiny-llama.gguf")
	writeTinyLlama(t, gguf)
	const model = "tiny-llama:latest"
	if err := client.ImportGGUF(ctx, localllm.ImportRequest{Name: model, Path: gguf, Parameters: map[string]any{"num_thread": 1}}, nil); err != nil {
		t.Fatalf("import the tiny model: %v", err)
	}

	wsDir := t.TempDir()
	ws, err := app.Open(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = s.url; c.Models.Chat = model }); err != nil {
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

// ollamaBinary finds the server binary.
func ollamaBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("CLINSIGHT_OLLAMA_BIN"); bin != "" {
		return bin
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	bin := filepath.Join(cache, "clinsight", "ollama-0.17.4", "ollama")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no Ollama server binary: run scripts/ollama-server.sh build, or set CLINSIGHT_OLLAMA_BIN (%v)", err)
	}
	return bin
}

// ollamaServer is a real server started for a test.
type ollamaServer struct {
	url  string
	cmd  *exec.Cmd
	logs *bytes.Buffer
	done chan struct{}
}

// startOllama starts `ollama serve` on a free loopback port and waits until
// it answers.
func startOllama(t *testing.T) *ollamaServer {
	t.Helper()
	bin := ollamaBinary(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dir := t.TempDir()
	s := &ollamaServer{url: "http://127.0.0.1:" + strconv.Itoa(port), logs: &bytes.Buffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = append(os.Environ(),
		"OLLAMA_HOST=127.0.0.1:"+strconv.Itoa(port),
		"OLLAMA_MODELS="+filepath.Join(dir, "models"),
		"OLLAMA_NO_CLOUD=1",
		"OLLAMA_NUM_PARALLEL=1",
		"OLLAMA_MAX_LOADED_MODELS=2",
		"HOME="+dir, // ollama serve writes its key pair under $HOME/.ollama
	)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	// Its own process group, so that the runners it spawns are stopped too.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			t.Logf("ollama serve output (tail):\n%s", tail(s.logs.String(), 4000))
		}
	})
	c, err := localllm.New(localllm.Config{Host: s.url, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
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
			t.Fatalf("ollama serve exited: %v\n%s", s.cmd.ProcessState, tail(s.logs.String(), 4000))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("ollama serve did not answer within 30 s: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// stop terminates the server and its runners (idempotent).
func (s *ollamaServer) stop(t *testing.T) {
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
		t.Log("ollama serve did not stop on SIGTERM; killing it")
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-s.done
	}
	// Runners left in the group, if any.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Tiny random-weight llama GGUF (output is noise, but it loads in the real
// server and exercises its chat path).

// tensorF32 returns an F32 tensor of the given shape (GGUF order: the
// innermost dimension first) filled by fill.
func tensorF32(name string, fill func(i int) float32, shape ...uint64) *ggml.Tensor {
	n := uint64(1)
	for _, d := range shape {
		n *= d
	}
	buf := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(fill(int(i))))
	}
	return &ggml.Tensor{Name: name, Kind: 0 /* F32 */, Shape: shape, WriterTo: bytes.NewReader(buf)}
}

// writeTinyGGUF writes kv and tensors to path.
func writeTinyGGUF(t *testing.T, path string, kv ggml.KV, ts []*ggml.Tensor) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := ggml.WriteGGUF(f, kv, ts); err != nil {
		t.Fatalf("WriteGGUF %s: %v", path, err)
	}
}

// writeTinyLlama writes a 2-layer llama with hidden size 32 and a
// SentencePiece vocabulary of byte tokens (so any text tokenizes and the
// JSON grammar can spell anything).
func writeTinyLlama(t *testing.T, path string) {
	const (
		hidden = 32
		heads  = 4
		ff     = 64
		layers = 2
		ctx    = 1024
	)
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{2, 3, 3} // unknown, control, control
	for b := range 256 {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, 6) // byte
	}
	for _, w := range []string{"▁", "▁the", "▁yes", "▁no", "▁patient", "{", "}", "\"", ":", ","} {
		tokens = append(tokens, w)
		types = append(types, 1) // normal
	}
	scores := make([]float32, len(tokens))
	for i := range scores {
		scores[i] = -float32(i)
	}
	vocab := uint64(len(tokens))

	rng := rand.New(rand.NewPCG(1, 2))
	noise := func(int) float32 { return float32(rng.NormFloat64() * 0.2) }
	one := func(int) float32 { return 1 }
	ts := []*ggml.Tensor{
		tensorF32("token_embd.weight", noise, hidden, vocab),
		tensorF32("output_norm.weight", one, hidden),
		tensorF32("output.weight", noise, hidden, vocab),
	}
	for l := range layers {
		p := fmt.Sprintf("blk.%d.", l)
		ts = append(ts,
			tensorF32(p+"attn_norm.weight", one, hidden),
			tensorF32(p+"attn_q.weight", noise, hidden, hidden),
			tensorF32(p+"attn_k.weight", noise, hidden, hidden),
			tensorF32(p+"attn_v.weight", noise, hidden, hidden),
			tensorF32(p+"attn_output.weight", noise, hidden, hidden),
			tensorF32(p+"ffn_norm.weight", one, hidden),
			tensorF32(p+"ffn_gate.weight", noise, hidden, ff),
			tensorF32(p+"ffn_up.weight", noise, hidden, ff),
			tensorF32(p+"ffn_down.weight", noise, ff, hidden),
		)
	}
	writeTinyGGUF(t, path, ggml.KV{
		"general.architecture":                   "llama",
		"general.name":                           "clinsight-tiny-llama",
		"general.file_type":                      uint32(0), // all F32
		"llama.block_count":                      uint32(layers),
		"llama.context_length":                   uint32(ctx),
		"llama.embedding_length":                 uint32(hidden),
		"llama.feed_forward_length":              uint32(ff),
		"llama.attention.head_count":             uint32(heads),
		"llama.attention.head_count_kv":          uint32(heads),
		"llama.attention.layer_norm_rms_epsilon": float32(1e-5),
		"llama.rope.dimension_count":             uint32(hidden / heads),
		"llama.rope.freq_base":                   float32(10000),
		"llama.vocab_size":                       uint32(vocab),
		"tokenizer.ggml.model":                   "llama",
		"tokenizer.ggml.tokens":                  tokens,
		"tokenizer.ggml.scores":                  scores,
		"tokenizer.ggml.token_type":              types,
		"tokenizer.ggml.bos_token_id":            uint32(1),
		"tokenizer.ggml.eos_token_id":            uint32(2),
		"tokenizer.ggml.unknown_token_id":        uint32(0),
		"tokenizer.ggml.add_bos_token":           true,
		"tokenizer.ggml.add_eos_token":           false,
	}, ts)
}
