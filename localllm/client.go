package localllm

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// Defaults of [Config].
const (
	// DefaultDialTimeout bounds connecting to the server, so that a server
	// that is down fails in seconds rather than hanging.
	DefaultDialTimeout = 3 * time.Second
	// DefaultEmbedBatchSize is how many texts go into one /api/embed request.
	DefaultEmbedBatchSize = 64
	// DefaultJSONRetries is how many times [Client.ChatJSON] asks the model
	// again after a reply that does not match the schema.
	DefaultJSONRetries = 2
	// DefaultHeaderTimeout bounds the wait for the start of the answer to
	// a request that makes the model work (chat, embeddings, download,
	// import). It covers loading the model from disk and reading the
	// prompt, which can take minutes for a large model or a long prompt on
	// a laptop CPU; a server that takes longer is stuck or far too slow.
	DefaultHeaderTimeout = 5 * time.Minute
	// DefaultInfoTimeout bounds the wait for the answer to a quick question
	// (version, model list, model details, blob check), which a working
	// server answers in milliseconds.
	DefaultInfoTimeout = 30 * time.Second
	// DefaultIdleTimeout bounds a pause in the middle of an answer: between
	// two streamed chunks (a model generates several tokens a second even
	// on a slow CPU) or two reads of a body.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultMaxReplyTokens is the reply budget of a chat request that
	// sets neither num_predict nor num_ctx.
	DefaultMaxReplyTokens = 32768
)

// Config configures a [Client]. The zero value talks to $OLLAMA_HOST or
// [DefaultHost] with the defaults below.
type Config struct {
	// Host is the server's base URL in any form [NormalizeHost] accepts
	// (the workspace's ollama_host). Empty means $OLLAMA_HOST (an error
	// when it is not a valid host), or [DefaultHost] when that is unset.
	Host string
	// DialTimeout bounds connecting to the server; 0 means
	// [DefaultDialTimeout].
	DialTimeout time.Duration
	// EmbedBatchSize is the number of texts per /api/embed request; 0 means
	// [DefaultEmbedBatchSize].
	EmbedBatchSize int
	// JSONRetries is how many times ChatJSON retries after an invalid reply;
	// 0 means [DefaultJSONRetries], a negative value means no retry.
	JSONRetries int
	// HeaderTimeout bounds the wait for the first byte of the answer to a
	// chat, embedding, download or import request, and a pause while such
	// a request is sent; 0 means [DefaultHeaderTimeout].
	HeaderTimeout time.Duration
	// InfoTimeout bounds the wait for the first byte of the answer to a
	// version, model list, model details or blob check request; 0 means
	// [DefaultInfoTimeout].
	InfoTimeout time.Duration
	// IdleTimeout bounds a pause in the middle of an answer (between two
	// streamed chunks); 0 means [DefaultIdleTimeout].
	IdleTimeout time.Duration
	// MaxReplyTokens is the reply budget of a chat request that sets
	// neither NumPredict nor NumCtx; 0 means [DefaultMaxReplyTokens].
	MaxReplyTokens int
	// Logger receives one debug record per call (model, tokens, durations)
	// and a warning per failure with its technical cause; nil means
	// slog.Default().
	Logger *slog.Logger

	// AllowPlainHTTP permits an http:// Host that is not on this computer
	// (see [IsLoopback]). Without it, [New] refuses such a host with a
	// [Refused] error before anything is dialled: a host not on this
	// computer must use https.
	AllowPlainHTTP bool
	// BearerToken, when set, is sent as "Authorization: Bearer <token>" on
	// every request to Host and nowhere else (the client never follows a
	// redirect). It is never logged nor put in an error; [New] refuses it
	// with an http:// Host not on this computer.
	BearerToken Secret
	// CAFile is a PEM bundle of the certificate authorities trusted for an
	// https Host (a site's own CA behind its reverse proxy). When set, only
	// these authorities are trusted for the server, not the system's;
	// empty trusts the system's. It does not apply to http.
	CAFile string
	// OnCall, when set, is called once per chat request and once per
	// embedding call (all its batches) with what was sent where, after the
	// request ended; it must not block. It never sees the token.
	OnCall func(CallInfo)
}

