package localllm_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// otherCA returns a self-signed CA certificate (PEM) that signed nothing
// the test servers present.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(42),
		Subject:               pkix.Name{CommonName: "Other Site CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// writeCA writes pem to a file in a temporary directory.
func writeCA(t *testing.T, pem []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "site-ca.pem")
	if err := os.WriteFile(path, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newTLSServer(t *testing.T) *ollamatest.Server {
	t.Helper()
	return ollamatest.NewTLS(t,
		ollamatest.Model{Name: chatModel, Family: "qwen2"},
		ollamatest.Model{Name: embedModel, Embedding: true, Family: "nomic-bert", Dimension: 8},
	)
}

// TestSelfSignedServerNeedsTheConfiguredCA: an https server with a
// self-signed certificate is refused (nothing sent, a message pointing to
// the CA file) until its certificate is configured as the CA; then every
// call works.
func TestSelfSignedServerNeedsTheConfiguredCA(t *testing.T) {
	s := newTLSServer(t)
	if !strings.HasPrefix(s.URL, "https://") {
		t.Fatalf("server URL %s", s.URL)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := newClient(t, s, localllm.Config{})
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("Patient 10006 has sepsis.")}, nil)
	e := wantKind(t, err, localllm.ServerDown)
	if !strings.Contains(e.Message, "does not trust") || !strings.Contains(e.Message, "CA file") || !strings.Contains(e.Message, "nothing was sent") {
		t.Errorf("message %q", e.Message)
	}
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("the server received %d requests through an untrusted connection", n)
	}

	// Another CA is not enough: the configured bundle replaces, not adds
	// to, what is trusted.
	c = newClient(t, s, localllm.Config{CAFile: writeCA(t, otherCA(t))})
	if _, err := c.Health(ctx); localllm.KindOf(err) != localllm.ServerDown {
		t.Fatalf("health with another CA: %v", err)
	}

	c = newClient(t, s, localllm.Config{CAFile: writeCA(t, s.CertificatePEM())})
	h, err := c.Health(ctx)
	if err != nil || !h.Reachable {
		t.Fatalf("health with the CA: %+v, %v", h, err)
	}
	s.QueueChat(ollamatest.ChatReply{Content: "Sepsis."})
	res, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("Patient 10006 has sepsis.")}, nil)
	if err != nil || res.Content == "" {
		t.Fatalf("chat with the CA: %+v, %v", res, err)
	}
	if _, _, err := c.Embed(ctx, embedModel, []string{"sepsis"}); err != nil {
		t.Fatalf("embed with the CA: %v", err)
	}
}

