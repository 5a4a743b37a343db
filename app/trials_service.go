package app

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/localllm"
)

// TrialsService is what a front end does with trial matching: list the
// sources holding trials and their demo patients, and rank the trials of
// a source for a patient. *Trials implements it; UI tests substitute
// fakes.
type TrialsService interface {
	// Sources lists the data sources that hold trials.
	Sources(ctx context.Context) []Source
	// Patients returns the synthetic demo patients stored beside a
	// source's trials (none when it has none).
	Patients(ctx context.Context, src Source) ([]trials.SyntheticPatient, error)
	// Match ranks the trials of a source for req's patient; the result's
	// notices start with what the pipeline lacks (no chat model ...).
	Match(ctx context.Context, src Source, req trials.Request, opts TrialsOptions) (*trials.Result, error)
	// Export writes a match result to a workbook, recorded in the audit
	// trail.
	Export(ctx context.Context, path string, res *trials.Result, prov export.Provenance) (export.Summary, error)
}

var _ TrialsService = (*Trials)(nil)

// Trials is the workspace's trial-matching service (ws.Trials()).
type Trials struct{ ws *Workspace }

// Trials returns the workspace's trial-matching service.
func (ws *Workspace) Trials() *Trials { return &Trials{ws: ws} }

// Export writes a match result (ranked trials, criteria with verdicts,
// concepts, provenance) to an Excel workbook; the export is recorded in the
// audit trail before the workbook is put in place.
func (t *Trials) Export(ctx context.Context, path string, res *trials.Result, prov export.Provenance) (export.Summary, error) {
	opts := t.ws.ExportOptions(ctx, prov.DataSource, map[string]any{"what": "trial matches", "trials": trialCount(res)}, export.Options{})
	return trials.ExportWorkbook(ctx, path, res, prov, opts)
}

// trialCount is the number of ranked trials of a result (0 for none).
func trialCount(res *trials.Result) int {
	if res == nil {
		return 0
	}
	return len(res.Trials)
}

// Import imports trial records (ClinicalTrials.gov XML or JSON, TrialGPT
// or BIRCO JSONL, directories and zip archives) into a source's database
// (created when missing). The import is atomic.
func (t *Trials) Import(ctx context.Context, into Source, paths []string, opts trials.ImportOptions) (trials.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = t.ws.logger
	}
	return withWritableSource(ctx, t.ws, into, func(conn *sql.DB) (trials.ImportResult, error) {
		return trials.Import(ctx, conn, paths, opts)
	})
}

// Has reports whether a source holds imported trials; false when it
// cannot be opened.
func (t *Trials) Has(ctx context.Context, src Source) bool {
	return t.ws.holds(ctx, src, trials.HasTrials)
}

// Sources lists the registered sources that hold trials.
func (t *Trials) Sources(ctx context.Context) []Source {
	return t.ws.sourcesWith(ctx, trials.HasTrials)
}

// Match opens the trial matching pipeline of a source, ranks its trials
// for req's patient and closes it. The pipeline's notices (what it lacks)
// come first in the result's.
func (t *Trials) Match(ctx context.Context, src Source, req trials.Request, opts TrialsOptions) (*trials.Result, error) {
	m, err := t.Open(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	res, err := m.Match(ctx, req)
	if res != nil {
		res.Notices = append(append([]string(nil), m.Notices...), res.Notices...)
	}
	return res, err
}

// TrialsOptions configure [Trials.Open].
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

// Open builds the trial matching pipeline over a source holding trials:
// the configured chat model when the server has it (unless opts.NoModel),
// the configured embedding model or the lexical fallback for STS, and the
// vector store collection of the source's trial items.
func (t *Trials) Open(ctx context.Context, src Source, opts TrialsOptions) (*TrialMatcher, error) {
	ws := t.ws
	path, err := ws.file(src)
	if err != nil {
		return nil, err
	}
	conn, err := trials.OpenForMatching(ctx, path)
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
		err = &MissingDataError{Source: src.Label(), What: "trials"}
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

// Patients returns the synthetic demo patients stored beside the trials
// of a source (none when it has no demo patients).
func (t *Trials) Patients(ctx context.Context, src Source) ([]trials.SyntheticPatient, error) {
	path, err := t.ws.file(src)
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
