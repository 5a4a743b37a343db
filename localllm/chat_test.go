package localllm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func userMsg(s string) []localllm.Message {
	return []localllm.Message{{Role: localllm.RoleUser, Content: s}}
}

func TestChatStreamingOrderOptionsUsage(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	chunks := []string{"Sepsis ", "is ", "a ", "life-threatening ", "condition."}
	s.QueueChat(ollamatest.ChatReply{Chunks: chunks, PromptEvalCount: 12, EvalCount: 5})
	keep := 10 * time.Minute
	req := localllm.ChatRequest{
		Model: chatModel,
		Messages: []localllm.Message{
			{Role: localllm.RoleSystem, Content: "You are terse."},
			{Role: localllm.RoleUser, Content: "What is sepsis?"},
		},
		Options: localllm.Options{Temperature: new(0.0), Seed: new(42), NumCtx: 8192, NumPredict: 256, KeepAlive: &keep},
	}
	var got []string
	res, err := c.Chat(context.Background(), req, func(d string) { got = append(got, d) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != strings.Join(chunks, "|") {
		t.Errorf("deltas = %q, want %q", got, chunks)
	}
	if res.Content != strings.Join(chunks, "") || res.DoneReason != "stop" || res.CutOff() || res.Attempts != 1 {
		t.Errorf("result = %+v", res)
	}
	u := res.Usage
	if u.Model != chatModel || u.Calls != 1 || u.PromptTokens != 12 || u.CompletionTokens != 5 ||
		u.TotalDuration != 6*time.Millisecond || u.LoadDuration != time.Millisecond ||
		u.PromptEvalDuration != 2*time.Millisecond || u.EvalDuration != 3*time.Millisecond || u.Tokens() != 17 {
		t.Errorf("usage = %+v", u)
	}

	reqs := s.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != chatModel || r.Stream == nil || !*r.Stream || len(r.Messages) != 2 ||
		r.Messages[0].Role != "system" || r.Messages[1].Content != "What is sepsis?" {
		t.Errorf("request = %+v", r)
	}
	if r.Options["temperature"] != 0.0 || r.Options["seed"] != 42.0 || r.Options["num_ctx"] != 8192.0 || r.Options["num_predict"] != 256.0 {
		t.Errorf("options = %v", r.Options)
	}
	if r.KeepAlive == nil || r.KeepAlive.Duration != keep {
		t.Errorf("keep_alive = %v", r.KeepAlive)
	}
	if r.Truncate == nil || *r.Truncate || r.Shift == nil || *r.Shift {
		t.Errorf("truncate/shift = %v/%v, want false/false", r.Truncate, r.Shift)
	}
	if r.Format != nil {
		t.Errorf("format = %s", r.Format)
	}
}

func TestChatOptionsOmittedByDefault(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: "ok"})
	if _, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi")}, nil); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := s.Requests()[0].Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if raw["options"] != nil || raw["keep_alive"] != nil {
		t.Errorf("options/keep_alive sent though unset: %v", raw)
	}
}

// TestChatWithoutDelta: without onDelta the reply still streams on the wire
// (so that the idle timeout and the reply budget act while the model
// writes) and comes back whole.
func TestChatWithoutDelta(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: "The answer is 42."})
	res, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("q")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != "The answer is 42." || res.Usage.CompletionTokens != 4 || res.Usage.PromptTokens != 2 {
		t.Errorf("result = %+v", res)
	}
	if r := s.ChatRequests()[0]; r.Stream == nil || !*r.Stream {
		t.Errorf("stream = %v, want true", r.Stream)
	}
}

func TestChatValidate(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	for _, req := range []localllm.ChatRequest{
		{Messages: userMsg("hi")},
		{Model: chatModel},
		{Model: chatModel, Messages: []localllm.Message{{Role: "tool", Content: "x"}}},
	} {
		_, err := c.Chat(context.Background(), req, nil)
		wantKind(t, err, localllm.Invalid)
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid calls", n)
	}
}

func TestChatModelMissing(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	for _, stream := range []bool{false, true} {
		var onDelta func(string)
		if stream {
			onDelta = func(string) {}
		}
		_, err := c.Chat(context.Background(), localllm.ChatRequest{Model: "llama3.1:8b", Messages: userMsg("hi")}, onDelta)
		e := wantKind(t, err, localllm.ModelMissing)
		want := "model llama3.1:8b is not installed: run `ollama pull llama3.1:8b` or Import a GGUF file in Settings"
		if e.Message != want {
			t.Errorf("message = %q\nwant      %q", e.Message, want)
		}
		if !strings.Contains(e.Err.Error(), `model "llama3.1:8b" not found, try pulling it first`) {
			t.Errorf("cause = %v", e.Err)
		}
	}
}

func TestChatServerErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply ollamatest.ChatReply
		kind  localllm.Kind
	}{
		{"500", ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "llama runner process has terminated"}}, localllm.Server},
		{"404 model", ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 404, Error: `model "qwen2.5-coder:7b" not found, try pulling it first`}}, localllm.ModelMissing},
		{"context overflow 400", ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 400, Error: "the input length exceeds the context length"}}, localllm.ContextOverflow},
		{"context overflow in stream", ollamatest.ChatReply{Fault: ollamatest.Fault{Raw: `{"error":"input exceeds maximum context length and cannot be truncated further"}` + "\n"}}, localllm.ContextOverflow},
		{"error in stream", ollamatest.ChatReply{Fault: ollamatest.Fault{Raw: `{"error":"an error was encountered while running the model"}` + "\n"}}, localllm.Server},
		{"malformed JSON", ollamatest.ChatReply{Fault: ollamatest.Fault{Raw: `{"model":"x","message":{"role":"assistant","content":"hi"` + "\n"}}, localllm.BadReply},
		{"not JSON", ollamatest.ChatReply{Fault: ollamatest.Fault{Raw: "[1, 2"}}, localllm.BadReply},
		{"truncated stream", ollamatest.ChatReply{Chunks: []string{"a ", "b "}, Fault: ollamatest.Fault{NoDone: true}}, localllm.BadReply},
		{"empty stream", ollamatest.ChatReply{Fault: ollamatest.Fault{NoDone: true}}, localllm.BadReply},
		{"down mid-stream", ollamatest.ChatReply{Chunks: []string{"a ", "b ", "c "}, Fault: ollamatest.Fault{HangUpAfter: 2}}, localllm.ServerDown},
		{"hang up", ollamatest.ChatReply{Fault: ollamatest.Fault{HangUp: true}}, localllm.ServerDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s, localllm.Config{})
			s.QueueChat(tt.reply)
			var deltas []string
			_, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("hi"), Options: localllm.Options{NumCtx: 2048}},
				func(d string) { deltas = append(deltas, d) })
			e := wantKind(t, err, tt.kind)
			if e.Message == "" || strings.Contains(e.Message, "%!") {
				t.Errorf("message = %q", e.Message)
			}
			if tt.kind == localllm.ContextOverflow && !strings.Contains(e.Message, "2048 tokens") {
				t.Errorf("message = %q", e.Message)
			}
			if tt.name == "down mid-stream" && strings.Join(deltas, "") != "a b " {
				t.Errorf("deltas before the hang-up = %q", deltas)
			}
		})
	}
}

func TestChatPromptFillsContext(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: "x", PromptEvalCount: 2048})
	res, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("long"), Options: localllm.Options{NumCtx: 2048}}, nil)
	wantKind(t, err, localllm.ContextOverflow)
	if res.Usage.PromptTokens != 2048 {
		t.Errorf("usage not returned with the overflow: %+v", res.Usage)
	}
}

func TestChatCutOffIsReported(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: "a long answer that", DoneReason: "length"})
	res, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("q"), Options: localllm.Options{NumPredict: 4}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.CutOff() || res.Content != "a long answer that" {
		t.Errorf("result = %+v", res)
	}
}

func TestChatCancel(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Chunks: []string{"a", "b", "c", "d", "e", "f"}, Fault: ollamatest.Fault{Delay: 200 * time.Millisecond}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("q")}, func(string) { cancel() })
	e := wantKind(t, err, localllm.Cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cause %v is not context.Canceled", e.Err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("cancel took %s", d)
	}
}

func TestChatTimeout(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Chunks: []string{"a", "b", "c"}, Fault: ollamatest.Fault{Delay: time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err := c.Chat(ctx, localllm.ChatRequest{Model: chatModel, Messages: userMsg("q")}, func(string) {})
	wantKind(t, err, localllm.Timeout)
	// Non-streaming too.
	s.QueueChat(ollamatest.ChatReply{Content: "late", Fault: ollamatest.Fault{Delay: time.Second}})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel2()
	_, err = c.Chat(ctx2, localllm.ChatRequest{Model: chatModel, Messages: userMsg("q")}, nil)
	wantKind(t, err, localllm.Timeout)
}

func TestChatHandlerFunc(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.HandleChat(func(r apiChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: "echo: " + r.Messages[len(r.Messages)-1].Content}
	})
	res, err := c.Chat(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("ping")}, nil)
	if err != nil || res.Content != "echo: ping" {
		t.Errorf("Chat = %+v, %v", res, err)
	}
}
