package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/localllm"
)

// HostPolicy is what the workspace allows for its model server (config.json
// "model_host_policy"): plain http to a server that is not on this
// computer, how to authenticate to a site's reverse proxy, which
// certificate authority to trust, and whether result rows may go to the
// model. It never holds a secret: a token is named by the file or the
// environment variable that holds it.
type HostPolicy struct {
	// AllowPlainHTTP is the one model server not on this computer that may
	// be reached over plain http (normalised, e.g. "http://10.1.2.3:11434");
	// empty allows none. It names the host, so that changing the host never
	// carries the permission over to another server.
	AllowPlainHTTP string `json:"allow_plain_http,omitempty"`
	// TokenFile is the absolute path of a file holding a bearer token sent
	// to the server (readable by its owner only, never by every user).
	TokenFile string `json:"token_file,omitempty"`
	// TokenEnv is the NAME of an environment variable holding a bearer
	// token (e.g. "CLINSIGHT_MODEL_TOKEN"), never the token itself.
	TokenEnv string `json:"token_env,omitempty"`
	// CAFile is the absolute path of a PEM bundle of the certificate
	// authorities trusted for an https server (a site's own CA); empty
	// trusts the system's.
	CAFile string `json:"ca_file,omitempty"`
	// SendRows says whether result rows may be sent to the model (for
	// example for the explanation of a cohort); nil means the default: on
	// for a server on this computer, off for any other.
	SendRows *bool `json:"send_rows,omitempty"`

	// unknown are keys of config.json's model_host_policy that Clinsight
	// does not read (a "token" written there by hand): Validate refuses
	// them, and the next save drops them.
	unknown []string
}

// hostPolicyKeys are the keys HostPolicy reads from config.json.
var hostPolicyKeys = map[string]bool{"allow_plain_http": true, "token_file": true, "token_env": true, "ca_file": true, "send_rows": true}

// UnmarshalJSON reads the policy and notes the keys it does not know.
func (p *HostPolicy) UnmarshalJSON(b []byte) error {
	type plain HostPolicy
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		return err
	}
	*p = HostPolicy(v)
	p.unknown = nil
	for k := range keys {
		if !hostPolicyKeys[k] {
			p.unknown = append(p.unknown, k)
		}
	}
	slices.Sort(p.unknown)
	return nil
}

// SendRowsToModel reports whether result rows (patient-level data) may be
// sent to the model server in use: the setting when it is made, otherwise
// on for a server on this computer and off for any other. A host that
// cannot be resolved sends nothing.
func (ws *Workspace) SendRowsToModel() bool {
	h, err := ws.ModelHost()
	if err != nil {
		return false
	}
	return sendRows(ws.Config().ModelHostPolicy, h.URL)
}

// sendRows is [Workspace.SendRowsToModel] for policy p and host URL host.
func sendRows(p HostPolicy, host string) bool {
	if p.SendRows != nil {
		return *p.SendRows
	}
	return isLoopbackURL(host)
}

// isLoopbackURL reports whether host (any form NormalizeHost accepts) is
// this computer.
func isLoopbackURL(host string) bool {
	if strings.TrimSpace(host) == "" { // not resolved: not the default host
		return false
	}
	u, err := localllm.NormalizeHost(host)
	return err == nil && localllm.IsLoopback(u)
}

// TLSState says how the model server is reached.
type TLSState string

// The ways a model server is reached.
const (
	// TLSLoopback: the server is on this computer; nothing crosses the
	// network.
	TLSLoopback TLSState = "loopback"
	// TLSVerified: https, the certificate verified against the system's
	// certificate authorities.
	TLSVerified TLSState = "https verified"
	// TLSCustomCA: https, the certificate verified against the site's CA
	// file set in the settings (only that CA is trusted).
	TLSCustomCA TLSState = "https with the site CA"
	// TLSPlainAllowed: plain http to another computer, allowed in the
	// settings: what is sent crosses the network unencrypted.
	TLSPlainAllowed TLSState = "plain http allowed"
	// TLSRefused: plain http to another computer, not allowed: nothing is
	// sent.
	TLSRefused TLSState = "refused (plain http)"
	// TLSInvalid: the host is not a valid address.
	TLSInvalid TLSState = "invalid host"
)

