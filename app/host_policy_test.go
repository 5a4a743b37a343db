package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestSendRowsToModelDefault: result rows go to a model server on this
// computer by default and not to any other; an explicit setting wins.
func TestSendRowsToModelDefault(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	ws := openTemp(t)
	if !ws.SendRowsToModel() {
		t.Error("default loopback host: rows not sent")
	}
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "https://gpu.example.org" }); err != nil {
		t.Fatal(err)
	}
	if ws.SendRowsToModel() {
		t.Error("https host on the network: rows sent by default")
	}
	on := true
	if err := ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy.SendRows = &on }); err != nil {
		t.Fatal(err)
	}
	if !ws.SendRowsToModel() {
		t.Error("switch on: rows not sent")
	}
	t.Setenv(EnvOllamaHost, "127.0.0.1:11500")
	off := false
	if err := ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy.SendRows = &off }); err != nil {
		t.Fatal(err)
	}
	if ws.SendRowsToModel() {
		t.Error("switch off on loopback: rows sent")
	}
}

// writeFile writes data to name in a temporary directory with mode perm.
func writeFile(t *testing.T, name string, data []byte, perm os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// TestSiteServerWithCAAndToken: a model server behind a site's reverse
// proxy (https with a self-signed certificate, a bearer token required)
// is refused until its CA is set, then works with the token from a file;
// the token reaches the server on every request and appears nowhere in
// the workspace: not in config.json, the log, the audit trail, nor any
// error. Each model request leaves an audit record with host, model, op,
// prompt size, TLS state and whether rows may go to the model.
func TestSiteServerWithCAAndToken(t *testing.T) {
	const token = "site-7c1f9a2be84d4f0e9b3a5d6c7e8f9012"
	ctx := context.Background()
	t.Setenv(EnvOllamaHost, "")
	s := ollamatest.NewTLS(t, ollamatest.Model{Name: "llama3.1:8b"}, ollamatest.Model{Name: "nomic-embed-text", Embedding: true})
	s.RequireToken(token)
	ws := openAuditWorkspace(t)
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = s.URL }); err != nil {
		t.Fatal(err)
	}
	var errs []string
	// The test server listens on 127.0.0.1: rows may go to it by default.
	if st := ws.HostState(); st.TLS != TLSVerified || !st.SendRows || st.Warning != "" || st.Problem != nil {
		t.Errorf("https without CA: %+v", st)
	}

	// Without the CA: the self-signed certificate is not trusted.
	c, err := ws.ModelClient()
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Health(ctx)
	if localllm.KindOf(err) != localllm.ServerDown || !strings.Contains(err.Error(), "CA file") {
		t.Fatalf("without the CA: %v", err)
	}
	if n := len(s.Requests()); n != 0 {
		t.Fatalf("%d requests reached the server over an untrusted connection", n)
	}

	// A token file readable by every user is refused, naming the fix.
	open := writeFile(t, "token-open", []byte(token+"\n"), 0o644)
	err = ws.SetHostChoices(HostChoices{TokenFile: open, CAFile: writeFile(t, "ca.pem", s.CertificatePEM(), 0o644)})
	if err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("world-readable token file: %v", err)
	}
	errs = append(errs, err.Error())
	if ws.Config().ModelHostPolicy.TokenFile != "" {
		t.Fatal("a refused token file was saved")
	}

	tokFile := writeFile(t, "token", []byte(token+"\n"), 0o600)
	caFile := writeFile(t, "ca.pem", s.CertificatePEM(), 0o644)
	// Result rows switched off: the explanation works from aggregates.
	if err := ws.SetHostChoices(HostChoices{TokenFile: tokFile, CAFile: caFile, SendRows: false}); err != nil {
		t.Fatal(err)
	}
	st := ws.HostState()
	if st.TLS != TLSCustomCA || st.Token != "file "+tokFile || st.SendRows || st.SendRowsDefault || st.Problem != nil {
		t.Errorf("state with CA and token: %+v", st)
	}
	c, err = ws.ModelClient()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Health(ctx); err != nil {
		t.Fatalf("with the CA: %v", err)
	}
	s.QueueChat(ollamatest.ChatReply{Content: "Sepsis is likely."})
	prompt := "Patient 10006 (F, 71): lactate 4.1, fever. Sepsis?"
	if _, err := c.Chat(ctx, localllm.ChatRequest{Model: "llama3.1:8b", Messages: []localllm.Message{{Role: localllm.RoleUser, Content: prompt}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Embed(ctx, "nomic-embed-text", []string{"sepsis", "fever"}); err != nil {
		t.Fatal(err)
	}
	// A failing call: its error, its log record and its audit record.
	_, err = c.Chat(ctx, localllm.ChatRequest{Model: "missing:1b", Messages: []localllm.Message{{Role: localllm.RoleUser, Content: "x"}}}, nil)
	if localllm.KindOf(err) != localllm.ModelMissing {
		t.Fatalf("missing model: %v", err)
	}
	errs = append(errs, err.Error(), fmt.Sprintf("%+v", err))
	for _, r := range s.Requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+token {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, got)
		}
	}

	// The audit trail: one record per model request, with what was sent
	// where, and how.
	var calls []audit.Record
	for _, r := range auditRecords(t, ws) {
		if r.Action == audit.ActionModelCall {
			calls = append(calls, r)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("%d model call records, want 3 (chat, embed, failed chat)", len(calls))
	}
	d := calls[0].Details
	if d["host"] != s.URL || d["model"] != "llama3.1:8b" || d["op"] != "chat" || fmt.Sprint(d["prompt_bytes"]) != fmt.Sprint(len(prompt)) ||
		d["tls"] != string(TLSCustomCA) || d["send_rows"] != false || calls[0].SendRows == nil || *calls[0].SendRows || calls[0].ModelTLS != string(TLSCustomCA) {
		t.Errorf("chat record: %+v", calls[0])
	}
	if calls[1].Details["op"] != "embed" || calls[2].Details["error_kind"] != string(localllm.ModelMissing) {
		t.Errorf("embed / failed records: %+v / %+v", calls[1].Details, calls[2].Details)
	}

	// The token is nowhere in the workspace, nor in any error.
	logged, err := os.ReadFile(ws.LogPath())
	if err != nil || !strings.Contains(string(logged), "missing:1b") {
		t.Fatalf("the log does not hold the failed call (%v): the check below would prove nothing", err)
	}
	for _, name := range []string{configFile, audit.LogFile, filepath.Join("logs", "clinsight.log")} {
		raw, err := os.ReadFile(filepath.Join(ws.Dir(), name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), token[5:25]) {
			t.Errorf("%s holds the token", name)
		}
	}
	for _, e := range errs {
		if strings.Contains(e, token[5:25]) {
			t.Errorf("error %q holds the token", e)
		}
	}
}

// TestTokenNeverInTheSettings: what would put a token in config.json (a
// token typed where the variable's name goes, a token typed where the
// file's path goes) is refused without repeating it, and nothing is
// saved; a proper name is saved and the token read from the environment.
func TestTokenNeverInTheSettings(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	ws := openTemp(t)
	for _, ch := range []HostChoices{
		{TokenEnv: "eyJhbGciOiJIUzI1NiJ9.payload.sig"},
		{TokenEnv: "sk-live-4f9a8b7c6d5e"},
		{TokenFile: "eyJhbGciOiJIUzI1NiJ9"},
		{TokenEnv: "CLINSIGHT_TOKEN", TokenFile: "/etc/clinsight/token"},
	} {
		err := ws.SetHostChoices(ch)
		if err == nil {
			t.Errorf("%+v accepted", ch)
			continue
		}
		for _, v := range []string{"eyJ", "sk-live"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("error %q repeats the value", err)
			}
		}
	}
	raw, err := os.ReadFile(filepath.Join(ws.Dir(), configFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "eyJ") || strings.Contains(string(raw), "sk-live") {
		t.Fatalf("config.json holds a refused token:\n%s", raw)
	}
	if err := ws.SetHostChoices(HostChoices{TokenEnv: "CLINSIGHT_MODEL_TOKEN", SendRows: true}); err != nil {
		t.Fatal(err)
	}
	if st := ws.HostState(); st.Token != "environment variable CLINSIGHT_MODEL_TOKEN (not set)" || !st.SendRows || !st.SendRowsDefault {
		t.Errorf("state: %+v", st)
	}
	if _, err := ws.ModelClient(); err == nil || !strings.Contains(err.Error(), "CLINSIGHT_MODEL_TOKEN") {
		t.Errorf("token variable not set: %v", err)
	}
	t.Setenv("CLINSIGHT_MODEL_TOKEN", "env-secret-value")
	if _, err := ws.ModelClient(); err != nil {
		t.Errorf("token variable set: %v", err)
	}
	raw, _ = os.ReadFile(filepath.Join(ws.Dir(), configFile))
	if strings.Contains(string(raw), "env-secret-value") || !strings.Contains(string(raw), `"token_env": "CLINSIGHT_MODEL_TOKEN"`) {
		t.Errorf("config.json:\n%s", raw)
	}
}

// TestPlainHTTPHostRefusedUntilAllowed: a model server on another
// computer over plain http is refused (before anything is dialled: New
// refuses it) with a message a clinician can act on, in Settings' check
// too; allowed in the settings it is used with a warning given once, and
// the permission does not carry over to another host (from OLLAMA_HOST
// or a new setting).
func TestPlainHTTPHostRefusedUntilAllowed(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	ws := openTemp(t)
	var warnings []string
	ws.OnWarning(func(w string) { warnings = append(warnings, w) })
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "http://10.1.2.3:11434" }); err != nil {
		t.Fatal(err)
	}
	_, err := ws.ModelClient()
	if localllm.KindOf(err) != localllm.Refused || !strings.Contains(err.Error(), "the model server http://10.1.2.3:11434 is not on this computer and does not use https") {
		t.Fatalf("refused host: %v", err)
	}
	if st := ws.Settings().Check(context.Background()); localllm.KindOf(st.HealthError) != localllm.Refused {
		t.Errorf("Settings check: %v", st.HealthError)
	}
	if st := ws.HostState(); st.TLS != TLSRefused || st.Warning != "" || st.SendRows {
		t.Errorf("state: %+v", st)
	}

	if err := ws.SetHostChoices(HostChoices{AllowPlainHTTP: true}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := ws.ModelClient(); err != nil {
			t.Fatalf("allowed: %v", err)
		}
	}
	st := ws.HostState()
	if st.TLS != TLSPlainAllowed || !strings.Contains(st.Warning, "plain http") || !st.Choices.AllowPlainHTTP || st.SendRows {
		t.Errorf("allowed state: %+v", st)
	}
	if len(warnings) != 1 || warnings[0] != st.Warning {
		t.Errorf("warnings = %q, want the plain-http warning once", warnings)
	}

	t.Setenv(EnvOllamaHost, "10.9.9.9:11434")
	if _, err := ws.ModelClient(); localllm.KindOf(err) != localllm.Refused {
		t.Errorf("another host from OLLAMA_HOST: %v", err)
	}
	t.Setenv(EnvOllamaHost, "")
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "http://10.1.2.4:11434" }); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ModelClient(); localllm.KindOf(err) != localllm.Refused {
		t.Errorf("another saved host: %v", err)
	}
	// Allowing plain http means nothing for a loopback host.
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = DefaultOllamaHost }); err != nil {
		t.Fatal(err)
	}
	if err := ws.SetHostChoices(HostChoices{AllowPlainHTTP: true, SendRows: true}); err != nil {
		t.Fatal(err)
	}
	if p := ws.Config().ModelHostPolicy; p.AllowPlainHTTP != "" || p.SendRows != nil {
		t.Errorf("loopback policy: %+v", p)
	}
}

