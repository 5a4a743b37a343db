// Package ollamatest is an in-process server speaking Ollama's HTTP protocol,
// for tests of code that uses a local model: replies come from a script
// (queues of replies per endpoint, or handler funcs), every request is
// recorded for assertions, and faults (HTTP errors, malformed or truncated
// JSON, done_reason "length", slow streams, a connection dropped mid-stream)
// are one field away, and so are hostile servers (a redirect elsewhere, an
// endless stream, a stream that stalls; see also [Tripwire]). Embeddings are
// deterministic (a hashed bag of words), so retrieval tests can rely on them.
//
// It implements /api/version, /api/tags, /api/show, /api/chat (streamed and
// not), /api/embed, /api/pull, /api/blobs/:digest (HEAD and POST) and
// /api/create, plus HEAD /.
package ollamatest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
)

// DefaultVersion is the version /api/version reports unless changed.
const DefaultVersion = "0.17.4"

// DefaultDimension is the embedding dimension of a model that sets none.
const DefaultDimension = 64

// Model is an installed model of the test server.
type Model struct {
	// Name with tag; ":latest" is added when there is no tag.
	Name string
	// Family is the architecture; default "llama" ("bert" when Embedding).
	Family string
	// ParameterSize as Ollama reports it; default "8.0B".
	ParameterSize string
	// Quantization level; default "Q4_K_M".
	Quantization string
	// Size in bytes; default 4 GB.
	Size int64
	// ContextLength is the trained context length; default 4096.
	ContextLength int
	// Embedding marks an embedding model (capability "embedding" instead
	// of "completion").
	Embedding bool
	// Dimension is the length of its embeddings; default
	// [DefaultDimension].
	Dimension int
	// RemoteHost makes the model a remote ("cloud") model, as `ollama pull
	// gpt-oss:120b-cloud` installs one: the server lists it with this
	// remote_host, and relays each chat request for it, body unchanged,
	// to RemoteHost + "/api/chat" before answering, as Ollama forwards it
	// to ollama.com.
	RemoteHost string
}

func (m Model) withDefaults() Model {
	m.Name = fullName(m.Name)
	if m.Family == "" {
		m.Family = "llama"
		if m.Embedding {
			m.Family = "bert"
		}
	}
	if m.ParameterSize == "" {
		m.ParameterSize = "8.0B"
	}
	if m.Quantization == "" {
		m.Quantization = "Q4_K_M"
	}
	if m.Size == 0 {
		m.Size = 4_000_000_000
	}
	if m.ContextLength == 0 {
		m.ContextLength = 4096
	}
	if m.Dimension == 0 {
		m.Dimension = DefaultDimension
	}
	return m
}

// fullName adds ":latest" to a name without a tag.
func fullName(name string) string {
	if name == "" || strings.Contains(name[strings.LastIndex(name, "/")+1:], ":") {
		return name
	}
	return name + ":latest"
}

// Fault makes the server misbehave for one request. The zero value is no
// fault.
type Fault struct {
	// Status, when not 0, answers with this HTTP status and Error in
	// Ollama's JSON shape {"error": "..."} (no other output).
	Status int
	// Error is the message of an error answer (default: the status text).
	Error string
	// Raw, when not empty, is written verbatim as the body (status 200
	// unless Status is set): malformed or truncated JSON.
	Raw string
	// Delay is waited before each streamed chunk, or before a single
	// answer: a slow server.
	Delay time.Duration
	// HangUp closes the connection without answering.
	HangUp bool
	// HangUpAfter, when > 0, closes the connection abruptly after this many
	// streamed chunks: a server going down mid-stream.
	HangUpAfter int
	// NoDone ends a stream cleanly but without its final message.
	NoDone bool
	// Redirect, when not empty, answers with a redirect (status Status, 307
	// by default) whose Location is Redirect followed by the request's
	// path: a proxy or a hostile server sending the client elsewhere.
	Redirect string
	// StallAfter, when > 0, stops a stream after this many chunks without
	// ending it: the server keeps the connection open and sends nothing
	// more until the client goes away.
	StallAfter int
	// Endless repeats a chat stream's chunks forever, never sending the
	// final message, until the client goes away.
	Endless bool
}

func (f Fault) active() bool {
	return f.Status != 0 || f.Raw != "" || f.HangUp || f.Redirect != ""
}

