package app

import (
	"context"
	"fmt"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// CohortOptions adjusts the cohort-discovery pipeline of Workspace.Cohort.
// Zero values keep the workspace settings and the pipeline defaults.
type CohortOptions struct {
	// Model replaces the configured SQL and chat models (both stages use it).
	Model string
	// TopK is how many tables retrieval returns.
	TopK int
	// MaxAttempts bounds the statements tried per question.
	MaxAttempts int
	// Progress reports the preparation stages (catalog, retrieval index).
	Progress progress.Func
}

// CohortIndex reads the catalog of a database (a source name or a path)
// and builds its retrieval index in the workspace vector store, embedding
// with the configured embedding model or the lexical fallback
// (ChooseEmbedder). It needs no chat model.
func (ws *Workspace) CohortIndex(ctx context.Context, db string, onProgress progress.Func) (*cohort.Index, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	report := func(stage string, done int64) {
		onProgress.Send(progress.Report{Stage: stage, Done: done, Total: 2, Unit: "steps"})
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	report("Reading the schema of "+path, 0)
	cat, err := datasets.ReadCatalog(ctx, conn, datasets.CatalogOptions{})
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", path, err)
	}
	store, err := ws.VectorStore()
	if err != nil {
		return nil, err
	}
	choice := ws.ChooseEmbedder(ctx, nil)
	report("Indexing the table documentation ("+choice.Label+")", 1)
	ix, err := cohort.BuildIndex(ctx, cat, cohort.IndexOptions{
		Store: store, Embedder: choice.Embedder, EmbedderLabel: choice.Label, DBPath: path, DB: conn,
	})
	if err != nil {
		return nil, err
	}
	report("Ready", 2)
	ws.logger.Info("cohort index built", "db", path, "tables", len(cat.Tables), "embedder", choice.Label,
		"elapsed_ms", ix.BuildTime().Milliseconds())
	return ix, nil
}

// Cohort builds the cohort-discovery pipeline of a database (a source name
// or a path): its retrieval index, a read-only runner with the workspace's
// limits, and the workspace's model client and models. Close the pipeline
// when done.
func (ws *Workspace) Cohort(ctx context.Context, db string, opts CohortOptions) (*cohort.Pipeline, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	ix, err := ws.CohortIndex(ctx, path, opts.Progress)
	if err != nil {
		return nil, err
	}
	cfg := ws.Config()
	runner, err := datasets.NewRunner(ctx, path, cfg.RunnerOptions())
	if err != nil {
		return nil, err
	}
	client, err := ws.ModelClient()
	if err != nil {
		runner.Close()
		return nil, err
	}
	sqlModel, chatModel := cfg.Models.SQL, cfg.Models.Chat
	if opts.Model != "" {
		sqlModel, chatModel = opts.Model, opts.Model
	}
	name := path
	if s, ok := ws.sourceByPath(path); ok {
		name = s.Name + " (" + path + ")"
	}
	p, err := cohort.New(ctx, cohort.Config{
		Chat: client, Runner: runner, Index: ix, SQLModel: sqlModel, ChatModel: chatModel,
		TopK: opts.TopK, MaxAttempts: opts.MaxAttempts, DataSource: name, Logger: ws.logger,
		OnClose: runner.Close,
	})
	if err != nil {
		runner.Close()
		return nil, err
	}
	return p, nil
}

// sourceByPath finds the registered source whose database is path.
func (ws *Workspace) sourceByPath(path string) (Source, bool) {
	for _, s := range ws.Config().Sources {
		if ws.SourcePath(s) == path {
			return s, true
		}
	}
	return Source{}, false
}
