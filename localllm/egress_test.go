package localllm_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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