// ChatReply scripts one /api/chat answer.
type ChatReply struct {
	// Content is the reply's text.
	Content string
	// Chunks, when set, are the streamed pieces (and Content is ignored);
	// by default Content is streamed word by word.
	Chunks []string
	// DoneReason is "stop" unless set (e.g. "length").
	DoneReason string
	// PromptEvalCount defaults to the number of words in the request's
	// messages plus 1.
	PromptEvalCount int
	// EvalCount defaults to the number of chunks.
	EvalCount int
	// Fault makes the answer misbehave.
	Fault
}

// EmbedReply scripts one /api/embed answer.
type EmbedReply struct {
	// Embeddings, when not nil, are returned as they are; otherwise the
	// deterministic [Embedding] of each input.
	Embeddings [][]float32
	// Fault makes the answer misbehave.
	Fault
}

// ProgressReply scripts one /api/pull or /api/create answer.
type ProgressReply struct {
	// Progress, when not nil, are the streamed statuses (the last one
	// should be "success"); otherwise a plausible sequence.
	Progress []api.ProgressResponse
	// Model describes the model the call installs (the name is the
	// request's); zero fields get defaults.
	Model Model
	// Fault makes the answer misbehave.
	Fault
}

// Request is one recorded request.
type Request struct {
	// Method and Path of the request.
	Method, Path string
	// Query is the request's raw query string ("" for none).
	Query string
	// Body is the request body (nil for blob uploads, see Size).
	Body []byte
	// Size is the body's size in bytes.
	Size int64
	// Time is when the request arrived.
	Time time.Time
	// Header holds the request's headers.
	Header http.Header
}

// Decode unmarshals the recorded body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Server is a scripted Ollama server listening on a loopback port. It is
// safe for concurrent use.
type Server struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:40123".
	URL string

	srv *httptest.Server

	mu             sync.Mutex
	version        string
	models         []Model
	blobs          map[string]int64
	chatQ          []ChatReply
	chatFn         func(api.ChatRequest) ChatReply
	embedQ         []EmbedReply
	embedFn        func(api.EmbedRequest) EmbedReply
	pullQ          []ProgressReply
	createQ        []ProgressReply
	faults         map[string][]Fault
	requests       []Request
	redirect       string
	redirectStatus int
	token          string
}

// New starts a server with the given models installed and closes it when
// the test ends.
func New(tb testing.TB, models ...Model) *Server {
	tb.Helper()
	s := NewServer(models...)
	tb.Cleanup(s.Close)
	return s
}

// NewOn starts a server like [New] listening on addr ("host:port", port 0
// for any free one) instead of a loopback port: for tests of what a client
// does with a server on another computer, such as one of this computer's
// own network addresses.
func NewOn(tb testing.TB, addr string, models ...Model) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		tb.Fatalf("ollamatest: listening on %s: %v", addr, err)
	}
	s := newServer(func(h http.Handler) *httptest.Server {
		srv := httptest.NewUnstartedServer(h)
		srv.Listener.Close()
		srv.Listener = l
		srv.Start()
		return srv
	}, models...)
	tb.Cleanup(s.Close)
	return s
}

// NewServer starts a server with the given models installed; call Close
// when done.
func NewServer(models ...Model) *Server { return newServer(httptest.NewServer, models...) }

