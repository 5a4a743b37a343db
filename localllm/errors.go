package localllm

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/ollama/ollama/api"
)

// Kind classifies an [*Error] so that callers can react to it (offer a pull,
// shorten the input, retry) without parsing messages.
type Kind string

// The kinds of [*Error].
const (
	// ServerDown: no Ollama server answers at the configured host, the
	// connection was lost in the middle of a reply, or the host answered
	// with a redirect to somewhere else (never followed).
	ServerDown Kind = "server_down"
	// ModelMissing: the requested model is not installed on the server.
	ModelMissing Kind = "model_missing"
	// ContextOverflow: the prompt does not fit the model's context window
	// (num_ctx).
	ContextOverflow Kind = "context_overflow"
	// Timeout: the call's deadline passed before the server answered.
	Timeout Kind = "timeout"
	// Cancelled: the caller cancelled the call.
	Cancelled Kind = "cancelled"
	// BadReply: the server or the model answered with something unusable
	// (malformed JSON, a reply cut off at num_predict, a reply that does not
	// match the requested JSON schema, embeddings of the wrong shape).
	BadReply Kind = "bad_reply"
	// Server: the server reported another error.
	Server Kind = "server"
	// Refused: the host policy refuses the server, before anything is
	// dialled: an http:// host not on this computer that is not allowed,
	// or an access token that would be sent over plain http.
	Refused Kind = "refused"
	// Invalid: the call itself is invalid (an empty model name, a file that
	// is not a GGUF model, an unsupported JSON schema).
	Invalid Kind = "invalid"
)

// Error is the error returned by every [*Client] method. Message is written
// for the person using Clinsight (what happened and what to do); Err is the
// technical cause, kept for logs and errors.Is/As.
type Error struct {
	// Kind classifies the error.
	Kind Kind
	// Message is a complete sentence a clinician can act on.
	Message string
	// Err is the underlying cause, if any.
	Err error
}

// Error returns the actionable message. The technical cause is available
// through [errors.Unwrap] and is logged by the client.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the technical cause.
func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the [Kind] of the first [*Error] in err's chain, or "" if
// there is none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// MessageOf returns the actionable message of the first [*Error] in err's
// chain, or err.Error() if there is none.
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// modelNotFound matches Ollama's "model \"x\" not found, try pulling it first".
var modelNotFound = lazyre.New(`model ['"]?([^'"]*)['"]? not found`)

// isContextOverflowText reports whether a server message says the input does
// not fit the context window.
func isContextOverflowText(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "exceeds the context length") ||
		strings.Contains(m, "exceeds maximum context length") ||
		strings.Contains(m, "context length exceeded") ||
		strings.Contains(m, "input length exceeds")
}

// missingModelError is the error for a model that is not installed.
func missingModelError(model string, cause error) *Error {
	return &Error{
		Kind: ModelMissing,
		Message: fmt.Sprintf("model %s is not installed: run `ollama pull %s` or Import a GGUF file in Settings",
			model, model),
		Err: cause,
	}
}

// serverDownError is the error for a server that does not answer.
func (c *Client) serverDownError(cause error) *Error {
	return &Error{
		Kind: ServerDown,
		Message: fmt.Sprintf("Ollama is not running at %s: start it (`ollama serve`) or change the host in Settings",
			c.host),
		Err: cause,
	}
}

// redirectError is the error for a 3xx answer to a request to reqURL: the
// client never follows it, so nothing reaches the other host.
func redirectError(host string, reqURL *url.URL, resp *http.Response) *Error {
	cause := fmt.Errorf("HTTP %s from %s", resp.Status, reqURL.Redacted())
	loc, err := resp.Location()
	if err != nil {
		return &Error{
			Kind: ServerDown,
			Message: fmt.Sprintf("the model server at %s answered with a redirect (HTTP %d) instead of a reply; Clinsight only talks to the configured host: set the host in Settings to the Ollama server itself",
				host, resp.StatusCode),
			Err: cause,
		}
	}
	target := url.URL{Scheme: loc.Scheme, Host: loc.Host, Path: loc.Path}
	return &Error{
		Kind: ServerDown,
		Message: fmt.Sprintf("the model server at %s answered with a redirect to %s; Clinsight only talks to the configured host and did not follow it (nothing was sent there): set the host in Settings to the Ollama server itself, not a proxy or another address",
			host, target.String()),
		Err: fmt.Errorf("%w, Location %s", cause, loc.Redacted()),
	}
}