// CallInfo describes one model request for [Config.OnCall]: never the
// prompt itself, only its size.
type CallInfo struct {
	// Op is "chat" or "embed".
	Op string
	// Model is the model asked.
	Model string
	// Host is the server's base URL.
	Host string
	// PromptBytes is the size of what was sent: the messages' text of a
	// chat, the texts of an embedding call.
	PromptBytes int
	// Requests is the number of HTTP requests made (the batches of an
	// embedding call; 1 for a chat).
	Requests int
	// Err is the call's error, nil when it succeeded.
	Err error
}

// Client talks to one Ollama server. It is safe for concurrent use.
type Client struct {
	host        string // normalised base URL, for messages
	base        *url.URL
	api         *api.Client
	http        *http.Client
	batchSize   int
	jsonRetries int
	log         *slog.Logger
	onCall      func(CallInfo)
	hasToken    bool
	// runsHere holds the models the server said it runs itself (see
	// checkRunsHere).
	runsHere sync.Map

	headerTimeout  time.Duration
	infoTimeout    time.Duration
	idleTimeout    time.Duration
	maxReplyTokens int
}

// New returns a client for the server cfg names. It does not contact the
// server; use [Client.Health] for that.
func New(cfg Config) (*Client, error) {
	host := cfg.Host
	if host == "" {
		// $OLLAMA_HOST, checked: an invalid one is an error, never a
		// silent switch to the default server.
		if env := strings.TrimSpace(os.Getenv("OLLAMA_HOST")); env != "" {
			if _, err := NormalizeHost(env); err != nil {
				return nil, invalid(err, "the environment variable OLLAMA_HOST is set to %q, which is not a valid Ollama host (%v): correct it or unset it", env, err)
			}
			host = env
		}
	}
	base, err := NormalizeHost(host)
	if err != nil {
		return nil, invalid(err, "the Ollama host %q is not valid: %v; use a URL like %s in Settings", cfg.Host, err, DefaultHost)
	}
	if err := checkHostPolicy(base, cfg.AllowPlainHTTP, cfg.BearerToken); err != nil {
		return nil, err
	}
	if err := checkToken(cfg.BearerToken); err != nil {
		return nil, err
	}
	var tlsConf *tls.Config
	if base.Scheme == "https" {
		if tlsConf, err = tlsConfig(cfg.CAFile); err != nil {
			return nil, err
		}
	}
	dial := cfg.DialTimeout
	if dial <= 0 {
		dial = DefaultDialTimeout
	}
	dialer := &net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		// Never through a proxy: clinical text goes to the configured
		// host and nowhere else.
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       tlsConf,
		TLSHandshakeTimeout:   dial,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	hc := &http.Client{
		Transport: watchingTransport{base: bearerTransport{base: transport, host: base, token: cfg.BearerToken}, host: base.String(),
			fallback: bounds{op: "Ollama", header: orDefault(cfg.HeaderTimeout, DefaultHeaderTimeout),
				idle: orDefault(cfg.IdleTimeout, DefaultIdleTimeout), maxBytes: maxInfoBytes}},
		// Never follow a redirect: the request (with the clinical text
		// in it) would go to a host nobody configured. The transport
		// turns every 3xx answer into an error before this is reached;
		// this is the second line of defence.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	c := &Client{
		host:           base.String(),
		base:           base,
		api:            api.NewClient(base, hc),
		http:           hc,
		batchSize:      cfg.EmbedBatchSize,
		jsonRetries:    cfg.JSONRetries,
		log:            cfg.Logger,
		onCall:         cfg.OnCall,
		hasToken:       cfg.BearerToken != "",
		headerTimeout:  orDefault(cfg.HeaderTimeout, DefaultHeaderTimeout),
		infoTimeout:    orDefault(cfg.InfoTimeout, DefaultInfoTimeout),
		idleTimeout:    orDefault(cfg.IdleTimeout, DefaultIdleTimeout),
		maxReplyTokens: orDefault(cfg.MaxReplyTokens, DefaultMaxReplyTokens),
	}
	if c.batchSize <= 0 {
		c.batchSize = DefaultEmbedBatchSize
	}
	switch {
	case c.jsonRetries == 0:
		c.jsonRetries = DefaultJSONRetries
	case c.jsonRetries < 0:
		c.jsonRetries = 0
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c, nil
}

// reportCall passes one model request to Config.OnCall.
func (c *Client) reportCall(op, model string, promptBytes, requests int, err error) {
	if c.onCall != nil {
		c.onCall(CallInfo{Op: op, Model: model, Host: c.host, PromptBytes: promptBytes, Requests: requests, Err: err})
	}
}

// orDefault returns v, or def when v is not positive.
func orDefault[T time.Duration | int](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Host returns the normalised base URL the client talks to.
func (c *Client) Host() string { return c.host }

// Health is the result of [Client.Health].
type Health struct {
	// Host is the base URL that was checked.
	Host string
	// Reachable is true when an Ollama server answered.
	Reachable bool
	// Version is the server's version, e.g. "0.17.4".
	Version string
	// Latency is how long the server took to answer.
	Latency time.Duration
}

// Health checks that the server answers and returns its version. When it
// does not, the returned Health has Reachable false and the error is a
// [ServerDown] (or [Timeout], [Cancelled]) [*Error].
func (c *Client) Health(ctx context.Context) (Health, error) {
	h := Health{Host: c.host}
	start := time.Now()
	v, err := c.api.Version(c.bound(ctx, c.infoBounds("health check")))
	if err != nil {
		return h, c.translate(ctx, call{op: "health check"}, err)
	}
	h.Reachable, h.Version, h.Latency = true, v, time.Since(start)
	return h, nil
}

// Model describes an installed model.
type Model struct {
	// Name is the model's name with its tag, e.g. "llama3.1:8b".
	Name string
	// Size is the size of the model's files in bytes.
	Size int64
	// Digest identifies the model's manifest.
	Digest string
	// Family is the model architecture, e.g. "llama" or "bert".
	Family string
	// Families lists all architectures the model uses.
	Families []string
	// Format is the file format, e.g. "gguf".
	Format string
	// ParameterSize is the parameter count as Ollama reports it, e.g. "8.0B".
	ParameterSize string
	// Quantization is the quantization level, e.g. "Q4_K_M" or "F16".
	Quantization string
	// ModifiedAt is when the model was installed or last changed.
	ModifiedAt time.Time
	// RemoteHost is where the server forwards every request for the model
	// when it does not run it itself (a "cloud" model, such as
	// https://ollama.com:443); "" for a model the server runs. Clinsight
	// refuses to chat or embed with such a model.
	RemoteHost string
}

// Models lists the installed models (/api/tags).
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	resp, err := c.api.List(c.bound(ctx, c.infoBounds("model list")))
	if err != nil {
		return nil, c.translate(ctx, call{op: "model list"}, err)
	}
	out := make([]Model, 0, len(resp.Models))
	for _, m := range resp.Models {
		name := m.Name
		if name == "" {
			name = m.Model
		}
		out = append(out, Model{
			Name:          name,
			Size:          m.Size,
			Digest:        m.Digest,
			Family:        m.Details.Family,
			Families:      m.Details.Families,
			Format:        m.Details.Format,
			ParameterSize: m.Details.ParameterSize,
			Quantization:  m.Details.QuantizationLevel,
			ModifiedAt:    m.ModifiedAt,
			RemoteHost:    m.RemoteHost,
		})
	}
	return out, nil
}

// ModelDetail is what [Client.Show] reports about one model.
type ModelDetail struct {
	Model
	// ContextLength is the model's trained context length, 0 if unknown.
	// Ollama's default num_ctx is usually smaller.
	ContextLength int
	// EmbeddingLength is the size of the model's hidden state (its
	// embedding dimension for embedding models), 0 if unknown.
	EmbeddingLength int
	// Capabilities lists what the model can do, e.g. "completion",
	// "embedding", "tools".
	Capabilities []string
	// Parameters are the model's default parameters as Modelfile lines.
	Parameters string
}

// Show describes one installed model (/api/show). A model that is not
// installed gives a [ModelMissing] error.
func (c *Client) Show(ctx context.Context, model string) (ModelDetail, error) {
	cl := call{op: "model details", model: model}
	if model == "" {
		return ModelDetail{}, invalid(nil, "no model name given")
	}
	resp, err := c.api.Show(c.bound(ctx, c.infoBounds("model details")), &api.ShowRequest{Model: model})
	if err != nil {
		return ModelDetail{}, c.translate(ctx, cl, err)
	}
	d := ModelDetail{
		Model: Model{
			Name:          model,
			Family:        resp.Details.Family,
			Families:      resp.Details.Families,
			Format:        resp.Details.Format,
			ParameterSize: resp.Details.ParameterSize,
			Quantization:  resp.Details.QuantizationLevel,
			ModifiedAt:    resp.ModifiedAt,
			RemoteHost:    resp.RemoteHost,
		},
		Parameters: resp.Parameters,
	}
	for _, cp := range resp.Capabilities {
		d.Capabilities = append(d.Capabilities, string(cp))
	}
	arch, _ := resp.ModelInfo["general.architecture"].(string)
	if arch == "" {
		arch = resp.Details.Family
	}
	d.ContextLength = intFromAny(resp.ModelInfo[arch+".context_length"])
	d.EmbeddingLength = intFromAny(resp.ModelInfo[arch+".embedding_length"])
	return d, nil
}

// intFromAny converts a JSON number to int (0 if it is not one).
func intFromAny(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	case int64:
		return int(n)
	}
	return 0
}