// newServer starts a server through start (plain or TLS).
func newServer(start func(http.Handler) *httptest.Server, models ...Model) *Server {
	s := &Server{version: DefaultVersion, blobs: map[string]int64{}, faults: map[string][]Fault{}}
	for _, m := range models {
		s.AddModel(m)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("HEAD /{$}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "Ollama is running") })
	mux.HandleFunc("GET /api/version", s.handleVersion)
	mux.HandleFunc("HEAD /api/version", s.handleVersion)
	mux.HandleFunc("GET /api/tags", s.handleTags)
	mux.HandleFunc("POST /api/show", s.handleShow)
	mux.HandleFunc("POST /api/chat", s.handleChat)
	mux.HandleFunc("POST /api/embed", s.handleEmbed)
	mux.HandleFunc("POST /api/pull", s.handlePull)
	mux.HandleFunc("HEAD /api/blobs/{digest}", s.handleHeadBlob)
	mux.HandleFunc("POST /api/blobs/{digest}", s.handlePostBlob)
	mux.HandleFunc("POST /api/create", s.handleCreate)
	s.srv = start(s.record(mux))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, dropping open connections. Clients then see a
// server that is not running.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// AddModel installs (or replaces) a model.
func (s *Server) AddModel(m Model) {
	m = m.withDefaults()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.models, func(x Model) bool { return x.Name == m.Name }); i >= 0 {
		s.models[i] = m
		return
	}
	s.models = append(s.models, m)
}

// RemoveModel uninstalls a model.
func (s *Server) RemoveModel(name string) {
	name = fullName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.DeleteFunc(s.models, func(x Model) bool { return x.Name == name })
}

// Models returns the installed models.
func (s *Server) Models() []Model {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.models)
}

// SetVersion changes what /api/version reports.
func (s *Server) SetVersion(v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = v
}

// HasBlob reports whether a blob ("sha256:...") was uploaded.
func (s *Server) HasBlob(digest string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.blobs[digest]
	return ok
}

// QueueChat appends scripted /api/chat answers, used in order.
func (s *Server) QueueChat(replies ...ChatReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatQ = append(s.chatQ, replies...)
}

// HandleChat answers /api/chat requests with fn once the queue is empty.
// Without either, /api/chat answers 500 "no scripted reply".
func (s *Server) HandleChat(fn func(api.ChatRequest) ChatReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chatFn = fn
}

// QueueEmbed appends scripted /api/embed answers, used in order; once they
// are used up, embeddings are deterministic.
func (s *Server) QueueEmbed(replies ...EmbedReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedQ = append(s.embedQ, replies...)
}

// HandleEmbed answers /api/embed requests with fn once the queue is empty.
func (s *Server) HandleEmbed(fn func(api.EmbedRequest) EmbedReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFn = fn
}

// QueuePull appends scripted /api/pull answers, used in order; by default a
// pull succeeds and installs the model.
func (s *Server) QueuePull(replies ...ProgressReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pullQ = append(s.pullQ, replies...)
}

// QueueCreate appends scripted /api/create answers, used in order; by
// default a create whose files were uploaded succeeds and installs the model.
func (s *Server) QueueCreate(replies ...ProgressReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.createQ = append(s.createQ, replies...)
}

// QueueFault makes the next requests to path (e.g. "/api/version",
// "/api/tags", "/api/blobs") fail with the faults, in order, before any
// scripted reply. Paths match by prefix.
func (s *Server) QueueFault(path string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[path] = append(s.faults[path], faults...)
}

// Requests returns every request received, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count returns the number of requests with method (any if "") whose path
// starts with path.
func (s *Server) Count(method, path string) int {
	n := 0
	for _, r := range s.Requests() {
		if (method == "" || r.Method == method) && strings.HasPrefix(r.Path, path) {
			n++
		}
	}
	return n
}

// ChatRequests returns the decoded /api/chat requests.
func (s *Server) ChatRequests() []api.ChatRequest { return decodeAll[api.ChatRequest](s, "/api/chat") }

// EmbedRequests returns the decoded /api/embed requests.
func (s *Server) EmbedRequests() []api.EmbedRequest {
	return decodeAll[api.EmbedRequest](s, "/api/embed")
}

// PullRequests returns the decoded /api/pull requests.
func (s *Server) PullRequests() []api.PullRequest { return decodeAll[api.PullRequest](s, "/api/pull") }

// CreateRequests returns the decoded /api/create requests.
func (s *Server) CreateRequests() []api.CreateRequest {
	return decodeAll[api.CreateRequest](s, "/api/create")
}

func decodeAll[T any](s *Server, path string) []T {
	var out []T
	for _, r := range s.Requests() {
		if r.Path != path {
			continue
		}
		var v T
		if err := r.Decode(&v); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// record stores each request (its body, except blob uploads) and replays it
// to next.
func (s *Server) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Time: time.Now(), Header: r.Header.Clone()}
		blob := strings.HasPrefix(r.URL.Path, "/api/blobs/")
		if !blob {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec.Body, rec.Size = body, int64(len(body))
		}
		s.mu.Lock()
		s.requests = append(s.requests, rec)
		if blob {
			r.Body = &countingBody{ReadCloser: r.Body, s: s, i: len(s.requests) - 1}
		}
		redirect, status, token := s.redirect, s.redirectStatus, s.token
		s.mu.Unlock()
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ollama"`)
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		if redirect != "" {
			writeRedirect(w, r, redirect, status)
			return
		}
		if f, ok := s.nextFault(r.URL.Path); ok && f.active() {
			writeFault(w, r, f)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// countingBody counts the bytes of a request body that is not recorded (a
// blob upload) into the recorded request's Size.
type countingBody struct {
	io.ReadCloser
	s *Server
	i int
}

// Read implements io.Reader.
func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.s.mu.Lock()
	b.s.requests[b.i].Size += int64(n)
	b.s.mu.Unlock()
	return n, err
}

// nextFault pops the first queued fault whose path prefixes p.
func (s *Server) nextFault(p string) (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.faults))
	for k := range s.faults {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if q := s.faults[k]; strings.HasPrefix(p, k) && len(q) > 0 {
			s.faults[k] = q[1:]
			return q[0], true
		}
	}
	return Fault{}, false
}