// overflowError is the error for a prompt that does not fit num_ctx.
func overflowError(model string, numCtx int, cause error) *Error {
	window := "the model's context window"
	if numCtx > 0 {
		window = fmt.Sprintf("the context window of %d tokens (num_ctx)", numCtx)
	}
	return &Error{
		Kind: ContextOverflow,
		Message: fmt.Sprintf("the input is too long for %s with model %s: shorten it, split it into smaller parts, or raise num_ctx",
			window, model),
		Err: cause,
	}
}

// badReply returns a BadReply error.
func badReply(cause error, format string, args ...any) *Error {
	return &Error{Kind: BadReply, Message: fmt.Sprintf(format, args...), Err: cause}
}

// invalid returns an Invalid error.
func invalid(cause error, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Message: fmt.Sprintf(format, args...), Err: cause}
}

// call describes one client operation, for error messages and logs.
type call struct {
	op     string // "chat", "embed", "pull", ...
	model  string // the model, if any
	numCtx int    // the requested num_ctx, if any
}

// translate turns any error from the api client, the transport or ctx into an
// [*Error] and logs the technical cause.
func (c *Client) translate(ctx context.Context, cl call, err error) error {
	if err == nil {
		return nil
	}
	e := c.classify(ctx, cl, err)
	level := c.log.Warn
	if e.Kind == Cancelled {
		level = c.log.Debug
	}
	level("ollama call failed", "op", cl.op, "model", cl.model, "host", c.host,
		"kind", string(e.Kind), "message", e.Message, "cause", logCause(e.Err))
	return e
}

// maxLoggedCause bounds the text of a cause in the log: the api client
// makes errors of whole lines of a malformed answer.
const maxLoggedCause = 512

// logCause returns err's text, shortened to maxLoggedCause bytes.
func logCause(err error) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if len(s) <= maxLoggedCause {
		return s
	}
	cut := maxLoggedCause
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes in all)", s[:cut], len(s))
}

func (c *Client) classify(ctx context.Context, cl call, err error) *Error {
	var le *Error
	if errors.As(err, &le) {
		return le
	}
	// The caller's context decides between cancelled and timed out, whatever
	// the transport made of it.
	switch {
	case errors.Is(ctx.Err(), context.Canceled) || errors.Is(err, context.Canceled):
		return &Error{Kind: Cancelled, Message: fmt.Sprintf("the %s request to Ollama was cancelled", cl.op), Err: err}
	case errors.Is(ctx.Err(), context.DeadlineExceeded) || errors.Is(err, context.DeadlineExceeded):
		return &Error{
			Kind: Timeout,
			Message: fmt.Sprintf("Ollama at %s did not finish the %s request in time: the model may still be loading or the computer is busy; try again, use a smaller model, or allow more time",
				c.host, cl.op),
			Err: err,
		}
	}

	if isOllamaKeyError(err) {
		return &Error{
			Kind:    Invalid,
			Message: "the environment variable OLLAMA_AUTH is set on this computer, so the Ollama library looks for an ollama.com sign-in key (.ollama/id_ed25519 in your home folder) before each request, and there is none; nothing was sent. Clinsight never uses that key: remove OLLAMA_AUTH from the environment (or set it to 0) and start Clinsight again",
			Err:     err,
		}
	}
	var se api.StatusError
	if errors.As(err, &se) {
		return c.classifyServerMessage(cl, se.StatusCode, se.ErrorMessage, err)
	}
	var ae api.AuthorizationError
	if errors.As(err, &ae) {
		if c.hasToken {
			return &Error{Kind: Server, Message: fmt.Sprintf("the model server at %s refused the %s request (HTTP %d): the access token was not accepted; check the token file or variable named in Settings and ask the server's administrator whether the token is still valid", c.host, cl.op, ae.StatusCode), Err: err}
		}
		return &Error{Kind: Server, Message: fmt.Sprintf("Ollama at %s refused the %s request (HTTP %d): check the host in Settings; a server behind a site's reverse proxy may need an access token (Settings)", c.host, cl.op, ae.StatusCode), Err: err}
	}
	if e := c.certificateError(err); e != nil {
		return e
	}

	if isDialError(err) {
		return c.serverDownError(err)
	}
	if isConnectionLost(err) {
		return &Error{
			Kind: ServerDown,
			Message: fmt.Sprintf("the connection to Ollama at %s was lost during the %s request (the server may have stopped or crashed): check that it is running and try again",
				c.host, cl.op),
			Err: err,
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: Timeout, Message: fmt.Sprintf("Ollama at %s did not answer the %s request in time: try again", c.host, cl.op), Err: err}
	}
	var syn *json.SyntaxError
	var ute *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &ute) {
		return badReply(err, "Ollama at %s sent a malformed reply to the %s request: check that the host in Settings is an Ollama server, and try again", c.host, cl.op)
	}
	// The api client turns an in-stream {"error": ...} and a line it cannot
	// decode alike into errors.New(text). A server message is prose; a line
	// that starts like JSON but does not parse is a malformed reply.
	msg := strings.TrimSpace(err.Error())
	if looksLikeBrokenJSON(msg) {
		return badReply(err, "Ollama at %s sent a malformed reply to the %s request: try again", c.host, cl.op)
	}
	return c.classifyServerMessage(cl, 0, msg, err)
}