// errConnectionLost marks a response body that ended with a transport error
// (the api client's stream reader does not report those).
var errConnectionLost = errors.New("connection lost while reading the reply")

// bodyWatch holds the bounds of one call's requests and records the first
// read error of their response bodies.
type bodyWatch struct {
	bounds bounds

	mu  sync.Mutex
	err error
}

func (w *bodyWatch) set(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

// lost returns the recorded read error: a bound that was exceeded as it is,
// anything else wrapped in errConnectionLost; nil when there was none.
func (w *bodyWatch) lost() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		return nil
	}
	var e *Error
	if errors.As(w.err, &e) {
		return e
	}
	return errors.Join(errConnectionLost, w.err)
}

// incomplete explains a stream that ended without its final message: the
// caller gave up, the connection was lost, a bound was exceeded, or the
// server ended the stream early (what says what was being received, for
// the message).
func (w *bodyWatch) incomplete(ctx context.Context, what string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := w.lost(); err != nil {
		return err
	}
	return badReply(nil, "Ollama's %s ended before it was complete: try again", what)
}

// explain returns the error of a call that failed with err: a bound that
// was exceeded or a lost connection explains it better than what the api
// client made of the truncated body (often the partial line itself).
func (w *bodyWatch) explain(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	lost := w.lost()
	if lost == nil {
		return err
	}
	var e *Error
	if errors.As(lost, &e) {
		return e
	}
	return errors.Join(lost, err)
}

