package app

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/clinsight/clinsight/vectorstore"
)

func TestChooseEmbedder(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)

	// Server down: the lexical fallback, labelled with the reason.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = down }); err != nil {
		t.Fatal(err)
	}
	ch := ws.ChooseEmbedder(ctx, nil)
	if !ch.Lexical || !vectorstore.IsLexical(ch.Embedder.EmbedderName()) || !strings.Contains(ch.Label, "lexical fallback") || !strings.Contains(ch.Label, "not reachable") {
		t.Errorf("server down: %+v", ch)
	}

	// Server up without the embedding model: fallback, naming the model.
	srv := ollamatest.New(t, ollamatest.Model{Name: "llama3.1:8b"})
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	if ch := ws.ChooseEmbedder(ctx, nil); !ch.Lexical || !strings.Contains(ch.Label, "nomic-embed-text is not installed") {
		t.Errorf("model missing: %+v", ch)
	}

	// Model installed: the model embeds, through the real client.
	srv.AddModel(ollamatest.Model{Name: "nomic-embed-text", Embedding: true})
	ch = ws.ChooseEmbedder(ctx, nil)
	if ch.Lexical || ch.Label != "nomic-embed-text (Ollama)" {
		t.Fatalf("model installed: %+v", ch)
	}
	vecs, err := ch.Embedder.Embed(ctx, []string{"heart failure", "sepsis"})
	if err != nil || len(vecs) != 2 || len(srv.EmbedRequests()) != 1 {
		t.Errorf("embed through the model: %v, %d vectors", err, len(vecs))
	}
}

func TestVectorStoreOpensOnce(t *testing.T) {
	ws := openTemp(t)
	a, err := ws.VectorStore()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ws.VectorStore()
	if a != b || a.Dir() != ws.VectorsDir() {
		t.Error("vector store not shared or in the wrong directory")
	}
}