// sleep waits d or until the client goes away, and reports whether the
// client is still there.
func sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// writeFault answers with an active fault.
func writeFault(w http.ResponseWriter, r *http.Request, f Fault) {
	if !sleep(r, f.Delay) {
		return
	}
	switch {
	case f.HangUp:
		panic(http.ErrAbortHandler)
	case f.Redirect != "":
		writeRedirect(w, r, f.Redirect, f.Status)
	case f.Raw != "":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if f.Status != 0 {
			w.WriteHeader(f.Status)
		}
		io.WriteString(w, f.Raw)
	default:
		msg := f.Error
		if msg == "" {
			msg = strings.ToLower(http.StatusText(f.Status))
		}
		writeJSON(w, f.Status, map[string]string{"error": msg})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// notFound answers like Ollama for a model that is not installed.
func notFound(w http.ResponseWriter, model string) {
	writeJSON(w, http.StatusNotFound, map[string]string{
		"error": fmt.Sprintf("model %q not found, try pulling it first", model),
	})
}

// model looks up an installed model.
func (s *Server) model(name string) (Model, bool) {
	name = fullName(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.models, func(m Model) bool { return m.Name == name })
	if i < 0 {
		return Model{}, false
	}
	return s.models[i], true
}

func (s *Server) handleVersion(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	v := s.version
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]string{"version": v})
}

func (s *Server) handleTags(w http.ResponseWriter, _ *http.Request) {
	resp := api.ListResponse{Models: []api.ListModelResponse{}}
	for _, m := range s.Models() {
		resp.Models = append(resp.Models, api.ListModelResponse{
			Name:       m.Name,
			Model:      m.Name,
			ModifiedAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
			Size:       m.Size,
			Digest:     digestOf(m.Name),
			Details:    details(m),
			RemoteHost: m.RemoteHost,
		})
	}
	writeJSON(w, http.StatusOK, resp)
}

func details(m Model) api.ModelDetails {
	return api.ModelDetails{
		Format:            "gguf",
		Family:            m.Family,
		Families:          []string{m.Family},
		ParameterSize:     m.ParameterSize,
		QuantizationLevel: m.Quantization,
	}
}

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func (s *Server) handleShow(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	m, ok := s.model(name)
	if !ok {
		notFound(w, name)
		return
	}
	caps := []string{"completion"}
	if m.Embedding {
		caps = []string{"embedding"}
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"parameters": "num_ctx 4096",
		"template":   "{{ .Prompt }}",
		"details":    details(m),
		"model_info": map[string]any{
			"general.architecture":         m.Family,
			m.Family + ".context_length":   m.ContextLength,
			m.Family + ".embedding_length": m.Dimension,
			"general.parameter_count":      8_000_000_000,
		},
		"capabilities": caps,
		"modified_at":  time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		"remote_host":  m.RemoteHost,
	})
}

// streaming reports whether a request asked for a stream (the default).
func streaming(stream *bool) bool { return stream == nil || *stream }

// stream writes NDJSON lines with the fault's delay and hang-up, and reports
// whether the client is still there.
type streamer struct {
	w     http.ResponseWriter
	r     *http.Request
	f     Fault
	sent  int
	begun bool
}

