package localllm_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// studySchema is the kind of schema a pipeline uses.
const studySchema = `{
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["YES", "NO", "UNCERTAIN"]},
    "n": {"type": "integer", "description": "number of patients"},
    "arms": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["verdict", "n"],
  "additionalProperties": false
}`

type study struct {
	Verdict string   `json:"verdict"`
	N       int      `json:"n"`
	Arms    []string `json:"arms"`
}

func TestChatJSONValid(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	schema := localllm.MustParseSchema(studySchema)
	s.QueueChat(ollamatest.ChatReply{Content: `{"verdict": "YES", "n": 120, "arms": ["placebo", "drug"]}`, PromptEvalCount: 50, EvalCount: 20})
	var out study
	res, err := c.ChatJSON(context.Background(), localllm.ChatRequest{
		Model:    chatModel,
		Messages: []localllm.Message{{Role: "system", Content: "You extract study data."}, {Role: "user", Content: "Extract."}},
		Options:  localllm.Options{Temperature: new(0.0), NumPredict: 512},
	}, schema, &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != "YES" || out.N != 120 || len(out.Arms) != 2 {
		t.Errorf("decoded %+v", out)
	}
	if res.Content != `{"verdict":"YES","n":120,"arms":["placebo","drug"]}` || res.Attempts != 1 || res.Usage.Tokens() != 70 {
		t.Errorf("result = %+v", res)
	}
	r := s.ChatRequests()[0]
	if string(r.Format) != schema.String() {
		t.Errorf("format = %s, want the schema %s", r.Format, schema)
	}
	if len(r.Messages) != 2 || !strings.HasPrefix(r.Messages[0].Content, "You extract study data.") ||
		!strings.Contains(r.Messages[0].Content, schema.String()) {
		t.Errorf("the schema is not described in the system prompt: %+v", r.Messages)
	}
	if r.Stream == nil || !*r.Stream {
		t.Error("ChatJSON should stream on the wire, so that the client's bounds act while the model writes")
	}
	if r.Options["num_predict"] != 512.0 {
		t.Errorf("options = %v", r.Options)
	}
}

func TestChatJSONAddsSystemPrompt(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: "```json\n{\"verdict\":\"NO\",\"n\":3}\n```"})
	req := localllm.ChatRequest{Model: chatModel, Messages: userMsg("Extract.")}
	res, err := c.ChatJSON(context.Background(), req, localllm.MustParseSchema(studySchema), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Content != `{"verdict":"NO","n":3}` {
		t.Errorf("content = %s", res.Content)
	}
	r := s.ChatRequests()[0]
	if len(r.Messages) != 2 || r.Messages[0].Role != "system" || !strings.Contains(r.Messages[0].Content, `"enum":["YES","NO","UNCERTAIN"]`) {
		t.Errorf("messages = %+v", r.Messages)
	}
	if len(req.Messages) != 1 {
		t.Error("the caller's messages were modified")
	}
}

func TestChatJSONRepairedOnRetry(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	bad := `{"verdict": "MAYBE", "n": 12.5, "extra": 1}`
	s.QueueChat(
		ollamatest.ChatReply{Content: bad, PromptEvalCount: 40, EvalCount: 10},
		ollamatest.ChatReply{Content: `{"verdict": "UNCERTAIN", "n": 12}`, PromptEvalCount: 60, EvalCount: 8},
	)
	var out study
	res, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("Extract.")},
		localllm.MustParseSchema(studySchema), &out)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != "UNCERTAIN" || out.N != 12 || res.Attempts != 2 {
		t.Errorf("out = %+v, result = %+v", out, res)
	}
	if u := res.Usage; u.Calls != 2 || u.PromptTokens != 100 || u.CompletionTokens != 18 {
		t.Errorf("usage = %+v, want the sum of both attempts", u)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := reqs[1].Messages
	if len(second) != 4 || second[2].Role != "assistant" || second[2].Content != bad || second[3].Role != "user" {
		t.Fatalf("second request messages = %+v", second)
	}
	repair := second[3].Content
	for _, want := range []string{
		`$.verdict: "MAYBE" is not one of the allowed values "YES", "NO", "UNCERTAIN"`,
		`$.n: expected integer, got number 12.5`,
		`$: property "extra" is not allowed`,
	} {
		if !strings.Contains(repair, want) {
			t.Errorf("repair prompt lacks %q:\n%s", want, repair)
		}
	}
	if len(reqs[0].Messages) != 2 {
		t.Errorf("first request was modified afterwards: %+v", reqs[0].Messages)
	}
}

