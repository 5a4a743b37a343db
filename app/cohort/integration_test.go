//go:build integration && unix

package cohort

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
	"github.com/clinsight/clinsight/vectorstore"
)

// TestIntegrationPipelineRealServer builds the retrieval index with a real
// embedding model (a tiny BERT, with documents cut to fit its context) and
// asks questions of a tiny llama through a real Ollama server: whatever
// the noise the models produce, every question ends in an answer, a
// refusal or a clean failure, with its record, within a bounded time.
func TestIntegrationPipelineRealServer(t *testing.T) {
	srv := ollamareal.Start(t)
	client := srv.Client(t, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	const chat, embed = "tiny-llama:latest", "tiny-bert:latest"
	srv.TinyModels(t, client, chat, embed)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()

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
	ix, err := BuildIndex(ctx, cat, IndexOptions{Store: store, Embedder: client.Embedder(embed, localllm.Options{}, nil),
		DBPath: testDemoPath, DB: db, MaxEmbedChars: 300})
	if err != nil {
		t.Fatalf("index with the real embedding model: %v", err)
	}
	runner, err := datasets.NewRunner(ctx, testDemoPath, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer runner.Close()
	p, err := New(ctx, Config{Chat: client, Runner: runner, Index: ix, SQLModel: chat, TopK: 1, MaxAttempts: 3,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"How many female patients are there?", "Which drugs were prescribed most often?"} {
		start := time.Now()
		ans, err := p.Ask(ctx, Request{Question: q}, nil)
		t.Logf("%q: status %s, %d attempts, %d calls, %s; %s; err %v", q, ans.Status, len(ans.Attempts), ans.Calls(),
			time.Since(start).Round(time.Millisecond), ans.Message, err)
		if ans.Retrieval == nil || len(ans.Retrieval.Tables) == 0 || ans.Retrieval.Embedder != "ollama:"+embed {
			t.Errorf("retrieval = %+v", ans.Retrieval)
		}
		switch ans.Status {
		case StatusAnswered, StatusRefused, StatusNoData, StatusFailed:
			if err != nil {
				t.Errorf("status %s with error %v", ans.Status, err)
			}
		case StatusError:
			if localllm.KindOf(err) == "" {
				t.Errorf("error status without a model error: %v", err)
			}
		default:
			t.Errorf("status %q", ans.Status)
		}
		if ans.Calls() == 0 && ans.Status != StatusNoData && ans.Status != StatusRefused {
			t.Errorf("no model call recorded: %+v", ans.LLMCalls)
		}
	}
}
