package localllm_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// writeOllamaKey writes an Ollama identity key (the ed25519 key the ollama
// command keeps in ~/.ollama/id_ed25519, registered with an ollama.com
// account) under home.
func writeOllamaKey(t *testing.T, home string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(home, ".ollama")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id_ed25519"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestEgressOllamaAuthNeverSigns: with OLLAMA_AUTH set in the environment
// (as for the ollama command talking to ollama.com), the Ollama library
// signs each request with the user's ollama.com key from ~/.ollama and
// adds the public key and signature as an Authorization header and a ts
// parameter. Clinsight's requests carry neither, and every call works;
// without the key, every call fails before its request is sent, saying why.
func TestEgressOllamaAuthNeverSigns(t *testing.T) {
	t.Setenv("OLLAMA_AUTH", "1")
	for _, withKey := range []bool{true, false} {
		home := t.TempDir()
		if withKey {
			writeOllamaKey(t, home)
		}
		t.Setenv("HOME", home)
		for name, op := range clientOps(t) {
			s := newServer(t)
			s.QueueChat(ollamatest.ChatReply{Content: "{}"})
			c := newClient(t, s, localllm.Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := op(ctx, c)
			cancel()
			reqs := s.Requests()
			if !withKey {
				if localllm.KindOf(err) != localllm.Invalid || !strings.Contains(err.Error(), "remove OLLAMA_AUTH") {
					t.Errorf("no key: %s: %v, want an error naming OLLAMA_AUTH", name, err)
				}
				for _, r := range reqs {
					// Import's blob check is Clinsight's own request.
					if r.Method != http.MethodHead {
						t.Errorf("no key: %s: %s %s reached the server", name, r.Method, r.Path)
					}
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			if len(reqs) == 0 {
				t.Errorf("%s: no request reached the server", name)
			}
			for _, r := range reqs {
				if a := r.Header.Get("Authorization"); a != "" {
					t.Errorf("%s: %s %s carries Authorization %q", name, r.Method, r.Path, a)
				}
				if r.Query != "" {
					t.Errorf("%s: %s %s carries the query %q", name, r.Method, r.Path, r.Query)
				}
			}
		}
	}
}

// otherAddress returns an address of this computer that is not loopback
// (net/http never sends a request for a loopback host to a proxy, so only
// such an address shows whether the client reads the proxy variables).
func otherAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this computer has no network address but loopback, for which proxy settings never apply")
	return ""
}

// TestEgressProxySettingsIgnored: with every proxy variable net/http reads
// (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, in both cases; NO_PROXY empty)
// pointing at a tripwire, every call to a model server on another computer
// (one of this computer's own network addresses, plain http allowed) goes
// straight to the server: the tripwire is never contacted. The variables
// are set in a child process from its start, since net/http reads them once.
func TestEgressProxySettingsIgnored(t *testing.T) {
	ip := otherAddress(t)
	tw := ollamatest.NewTripwire(t)
	if !ollamatest.InChild(t, ollamatest.ProxyVariables(tw.URL)...) {
		if n := tw.Conns(t); n != 0 {
			t.Fatalf("the proxy received %d connections", n)
		}
		return
	}
	if os.Getenv("HTTP_PROXY") == "" {
		t.Fatal("the child runs without the proxy variables")
	}
	for name, op := range clientOps(t) {
		s := ollamatest.NewOn(t, net.JoinHostPort(ip, "0"), ollamatest.Model{Name: chatModel}, ollamatest.Model{Name: embedModel, Embedding: true, Dimension: 8})
		s.QueueChat(ollamatest.ChatReply{Content: "{}"})
		c := newClient(t, s, localllm.Config{AllowPlainHTTP: true, DialTimeout: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := op(ctx, c)
		cancel()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if len(s.Requests()) == 0 {
			t.Errorf("%s: no request reached the server at %s", name, s.URL)
		}
	}
}

// TestEgressCloudModelRefused: Ollama forwards every chat request for a
// remote model (a "cloud" model such as gpt-oss:120b-cloud, installed by
// `ollama pull`, or one created with a remote_host) to that remote host,
// ollama.com by default: the prompt leaves the model server. Clinsight
// refuses such a model before sending anything, for chat, JSON chat and
// embeddings, naming the model and where it would go; the remote host
// (a decoy here) receives nothing. A model that runs on the server works.
func TestEgressCloudModelRefused(t *testing.T) {
	var mu sync.Mutex
	var relayed []string
	decoy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		relayed = append(relayed, string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(decoy.Close)
	const cloudChat, cloudEmbed = "gpt-oss:120b-cloud", "embeddinggemma:cloud"
	s := ollamatest.New(t,
		ollamatest.Model{Name: chatModel},
		ollamatest.Model{Name: cloudChat, RemoteHost: decoy.URL},
		ollamatest.Model{Name: cloudEmbed, Embedding: true, RemoteHost: decoy.URL},
	)
	for range 4 {
		s.QueueChat(ollamatest.ChatReply{Content: "{}"})
	}
	c := newClient(t, s, localllm.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prompt := userMsg("Patient 10006 (F, 71): lactate 4.1, fever. Sepsis?")
	calls := map[string]func() error{
		"chat": func() error {
			_, err := c.Chat(ctx, localllm.ChatRequest{Model: cloudChat, Messages: prompt}, nil)
			return err
		},
		"JSON chat": func() error {
			_, err := c.ChatJSON(ctx, localllm.ChatRequest{Model: cloudChat, Messages: prompt}, localllm.MustParseSchema(`{"type":"object"}`), nil)
			return err
		},
		"embed": func() error {
			_, _, err := c.Embed(ctx, cloudEmbed, []string{"Patient 10006 has sepsis"})
			return err
		},
	}
	for name, call := range calls {
		for range 2 { // the second time from what the client remembers
			err := call()
			if localllm.KindOf(err) != localllm.Refused {
				t.Errorf("%s: %v, want a refusal", name, err)
				continue
			}
			for _, want := range []string{decoy.URL, "Settings"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: message %q lacks %q", name, err, want)
				}
			}
		}
	}
	mu.Lock()
	if len(relayed) != 0 {
		t.Errorf("the remote host received %d requests: %q", len(relayed), relayed)
	}
	mu.Unlock()
	if n := s.Count(http.MethodPost, "/api/chat") + s.Count(http.MethodPost, "/api/embed"); n != 0 {
		t.Errorf("%d chat or embedding requests reached the server", n)
	}
	if _, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: prompt}, nil); err != nil {
		t.Fatalf("a model that runs on the server: %v", err)
	}
}

// TestEgressPromptOnlyToAnOllamaServer: a host that is not an Ollama server
// (a web or cloud API answering 404 to Ollama's paths) never receives a
// prompt: the model check before it fails, and nothing more is sent.
func TestEgressPromptOnlyToAnOllamaServer(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		http.NotFound(w, r)
	}))
	t.Cleanup(other.Close)
	c, err := localllm.New(localllm.Config{Host: other.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("Patient 10006 has sepsis.")}, nil); err == nil {
		t.Error("chat succeeded")
	}
	if _, _, err := c.Embed(ctx, embedModel, []string{"Patient 10006 has sepsis."}); err == nil {
		t.Error("embedding succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range paths {
		if p != "POST /api/show" {
			t.Errorf("the host received %s", p)
		}
	}
}