func TestChatJSONGivesUpAfterBound(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(
		ollamatest.ChatReply{Content: `not json at all`},
		ollamatest.ChatReply{Content: `{"verdict": "YES"}`},
		ollamatest.ChatReply{Content: `{"verdict": 1, "n": "12"}`},
		ollamatest.ChatReply{Content: `{"verdict": "YES", "n": 1}`}, // never asked for
	)
	res, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("Extract.")},
		localllm.MustParseSchema(studySchema), nil)
	e := wantKind(t, err, localllm.BadReply)
	if n := len(s.ChatRequests()); n != 3 || res.Attempts != 3 {
		t.Errorf("%d requests, %d attempts; want 3 (1 + 2 retries)", n, res.Attempts)
	}
	for _, want := range []string{"after 3 attempts", `$.verdict: expected string, got number 1`, `$.n: expected integer, got string "12"`} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message lacks %q: %s", want, e.Message)
		}
	}
	var verr *localllm.ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 2 {
		t.Errorf("cause = %v", e.Err)
	}
	if !strings.Contains(s.ChatRequests()[1].Messages[3].Content, "the reply is not valid JSON") {
		t.Errorf("repair after non-JSON = %q", s.ChatRequests()[1].Messages[3].Content)
	}
	if !strings.Contains(s.ChatRequests()[2].Messages[5].Content, `required property "n" is missing`) {
		t.Errorf("repair after missing property = %q", s.ChatRequests()[2].Messages[5].Content)
	}
}

func TestChatJSONRetriesConfig(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{JSONRetries: -1})
	s.QueueChat(ollamatest.ChatReply{Content: `{}`}, ollamatest.ChatReply{Content: `{}`})
	_, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x")}, localllm.MustParseSchema(studySchema), nil)
	wantKind(t, err, localllm.BadReply)
	if n := len(s.ChatRequests()); n != 1 {
		t.Errorf("%d requests with retries disabled", n)
	}
}

func TestChatJSONCutOffIsNotParsed(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	// Even a reply that happens to be valid JSON is refused when cut off.
	s.QueueChat(ollamatest.ChatReply{Content: `{"verdict": "YES", "n": 1}`, DoneReason: "length"})
	var out study
	res, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x"), Options: localllm.Options{NumPredict: 8}},
		localllm.MustParseSchema(studySchema), &out)
	e := wantKind(t, err, localllm.BadReply)
	if !strings.Contains(e.Message, "cut off at num_predict (8 tokens)") {
		t.Errorf("message = %q", e.Message)
	}
	if out.Verdict != "" || res.Content != "" || res.DoneReason != "length" || res.Usage.Calls != 1 {
		t.Errorf("a cut-off reply was parsed: out %+v, result %+v", out, res)
	}
	if n := len(s.ChatRequests()); n != 1 {
		t.Errorf("%d requests", n)
	}
}

func TestChatJSONCutOffByContext(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Content: `{"verdict": "Y`, DoneReason: "length", PromptEvalCount: 1000, EvalCount: 24})
	_, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x"), Options: localllm.Options{NumCtx: 1024}},
		localllm.MustParseSchema(studySchema), nil)
	wantKind(t, err, localllm.ContextOverflow)
}

func TestChatJSONErrorsPassThrough(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	s.QueueChat(ollamatest.ChatReply{Fault: ollamatest.Fault{Raw: `{"message": {"content": "{\"verdict\"`}})
	_, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x")}, localllm.MustParseSchema(studySchema), nil)
	wantKind(t, err, localllm.BadReply)
	if n := len(s.ChatRequests()); n != 1 {
		t.Errorf("a protocol error was retried: %d requests", n)
	}
	_, err = c.ChatJSON(context.Background(), localllm.ChatRequest{Model: "absent", Messages: userMsg("x")}, localllm.MustParseSchema(studySchema), nil)
	wantKind(t, err, localllm.ModelMissing)
	_, err = c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x")}, nil, nil)
	wantKind(t, err, localllm.Invalid)
}

func TestChatJSONDecodeMismatchIsRetried(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	// The schema allows any number, the Go type wants a small integer.
	schema := localllm.MustParseSchema(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`)
	s.QueueChat(ollamatest.ChatReply{Content: `{"n": 1e40}`}, ollamatest.ChatReply{Content: `{"n": 7}`})
	var out struct{ N int8 }
	if _, err := c.ChatJSON(context.Background(), localllm.ChatRequest{Model: chatModel, Messages: userMsg("x")}, schema, &out); err != nil {
		t.Fatal(err)
	}
	if out.N != 7 {
		t.Errorf("out = %+v", out)
	}
	if !strings.Contains(s.ChatRequests()[1].Messages[3].Content, "could not be read") {
		t.Errorf("repair = %q", s.ChatRequests()[1].Messages[3].Content)
	}
}

func TestSchemaJSONKeepsOrder(t *testing.T) {
	s := localllm.MustParseSchema(`{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"}}}`)
	var raw json.RawMessage = s.JSON()
	if !strings.Contains(string(raw), `"zeta":{"type":"string"},"alpha"`) {
		t.Errorf("order lost: %s", raw)
	}
}