func (st *streamer) send(v any) bool {
	if !sleep(st.r, st.f.Delay) {
		return false
	}
	if !st.begun {
		st.w.Header().Set("Content-Type", "application/x-ndjson")
		st.w.WriteHeader(http.StatusOK)
		st.begun = true
	}
	b, _ := json.Marshal(v)
	if _, err := st.w.Write(append(b, '\n')); err != nil {
		return false
	}
	if fl, ok := st.w.(http.Flusher); ok {
		fl.Flush()
	}
	st.sent++
	if st.f.HangUpAfter > 0 && st.sent >= st.f.HangUpAfter {
		panic(http.ErrAbortHandler)
	}
	if st.f.StallAfter > 0 && st.sent >= st.f.StallAfter {
		<-st.r.Context().Done()
		return false
	}
	return true
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	m, ok := s.model(req.Model)
	if !ok {
		notFound(w, req.Model)
		return
	}
	if m.RemoteHost != "" {
		relay(m.RemoteHost, req)
	}
	s.mu.Lock()
	var reply ChatReply
	scripted := true
	switch {
	case len(s.chatQ) > 0:
		reply, s.chatQ = s.chatQ[0], s.chatQ[1:]
	case s.chatFn != nil:
		fn := s.chatFn
		s.mu.Unlock()
		reply = fn(req)
		s.mu.Lock()
	default:
		scripted = false
	}
	s.mu.Unlock()
	if !scripted {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": "ollamatest: no scripted reply for /api/chat"})
		return
	}
	if reply.Fault.active() {
		writeFault(w, r, reply.Fault)
		return
	}

	chunks := reply.Chunks
	if chunks == nil && reply.Content != "" {
		chunks = strings.SplitAfter(reply.Content, " ")
	}
	if reply.DoneReason == "" {
		reply.DoneReason = "stop"
	}
	if reply.PromptEvalCount == 0 {
		reply.PromptEvalCount = 1
		for _, m := range req.Messages {
			reply.PromptEvalCount += len(strings.Fields(m.Content))
		}
	}
	if reply.EvalCount == 0 {
		reply.EvalCount = len(chunks)
	}
	created := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	final := api.ChatResponse{
		Model:      req.Model,
		CreatedAt:  created,
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: reply.DoneReason,
		Metrics: api.Metrics{
			TotalDuration:      6 * time.Millisecond,
			LoadDuration:       time.Millisecond,
			PromptEvalCount:    reply.PromptEvalCount,
			PromptEvalDuration: 2 * time.Millisecond,
			EvalCount:          reply.EvalCount,
			EvalDuration:       3 * time.Millisecond,
		},
	}
	if !streaming(req.Stream) {
		if !sleep(r, reply.Delay) {
			return
		}
		final.Message.Content = strings.Join(chunks, "")
		writeJSON(w, http.StatusOK, final)
		return
	}
	st := &streamer{w: w, r: r, f: reply.Fault}
	for {
		for _, c := range chunks {
			if !st.send(api.ChatResponse{Model: req.Model, CreatedAt: created, Message: api.Message{Role: "assistant", Content: c}}) {
				return
			}
		}
		if !reply.Endless || len(chunks) == 0 {
			break
		}
	}
	if !reply.NoDone {
		st.send(final)
	} else if !st.begun {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
	}
}

func (s *Server) handleEmbed(w http.ResponseWriter, r *http.Request) {
	var req api.EmbedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	m, ok := s.model(req.Model)
	if !ok {
		notFound(w, req.Model)
		return
	}
	var inputs []string
	switch in := req.Input.(type) {
	case string:
		inputs = []string{in}
	case []any:
		for _, x := range in {
			str, ok := x.(string)
			if !ok {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
				return
			}
			inputs = append(inputs, str)
		}
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid input type"})
		return
	}
	s.mu.Lock()
	var reply EmbedReply
	switch {
	case len(s.embedQ) > 0:
		reply, s.embedQ = s.embedQ[0], s.embedQ[1:]
	case s.embedFn != nil:
		fn := s.embedFn
		s.mu.Unlock()
		reply = fn(req)
		s.mu.Lock()
	}
	s.mu.Unlock()
	if reply.Fault.active() {
		writeFault(w, r, reply.Fault)
		return
	}
	if !sleep(r, reply.Delay) {
		return
	}
	embs := reply.Embeddings
	tokens := 0
	for _, in := range inputs {
		tokens += len(strings.Fields(in)) + 2
	}
	if embs == nil {
		for _, in := range inputs {
			embs = append(embs, Embedding(in, m.Dimension))
		}
	}
	writeJSON(w, http.StatusOK, api.EmbedResponse{
		Model:           req.Model,
		Embeddings:      embs,
		TotalDuration:   4 * time.Millisecond,
		LoadDuration:    time.Millisecond,
		PromptEvalCount: tokens,
	})
}

