package localllm_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// callWithDeadline runs op with a generous deadline that the bound under
// test must beat: reaching it means the client hung.
func callWithDeadline(t *testing.T, op func(ctx context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := op(ctx)
	if ctx.Err() != nil {
		t.Fatalf("the call was only stopped by the test's deadline: %v", err)
	}
	return err
}

// TestChatEndlessStreamStopsAtBudget: a server that streams chunks forever
// without its final message is cut off after about num_predict chunks,
// with or without onDelta (both stream on the wire).
func TestChatEndlessStreamStopsAtBudget(t *testing.T) {
	for _, streamed := range []bool{true, false} {
		t.Run(fmt.Sprintf("onDelta=%v", streamed), func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s, localllm.Config{})
			s.QueueChat(ollamatest.ChatReply{Chunks: []string{"more ", "and ", "more "}, Fault: ollamatest.Fault{Endless: true}})
			const budget = 200
			req := localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi"), Options: localllm.Options{NumPredict: budget}}
			var deltas int
			var onDelta func(string)
			if streamed {
				onDelta = func(string) { deltas++ }
			}
			err := callWithDeadline(t, func(ctx context.Context) error {
				_, err := c.Chat(ctx, req, onDelta)
				return err
			})
			e := wantKind(t, err, localllm.BadReply)
			if !strings.Contains(e.Message, "more than") || !strings.Contains(e.Message, "tokens without finishing") || !strings.Contains(e.Message, s.URL) {
				t.Errorf("message %q", e.Message)
			}
			if streamed && (deltas < budget || deltas > 2*budget) {
				t.Errorf("%d chunks were accepted for a budget of %d", deltas, budget)
			}
		})
	}
}

// TestChatDefaultBudget: without num_predict, num_ctx (and else the
// client's MaxReplyTokens) bounds the reply.
func TestChatDefaultBudget(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{MaxReplyTokens: 300})
	for _, opts := range []localllm.Options{{}, {NumCtx: 300}, {NumPredict: -1, NumCtx: 300}} {
		s.QueueChat(ollamatest.ChatReply{Chunks: []string{"x "}, Fault: ollamatest.Fault{Endless: true}})
		deltas := 0
		err := callWithDeadline(t, func(ctx context.Context) error {
			_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi"), Options: opts}, func(string) { deltas++ })
			return err
		})
		wantKind(t, err, localllm.BadReply)
		if deltas < 300 || deltas > 600 {
			t.Errorf("options %+v: %d chunks accepted", opts, deltas)
		}
	}
	// A reply within the budget is untouched.
	s.QueueChat(ollamatest.ChatReply{Content: strings.Repeat("word ", 250)})
	if _, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, nil); err != nil {
		t.Fatal(err)
	}
}

// TestHeadersNeverSent: a server that accepts the request and never
// answers is given up after the configured header timeout.
func TestHeadersNeverSent(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{HeaderTimeout: 100 * time.Millisecond, InfoTimeout: 100 * time.Millisecond})
	ops := map[string]func(ctx context.Context) error{
		"chat": func(ctx context.Context) error {
			s.QueueChat(ollamatest.ChatReply{Content: "late", Fault: ollamatest.Fault{Delay: time.Hour}})
			_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, nil)
			return err
		},
		"embed": func(ctx context.Context) error {
			s.QueueEmbed(ollamatest.EmbedReply{Fault: ollamatest.Fault{Delay: time.Hour}})
			_, _, err := c.Embed(ctx, embedModel, []string{"a"})
			return err
		},
		"health": func(ctx context.Context) error {
			s.QueueFault("/api/version", ollamatest.Fault{Delay: time.Hour, Status: 500})
			_, err := c.Health(ctx)
			return err
		},
		"list": func(ctx context.Context) error {
			s.QueueFault("/api/tags", ollamatest.Fault{Delay: time.Hour, Status: 500})
			_, err := c.Models(ctx)
			return err
		},
	}
	for name, op := range ops {
		err := callWithDeadline(t, op)
		e := wantKind(t, err, localllm.Timeout)
		if !strings.Contains(e.Message, "did not start answering") || !strings.Contains(e.Message, "100ms") {
			t.Errorf("%s: message %q", name, e.Message)
		}
	}
}

// TestDefaultTimeouts: the defaults are generous for model work (loading a
// model on a slow CPU) and short for quick questions.
func TestDefaultTimeouts(t *testing.T) {
	if localllm.DefaultHeaderTimeout < 5*time.Minute || localllm.DefaultIdleTimeout < time.Minute ||
		localllm.DefaultInfoTimeout > time.Minute || localllm.DefaultInfoTimeout < 10*time.Second {
		t.Errorf("defaults: header %s, idle %s, info %s", localllm.DefaultHeaderTimeout, localllm.DefaultIdleTimeout, localllm.DefaultInfoTimeout)
	}
}