// TestCAFileErrors: a missing file and a file without certificates are
// refused by New with a message naming the file.
func TestCAFileErrors(t *testing.T) {
	s := newTLSServer(t)
	for name, path := range map[string]string{
		"missing": filepath.Join(t.TempDir(), "nope.pem"),
		"not PEM": writeCA(t, []byte("this is not a certificate\n")),
	} {
		_, err := localllm.New(localllm.Config{Host: s.URL, CAFile: path})
		e := wantKind(t, err, localllm.Invalid)
		if !strings.Contains(e.Message, path) {
			t.Errorf("%s: message %q does not name %s", name, e.Message, path)
		}
	}
	// A plain http server does not answer a TLS client with a certificate
	// error but with a clear "not https".
	plain := newServer(t)
	hc, err := localllm.New(localllm.Config{Host: strings.Replace(plain.URL, "http://", "https://", 1), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = hc.Health(ctx)
	if e := wantKind(t, err, localllm.ServerDown); !strings.Contains(e.Message, "does not answer in https") {
		t.Errorf("https to an http server: %q", e.Message)
	}
}

// TestBearerTokenReachesTheServerOnly: the token is sent on every request
// to the host (chat, embed, list, health), a server that requires it
// refuses a client without it with a message about the token, and the
// token appears in no error, no log record (at debug level) and no
// formatted or JSON form of the configuration.
func TestBearerTokenReachesTheServerOnly(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
	s := newTLSServer(t)
	s.RequireToken(token)
	ca := writeCA(t, s.CertificatePEM())
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var errs []string

	// Without the token: 401, and a message a user can act on.
	c := newClient(t, s, localllm.Config{CAFile: ca, Logger: logger})
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hello")}, nil)
	if e := wantKind(t, err, localllm.Server); !strings.Contains(e.Message, "HTTP 401") || !strings.Contains(e.Message, "access token") {
		t.Errorf("without token: %q", e.Message)
	}

	// A wrong token: 401 naming where the token comes from, not the token.
	cfg := localllm.Config{CAFile: ca, Logger: logger, BearerToken: localllm.Secret(token + "x")}
	c = newClient(t, s, cfg)
	_, err = c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hello")}, nil)
	e := wantKind(t, err, localllm.Server)
	if !strings.Contains(e.Message, "token was not accepted") {
		t.Errorf("wrong token: %q", e.Message)
	}
	errs = append(errs, fmt.Sprintf("%v %+v %#v", err, err, e))

	// The right token: every call works and carries it.
	before := len(s.Requests())
	cfg.BearerToken = localllm.Secret(token)
	c = newClient(t, s, cfg)
	if _, err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Models(ctx); err != nil {
		t.Fatal(err)
	}
	s.QueueChat(ollamatest.ChatReply{Content: "Hello."})
	if _, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hello")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Embed(ctx, embedModel, []string{"a", "b"}); err != nil {
		t.Fatal(err)
	}
	// A failing call with the right token: its error and log record too.
	_, err = c.Show(ctx, "not-installed:1b")
	if localllm.KindOf(err) != localllm.ModelMissing {
		t.Fatalf("show of a missing model: %v", err)
	}
	errs = append(errs, fmt.Sprintf("%v %+v", err, err))
	reqs := s.Requests()[before:]
	if len(reqs) < 5 {
		t.Fatalf("%d requests recorded, want at least 5", len(reqs))
	}
	for _, r := range reqs {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, got)
		}
	}

	// The configuration's printed and JSON forms hide the token.
	cfg.OnCall = nil
	errs = append(errs, fmt.Sprintf("%v %+v %#v %s %q %x", cfg, cfg, cfg, cfg.BearerToken, cfg.BearerToken, cfg.BearerToken))
	raw, err := json.Marshal(struct{ T localllm.Secret }{cfg.BearerToken})
	if err != nil {
		t.Fatal(err)
	}
	errs = append(errs, string(raw))
	logger.Info("config", "token", cfg.BearerToken)
	if logs.Len() == 0 {
		t.Fatal("nothing was logged: the check below would be empty")
	}
	for _, text := range append(errs, logs.String()) {
		if strings.Contains(text, token[4:20]) {
			t.Errorf("the token appears in %q", text)
		}
	}
}

// TestTokenWithControlCharactersRefused: a token with a line break (a
// header injection) is refused by New without echoing it.
func TestTokenWithControlCharactersRefused(t *testing.T) {
	_, err := localllm.New(localllm.Config{Host: localllm.DefaultHost, BearerToken: "abc\r\nX-Evil: secret-part"})
	e := wantKind(t, err, localllm.Invalid)
	if strings.Contains(e.Message, "secret-part") || strings.Contains(e.Message, "abc") {
		t.Errorf("message echoes the token: %q", e.Message)
	}
}