// HostChoices are the model-host settings a person edits (in Settings or
// on the command line); [HostState.Choices] holds the current ones and
// [Settings.SetHostChoices] saves them.
type HostChoices struct {
	// AllowPlainHTTP allows the host in use over plain http although it is
	// not on this computer.
	AllowPlainHTTP bool
	// TokenFile is the absolute path of the file holding the access token.
	TokenFile string
	// TokenEnv is the name of the environment variable holding the token.
	TokenEnv string
	// CAFile is the absolute path of the site's CA bundle (PEM).
	CAFile string
	// SendRows lets result rows go to the model.
	SendRows bool
}

// HostState is what Settings, the status bar, `clinsight models host` and
// every audit record show about the model server: never the token.
type HostState struct {
	// Host is the server in use and where it comes from.
	Host ModelHost
	// OnThisComputer is true for a loopback host (see [localllm.IsLoopback]).
	OnThisComputer bool
	// TLS says how it is reached.
	TLS TLSState
	// Token describes where the access token comes from ("file
	// /etc/clinsight/token", "environment variable CLINSIGHT_TOKEN"), ""
	// when none is configured. Never the token.
	Token string
	// SendRows is whether result rows may be sent to the model;
	// SendRowsDefault is true when no setting was made (the default for
	// the host applies).
	SendRows, SendRowsDefault bool
	// Warning, when set, must be shown while the host is in use (red in
	// the status bar, on stderr in the command line): plain http to
	// another computer.
	Warning string
	// Problem is why model calls cannot be made with this policy (a host
	// refused, a token that cannot be read); nil when they can.
	Problem error
	// Choices are the current editable settings.
	Choices HostChoices
}

// RowsText says whether result rows may go to the model, and why: "not
// sent to the model (aggregates only), the default for a server on another
// computer".
func (st HostState) RowsText() string {
	s := "not sent to the model (aggregates only)"
	if st.SendRows {
		s = "may be sent to the model"
	}
	switch {
	case !st.SendRowsDefault:
		return s + ", as set in the settings"
	case st.OnThisComputer:
		return s + ", the default for a server on this computer"
	}
	return s + ", the default for a server on another computer"
}

// TokenText says where the access token comes from, "none" without one.
func (st HostState) TokenText() string {
	if st.Token == "" {
		return "none"
	}
	return st.Token
}

// StatusText is what a status bar shows, in red, about the model server:
// the plain-http warning while such a host is in use, why model calls are
// refused, or "" when there is nothing to warn about.
func (st HostState) StatusText() string {
	switch {
	case st.Warning != "":
		return st.Warning
	case st.TLS == TLSRefused:
		return fmt.Sprintf("Model calls are refused: the model server %s is not on this computer and does not use https (see Settings).", st.Host.URL)
	case st.Problem != nil:
		return "The model server cannot be used: " + st.Problem.Error()
	}
	return ""
}

// PlainHTTPWarning is the warning shown while a plain-http host not on this
// computer is in use.
func PlainHTTPWarning(host string) string {
	return fmt.Sprintf("Unencrypted model server: questions and clinical text sent to %s cross the network in plain http.", host)
}

// HostState describes the model server in use and the policy applied to it.
func (ws *Workspace) HostState() HostState {
	h, err := ws.ModelHost()
	st := DescribeHost(ws.Config().ModelHostPolicy, h)
	if err != nil {
		st.Problem = err
	}
	return st
}

// DescribeHost describes host h under policy p (see [HostState]). It reads
// nothing but the token's environment variable (whether it is set).
func DescribeHost(p HostPolicy, h ModelHost) HostState {
	st := HostState{Host: h, OnThisComputer: isLoopbackURL(h.URL), SendRows: sendRows(p, h.URL), SendRowsDefault: p.SendRows == nil}
	st.Choices = HostChoices{
		AllowPlainHTTP: p.AllowPlainHTTP != "" && p.AllowPlainHTTP == h.URL,
		TokenFile:      p.TokenFile, TokenEnv: p.TokenEnv, CAFile: p.CAFile,
		SendRows: st.SendRows,
	}
	switch {
	case p.TokenFile != "":
		st.Token = "file " + p.TokenFile
	case p.TokenEnv != "":
		st.Token = "environment variable " + p.TokenEnv
		if os.Getenv(p.TokenEnv) == "" {
			st.Token += " (not set)"
		}
	}
	if h.URL == "" {
		st.TLS = TLSInvalid
		return st
	}
	u, err := localllm.NormalizeHost(h.URL)
	if err != nil {
		st.TLS, st.Problem = TLSInvalid, err
		return st
	}
	switch {
	case u.Scheme == "https" && p.CAFile != "":
		st.TLS = TLSCustomCA
	case u.Scheme == "https":
		st.TLS = TLSVerified
	case localllm.IsLoopback(u):
		st.TLS = TLSLoopback
	case st.Choices.AllowPlainHTTP:
		st.TLS = TLSPlainAllowed
		st.Warning = PlainHTTPWarning(h.URL)
	default:
		st.TLS = TLSRefused
	}
	if err := p.Validate(); err != nil {
		st.Problem = err
	}
	return st
}