// TestStallMidStream: a stream that stops in the middle is given up after
// the idle timeout, keeping what arrived for the caller's display only.
func TestStallMidStream(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{IdleTimeout: 100 * time.Millisecond})
	s.QueueChat(ollamatest.ChatReply{Chunks: []string{"a ", "b ", "c ", "d "}, Fault: ollamatest.Fault{StallAfter: 2}})
	var got []string
	err := callWithDeadline(t, func(ctx context.Context) error {
		_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, func(d string) { got = append(got, d) })
		return err
	})
	e := wantKind(t, err, localllm.Timeout)
	if !strings.Contains(e.Message, "stopped sending for 100ms") || !strings.Contains(e.Message, s.URL) {
		t.Errorf("message %q", e.Message)
	}
	if strings.Join(got, "") != "a b " {
		t.Errorf("deltas %q", got)
	}
	// A pull that stalls too.
	s.QueuePull(ollamatest.ProgressReply{Fault: ollamatest.Fault{StallAfter: 1}})
	err = callWithDeadline(t, func(ctx context.Context) error { return c.Pull(ctx, "m", nil) })
	if e := wantKind(t, err, localllm.Timeout); !strings.Contains(e.Message, "stopped sending") {
		t.Errorf("pull: message %q", e.Message)
	}
}

// flood answers with headers and then up to 1 GiB without a newline,
// counting what it managed to write before the client hung up.
type flood struct {
	written atomic.Int64
	done    chan struct{}
}

func (f *flood) handler(prefix string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		defer close(f.done)
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-ndjson")
		n, _ := io.WriteString(w, prefix)
		f.written.Add(int64(n))
		buf := []byte(strings.Repeat("a", 64<<10))
		for f.written.Load() < 1<<30 {
			n, err := w.Write(buf)
			f.written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
}

// TestHugeLineBounded: one 1 GiB line without a newline (a chat chunk, a
// model list, an embedding answer) is refused after a bounded number of
// bytes, not buffered.
func TestHugeLineBounded(t *testing.T) {
	cases := map[string]struct {
		path, prefix string
		op           func(context.Context, *localllm.Client) error
	}{
		"chat": {"/api/chat", `{"model":"m","message":{"role":"assistant","content":"`, func(ctx context.Context, c *localllm.Client) error {
			_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, func(string) {})
			return err
		}},
		"JSON chat": {"/api/chat", `{"model":"m","message":{"role":"assistant","content":"`, func(ctx context.Context, c *localllm.Client) error {
			_, err := c.ChatJSON(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, localllm.MustParseSchema(`{"type":"object"}`), nil)
			return err
		}},
		"list": {"/api/tags", `{"models":[{"name":"`, func(ctx context.Context, c *localllm.Client) error {
			_, err := c.Models(ctx)
			return err
		}},
		"embed": {"/api/embed", `{"embeddings":[[`, func(ctx context.Context, c *localllm.Client) error {
			_, _, err := c.Embed(ctx, embedModel, []string{"a"})
			return err
		}},
		"pull": {"/api/pull", `{"status":"`, func(ctx context.Context, c *localllm.Client) error {
			return c.Pull(ctx, "m", nil)
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := &flood{done: make(chan struct{})}
			srv := httptest.NewServer(f.handler(tc.prefix))
			t.Cleanup(srv.Close)
			c, err := localllm.New(localllm.Config{Host: srv.URL})
			if err != nil {
				t.Fatal(err)
			}
			err = callWithDeadline(t, func(ctx context.Context) error { return tc.op(ctx, c) })
			e := wantKind(t, err, localllm.BadReply)
			if !strings.Contains(e.Message, "more than") || !strings.Contains(e.Message, srv.URL) {
				t.Errorf("message %q", e.Message)
			}
			select {
			case <-f.done:
			case <-time.After(60 * time.Second):
				t.Fatal("the server is still writing: the client did not hang up")
			}
			t.Logf("the server wrote %d KiB before the client hung up", f.written.Load()>>10)
			// What the server could write is the client's cap plus the
			// socket buffers, far from 1 GiB.
			if w := f.written.Load(); w > 128<<20 {
				t.Errorf("the server wrote %d MiB before the client hung up", w>>20)
			}
		})
	}
}

// TestBoundsDoNotHideCancel: cancelling still reports Cancelled.
func TestBoundsDoNotHideCancel(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{IdleTimeout: time.Hour})
	s.QueueChat(ollamatest.ChatReply{Chunks: []string{"a ", "b "}, Fault: ollamatest.Fault{StallAfter: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, func(string) { cancel() })
	if !errors.Is(err, context.Canceled) && localllm.KindOf(err) != localllm.Cancelled {
		t.Fatalf("err = %v", err)
	}
}

// TestServerNeverReadsRequest: a server that answers the model check but
// never reads the chat request (so a large request cannot be sent) is given
// up after the header timeout too, not waited for forever.
func TestServerNeverReadsRequest(t *testing.T) {
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/show" {
			io.WriteString(w, `{"details":{},"model_info":{}}`)
			return
		}
		<-stop // never read, never answered
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(stop) }) // before srv.Close, which waits for the handler
	c, err := localllm.New(localllm.Config{Host: srv.URL, HeaderTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("patient row with lab values; ", 1<<20) // 29 MiB: more than the socket buffers hold
	err = callWithDeadline(t, func(ctx context.Context) error {
		_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg(big)}, nil)
		return err
	})
	e := wantKind(t, err, localllm.Timeout)
	if !strings.Contains(e.Message, "stopped accepting") || !strings.Contains(e.Message, "200ms") {
		t.Errorf("message %q", e.Message)
	}
}