// progress streams a pull or create: the scripted statuses or defaults,
// then installs the model unless the stream was cut.
func (s *Server) progress(w http.ResponseWriter, r *http.Request, name string, stream *bool, reply ProgressReply, defaults []api.ProgressResponse) {
	if reply.Fault.active() {
		writeFault(w, r, reply.Fault)
		return
	}
	steps := reply.Progress
	if steps == nil {
		steps = defaults
	}
	if !streaming(stream) {
		if !sleep(r, reply.Delay) {
			return
		}
		last := api.ProgressResponse{Status: "success"}
		if len(steps) > 0 {
			last = steps[len(steps)-1]
		}
		writeJSON(w, http.StatusOK, last)
	} else {
		st := &streamer{w: w, r: r, f: reply.Fault}
		if reply.NoDone && len(steps) > 0 {
			steps = steps[:len(steps)-1]
		}
		for _, p := range steps {
			if !st.send(p) {
				return
			}
		}
		if reply.NoDone {
			return
		}
	}
	if len(steps) == 0 || steps[len(steps)-1].Status == "success" {
		m := reply.Model
		m.Name = name
		s.AddModel(m)
	}
}

func (s *Server) handlePull(w http.ResponseWriter, r *http.Request) {
	var req api.PullRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	s.mu.Lock()
	var reply ProgressReply
	if len(s.pullQ) > 0 {
		reply, s.pullQ = s.pullQ[0], s.pullQ[1:]
	}
	s.mu.Unlock()
	d := "sha256:" + digestOf(name)
	s.progress(w, r, name, req.Stream, reply, []api.ProgressResponse{
		{Status: "pulling manifest"},
		{Status: "pulling " + d[7:19], Digest: d, Total: 1000, Completed: 0},
		{Status: "pulling " + d[7:19], Digest: d, Total: 1000, Completed: 500},
		{Status: "pulling " + d[7:19], Digest: d, Total: 1000, Completed: 1000},
		{Status: "verifying sha256 digest"},
		{Status: "writing manifest"},
		{Status: "success"},
	})
}

func (s *Server) handleHeadBlob(w http.ResponseWriter, r *http.Request) {
	if s.HasBlob(r.PathValue("digest")) {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

func (s *Server) handlePostBlob(w http.ResponseWriter, r *http.Request) {
	digest := r.PathValue("digest")
	h := sha256.New()
	n, err := io.Copy(h, r.Body)
	if err != nil {
		return
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != digest {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "digest mismatch, expected \"" + digest + "\", got \"" + got + "\""})
		return
	}
	s.mu.Lock()
	s.blobs[digest] = n
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	var req api.CreateRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		return
	}
	name := req.Model
	if len(req.Files) == 0 && req.From == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "neither 'from' or 'files' was specified"})
		return
	}
	for _, d := range req.Files {
		if !s.HasBlob(d) {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid digest: " + d + ": file does not exist"})
			return
		}
	}
	s.mu.Lock()
	var reply ProgressReply
	if len(s.createQ) > 0 {
		reply, s.createQ = s.createQ[0], s.createQ[1:]
	}
	s.mu.Unlock()
	var steps []api.ProgressResponse
	steps = append(steps, api.ProgressResponse{Status: "parsing GGUF"})
	for _, d := range req.Files {
		steps = append(steps, api.ProgressResponse{Status: "using existing layer " + d})
	}
	steps = append(steps, api.ProgressResponse{Status: "writing manifest"}, api.ProgressResponse{Status: "success"})
	s.progress(w, r, name, req.Stream, reply, steps)
}

// relay sends a chat request to a remote model's host, as Ollama does; the
// answer is not used.
func relay(host string, req api.ChatRequest) {
	body, _ := json.Marshal(req)
	resp, err := http.Post(strings.TrimRight(host, "/")+"/api/chat", "application/json", bytes.NewReader(body))
	if err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
