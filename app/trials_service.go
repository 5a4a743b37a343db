package app

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"path/filepath"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm"
)

// TrialsSourceName is the source trials imported in the desktop app go to.
const TrialsSourceName = "trials"

// trialsFile is that source's database file in the data directory.
const trialsFile = "trials.sqlite"

// ImportTrials imports trial records (ClinicalTrials.gov XML or JSON,
// TrialGPT or BIRCO JSONL, directories and zip archives) into a database
// (a source name or a path, created when missing). The import is atomic.
func (ws *Workspace) ImportTrials(ctx context.Context, db string, paths []string, opts trials.ImportOptions) (trials.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (trials.ImportResult, error) {
		return trials.Import(ctx, conn, paths, opts)
	})
}

// ImportTrialsToWorkspace imports trial records into the workspace's
// "trials" database and registers it as a source.
func (ws *Workspace) ImportTrialsToWorkspace(ctx context.Context, paths []string, opts trials.ImportOptions) (trials.ImportResult, error) {
	path := filepath.Join(ws.DataDir(), trialsFile)
	res, err := ws.ImportTrials(ctx, path, paths, opts)
	if err != nil {
		return res, err
	}
	if _, ok := ws.Source(TrialsSourceName); !ok {
		if _, err := ws.RegisterImported(TrialsSourceName, path, SourceCSV, "clinical trials imported in Clinsight"); err != nil {
			return res, err
		}
	}
	return res, nil
}

// HasTrials reports whether a database (a source name or a path) holds
// imported trials; false when it cannot be opened.
func (ws *Workspace) HasTrials(ctx context.Context, db string) bool {
	return ws.dbHolds(ctx, db, trials.HasTrials)
}

// TrialSources lists the registered sources that hold trials.
func (ws *Workspace) TrialSources(ctx context.Context) []string {
	return ws.sourcesHolding(ctx, trials.HasTrials)
}

// TrialsOptions configure [Workspace.Trials].
type TrialsOptions struct {
	// NoModel builds the model-free pipeline: no chat model, and the
	// lexical embedder for STS even when an embedding model is installed
	// (fully deterministic and offline).
	NoModel bool
	// Model overrides the configured chat model.
	Model string
	// Ranking tunes the pipeline; zero fields take the defaults.
	Ranking trials.Options
	// Usage, if set, counts the embedding calls.
	Usage *localllm.UsageCounter
}

// TrialMatcher is a trial matching pipeline bound to a database; Close it
// when done.
type TrialMatcher struct {
	*trials.Pipeline
	// DB is the trial database, opened read-only.
	DB *sql.DB
	// Path is its file.
	Path string
	// Embedder describes the embedder STS uses (model or lexical fallback).
	Embedder EmbedderChoice
	// Notices tell the user what is missing (no chat model ...).
	Notices []string
}

// Close releases the database.
func (m *TrialMatcher) Close() error { return m.DB.Close() }

// Trials builds the trial matching pipeline over a database holding
// trials (a source name or a path): the configured chat model when the
// server has it (unless opts.NoModel), the configured embedding model or
// the lexical fallback for STS, and the vector store collection of the
// database's trial items.
func (ws *Workspace) Trials(ctx context.Context, db string, opts TrialsOptions) (*TrialMatcher, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	ok, err := trials.HasTrials(ctx, conn)
	if err == nil && ok {
		var n int
		n, err = trials.Count(ctx, conn)
		ok = n > 0
	}
	if err == nil && !ok {
		err = fmt.Errorf("%s holds no trials: import some first (clinsight trials import PATH --db %s)", db, db)
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	m := &TrialMatcher{DB: conn, Path: path}
	cfg := trials.Config{DB: conn, Options: opts.Ranking, Logger: ws.logger}
	if opts.NoModel {
		m.Embedder = lexicalChoice("model-free ranking requested")
	} else {
		m.Embedder = ws.ChooseEmbedder(ctx, opts.Usage)
		model := opts.Model
		if model == "" {
			model = ws.Config().Models.Chat
		}
		client, cerr := ws.ModelClient()
		if cerr == nil {
			st := ws.Status(ctx, client)
			if chatInstalled(st, model) {
				cfg.Chat, cfg.Model = client, model
			} else {
				m.Notices = append(m.Notices, chatMissing(st, model))
			}
		} else {
			m.Notices = append(m.Notices, cerr.Error())
		}
	}
	store, err := ws.VectorStore()
	if err != nil {
		conn.Close()
		return nil, err
	}
	items, err := store.Collection(ctx, trialItemsCollection(path), m.Embedder.Embedder)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("open the trial item vectors: %w", err)
	}
	cfg.Embedder, cfg.Items, cfg.EmbedderLabel = m.Embedder.Embedder, items, m.Embedder.Label
	p, err := trials.New(cfg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	m.Pipeline = p
	return m, nil
}

// trialItemsCollection names the vector store collection of a trial
// database's condition and intervention vectors.
func trialItemsCollection(dbPath string) string {
	h := fnv.New32a()
	h.Write([]byte(dbPath))
	return fmt.Sprintf("trial-items-%08x", h.Sum32())
}

func chatInstalled(st Status, model string) bool {
	if !st.Health.Reachable {
		return false
	}
	for _, m := range st.Models {
		if m.Name == model || m.Name == model+":latest" {
			return true
		}
	}
	return false
}

func chatMissing(st Status, model string) string {
	if !st.Health.Reachable {
		msg := "Ollama is not reachable"
		if st.HealthError != nil {
			msg = localllm.MessageOf(st.HealthError)
		}
		return "No chat model: " + msg + "; trials are ranked without concepts from a model and without the eligibility check."
	}
	return fmt.Sprintf("No chat model: %s is not installed; trials are ranked without concepts from a model and without the eligibility check.", model)
}

// TrialPatients returns the synthetic demo patients stored beside the
// trials of a database (none when it has no demo patients).
func (ws *Workspace) TrialPatients(ctx context.Context, db string) ([]trials.SyntheticPatient, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return trials.ListDemoPatients(ctx, conn)
}
