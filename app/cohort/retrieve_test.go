package cohort

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/clinsight/clinsight/vectorstore"
)

func TestIndexCollectionPerDatabase(t *testing.T) {
	ctx := context.Background()
	srv := ollamatest.New(t, ollamatest.Model{Name: "embed", Embedding: true})
	client, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	emb := client.Embedder("embed", localllm.Options{}, nil)
	db, err := datasets.OpenReadOnly(ctx, testDemoPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := datasets.ReadCatalog(ctx, db, datasets.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := vectorstore.Open(t.TempDir(), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts := IndexOptions{Store: store, Embedder: emb, EmbedderLabel: "embed (test)", DBPath: testDemoPath, DB: db}
	ix, err := BuildIndex(ctx, cat, opts)
	if err != nil {
		t.Fatal(err)
	}
	name := CollectionName(testDemoPath, cat)
	if !strings.HasPrefix(name, "cohort-") || len(store.Collections()) != 1 || store.Collections()[0].Name != name || store.Collections()[0].Count != len(cat.Tables) {
		t.Fatalf("collections = %+v, want %s", store.Collections(), name)
	}
	embeds := len(srv.EmbedRequests())
	if embeds == 0 {
		t.Fatal("the documents were not embedded by the model")
	}
	r, err := ix.Retrieve(ctx, "How many female patients had a heart attack?", 3)
	if err != nil || len(r.Tables) != 3 || r.Embedder != "embed (test)" || r.Tables[0].Score < r.Tables[2].Score {
		t.Fatalf("retrieve: %+v %v", r, err)
	}
	if !slices.Contains(r.Names(), "d_icd_diagnoses") {
		t.Errorf("heart attack: %v", r.Names())
	}
	// Built again on the same database: the stored vectors are reused (only
	// the question was embedded since).
	if _, err := BuildIndex(ctx, cat, opts); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.EmbedRequests()); n != embeds+1 {
		t.Errorf("embed requests %d after a rebuild, want %d", n, embeds+1)
	}
	// Another state of the database gets a new collection and the old one
	// goes.
	cat2, err := datasets.ReadCatalog(ctx, db, datasets.CatalogOptions{GeneratedDocsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := BuildIndex(ctx, cat2, opts); err != nil {
		t.Fatal(err)
	}
	if cs := store.Collections(); len(cs) != 1 || cs[0].Name != CollectionName(testDemoPath, cat2) || cs[0].Name == name {
		t.Errorf("collections after a change = %+v", cs)
	}
}

func TestRetrieveDemo(t *testing.T) {
	ix, _ := demoIndex(t, testDemoPath)
	ctx := context.Background()
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"How many female patients had a heart attack?", []string{"d_icd_diagnoses", "diagnoses_icd", "patients"}},
		{"What is the average creatinine of patients older than 70?", []string{"labevents", "d_labitems"}},
		{"How many CT images of the brain are there?", []string{"dicom_all"}},
		{"Which drugs were prescribed most often?", []string{"prescriptions"}},
	} {
		r, err := ix.Retrieve(ctx, c.q, 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !slices.Contains(r.Names(), w) {
				t.Errorf("%q: %v lacks %s", c.q, r.Names(), w)
			}
		}
		if r.Best < DefaultMinRelevance {
			t.Errorf("%q: best relevance %.3f under the threshold", c.q, r.Best)
		}
	}
	for _, q := range []string{"What is the capital of France?", "Who won the world cup in 2018?", "asdf qwer"} {
		if r, _ := ix.Retrieve(ctx, q, 5); r.Best >= DefaultMinRelevance {
			t.Errorf("%q: best relevance %.3f, want under %.3f", q, r.Best, DefaultMinRelevance)
		}
	}
	if h := ix.h.edges; !slices.Contains(h, "labevents.itemid -> d_labitems") || !slices.Contains(h, "admissions.subject_id -> patients") {
		t.Errorf("hierarchy = %v", h)
	}
}

func TestValueMatch(t *testing.T) {
	vi := &valueIndex{exact: map[string]*valueEntry{}}
	vi.cols = []valueColumn{{table: 0, column: "drug"}, {table: 1, column: "label"}}
	vi.add("Potassium Chloride", 0)
	vi.add("potassium", 1)
	vi.add("IV", 0)
	vi.add("rdw", 1)
	got := vi.match(textsearch.Words("Was potassium chloride given iv, and what was the rdw and potassium?"))
	var phrases []string
	for _, m := range got {
		phrases = append(phrases, m.phrase)
	}
	if want := []string{"potassium chloride", "rdw", "potassium"}; !slices.Equal(phrases, want) {
		t.Errorf("matches = %v, want %v", phrases, want)
	}
}