type watchKey struct{}

// watchCall returns a context whose requests are held to b and record body read
// errors in the returned watch.
func watchCall(ctx context.Context, b bounds) (context.Context, *bodyWatch) {
	w := &bodyWatch{bounds: b}
	return context.WithValue(ctx, watchKey{}, w), w
}

// bound returns a context whose requests are held to b.
func (c *Client) bound(ctx context.Context, b bounds) context.Context {
	ctx, _ = watchCall(ctx, b)
	return ctx
}

// watchingTransport refuses redirects and holds every request to the
// bounds of its call (see bounds.go), recording body read errors (the
// server closing the connection mid-stream) in the call's bodyWatch.
type watchingTransport struct {
	base http.RoundTripper
	host string // the configured host, for messages
	// fallback bounds a request made without a bodyWatch.
	fallback bounds
}

// RoundTrip implements http.RoundTripper. Any 3xx answer becomes a
// [ServerDown] error naming both hosts: Clinsight never sends a request
// anywhere but the configured host, and a redirect is not a reply.
func (t watchingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	b, w := t.fallback, (*bodyWatch)(nil)
	if cw, ok := r.Context().Value(watchKey{}).(*bodyWatch); ok {
		b, w = cw.bounds, cw
	}
	resp, err := t.guard(r, b, w)
	if err != nil {
		return resp, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode <= 399 {
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10) // lets a small body keep the connection
		resp.Body.Close()
		return nil, redirectError(t.host, r.URL, resp)
	}
	return resp, nil
}