// classifyServerMessage classifies an error message reported by the server.
func (c *Client) classifyServerMessage(cl call, status int, msg string, err error) *Error {
	if m := modelNotFound().FindStringSubmatch(msg); m != nil || (status == http.StatusNotFound && cl.model != "") {
		model := cl.model
		if model == "" && m != nil {
			model = m[1]
		}
		return missingModelError(model, err)
	}
	if isContextOverflowText(msg) {
		return overflowError(cl.model, cl.numCtx, err)
	}
	text := strings.TrimSpace(msg)
	if text == "" {
		text = http.StatusText(status)
	}
	if status != 0 {
		text = fmt.Sprintf("%s (HTTP %d)", text, status)
	}
	return &Error{Kind: Server, Message: fmt.Sprintf("Ollama reported an error during the %s request: %s", cl.op, text), Err: err}
}

// looksLikeBrokenJSON reports whether s, a line the api client could not
// decode as a reply object, starts like JSON: a server's error message is
// prose, never an object or array.
func looksLikeBrokenJSON(s string) bool {
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

// isDialError reports whether err happened while connecting.
func isDialError(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}

// isConnectionLost reports whether err says the connection broke after it
// was established.
func isConnectionLost(err error) bool {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, errConnectionLost) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "server closed") || strings.Contains(s, "connection reset") ||
		strings.Contains(s, "broken pipe")
}

// certificateError explains a failed TLS handshake: a certificate the
// client does not trust (self-signed, a site CA that is not configured,
// expired, another name) or a server that does not speak TLS. It returns
// nil for any other error.
func (c *Client) certificateError(err error) *Error {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	switch {
	case errors.As(err, &ua) || (errors.As(err, &cv) && errors.As(cv.Err, &ua)):
		return &Error{Kind: ServerDown, Message: fmt.Sprintf("the model server at %s presented a certificate from an authority this computer does not trust (self-signed or your site's own CA); nothing was sent: if your site runs its own certificate authority, set its CA file (PEM) in Settings", c.host), Err: err}
	case errors.As(err, &hn):
		return &Error{Kind: ServerDown, Message: fmt.Sprintf("the model server at %s presented a certificate for another name (%v); nothing was sent: use the host name the certificate was issued for", c.host, hn.Error()), Err: err}
	case errors.As(err, &ci):
		return &Error{Kind: ServerDown, Message: fmt.Sprintf("the model server at %s presented a certificate that is not valid (%v); nothing was sent: ask the server's administrator to renew it", c.host, ci.Error()), Err: err}
	case errors.As(err, &cv):
		return &Error{Kind: ServerDown, Message: fmt.Sprintf("the model server at %s presented a certificate that could not be verified; nothing was sent: check the CA file in Settings", c.host), Err: err}
	case errors.As(err, &rh) || strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return &Error{Kind: ServerDown, Message: fmt.Sprintf("the model server at %s does not answer in https: check the address in Settings (http:// or https://, and the port)", c.host), Err: err}
	}
	return nil
}

// isOllamaKeyError reports whether err is the Ollama library failing to read
// the ollama.com sign-in key (~/.ollama/id_ed25519), which it does before
// every request when OLLAMA_AUTH is set: the request was never sent.
func isOllamaKeyError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && filepath.Base(pe.Path) == "id_ed25519" && filepath.Base(filepath.Dir(pe.Path)) == ".ollama"
}