// TestHandWrittenTokenInConfigRefused: a token written by hand into
// config.json's model_host_policy is not used; model calls are refused
// with a message naming the key (not the value), Settings shows the
// problem, and saving the policy drops it from the file.
func TestHandWrittenTokenInConfigRefused(t *testing.T) {
	t.Setenv(EnvOllamaHost, "")
	dir := t.TempDir()
	cfg := `{"ollama_host": "http://127.0.0.1:11434", "models": {"sql": "a", "chat": "b", "embedding": "c"},
	"limits": {"query_timeout": "30s", "max_rows": 100}, "sources": [],
	"model_host_policy": {"token": "hand-written-secret-123", "send_rows": false}}`
	if err := os.WriteFile(filepath.Join(dir, configFile), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	_, err = ws.ModelClient()
	if err == nil || !strings.Contains(err.Error(), "holds token") || strings.Contains(err.Error(), "hand-written") {
		t.Fatalf("ModelClient: %v", err)
	}
	if st := ws.HostState(); st.Problem == nil || !strings.Contains(st.StatusText(), "cannot be used") {
		t.Errorf("state: %+v", st)
	}
	if err := ws.SetHostChoices(HostChoices{SendRows: false}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, configFile))
	if strings.Contains(string(raw), "hand-written") {
		t.Errorf("the token is still in config.json:\n%s", raw)
	}
	if _, err := ws.ModelClient(); err != nil {
		t.Errorf("after saving: %v", err)
	}
}
