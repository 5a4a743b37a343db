package localllm_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("patient %d has condition c%d", i, i%7)
	}
	return out
}

func TestEmbedBatchesPreserveOrder(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	in := texts(150)
	vecs, u, err := c.Embed(context.Background(), embedModel, in)
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.EmbedRequests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, want := range []int{64, 64, 22} {
		if got := len(reqs[i].Input.([]any)); got != want {
			t.Errorf("request %d has %d inputs, want %d", i, got, want)
		}
		if r := reqs[i]; r.Model != embedModel || r.Truncate == nil || *r.Truncate {
			t.Errorf("request %d = model %s truncate %v", i, r.Model, r.Truncate)
		}
	}
	if len(vecs) != 150 {
		t.Fatalf("%d vectors", len(vecs))
	}
	for i, v := range vecs {
		if !slices.Equal(v, ollamatest.Embedding(in[i], 32)) {
			t.Fatalf("vector %d is not the embedding of text %d", i, i)
		}
	}
	if u.Calls != 3 || u.Model != embedModel || u.PromptTokens == 0 || u.TotalDuration != 12*time.Millisecond {
		t.Errorf("usage = %+v", u)
	}
}

func TestEmbedBatchSizeAndOptions(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{EmbedBatchSize: 10})
	if _, _, err := c.Embed(context.Background(), embedModel, texts(25)); err != nil {
		t.Fatal(err)
	}
	if n := len(s.EmbedRequests()); n != 3 {
		t.Errorf("%d requests with batch size 10", n)
	}
	keep := time.Duration(-1)
	if _, _, err := c.EmbedWith(context.Background(), localllm.EmbedRequest{Model: embedModel, Texts: texts(25), BatchSize: 25,
		Options: localllm.Options{NumCtx: 512, KeepAlive: &keep}}); err != nil {
		t.Fatal(err)
	}
	reqs := s.EmbedRequests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want one more", len(reqs))
	}
	if r := reqs[3]; r.Options["num_ctx"] != 512.0 || r.KeepAlive == nil || r.KeepAlive.Duration >= 0 && r.KeepAlive.Duration < time.Hour {
		t.Errorf("request = options %v keep_alive %v", r.Options, r.KeepAlive)
	}
	vecs, u, err := c.Embed(context.Background(), embedModel, nil)
	if vecs != nil || u.Calls != 0 || err != nil || len(s.EmbedRequests()) != 4 {
		t.Errorf("Embed(nothing) = %v, %+v, %v", vecs, u, err)
	}
}

func TestEmbedBadReplies(t *testing.T) {
	tests := []struct {
		name    string
		replies []ollamatest.EmbedReply
		kind    localllm.Kind
	}{
		{"dimension mismatch in a batch", []ollamatest.EmbedReply{{Embeddings: [][]float32{{1, 0}, {1, 0, 0}, {0, 1}}}}, localllm.BadReply},
		{"dimension mismatch across batches", []ollamatest.EmbedReply{{Embeddings: [][]float32{{1, 0}, {0, 1}}}, {Embeddings: [][]float32{{1, 0, 0}}}}, localllm.BadReply},
		{"too few vectors", []ollamatest.EmbedReply{{Embeddings: [][]float32{{1, 0}}}}, localllm.BadReply},
		{"empty vectors", []ollamatest.EmbedReply{{Embeddings: [][]float32{{}, {}}}}, localllm.BadReply},
		{"malformed JSON", []ollamatest.EmbedReply{{Fault: ollamatest.Fault{Raw: `{"embeddings": [[0.1, `}}}, localllm.BadReply},
		{"server error", []ollamatest.EmbedReply{{Fault: ollamatest.Fault{Status: 500, Error: "this model does not support embeddings"}}}, localllm.Server},
		{"overflow", []ollamatest.EmbedReply{{Fault: ollamatest.Fault{Status: 400, Error: "input exceeds maximum context length and cannot be truncated further"}}}, localllm.ContextOverflow},
		{"hang up", []ollamatest.EmbedReply{{Fault: ollamatest.Fault{HangUp: true}}}, localllm.ServerDown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			c := newClient(t, s, localllm.Config{EmbedBatchSize: 2})
			s.QueueEmbed(tt.replies...)
			n := 2
			if len(tt.replies) == 2 || tt.name == "dimension mismatch in a batch" {
				n = 3
			}
			if tt.name == "dimension mismatch in a batch" {
				c = newClient(t, s, localllm.Config{EmbedBatchSize: 3})
			}
			vecs, _, err := c.Embed(context.Background(), embedModel, texts(n))
			wantKind(t, err, tt.kind)
			if vecs != nil {
				t.Errorf("vectors returned with an error")
			}
		})
	}
}

func TestEmbedModelMissingAndCancel(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	_, _, err := c.Embed(context.Background(), "mxbai-embed-large", []string{"a"})
	e := wantKind(t, err, localllm.ModelMissing)
	if e.Message != "model mxbai-embed-large is not installed: run `ollama pull mxbai-embed-large` or Import a GGUF file in Settings" {
		t.Errorf("message = %q", e.Message)
	}
	_, _, err = c.Embed(context.Background(), "", []string{"a"})
	wantKind(t, err, localllm.Invalid)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = c.Embed(ctx, embedModel, []string{"a"})
	wantKind(t, err, localllm.Cancelled)

	s.QueueEmbed(ollamatest.EmbedReply{Fault: ollamatest.Fault{Delay: time.Second}})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	_, _, err = c.Embed(ctx2, embedModel, []string{"a"})
	wantKind(t, err, localllm.Timeout)
}

func TestEmbedder(t *testing.T) {
	s := newServer(t)
	c := newClient(t, s, localllm.Config{})
	var usage localllm.UsageCounter
	var e localllm.Embedder = c.Embedder(embedModel, localllm.Options{}, &usage)
	if e.EmbedderName() != "ollama:"+embedModel {
		t.Errorf("EmbedderName = %s", e.EmbedderName())
	}
	vecs, err := e.Embed(context.Background(), []string{"sepsis in the ICU", "sepsis in the emergency department", "knee surgery"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 3 || len(vecs[0]) != 32 {
		t.Fatalf("vectors %d x %d", len(vecs), len(vecs[0]))
	}
	if cos(vecs[0], vecs[1]) <= cos(vecs[0], vecs[2]) {
		t.Error("similar texts are not closer than dissimilar ones")
	}
	if u := usage.Total(); u.Calls != 1 || u.Model != embedModel {
		t.Errorf("usage = %+v", u)
	}
}

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