// nonLoopbackAddr returns an address of this computer that is not
// loopback, or "" when it has none.
func nonLoopbackAddr(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestPlainHTTPToAnotherComputerRefused: an http:// host that is not on
// this computer is refused by New (kind Refused, a message a clinician can
// act on) before anything is dialled, whatever the form of the address or
// where it comes from (Config.Host or $OLLAMA_HOST); allowed explicitly it
// works. Loopback hosts and https hosts need no permission. A token over
// plain http to another computer is refused even when plain http is
// allowed.
func TestPlainHTTPToAnotherComputerRefused(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	for _, host := range []string{"http://10.1.2.3:11434", "10.1.2.3", "gpu-box.hospital.example:11434", "http://[fd00::1]:11434", "http://localhost.evil.example"} {
		_, err := localllm.New(localllm.Config{Host: host})
		e := wantKind(t, err, localllm.Refused)
		for _, want := range []string{"is not on this computer and does not use https", "allow plain http", "Settings"} {
			if !strings.Contains(e.Message, want) {
				t.Errorf("%s: message %q lacks %q", host, e.Message, want)
			}
		}
		if _, err := localllm.New(localllm.Config{Host: host, AllowPlainHTTP: true}); err != nil {
			t.Errorf("%s allowed: %v", host, err)
		}
		if _, err := localllm.New(localllm.Config{Host: host, AllowPlainHTTP: true, BearerToken: "t0k"}); localllm.KindOf(err) != localllm.Refused ||
			strings.Contains(err.Error(), "t0k") || !strings.Contains(err.Error(), "access token") {
			t.Errorf("%s with a token over plain http: %v", host, err)
		}
	}
	t.Setenv("OLLAMA_HOST", "10.1.2.3:11434")
	if _, err := localllm.New(localllm.Config{}); localllm.KindOf(err) != localllm.Refused || !strings.Contains(err.Error(), "http://10.1.2.3:11434") {
		t.Errorf("OLLAMA_HOST: %v", err)
	}
	t.Setenv("OLLAMA_HOST", "")
	for _, host := range []string{"http://127.0.0.1:11434", "localhost", "http://127.8.9.10:1", "http://[::1]:11434", ":11434", "0.0.0.0", "https://10.1.2.3", "https://gpu-box.hospital.example"} {
		if _, err := localllm.New(localllm.Config{Host: host}); err != nil {
			t.Errorf("%s: %v", host, err)
		}
	}

	// Nothing is dialled: a server on a non-loopback address of this
	// computer is never contacted while plain http is not allowed, and is
	// contacted once allowed (the check can see a connection).
	ip := nonLoopbackAddr(t)
	if ip == "" {
		t.Log("no non-loopback IPv4 address: the no-dial check is skipped")
		return
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Logf("cannot listen on %s (%v): the no-dial check is skipped", ip, err)
		return
	}
	var mu sync.Mutex
	accepted := 0
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"version":"0.17.4"}`))
	}), ConnState: func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			accepted++
			mu.Unlock()
		}
	}}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	host := "http://" + l.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := localllm.New(localllm.Config{Host: host}); localllm.KindOf(err) != localllm.Refused {
		t.Fatalf("%s: %v", host, err)
	}
	c, err := localllm.New(localllm.Config{Host: host, AllowPlainHTTP: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(ctx); err != nil {
		t.Fatalf("allowed: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 1 {
		t.Errorf("%d connections, want exactly 1 (the allowed client's)", accepted)
	}
}

// TestOnCallReportsEachModelRequest: OnCall sees one record per chat
// request (each attempt of a JSON chat) and one per embedding call, with
// the host, model, the size of what was sent and the error.
func TestOnCallReportsEachModelRequest(t *testing.T) {
	s := newServer(t)
	var mu sync.Mutex
	var calls []localllm.CallInfo
	c := newClient(t, s, localllm.Config{EmbedBatchSize: 2, OnCall: func(ci localllm.CallInfo) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, ci)
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	msg := "Patient 10006 (F, 71) has sepsis."
	s.QueueChat(ollamatest.ChatReply{Content: "Noted."})
	if _, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg(msg)}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Embed(ctx, embedModel, []string{"abc", "de", "f"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: "missing:1b", Messages: userMsg("x")}, nil)
	if localllm.KindOf(err) != localllm.ModelMissing {
		t.Fatalf("missing model: %v", err)
	}
	if _, err := c.Models(ctx); err != nil { // not a model request: not reported
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []localllm.CallInfo{
		{Op: "chat", Model: chatModel, Host: s.URL, PromptBytes: len(msg), Requests: 1},
		{Op: "embed", Model: embedModel, Host: s.URL, PromptBytes: 6, Requests: 2},
		{Op: "chat", Model: "missing:1b", Host: s.URL, PromptBytes: 1, Requests: 1},
	}
	if len(calls) != len(want) {
		t.Fatalf("calls = %+v", calls)
	}
	for i, w := range want {
		got := calls[i]
		gotErr := got.Err
		got.Err = nil
		if got != w {
			t.Errorf("call %d = %+v, want %+v", i, got, w)
		}
		if (gotErr != nil) != (i == 2) {
			t.Errorf("call %d error %v", i, gotErr)
		}
	}
}
