package trials

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clinsight/clinsight/internal/textsearch"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/vectorstore"
	"golang.org/x/sync/errgroup"
)

// FusionWeights weigh the component ranks in R_combo.
type FusionWeights struct {
	BM25, STS1, STS2 float64
}

// Options configure the ranking. [DefaultOptions] gives the tuned values.
type Options struct {
	// Candidates is n: how many trials BM25 retrieves (default 2,000), and
	// the cap of every rank in the fusion.
	Candidates int
	// ColumnWeights weigh the FTS columns in bm25(): conditions,
	// interventions, keywords and MeSH terms, title, summary and
	// description, inclusion criteria.
	ColumnWeights [6]float64
	// Fusion weighs the ranks: R_combo = BM25·min(R_bm25,n) +
	// STS1·min(R_sts1,n) + STS2·min(R_sts2,n) (default 0.5, 0.25, 0.25,
	// IBM's weights).
	Fusion FusionWeights
	// LexicalFusion replaces Fusion when STS runs on the lexical fallback
	// embedder: its "similarity" is word overlap, which BM25 already
	// counts, and weighting it again lowered NDCG@10 on the SIGIR pool
	// (0.2887 with IBM's weights, 0.3059 with BM25 alone). The default
	// ranks by BM25 (STS is still computed and shown).
	LexicalFusion FusionWeights
	// InterventionWeight is w^T of an intervention item in STS2 (a
	// condition weighs 1).
	InterventionWeight float64
	// Extract tunes the deterministic concept extractor.
	Extract ExtractOptions
	// EligibilityTop is K: how many top trials the model checks criterion
	// by criterion (default 20).
	EligibilityTop int
	// RowBudget bounds the BM25 work over the whole index: the number of
	// trials bm25() scores, summed over the concepts, rarest first (see
	// Pipeline.bm25); negative means no bound. It does not apply to a pool.
	// The default, 4,000, was chosen on development data with
	// BenchmarkDevRowBudget (the SIGIR-BIRCO dev topics ranked over their
	// 248 trials among 375,580 synthetic ones): NDCG@10 0.2696 with 4,000
	// and 0.2722 with the former 15,000 (9 topics; 0.2658 with 6,000 and
	// 0.2513 with 8,000 and 10,000), the judged relevant trials among the
	// 2,000 candidates 26 of 59 with 4,000 and 24 with 15,000, for about a
	// third of the scoring.
	RowBudget int
	// NumCtx is the model's context window in tokens for the eligibility
	// prompts (default 8192); long criteria lists are split to fit.
	NumCtx int
}

// DefaultOptions returns the ranking settings.
func DefaultOptions() Options {
	return Options{
		Candidates:         2000,
		ColumnWeights:      [6]float64{3, 1.5, 1.5, 2, 1, 1},
		Fusion:             FusionWeights{BM25: 0.5, STS1: 0.25, STS2: 0.25},
		LexicalFusion:      FusionWeights{BM25: 1},
		InterventionWeight: 1,
		Extract:            DefaultExtractOptions(),
		EligibilityTop:     20,
		RowBudget:          4000,
		NumCtx:             8192,
	}
}

// withDefaults fills zero fields.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Candidates <= 0 {
		o.Candidates = d.Candidates
	}
	if o.ColumnWeights == ([6]float64{}) {
		o.ColumnWeights = d.ColumnWeights
	}
	if o.Fusion == (FusionWeights{}) {
		o.Fusion = d.Fusion
	}
	if o.LexicalFusion == (FusionWeights{}) {
		o.LexicalFusion = d.LexicalFusion
	}
	if o.InterventionWeight <= 0 {
		o.InterventionWeight = d.InterventionWeight
	}
	if o.Extract == (ExtractOptions{}) {
		o.Extract = d.Extract
	}
	if o.EligibilityTop <= 0 {
		o.EligibilityTop = d.EligibilityTop
	}
	if o.NumCtx <= 0 {
		o.NumCtx = d.NumCtx
	}
	if o.RowBudget == 0 {
		o.RowBudget = d.RowBudget
	}
	return o
}

