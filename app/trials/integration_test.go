//go:build integration && unix

// Integration test against a real Ollama server (scripts/ollama-server.sh
// build; the binary is $CLINSIGHT_OLLAMA_BIN or the script's cache) with a
// tiny random-weight llama written here. Run with
//
//	CGO_ENABLED=0 go test -tags ci,integration -run Integration -v ./app/trials/
//
// The server and the tiny model come from localllm/ollamareal.

package trials

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
	"github.com/clinsight/clinsight/vectorstore"
)

// TestIntegrationMatchTinyModel runs what `clinsight trials match` runs —
// concepts by the model, BM25, STS, fusion, eligibility of the top trials
// — against a real Ollama server with a tiny generated model. Its output is
// noise: the test checks that matching completes, within a bound, with a
// ranked list and either model results or clean fallbacks with notices.
func TestIntegrationMatchTinyModel(t *testing.T) {
	srv := ollamareal.Start(t)
	client := srv.Client(t, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	const model = "tiny-llama:latest"
	srv.TinyModels(t, client, model, "")

	db, dir := fixtureDB(t, fixtureTrials)
	store, err := vectorstore.Open(filepath.Join(dir, "vectors"), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := vectorstore.NewLexicalEmbedder(0)
	items, err := store.Collection(ctx, "items", emb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{DB: db, Chat: client, Model: model, Embedder: emb, Items: items,
		Options: Options{EligibilityTop: 2, NumCtx: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := p.Match(ctx, Request{Patient: patient, UseModel: true, FilterAge: true, FilterSex: true})
	if err != nil {
		t.Fatalf("match with the real server: %v", err)
	}
	t.Logf("matched in %s: concepts from %q, %d trials, %d model calls, %d tokens; notices %q",
		time.Since(start).Round(time.Millisecond), res.Query.Source, len(res.Trials), res.Usage.Calls, res.Usage.Tokens(), res.Notices)
	if len(res.Trials) == 0 {
		t.Fatal("no trial ranked")
	}
	if res.Usage.Calls == 0 {
		t.Error("the model was never called")
	}
	for _, r := range res.Trials[:min(2, len(res.Trials))] {
		if r.Eligibility == nil {
			t.Errorf("%s: no eligibility result or error recorded", r.Trial.ID)
			continue
		}
		t.Logf("%s: eligibility %.2f, error %q, %d verdicts", r.Trial.ID, r.Eligibility.Score, r.Eligibility.Error, len(r.Eligibility.Verdicts))
	}
	if res.Query.Source != "model "+model && !strings.Contains(strings.Join(res.Notices, " "), "deterministic extractor") {
		t.Errorf("concepts neither from the model nor a noticed fallback: %q %q", res.Query.Source, res.Notices)
	}
}