// envName is what an environment variable holding a token may be called:
// capitals, digits and underscores, as such names are by convention. A
// token pasted in its place (mixed case, dashes, dots) is refused.
var envName = lazyre.New(`^[A-Z_][A-Z0-9_]{0,63}$`)

// Validate checks the policy's form without reading any file: a token is
// named by an absolute file path or an environment variable name, never
// written in the settings; the CA file is an absolute path; the plain-http
// host is a valid http address. Its errors never repeat a value that could
// be a token.
func (p HostPolicy) Validate() error {
	if len(p.unknown) > 0 {
		return fmt.Errorf("the settings file's model_host_policy holds %s, which Clinsight does not use: a token must never be written in the settings; remove it from config.json and name the token's file or environment variable in Settings",
			strings.Join(p.unknown, ", "))
	}
	if p.TokenFile != "" && p.TokenEnv != "" {
		return errors.New("the access token comes either from a file or from an environment variable, not both: clear one of them")
	}
	if p.TokenEnv != "" && !envName().MatchString(p.TokenEnv) {
		return errors.New("the access token's environment variable must be given by its NAME (capital letters, digits and _, such as CLINSIGHT_MODEL_TOKEN), never the token itself: the settings file must not hold a token")
	}
	for _, f := range []struct{ what, path string }{{"access token file", p.TokenFile}, {"certificate authority file", p.CAFile}} {
		if f.path == "" {
			continue
		}
		if len(f.path) > 4096 || strings.IndexFunc(f.path, unicode.IsControl) >= 0 || !filepath.IsAbs(f.path) {
			return fmt.Errorf("the %s must be given by its full path (starting with %s), never by its content: the settings file must not hold a token or a certificate", f.what, string(filepath.Separator))
		}
	}
	if p.AllowPlainHTTP != "" {
		u, err := localllm.NormalizeHost(p.AllowPlainHTTP)
		if err != nil || u.Scheme != "http" {
			return fmt.Errorf("the host allowed over plain http (%q) is not an http:// address", p.AllowPlainHTTP)
		}
	}
	return nil
}

// maxTokenFileBytes bounds a token file (a token is at most a few KB).
const maxTokenFileBytes = 8 << 10

// token reads the access token the policy names ("" when none). A token
// file must be a regular file that other users cannot read or write
// (group access is allowed, for a service group); it is refused
// otherwise. Errors name the file or the variable, never the token.
func (p HostPolicy) token() (localllm.Secret, error) {
	if err := p.Validate(); err != nil {
		return "", err
	}
	switch {
	case p.TokenEnv != "":
		v := strings.TrimSpace(os.Getenv(p.TokenEnv))
		if v == "" {
			return "", fmt.Errorf("the environment variable %s, named in Settings as holding the model server's access token, is not set or empty: set it before starting Clinsight, or change the token source in Settings", p.TokenEnv)
		}
		return localllm.Secret(v), nil
	case p.TokenFile != "":
		return readTokenFile(p.TokenFile)
	}
	return "", nil
}

// readTokenFile reads a token file, refusing one that other users may
// read or change.
func readTokenFile(path string) (localllm.Secret, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("the access token file %s could not be opened (%v): check the path in Settings", path, unwrapPath(err))
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("the access token file %s could not be read: %v", path, unwrapPath(err))
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the access token file %s is not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o007 != 0 {
		return "", fmt.Errorf("the access token file %s can be read or changed by every user of this computer (permissions %s): restrict it to its owner (chmod 600 %s) and try again", path, fi.Mode().Perm(), path)
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxTokenFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("the access token file %s could not be read: %v", path, unwrapPath(err))
	}
	if len(raw) > maxTokenFileBytes {
		return "", fmt.Errorf("the access token file %s is larger than %d KB: it should hold only the token", path, maxTokenFileBytes>>10)
	}
	tok := strings.TrimSpace(string(raw))
	if tok == "" {
		return "", fmt.Errorf("the access token file %s is empty", path)
	}
	return localllm.Secret(tok), nil
}

