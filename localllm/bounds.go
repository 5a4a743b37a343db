package localllm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// Every answer of the server is bounded in time and size, client-side, so
// that a stuck, broken or hostile server cannot hang a pipeline or fill the
// memory:
//
//   - the wait for the start of an answer (after the request was sent) is
//     bounded by Config.HeaderTimeout for model work and Config.InfoTimeout
//     for quick questions, and so is a pause while the request is sent (a
//     server that stops reading it);
//   - a pause in the middle of an answer is bounded by Config.IdleTimeout
//     (a timer re-armed before each read of the body cancels the request
//     when it fires);
//   - the bytes of an answer are bounded: a chat reply by the token budget
//     Clinsight asked for (num_predict), other answers by what they can
//     legitimately hold, and every line of a stream by maxLineBytes.
//
// Chat requests always stream on the wire (onDelta only decides whether the
// pieces are passed on), so the header timeout covers loading the model and
// reading the prompt, not the whole generation, and the idle timeout and
// the token budget act while the model writes.

// Size bounds of answers.
const (
	// maxBytesPerToken bounds the average size of a reply's tokens: real
	// tokens average about 4 bytes, long runs of spaces or dashes reach 16,
	// and 32 leaves room for escapes.
	maxBytesPerToken = 32
	// replySlackBytes is added to every byte budget.
	replySlackBytes = 64 << 10
	// maxLineBytes bounds one line of a streamed answer (a chunk holds one
	// token; a progress line a few hundred bytes). The api package gives up
	// silently at 8 MB; this is below it, with a clear message.
	maxLineBytes = 1 << 20
	// chunkOverheadBytes bounds the JSON around one streamed chunk (model
	// name, timestamp, role, flags).
	chunkOverheadBytes = 1 << 10
	// maxInfoBytes bounds the answer to a quick question (version, model
	// list, model details).
	maxInfoBytes = 32 << 20
	// maxEmbeddingBytes bounds the JSON of one embedding: 16384
	// dimensions of up to 24 characters.
	maxEmbeddingBytes = 16384 * 24
)

// bounds are the limits of one request's answer.
type bounds struct {
	op       string        // what the request is, for messages: "chat", "model list", ...
	header   time.Duration // wait for the answer to start after the request was sent; 0: none
	idle     time.Duration // pause in the middle of the answer; 0: none
	maxBytes int64         // bytes of the whole body; 0: unbounded (a download's progress)
	maxLine  int64         // bytes of one line; 0: not checked
}

// infoBounds are the bounds of a quick question.
func (c *Client) infoBounds(op string) bounds {
	return bounds{op: op, header: c.infoTimeout, idle: c.idleTimeout, maxBytes: maxInfoBytes}
}

// workBounds are the bounds of a request that makes the model work, with a
// body of at most maxBytes (0: unbounded, for progress streams).
func (c *Client) workBounds(op string, maxBytes int64) bounds {
	return bounds{op: op, header: c.headerTimeout, idle: c.idleTimeout, maxBytes: maxBytes, maxLine: maxLineBytes}
}

// replyBudget is the number of tokens a chat reply may have: num_predict
// when set, else num_ctx (generation stops at the end of the window, since
// context shift is off), else the client's MaxReplyTokens.
func (c *Client) replyBudget(o Options) int {
	switch {
	case o.NumPredict > 0:
		return o.NumPredict
	case o.NumCtx > 0:
		return o.NumCtx
	}
	return c.maxReplyTokens
}

// chatLimits are the bounds of a chat reply of budget tokens: the number of
// streamed chunks (about one per token, with some slack) and the bytes of
// its text.
type chatLimits struct {
	budget    int
	maxChunks int
	maxText   int
}

func newChatLimits(budget int) chatLimits {
	return chatLimits{
		budget:    budget,
		maxChunks: budget + budget/8 + 16,
		maxText:   budget*maxBytesPerToken + replySlackBytes,
	}
}

// bodyBytes is the size bound of the whole streamed answer.
func (l chatLimits) bodyBytes() int64 {
	return 2*int64(l.maxText) + int64(l.maxChunks+1)*chunkOverheadBytes + replySlackBytes
}