// Config builds a [Pipeline].
type Config struct {
	// DB holds the trial tables (see [Import]); read only here.
	DB *sql.DB
	// Chat is the model for concepts and eligibility; nil means no model
	// (the lexical ranking only).
	Chat localllm.Chatter
	// Model is the chat model's name.
	Model string
	// Embedder embeds the query concepts; Items holds the trials' item
	// vectors made by the same embedder.
	Embedder vectorstore.Embedder
	Items    ItemIndex
	// EmbedderLabel describes the embedder for people and provenance.
	EmbedderLabel string
	// Options tune the ranking; zero fields take the defaults.
	Options Options
	// Logger receives one line per match; nil discards.
	Logger *slog.Logger
}

// Pipeline ranks trials for patients. It is safe for concurrent use.
type Pipeline struct {
	db       *sql.DB
	chat     localllm.Chatter
	model    string
	emb      vectorstore.Embedder
	items    ItemIndex
	embLabel string
	opts     Options
	log      *slog.Logger
	df       *docFreqs
	fts      *ftsScorer
}

// New checks the configuration and returns a pipeline.
func New(cfg Config) (*Pipeline, error) {
	switch {
	case cfg.DB == nil:
		return nil, errors.New("trial matching needs a database")
	case cfg.Embedder == nil || cfg.Items == nil:
		return nil, errors.New("trial matching needs an embedder and its item index")
	case cfg.Chat != nil && cfg.Model == "":
		return nil, errors.New("trial matching: a chat model is given without its name")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	label := cfg.EmbedderLabel
	if label == "" {
		label = cfg.Embedder.EmbedderName()
	}
	opts := cfg.Options.withDefaults()
	return &Pipeline{
		db: cfg.DB, chat: cfg.Chat, model: cfg.Model, emb: cfg.Embedder, items: cfg.Items,
		embLabel: label, opts: opts, log: log, df: newDocFreqs(cfg.DB),
		fts: newFTSScorer(cfg.DB, opts.ColumnWeights),
	}, nil
}

// Options returns the pipeline's settings.
func (p *Pipeline) Options() Options { return p.opts }

// HasModel reports whether a chat model is configured.
func (p *Pipeline) HasModel() bool { return p.chat != nil }

// Request is one matching.
type Request struct {
	// Patient is the free-text patient description.
	Patient string
	// Top is how many ranked trials to return (default 20; ≤ 0 with Pool:
	// all of the pool).
	Top int
	// UseModel asks for model concepts and eligibility (when the pipeline
	// has a model); false gives the deterministic, model-free ranking.
	UseModel bool
	// Pool, if not nil, restricts the ranking to these trial ids (an
	// evaluation ranks each topic's judged pool).
	Pool []string
	// FilterAge and FilterSex drop trials whose limits exclude the patient
	// (only when the patient's age or sex is known); RecruitingOnly drops
	// trials that do not recruit.
	FilterAge, FilterSex, RecruitingOnly bool
	// Progress, if set, receives the stages.
	Progress func(stage string, done, total int)
}

// Validate checks the request.
func (r *Request) Validate() error {
	if strings.TrimSpace(r.Patient) == "" {
		return errors.New("the patient description is empty: describe the patient (age, sex, conditions, findings)")
	}
	if r.Top < 0 {
		return fmt.Errorf("the number of trials to return must be positive, not %d", r.Top)
	}
	return nil
}

// Component is one ranker's view of a trial.
type Component struct {
	// Score is the ranker's score (higher is better).
	Score float64 `json:"score"`
	// Rank is the trial's rank by Score among the candidates, from 1.
	Rank int `json:"rank"`
}

// Verdict is the model's decision on one criterion.
type Verdict string

// Verdicts. Inclusion criteria are included / not included; exclusion
// criteria excluded / not excluded; either may lack information.
const (
	Included       Verdict = "included"
	NotIncluded    Verdict = "not included"
	Excluded       Verdict = "excluded"
	NotExcluded    Verdict = "not excluded"
	NotEnoughInfo  Verdict = "not enough information"
	VerdictMissing Verdict = "not assessed"
)

// CriterionVerdict is the model's decision on one criterion of a trial.
type CriterionVerdict struct {
	Criterion
	// Verdict is the decision.
	Verdict Verdict `json:"verdict"`
	// Evidence is the sentence of the patient description it rests on
	// ("" when there is none).
	Evidence string `json:"evidence,omitempty"`
	// Explanation is the model's short reason.
	Explanation string `json:"explanation,omitempty"`
}

// Eligibility is the model's criterion-level assessment of a trial.
type Eligibility struct {
	// Score aggregates the verdicts: the share of inclusion criteria met
	// minus the share of exclusion criteria hit (see [EligibilityScore]).
	Score float64 `json:"score"`
	// Verdicts has one entry per criterion, inclusion first.
	Verdicts []CriterionVerdict `json:"verdicts"`
	// Error is set when the model could not assess this trial.
	Error string `json:"error,omitempty"`
}

// RankedTrial is a trial in the ranked list with each component's view.
type RankedTrial struct {
	// Trial is the record (with its criteria for the top trials).
	Trial *Trial `json:"trial"`
	// Rank is the final rank, from 1.
	Rank int `json:"rank"`
	// BM25, STS1 and STS2 are the components; Combo is R_combo (lower is
	// better) and its rank.
	BM25  Component `json:"bm25"`
	STS1  Component `json:"sts1"`
	STS2  Component `json:"sts2"`
	Combo Component `json:"combo"`
	// Eligibility is the model's assessment (top K with a model only).
	Eligibility *Eligibility `json:"eligibility,omitempty"`

	doc int64 // the trial's FTS rowid
}

// Result is a ranked list of trials for a patient.
type Result struct {
	// Query is what was searched: the patient's age, sex and concepts.
	Query *Query `json:"query"`
	// Trials are the ranked trials, best first.
	Trials []RankedTrial `json:"trials"`
	// Candidates is the number of trials ranked; Filtered the number
	// removed by the age, sex and status filters.
	Candidates int `json:"candidates"`
	Filtered   int `json:"filtered"`
	// Notices tell the user about fallbacks (a model that failed, a
	// lexical embedder) and filters that could not apply.
	Notices []string `json:"notices,omitempty"`
	// Model is the chat model used ("" without one); Embedder describes
	// the embedder.
	Model    string `json:"model,omitempty"`
	Embedder string `json:"embedder"`
	// Usage sums the model calls.
	Usage localllm.Usage `json:"usage"`
	// Elapsed is the matching time.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Match ranks trials for a patient: concepts (model or deterministic),
// weighted BM25 over the index (or the pool), filters, STS1/STS2 on the
// candidates, R_combo fusion, and with a model the criterion-level
// eligibility of the top K, which re-orders them. A model failure never
// fails the match: the lexical ranking is returned with a notice.
func (p *Pipeline) Match(ctx context.Context, req Request) (*Result, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	stage := func(s string, done, total int) {
		if req.Progress != nil {
			req.Progress(s, done, total)
		}
	}
	res := &Result{Embedder: p.embLabel}
	useModel := req.UseModel && p.chat != nil
	if req.UseModel && p.chat == nil {
		res.Notices = append(res.Notices, "No chat model is available: the ranking uses the deterministic concept extractor and no eligibility check.")
	}
	if vectorstore.IsLexical(p.emb.EmbedderName()) {
		fw := p.opts.LexicalFusion
		res.Notices = append(res.Notices, fmt.Sprintf("Word matching only — install an embedding model for meaning-based matching (STS uses the lexical fallback embedder; the fusion weighs BM25 %g, STS1 %g, STS2 %g).", fw.BM25, fw.STS1, fw.STS2))
	}

	// 1. Concepts.
	stage("Extracting concepts", 0, 0)
	var q *Query
	if useModel {
		mq, usage, err := p.modelConcepts(ctx, req.Patient)
		res.Usage = res.Usage.Add(usage)
		switch {
		case err == nil:
			q = mq
			res.Model = p.model
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			p.log.Warn("model concept extraction failed", "model", p.model, "err", err)
			res.Notices = append(res.Notices, "The model could not extract concepts ("+localllm.MessageOf(err)+"); the deterministic extractor was used instead.")
		}
	}
	if q == nil {
		var err error
		q, err = ExtractConcepts(req.Patient, func(text string) (int, int, error) { return p.df.get(ctx, text) }, p.opts.Extract)
		if err != nil {
			return nil, fmt.Errorf("extract concepts: %w", err)
		}
	}
	res.Query = q
	if err := q.Validate(); err != nil {
		return nil, err
	}

	// 2. BM25 with concept weights.
	stage("Searching the trial index", 0, 0)
	var pool []int64
	var poolIDs map[string]int64
	if req.Pool != nil {
		var err error
		poolIDs, err = docsOf(ctx, p.db, req.Pool)
		if err != nil {
			return nil, err
		}
		pool = make([]int64, 0, len(poolIDs))
		for _, d := range poolIDs {
			pool = append(pool, d)
		}
		slices.Sort(pool)
	}
	bm25, skipped, err := p.bm25(ctx, q, pool)
	if err != nil {
		return nil, err
	}
	if len(bm25) == 0 && res.Model != "" {
		// The model's concepts match no trial at all (a small model's
		// noise, or wording the registry never uses): fall back to the
		// deterministic concepts rather than return nothing.
		dq, derr := ExtractConcepts(req.Patient, func(text string) (int, int, error) { return p.df.get(ctx, text) }, p.opts.Extract)
		if derr == nil && dq.Validate() == nil {
			res.Notices = append(res.Notices, "The model's concepts match no trial; the deterministic extractor's concepts were used instead.")
			q = dq
			res.Query = q
			if bm25, skipped, err = p.bm25(ctx, q, pool); err != nil {
				return nil, err
			}
		}
	}
	if len(skipped) > 0 {
		p.log.Info("common concepts left out of the retrieval", "concepts", strings.Join(skipped, "; "), "row_budget", p.opts.RowBudget)
	}
	cands := p.candidates(bm25, pool)

	// 3. Filters.
	trialsByDoc, err := loadTrialsLight(ctx, p.db, cands)
	if err != nil {
		return nil, err
	}
	kept := cands[:0]
	for _, d := range cands {
		t := trialsByDoc[d]
		if t == nil {
			continue
		}
		if (req.FilterAge && q.HasAge && !t.AgeAllowed(q.Age)) || (req.FilterSex && !t.SexAllowed(q.Sex)) ||
			(req.RecruitingOnly && !t.Recruiting()) {
			res.Filtered++
			continue
		}
		kept = append(kept, d)
	}
	cands = kept
	if req.FilterAge && !q.HasAge {
		res.Notices = append(res.Notices, "The patient's age is not stated: trials were not filtered by age.")
	}
	if req.FilterSex && q.Sex == SexUnknown {
		res.Notices = append(res.Notices, "The patient's sex is not stated: trials were not filtered by sex.")
	}
	res.Candidates = len(cands)
	if len(cands) == 0 {
		res.Elapsed = time.Since(start)
		return res, nil
	}

	// 4. STS over the candidates.
	stage("Comparing conditions and interventions", 0, len(cands))
	ranked, err := p.fuse(ctx, q, cands, trialsByDoc, bm25)
	if err != nil {
		return nil, err
	}

	// 5. Eligibility of the top K.
	top := req.Top
	if top <= 0 {
		if req.Pool != nil {
			top = len(ranked)
		} else {
			top = 20
		}
	}
	if useModel && len(ranked) > 0 {
		k := min(p.opts.EligibilityTop, len(ranked))
		usage, notice, err := p.rerankEligibility(ctx, q, ranked[:k], stage)
		res.Usage = res.Usage.Add(usage)
		if err != nil {
			return nil, err
		}
		if notice != "" {
			res.Notices = append(res.Notices, notice)
		}
		if res.Model == "" {
			res.Model = p.model
		}
	}
	ranked = ranked[:min(top, len(ranked))]
	for i := range ranked {
		ranked[i].Rank = i + 1
	}
	// The returned trials are read in full, with their criteria (the
	// ranking read only what it needed); eligibility results keep theirs.
	if err := p.fillTrials(ctx, ranked); err != nil {
		return nil, err
	}
	res.Trials = ranked
	res.Elapsed = time.Since(start)
	p.log.Info("trials matched", "concepts", len(q.searchable()), "source", q.Source, "candidates", res.Candidates,
		"filtered", res.Filtered, "model", res.Model, "elapsed_ms", res.Elapsed.Milliseconds())
	return res, nil
}

// fillTrials replaces the light trial records of ranked by full ones with
// their criteria.
func (p *Pipeline) fillTrials(ctx context.Context, ranked []RankedTrial) error {
	docs := make([]int64, len(ranked))
	for i, r := range ranked {
		docs[i] = r.doc
	}
	full, err := loadTrials(ctx, p.db, docs)
	if err != nil {
		return err
	}
	var ts []*Trial
	for i := range ranked {
		t := full[ranked[i].doc]
		if t == nil {
			continue
		}
		ts = append(ts, t)
		ranked[i].Trial = t
	}
	return loadCriteria(ctx, p.db, ts)
}

// search is one FTS query of the BM25 stage with its weight.
type search struct {
	text   string
	weight float64
	df     int
}

// searches lists the FTS queries of a query: each concept, and the words
// of a model concept of several words ("type 2 diabetes mellitus") one by
// one at half its weight in all, so that a trial that words it
// differently still scores.
func searches(q *Query) []search {
	var out []search
	for _, c := range q.searchable() {
		out = append(out, search{text: c.Text, weight: c.Weight})
		if c.Kind == KindTerm || c.Kind == KindPhrase {
			continue
		}
		var parts []string
		for _, w := range textsearch.Tokens(c.Text) {
			if !isStop(w.Lower) {
				parts = append(parts, w.Lower)
			}
		}
		if len(parts) < 2 {
			continue
		}
		for _, w := range parts {
			out = append(out, search{text: w, weight: 0.5 * c.Weight / float64(len(parts))})
		}
	}
	return out
}

// bm25 scores trials as the weighted sum of per-concept BM25 scores:
// Σ_c w_c · bm25_c(trial). Over the whole index, the cost is FTS5's bm25()
// for every trial a concept matches (it reads the trial's length from the
// index for each), so the concepts are run from the rarest (fewest
// trials, highest inverse document frequency) on, and a concept whose
// matches would take the scored rows past [Options.RowBudget] is skipped:
// on a large registry the commonest words ("disease", "disorder") drop
// out of the retrieval, which their low inverse document frequency makes
// nearly free in ranking quality. A concept's cost is all the trials it
// matches, also past the limit of rows it returns (ordering them by
// bm25() scores every one). With a pool every concept is scored over the
// pool.
func (p *Pipeline) bm25(ctx context.Context, q *Query, pool []int64) (map[int64]float64, []string, error) {
	limit := p.conceptLimit()
	list, skipped, err := p.plan(ctx, q, pool)
	if err != nil {
		return nil, nil, err
	}
	// The concepts run in parallel on the database's connections (the
	// sum does not depend on the order).
	out := make(map[int64]float64, 4096)
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	for _, s := range list {
		g.Go(func() error {
			buf := p.fts.buffer()
			defer p.fts.release(buf)
			if err := p.fts.scores(gctx, s.text, s.df, pool, limit, buf); err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			for _, d := range *buf {
				out[d.doc] += s.weight * d.score
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, err
	}
	return out, skipped, nil
}

// conceptLimit is the number of best trials a concept returns over the
// whole index.
func (p *Pipeline) conceptLimit() int { return max(p.opts.Candidates*5, 10000) }

// plan returns the searches of the BM25 stage that run (over the whole
// index: the rarest first, within the row budget, each with its document
// frequency; with a pool: all of them, df -1) and the texts of those left
// out.
func (p *Pipeline) plan(ctx context.Context, q *Query, pool []int64) ([]search, []string, error) {
	list := searches(q)
	for i := range list {
		list[i].df = -1 // unknown
	}
	var skipped []string
	if pool == nil && p.opts.RowBudget > 0 {
		for i := range list {
			df, _, err := p.df.get(ctx, list[i].text)
			if err != nil {
				return nil, nil, err
			}
			list[i].df = df
		}
		slices.SortStableFunc(list, func(a, b search) int { return cmp.Compare(a.df, b.df) })
		used, kept := 0, list[:0]
		for _, s := range list {
			if used+s.df > p.opts.RowBudget && len(kept) > 0 {
				skipped = append(skipped, s.text)
				continue
			}
			used += s.df
			kept = append(kept, s)
		}
		list = kept
	}
	return list, skipped, nil
}

// workers is the parallelism of the ranking's CPU-bound steps.
func workers() int { return min(runtime.GOMAXPROCS(0), 4) }

// candidates returns the docs to rank: the top n by BM25, or the whole
// pool (unmatched pool trials last).
func (p *Pipeline) candidates(bm25 map[int64]float64, pool []int64) []int64 {
	var docs []int64
	if pool != nil {
		docs = slices.Clone(pool)
	} else {
		for d := range bm25 {
			docs = append(docs, d)
		}
	}
	slices.SortFunc(docs, func(a, b int64) int {
		if c := cmp.Compare(bm25[b], bm25[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if pool == nil && len(docs) > p.opts.Candidates {
		docs = docs[:p.opts.Candidates]
	}
	return docs
}

// fuse computes STS1 and STS2 for the candidates, ranks each component and
// orders the trials by R_combo (ties by BM25 rank).
func (p *Pipeline) fuse(ctx context.Context, q *Query, cands []int64, byDoc map[int64]*Trial, bm25 map[int64]float64) ([]RankedTrial, error) {
	concepts := q.searchable()
	texts := make([]string, len(concepts))
	pw := make([]float64, len(concepts))
	for i, c := range concepts {
		texts[i], pw[i] = c.Text, c.Weight
	}
	pvecs, err := p.emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed the patient's concepts: %w", err)
	}
	if len(pvecs) != len(texts) {
		return nil, fmt.Errorf("embed the patient's concepts: %d vectors for %d concepts", len(pvecs), len(texts))
	}
	for i := range pvecs {
		pvecs[i] = normalize(pvecs[i])
	}
	ts := make([]*Trial, len(cands))
	for i, d := range cands {
		ts[i] = byDoc[d]
	}
	vecs, itemsOf, err := itemVectors(ctx, p.items, ts)
	if err != nil {
		return nil, err
	}
	out := make([]RankedTrial, len(cands))
	var g errgroup.Group
	nw := workers()
	for w := range nw {
		g.Go(func() error {
			for i := w; i < len(cands); i += nw {
				d, t := cands[i], ts[i]
				items := itemsOf[i]
				tw := make([]float64, len(items))
				for j, it := range items {
					tw[j] = 1
					if it.kind == itemIntervention {
						tw[j] = p.opts.InterventionWeight
					}
				}
				s1, s2 := stsScores(pvecs, pw, vecs[i], tw)
				out[i] = RankedTrial{Trial: t, doc: d, BM25: Component{Score: bm25[d]}, STS1: Component{Score: s1}, STS2: Component{Score: s2}}
			}
			return nil
		})
	}
	_ = g.Wait() // the workers return no error
	n := p.opts.Candidates
	rankBy(out, func(r *RankedTrial) *Component { return &r.BM25 })
	rankBy(out, func(r *RankedTrial) *Component { return &r.STS1 })
	rankBy(out, func(r *RankedTrial) *Component { return &r.STS2 })
	fw := p.fusionWeights()
	for i := range out {
		r := &out[i]
		r.Combo.Score = fw.BM25*float64(min(r.BM25.Rank, n)) + fw.STS1*float64(min(r.STS1.Rank, n)) + fw.STS2*float64(min(r.STS2.Rank, n))
	}
	slices.SortStableFunc(out, func(a, b RankedTrial) int {
		if c := cmp.Compare(a.Combo.Score, b.Combo.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.BM25.Rank, b.BM25.Rank)
	})
	for i := range out {
		out[i].Combo.Rank = i + 1
	}
	return out, nil
}

// fusionWeights returns the weights for the pipeline's embedder.
func (p *Pipeline) fusionWeights() FusionWeights {
	if vectorstore.IsLexical(p.emb.EmbedderName()) {
		return p.opts.LexicalFusion
	}
	return p.opts.Fusion
}

// rankBy sets each trial's rank for one component: by decreasing score,
// ties by trial id.
func rankBy(rs []RankedTrial, comp func(*RankedTrial) *Component) {
	idx := make([]int, len(rs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(comp(&rs[b]).Score, comp(&rs[a]).Score); c != 0 {
			return c
		}
		return strings.Compare(rs[a].Trial.ID, rs[b].Trial.ID)
	})
	for r, i := range idx {
		comp(&rs[i]).Rank = r + 1
	}
}