// unwrapPath drops the path from a *fs.PathError (the message names it).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clientConfig is the localllm configuration for host h under the
// workspace's policy: the plain-http permission when it names h, the
// token, the CA file, and the audit hook.
func (ws *Workspace) clientConfig(h ModelHost) (localllm.Config, error) {
	p := ws.Config().ModelHostPolicy
	tok, err := p.token()
	if err != nil {
		return localllm.Config{}, &localllm.Error{Kind: localllm.Invalid, Message: err.Error(), Err: err}
	}
	cfg := localllm.Config{
		Host:           h.URL,
		Logger:         ws.logger,
		AllowPlainHTTP: p.AllowPlainHTTP != "" && p.AllowPlainHTTP == h.URL,
		BearerToken:    tok,
		OnCall:         ws.recordModelCall,
	}
	if u, err := localllm.NormalizeHost(h.URL); err == nil && u.Scheme == "https" {
		cfg.CAFile = p.CAFile
	}
	return cfg, nil
}

// warnPlainHTTP tells the user, once per host and workspace, that model
// calls go over plain http (the CLI prints it on stderr; the GUI also
// keeps a red warning in its status bar).
func (ws *Workspace) warnPlainHTTP(st HostState) {
	if st.Warning == "" {
		return
	}
	ws.mu.Lock()
	if ws.hostWarned == nil {
		ws.hostWarned = map[string]bool{}
	}
	seen := ws.hostWarned[st.Host.URL]
	ws.hostWarned[st.Host.URL] = true
	ws.mu.Unlock()
	if !seen {
		ws.warn(st.Warning)
	}
}

// recordModelCall writes one model request to the audit trail: host,
// model, operation, the size of what was sent, how the host is reached
// and whether result rows may go to it (never the prompt, never the
// token). The request has already been made: a record that cannot be
// written is logged.
func (ws *Workspace) recordModelCall(ci localllm.CallInfo) {
	st := ws.HostState()
	d := map[string]any{
		"host": ci.Host, "model": ci.Model, "op": ci.Op,
		"prompt_bytes": ci.PromptBytes, "requests": ci.Requests,
		"tls": string(st.TLS), "send_rows": st.SendRows,
	}
	if st.Token != "" {
		d["token_source"] = st.Token
	}
	if ci.Err != nil {
		d["error_kind"] = string(localllm.KindOf(ci.Err))
		d["error"] = localllm.MessageOf(ci.Err)
	}
	if err := ws.Record(context.Background(), audit.Event{Action: audit.ActionModelCall, Details: d}); err != nil {
		ws.logger.Error("model call not recorded in the audit trail", "op", ci.Op, "model", ci.Model, "err", err)
	}
}

// SetHostChoices checks and saves the editable host policy for the host
// in use: plain http is allowed for that host only (and only matters for a
// host not on this computer), the token file must exist, be readable and
// not be open to other users, the token variable is a NAME (it need not
// be set yet), the CA file must hold PEM certificates, and result rows are
// saved as a setting only when they differ from the host's default. The
// change is recorded in the audit trail; nothing is saved on error.
func (ws *Workspace) SetHostChoices(ch HostChoices) error {
	h, err := ws.ModelHost()
	if err != nil {
		return err
	}
	p := HostPolicy{
		TokenFile: strings.TrimSpace(ch.TokenFile),
		TokenEnv:  strings.TrimSpace(ch.TokenEnv),
		CAFile:    strings.TrimSpace(ch.CAFile),
	}
	if ch.AllowPlainHTTP {
		if u, err := localllm.NormalizeHost(h.URL); err == nil && u.Scheme == "http" && !localllm.IsLoopback(u) {
			p.AllowPlainHTTP = u.String()
		}
	}
	if ch.SendRows != isLoopbackURL(h.URL) {
		v := ch.SendRows
		p.SendRows = &v
	}
	if err := p.Validate(); err != nil {
		return err
	}
	if p.TokenFile != "" {
		if _, err := readTokenFile(p.TokenFile); err != nil {
			return err
		}
	}
	if p.CAFile != "" {
		if err := localllm.CheckCAFile(p.CAFile); err != nil {
			return err
		}
	}
	return ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy = p })
}

// modelTLSState is how the audit trail describes the model host h under
// cfg: its TLS state and whether result rows may go to it.
func modelTLSState(cfg Config, h ModelHost) (string, *bool) {
	st := DescribeHost(cfg.ModelHostPolicy, h)
	rows := st.SendRows
	return string(st.TLS), &rows
}
