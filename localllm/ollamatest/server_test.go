package ollamatest_test

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/ollama/ollama/api"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestEmbeddingDeterministic(t *testing.T) {
	a := ollamatest.Embedding("Sepsis in the ICU", 48)
	if !slices.Equal(a, ollamatest.Embedding("sepsis, in the icu!", 48)) {
		t.Error("case and punctuation change the embedding")
	}
	var norm float64
	for _, x := range a {
		norm += float64(x) * float64(x)
	}
	if len(a) != 48 || math.Abs(norm-1) > 1e-6 {
		t.Errorf("len %d, norm² %f", len(a), norm)
	}
	if e := ollamatest.Embedding("", 0); len(e) != ollamatest.DefaultDimension || e[0] == 0 {
		t.Errorf("empty text = %v", e)
	}
}

func TestChatStreamProtocol(t *testing.T) {
	s := ollamatest.New(t, ollamatest.Model{Name: "m"})
	s.QueueChat(ollamatest.ChatReply{Content: "one two three", DoneReason: "length"})
	resp := post(t, s.URL+"/api/chat", `{"model":"m:latest","messages":[{"role":"user","content":"a b c"}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "application/x-ndjson" {
		t.Errorf("content type %s", ct)
	}
	var lines []api.ChatResponse
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var r api.ChatResponse
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, r)
	}
	if len(lines) != 4 || lines[0].Message.Content != "one " || lines[0].Done || !lines[3].Done {
		t.Fatalf("lines = %+v", lines)
	}
	last := lines[3]
	if last.DoneReason != "length" || last.PromptEvalCount != 4 || last.EvalCount != 3 || last.TotalDuration == 0 || last.EvalDuration == 0 {
		t.Errorf("final = %+v", last)
	}
	reqs := s.ChatRequests()
	if len(reqs) != 1 || reqs[0].Messages[0].Content != "a b c" {
		t.Errorf("recorded %+v", reqs)
	}
}

func TestUnscriptedAndUnknown(t *testing.T) {
	s := ollamatest.New(t, ollamatest.Model{Name: "m"})
	resp := post(t, s.URL+"/api/chat", `{"model":"m","messages":[]}`)
	if resp.StatusCode != 500 {
		t.Errorf("unscripted chat: %d", resp.StatusCode)
	}
	resp = post(t, s.URL+"/api/chat", `{"model":"x","messages":[]}`)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 404 || strings.TrimSpace(string(b)) != `{"error":"model \"x\" not found, try pulling it first"}` {
		t.Errorf("unknown model: %d %s", resp.StatusCode, b)
	}
	r, err := http.Head(s.URL + "/")
	if err != nil || r.StatusCode != 200 {
		t.Errorf("HEAD / = %v, %v", r, err)
	}
	r, err = http.Head(s.URL + "/api/version")
	if err != nil || r.StatusCode != 200 {
		t.Errorf("HEAD /api/version = %v, %v", r, err)
	}
	if s.Count(http.MethodHead, "/") != 2 || s.Count("", "/api/chat") != 2 {
		t.Errorf("requests = %+v", s.Requests())
	}
}

func TestSlowStreamStopsWhenClientLeaves(t *testing.T) {
	s := ollamatest.New(t, ollamatest.Model{Name: "m"})
	s.QueueChat(ollamatest.ChatReply{Chunks: []string{"a", "b", "c"}, Fault: ollamatest.Fault{Delay: 10 * time.Second}})
	client := &http.Client{Timeout: 200 * time.Millisecond}
	start := time.Now()
	resp, err := client.Post(s.URL+"/api/chat", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err == nil {
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	if err == nil {
		t.Fatal("a 10 s stream finished within the 200 ms timeout")
	}
	s.Close() // must not wait for the stream
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s", d)
	}
}