// tooManyTokens is the error for a reply that goes past its budget.
func (c *Client) tooManyTokens(model string, l chatLimits) *Error {
	return badReply(fmt.Errorf("reply exceeded %d chunks or %d bytes", l.maxChunks, l.maxText),
		"the model server at %s sent more than %d tokens without finishing the reply of model %s (Clinsight asked for at most %d); Clinsight stopped reading it: check that the server is a working Ollama, and try again",
		c.host, l.budget, model, l.budget)
}

// headerTimeoutError is the error for an answer that did not start in time.
func headerTimeoutError(host string, b bounds) *Error {
	return &Error{
		Kind: Timeout,
		Message: fmt.Sprintf("the model server at %s did not start answering the %s request within %s: the model may still be loading or the computer is very busy; try again, or check the server",
			host, b.op, b.header),
		Err: fmt.Errorf("no response headers within %s", b.header),
	}
}

// sendStallError is the error for a request the server stopped accepting.
func sendStallError(host string, b bounds) *Error {
	return &Error{
		Kind: Timeout,
		Message: fmt.Sprintf("the model server at %s stopped accepting the %s request for %s before it was sent completely: it may be overloaded or stuck; try again, or check the server",
			host, b.op, b.header),
		Err: fmt.Errorf("request not written within %s", b.header),
	}
}

// idleTimeoutError is the error for an answer that stopped in the middle.
func idleTimeoutError(host string, b bounds) *Error {
	return &Error{
		Kind: Timeout,
		Message: fmt.Sprintf("the model server at %s stopped sending for %s in the middle of its answer to the %s request: it may be overloaded or stuck; try again, or check the server",
			host, b.idle, b.op),
		Err: fmt.Errorf("no data for %s", b.idle),
	}
}

// tooLargeError is the error for an answer over its size bound.
func tooLargeError(host string, b bounds, line bool) *Error {
	what, limit := "an answer of more than", b.maxBytes
	if line {
		what, limit = "a line of more than", b.maxLine
	}
	return badReply(fmt.Errorf("answer exceeded %d bytes", limit),
		"the model server at %s sent %s %s for the %s request, far more than Clinsight asked for; Clinsight stopped reading it: check that the host in Settings is a working Ollama server",
		host, what, humanSize(limit), b.op)
}

// humanSize writes n bytes as KiB or MiB.
func humanSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// watchdog cancels a request when it is not disarmed in time. One watchdog
// serves a request's sending and header wait and then each read of its
// body.
type watchdog struct {
	cancel context.CancelCauseFunc

	mu       sync.Mutex
	timer    *time.Timer
	armed    bool
	reading  bool // the response has arrived: the sending countdowns are over
	deadline time.Time
	pending  error // the error to report if the armed period passes
	err      error // the error it fired with, or nil
}

// armSending (re)starts the countdown of the request's sending or header
// wait, unless the response has arrived (startReading): the transport's
// hooks that call it (httptrace's WroteRequest, the request body's reads)
// run on its write goroutine and can come after the response, and must not
// then replace the idle countdown of a body read with the header timeout
// (a stalled stream then went unnoticed for minutes: TestStallMidStream
// failed about once in 300 runs).
func (w *watchdog) armSending(d time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.reading {
		w.armLocked(d, err)
	}
}

// startReading ends the sending phase and disarms its countdown.
func (w *watchdog) startReading() {
	w.mu.Lock()
	w.reading = true
	w.mu.Unlock()
	w.disarm()
}

// arm (re)starts the countdown: unless disarmed within d, the request is
// cancelled and err is what the call reports.
func (w *watchdog) arm(d time.Duration, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armLocked(d, err)
}

func (w *watchdog) armLocked(d time.Duration, err error) {
	if d <= 0 || w.err != nil {
		return
	}
	w.armed, w.deadline, w.pending = true, time.Now().Add(d), err
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.fire)
	} else {
		w.timer.Reset(d)
	}
}

