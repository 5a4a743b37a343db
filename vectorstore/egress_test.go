package vectorstore

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestEgressStoreNeverEmbedsThroughTheNetwork: chromem-go, under the store,
// embeds a text itself with OpenAI's cloud API (through net/http's default
// transport) when a document or query reaches it without a vector. In a
// process whose every proxy variable points at a tripwire, and with an
// OpenAI key in the environment, the whole life of a store (create, add
// with and without precomputed vectors, query by text and by vector,
// delete, close and reopen from disk, rebuild with another embedder,
// delete the collection) makes no connection at all.
func TestEgressStoreNeverEmbedsThroughTheNetwork(t *testing.T) {
	tw := ollamatest.NewTripwire(t)
	if !ollamatest.InChild(t, append(ollamatest.ProxyVariables(tw.URL), "OPENAI_API_KEY=sk-tripwire")...) {
		if n := tw.Conns(t); n != 0 {
			t.Fatalf("the store's life made %d connections through the proxy", n)
		}
		return
	}
	ctx := context.Background()
	dir := t.TempDir()
	lex := NewLexicalEmbedder(64)
	docs := make([]Document, 40)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprintf("d%02d", i), Text: fmt.Sprintf("patient %d admitted with sepsis and lactate %d", i, i%7), Metadata: map[string]string{"ward": fmt.Sprint(i % 3)}}
	}
	pre, err := lex.Embed(ctx, []string{"precomputed note on fever"})
	if err != nil {
		t.Fatal(err)
	}

	s := openStore(t, dir, Options{})
	c := collection(t, s, "notes", lex)
	if err := c.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, []Document{{ID: "pre", Text: "precomputed note on fever", Embedding: pre[0]}}); err != nil {
		t.Fatal(err)
	}
	if rs, err := c.Query(ctx, "sepsis lactate", 5, map[string]string{"ward": "1"}); err != nil || len(rs) == 0 {
		t.Fatalf("query: %v, %v", rs, err)
	}
	if rs, err := c.QueryVector(ctx, pre[0], 3, nil); err != nil || len(rs) == 0 || rs[0].ID != "pre" {
		t.Fatalf("query by vector: %v, %v", ids(rs), err)
	}
	if err := c.Delete(ctx, "d00", "d01"); err != nil {
		t.Fatal(err)
	}

	// Reopened from disk: the chromem collection is built again from the file.
	s = openStore(t, dir, Options{})
	c = collection(t, s, "notes", lex)
	if c.Count() != len(docs)-1 {
		t.Fatalf("reopened: %d documents", c.Count())
	}
	if rs, err := c.Query(ctx, "fever", 3, nil); err != nil || len(rs) == 0 {
		t.Fatalf("query after reopening: %v, %v", rs, err)
	}
	// Opened with another embedder: every text embedded again, here.
	other := &countingEmbedder{Embedder: randomEmbedder{name: "other-model", dim: 16}}
	c = collection(t, s, "notes", other)
	if !c.Rebuilt() || len(other.calls()) == 0 {
		t.Fatal("the collection was not rebuilt with the other embedder")
	}
	if rs, err := c.Query(ctx, "sepsis", 3, nil); err != nil || len(rs) == 0 {
		t.Fatalf("query after the rebuild: %v, %v", rs, err)
	}
	if err := s.DeleteCollection("notes"); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("HTTPS_PROXY") == "" || os.Getenv("OPENAI_API_KEY") == "" {
		t.Fatal("the child runs without the proxy variables")
	}
}