// disarm stops the countdown.
func (w *watchdog) disarm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watchdog) fire() {
	w.mu.Lock()
	if !w.armed || w.err != nil || time.Now().Before(w.deadline) {
		// Disarmed, or re-armed after this run was scheduled.
		w.mu.Unlock()
		return
	}
	w.err = w.pending
	w.mu.Unlock()
	w.cancel(w.err)
}

// fired returns the error the watchdog fired with, or nil.
func (w *watchdog) fired() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// guard sends r through base within b (or the transport's default bounds
// when the call set none): it arms the header timeout once the request is
// written and wraps the body in a [guardedBody].
func (t watchingTransport) guard(r *http.Request, b bounds, w *bodyWatch) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(r.Context())
	dog := &watchdog{cancel: cancel}
	send := r
	if b.header > 0 {
		// Sending: the countdown starts now and restarts whenever the
		// transport takes more of the body, so a server that stops
		// reading the request is given up, however large the request
		// (an upload of a model file keeps it going). Then waiting: a
		// fresh countdown once the request is written.
		headerErr, sendErr := headerTimeoutError(t.host, b), sendStallError(t.host, b)
		ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
			WroteRequest: func(httptrace.WroteRequestInfo) { dog.armSending(b.header, headerErr) },
		})
		send = r.WithContext(ctx)
		if r.Body != nil && r.Body != http.NoBody {
			send.Body = &sendingBody{ReadCloser: r.Body, progress: func() { dog.armSending(b.header, sendErr) }}
		}
		dog.armSending(b.header, sendErr)
	} else {
		send = r.WithContext(ctx)
	}
	resp, err := t.base.RoundTrip(send)
	dog.startReading()
	if fe := dog.fired(); fe != nil {
		if err == nil {
			resp.Body.Close()
		}
		cancel(nil)
		return nil, fe
	}
	if err != nil {
		cancel(nil)
		return nil, err
	}
	resp.Body = &guardedBody{body: resp.Body, b: b, dog: dog, cancel: cancel, w: w, host: t.host}
	return resp, nil
}

// sendingBody reports each read of a request body: the transport reads
// the next piece when it has written the previous one.
type sendingBody struct {
	io.ReadCloser
	progress func()
}

// Read implements io.Reader.
func (s *sendingBody) Read(p []byte) (int, error) {
	s.progress()
	return s.ReadCloser.Read(p)
}

// guardedBody enforces the idle timeout and the size bounds while a body is
// read, and records read errors in the call's bodyWatch (the api client's
// stream reader does not report them).
type guardedBody struct {
	body   io.ReadCloser
	b      bounds
	dog    *watchdog
	cancel context.CancelCauseFunc
	w      *bodyWatch // nil when the call has none
	host   string

	total int64 // bytes read
	line  int64 // bytes since the last newline
	err   error // sticky error once a bound was exceeded
}

// Read implements io.Reader.
func (g *guardedBody) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	g.dog.arm(g.b.idle, idleTimeoutError(g.host, g.b))
	n, err := g.body.Read(p)
	g.dog.disarm()
	if fe := g.dog.fired(); fe != nil {
		return 0, g.fail(fe)
	}
	g.total += int64(n)
	if g.b.maxBytes > 0 && g.total > g.b.maxBytes {
		return 0, g.fail(tooLargeError(g.host, g.b, false))
	}
	if g.b.maxLine > 0 {
		chunk := p[:n]
		for {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				g.line += int64(len(chunk))
				break
			}
			if g.line+int64(i) > g.b.maxLine {
				g.line += int64(i)
				break
			}
			g.line, chunk = 0, chunk[i+1:]
		}
		if g.line > g.b.maxLine {
			return 0, g.fail(tooLargeError(g.host, g.b, true))
		}
	}
	if err != nil && !errors.Is(err, io.EOF) && g.w != nil {
		g.w.set(err)
	}
	return n, err
}

// fail makes err the body's sticky error, records it and cancels the
// request (closing the connection).
func (g *guardedBody) fail(err error) error {
	g.err = err
	if g.w != nil {
		g.w.set(err)
	}
	g.cancel(err)
	return err
}

// Close implements io.Closer.
func (g *guardedBody) Close() error {
	g.dog.disarm()
	err := g.body.Close()
	g.cancel(nil)
	return err
}
