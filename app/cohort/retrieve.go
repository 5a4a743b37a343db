package cohort

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
	"github.com/clinsight/clinsight/vectorstore"
)

// DefaultTopK is how many tables retrieval returns unless told otherwise.
const DefaultTopK = 5

// DefaultMaxEmbedChars is the default of IndexOptions.MaxEmbedChars: about
// 500 tokens, within the context of common embedding models.
const DefaultMaxEmbedChars = 2000

// bm25Half is the BM25 score that counts as half-relevant on the absolute
// scale of Retrieval.Best (about one rare term matched).
const bm25Half = 4.0

// weights are the weights of the retrieval signals (see Index.Retrieve).
type weights struct {
	dense, bm25, phrase, value float64
	// up is the share of a child table's relevance its parent inherits
	// (decaying along the chain of ancestors): a lab result needs its
	// admission; down the share a parent passes to each of its children
	// (divided among them): a lab-test dictionary passes it to the lab
	// results.
	up, down float64
	// deep further discounts what an ancestor beyond the parent inherits:
	// a lab result needs its admission, rarely the patient row above it.
	deep float64
	// join is the share of the relevance of a table's best-scoring join
	// partner that the table inherits: a dictionary or a hub table needed
	// to answer is pulled in by the event table it serves.
	join float64
	// hub weighs the structural prior of a table: its number of join
	// partners relative to the best-connected table's.
	hub float64
}

// defaultWeights are the weights retrieval uses.
var defaultWeights = weights{dense: 0.15, bm25: 0.2, phrase: 0.3, value: 0.6, up: 0.85, down: 0.7, deep: 0.5, join: 0.15, hub: 0}

// IndexOptions configures BuildIndex.
type IndexOptions struct {
	// Store keeps the embedded table documents; required.
	Store *vectorstore.Store
	// Embedder embeds documents and questions: the configured embedding
	// model, or the lexical fallback (a *vectorstore.LexicalEmbedder, which
	// is fitted on the table documents first). Required.
	Embedder vectorstore.Embedder
	// EmbedderLabel describes the embedder for people and provenance;
	// default: the embedder's name.
	EmbedderLabel string
	// DBPath is the database file the catalog describes; it names the
	// collection together with the catalog's contents.
	DBPath string
	// MaxEmbedChars bounds the text of each table document given to the
	// embedder (cut at a line end), so that long documentation fits the
	// embedding model's context; 0 means DefaultMaxEmbedChars. The lexical
	// signals always read the whole document.
	MaxEmbedChars int
	// DB, when not nil, is a read-only connection to the database: its
	// short text values are indexed, so that a question naming a stored
	// value (a drug, a lab test, a diagnosis title) finds its table, and
	// its keys are analysed to find which table each row belongs to.
	DB *sql.DB
	// Scanner, when not nil, replaces DB: the engine's own reader
	// (PostgreSQL), in its dialect.
	Scanner datasets.Scanner
}

// Index retrieves the documentation of the tables relevant to a question:
// it fuses the embedding similarity of the question and each table's
// document (from the vector store) with BM25 over the same documents,
// phrases of the table's name and curated synonyms found in the question,
// and stored values the question quotes (schema linking by value); a table
// then inherits part of the relevance of related tables, following the
// many-to-one structure of the data (a lab result belongs to a lab test of
// the dictionary and to an admission; an ICU chart event to an ICU stay,
// which belongs to an admission), so the code dictionary and the parent
// tables a query goes through come with the event table. The question is
// first expanded with a small general medical thesaurus ("treatment" →
// procedure) and the vocabulary of the curated profiles in use ("ward" →
// transfer careunit in EHRSQL's). An Index is safe for concurrent use.
type Index struct {
	cat      *datasets.Catalog
	coll     *vectorstore.Collection
	label    string
	embName  string
	lexical  bool
	bm       *textsearch.BM25
	phrases  [][]tablePhrase
	phraseDF map[string]int
	values   *valueIndex
	vocab    vocabulary
	joins    [][]int
	h        *hierarchy
	w        weights
	built    time.Duration
}

// tablePhrase is a name or synonym of a table, as stems.
type tablePhrase struct {
	stems  []string
	weight float64
}

// BuildIndex embeds the catalog's table documents into a collection of the
// store named after the database path and the catalog contents (a changed
// database gets a new collection; older ones of the same path are deleted),
// reusing the stored vectors when the collection is already complete, and
// builds the lexical signals.
func BuildIndex(ctx context.Context, cat *datasets.Catalog, opts IndexOptions) (*Index, error) {
	start := time.Now()
	if cat == nil || len(cat.Tables) == 0 {
		return nil, errors.New("build the retrieval index: the database has no tables")
	}
	if opts.Store == nil || opts.Embedder == nil {
		return nil, errors.New("build the retrieval index: a vector store and an embedder are required")
	}
	docs := make([]string, len(cat.Tables))
	for i, t := range cat.Tables {
		docs[i] = t.Document()
	}
	emb := opts.Embedder
	lexical := vectorstore.IsLexical(emb.EmbedderName())
	if le, ok := emb.(*vectorstore.LexicalEmbedder); ok {
		emb = le.Fit(docs)
		lexical = true
	}
	ix := &Index{cat: cat, label: opts.EmbedderLabel, embName: emb.EmbedderName(), lexical: lexical, w: defaultWeights}
	if ix.label == "" {
		ix.label = ix.embName
	}
	maxChars := opts.MaxEmbedChars
	if maxChars <= 0 {
		maxChars = DefaultMaxEmbedChars
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = cutAtLine(d, maxChars)
	}
	name := CollectionName(opts.DBPath, cat)
	coll, err := opts.Store.Collection(ctx, name, emb)
	if err != nil {
		return nil, fmt.Errorf("open the table documentation collection: %w", err)
	}
	if !complete(coll, cat, texts) {
		vdocs := make([]vectorstore.Document, len(docs))
		for i, t := range cat.Tables {
			vdocs[i] = vectorstore.Document{ID: t.Name, Text: texts[i], Metadata: map[string]string{"table": t.Name, "kind": string(t.Kind)}}
		}
		if err := coll.Add(ctx, vdocs); err != nil {
			return nil, fmt.Errorf("embed the table documentation: %w", err)
		}
	}
	ix.coll = coll
	prefix := name[:strings.LastIndexByte(name, '-')+1]
	for _, info := range opts.Store.Collections() {
		if strings.HasPrefix(info.Name, prefix) && info.Name != name {
			_ = opts.Store.DeleteCollection(info.Name) // an older state of this database
		}
	}

	stemDocs := make([][]string, len(docs))
	for i, d := range docs {
		stemDocs[i] = stems(lexicalText(d))
	}
	ix.bm = textsearch.NewBM25(stemDocs, textsearch.BM25Params{})
	ix.vocab = newVocabulary(cat)
	ix.buildPhrases()
	ix.buildJoins()
	scan := opts.Scanner
	if scan == nil && opts.DB != nil {
		scan = datasets.DBScanner{DB: opts.DB}
	}
	if ix.h, err = buildHierarchy(ctx, scan, cat); err != nil {
		return nil, err
	}
	if scan != nil {
		if ix.values, err = buildValueIndex(ctx, scan, cat); err != nil {
			return nil, err
		}
	}
	ix.built = time.Since(start)
	return ix, nil
}

// lexicalText is the part of a table document the lexical signals read:
// all but its joins, whose conditions name the related tables ("cost" in
// the joins of every table the cost table refers to) and so would make a
// table's name a word of every related table.
func lexicalText(doc string) string {
	head, tail, ok := strings.Cut(doc, "\nJoins:\n")
	if !ok {
		return doc
	}
	if _, rest, ok := strings.Cut(tail, "\nExample questions:\n"); ok {
		return head + "\nExample questions:\n" + rest
	}
	return head + "\n"
}

// cutAtLine returns text cut to at most n bytes, at the end of a line when
// there is one in the second half.
func cutAtLine(text string, n int) string {
	if len(text) <= n {
		return text
	}
	cut := text[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		return cut[:i+1]
	}
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	return text[:n]
}

// complete reports whether the collection holds exactly the catalog's
// documents (as embedded).
func complete(coll *vectorstore.Collection, cat *datasets.Catalog, docs []string) bool {
	if coll.Count() != len(docs) {
		return false
	}
	for i, t := range cat.Tables {
		d, ok := coll.Get(t.Name)
		if !ok || d.Text != docs[i] {
			return false
		}
	}
	return true
}

// CollectionName names the vector-store collection of a database's table
// documentation: "cohort-" + a hash of the database path + "-" + a hash of
// the catalog's documents.
func CollectionName(dbPath string, cat *datasets.Catalog) string {
	ph := sha256.Sum256([]byte(dbPath))
	h := sha256.New()
	for _, t := range cat.Tables {
		h.Write([]byte(t.Name))
		h.Write([]byte{0})
		h.Write([]byte(t.Document()))
		h.Write([]byte{0})
	}
	return "cohort-" + hex.EncodeToString(ph[:6]) + "-" + hex.EncodeToString(h.Sum(nil)[:8])
}

// generatedWordWeight is the phrase weight of one word of a table's name in
// documentation generated from the schema (a name or synonym weighs 1, a
// column 0.5). Chosen on the dev half of the EHRSQL valid questions
// (RetrievalHalf).
const generatedWordWeight = 0.5

// buildPhrases collects each table's names and synonyms as stem phrases,
// and how many tables share each phrase.
func (ix *Index) buildPhrases() {
	ix.phrases = make([][]tablePhrase, len(ix.cat.Tables))
	ix.phraseDF = map[string]int{}
	for i, t := range ix.cat.Tables {
		seen := map[string]bool{}
		add := func(text string, w float64) {
			st := stems(text)
			key := strings.Join(st, " ")
			if len(st) == 0 || seen[key] {
				return
			}
			seen[key] = true
			ix.phrases[i] = append(ix.phrases[i], tablePhrase{stems: st, weight: w})
			ix.phraseDF[key]++
		}
		add(t.Name, 1)
		for _, s := range t.Doc.Synonyms {
			add(s, 1)
		}
		generated := t.Doc.Source == datasets.GeneratedDocSource
		if generated {
			// Documentation generated from the schema has no clinicians'
			// words: each word of the table's name ("input" of
			// "inputevents", split by the catalog) is a phrase of its own.
			for _, s := range t.Doc.Synonyms {
				for _, w := range strings.Fields(s) {
					add(w, generatedWordWeight)
				}
			}
		}
		for _, c := range t.Columns {
			if !strings.HasSuffix(strings.ToLower(c.Name), "id") {
				add(c.Name, 0.5)
				if generated {
					// The words of the column's name, as the catalog split
					// them and wrote out their abbreviations.
					words, _, _ := strings.Cut(c.Doc, ";")
					add(words, 0.5)
				}
			}
		}
	}
}

// buildJoins derives the join graph from the documented joins and the
// declared foreign keys.
func (ix *Index) buildJoins() {
	n := len(ix.cat.Tables)
	ix.joins = make([][]int, n)
	link := func(a, b int) {
		if a == b || a < 0 || b < 0 || slices.Contains(ix.joins[a], b) {
			return
		}
		ix.joins[a] = append(ix.joins[a], b)
		ix.joins[b] = append(ix.joins[b], a)
	}
	idx := func(name string) int {
		return slices.IndexFunc(ix.cat.Tables, func(t datasets.Table) bool { return strings.EqualFold(t.Name, name) })
	}
	for i, t := range ix.cat.Tables {
		for _, j := range t.Doc.Joins {
			for _, name := range qualifiedNames(j) {
				link(i, idx(name))
			}
		}
		for _, fk := range t.ForeignKeys {
			link(i, idx(fk.RefTable))
		}
	}
}

// qualifiedNames returns the names written before a '.' in text
// ("a.x = b.y" gives a and b).
func qualifiedNames(text string) []string {
	var out []string
	isWord := func(c byte) bool {
		return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	for i := 0; i < len(text); {
		if !isWord(text[i]) {
			i++
			continue
		}
		start := i
		for i < len(text) && isWord(text[i]) {
			i++
		}
		if i+1 < len(text) && text[i] == '.' && isWord(text[i+1]) && (start == 0 || text[start-1] != '.') {
			out = append(out, text[start:i])
		}
	}
	return out
}

// Embedder returns the label of the embedder retrieval uses.
func (ix *Index) Embedder() string { return ix.label }

// Lexical reports whether retrieval uses the lexical fallback embedder.
func (ix *Index) Lexical() bool { return ix.lexical }

// Catalog returns the catalog the index was built from.
func (ix *Index) Catalog() *datasets.Catalog { return ix.cat }

// BuildTime returns how long BuildIndex took.
func (ix *Index) BuildTime() time.Duration { return ix.built }

// Signals are a table's retrieval signals for one question, each in [0, 1].
type Signals struct {
	// Dense is the embedding similarity relative to the best table's.
	Dense float64 `json:"dense"`
	// BM25 is the BM25 score relative to the best table's.
	BM25 float64 `json:"bm25"`
	// Phrase measures the table's names and synonyms found in the question.
	Phrase float64 `json:"phrase"`
	// Value measures the stored values of the table quoted by the question.
	Value float64 `json:"value"`
	// Join is the relevance inherited from related tables: from children
	// (a parent is needed by its rows), from parents (shared among their
	// children), and a smaller share from other join partners.
	Join float64 `json:"join"`
}

// TableScore is one retrieved table.
type TableScore struct {
	// Table is the table's name.
	Table string `json:"table"`
	// Score is the fused relevance that ranks tables: the direct relevance
	// plus what it inherits (so it may exceed 1).
	Score float64 `json:"score"`
	// Similarity is the cosine similarity of the question and the table's
	// document in the vector store, in [-1, 1].
	Similarity float64 `json:"similarity"`
	// Signals break Score down.
	Signals Signals `json:"signals"`
	// Evidence names what matched: values, synonyms, joins.
	Evidence []string `json:"evidence,omitempty"`
}

// Retrieval is the result of Index.Retrieve.
type Retrieval struct {
	// Query is the text that was searched.
	Query string `json:"query"`
	// Tables are the top tables, best first.
	Tables []TableScore `json:"tables"`
	// Best is the highest direct relevance of any table (without join
	// inheritance): how much the question is about this data at all.
	Best float64 `json:"best"`
	// BestSimilarity is the highest embedding similarity.
	BestSimilarity float64 `json:"best_similarity"`
	// Values are the stored values the question quotes, with where they
	// are stored (schema linking by value), for the SQL prompt.
	Values []ValueHit `json:"values,omitempty"`
	// Embedder describes the embedder used.
	Embedder string `json:"embedder"`
	// Elapsed is the time retrieval took.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// ValueHit is a phrase of the question found as a stored value.
type ValueHit struct {
	// Table and Column hold the value.
	Table  string `json:"table"`
	Column string `json:"column"`
	// Value is the value as stored.
	Value string `json:"value"`
}

// Names returns the names of the retrieved tables, in order.
func (r *Retrieval) Names() []string {
	out := make([]string, len(r.Tables))
	for i, t := range r.Tables {
		out[i] = t.Table
	}
	return out
}

// Retrieve scores every table for the question and returns the k best
// (DefaultTopK when k < 1).
//
// A table's direct relevance is a weighted sum of four signals in [0, 1]:
// the embedding similarity and the BM25 score of its document (each
// relative to the best table's), the names and synonyms of the table found
// as phrases in the question (weighted by how few tables share them and how
// specific their words are), and the stored values of the table the
// question quotes (a drug, a lab test, a diagnosis title). Its score adds
// what it inherits from related tables (see Index). Retrieval.Best
// measures, on an absolute scale, how much the best table is about the
// question at all; the pipeline refuses below its threshold.
func (ix *Index) Retrieve(ctx context.Context, question string, k int) (*Retrieval, error) {
	start := time.Now()
	if k < 1 {
		k = DefaultTopK
	}
	question = strings.TrimSpace(question)
	if question == "" {
		return nil, errors.New("retrieve: the question is empty")
	}
	n := len(ix.cat.Tables)
	expanded := ix.vocab.expand(question)
	sims := make([]float64, n)
	res, err := ix.coll.Query(ctx, expanded, n, nil)
	if err != nil {
		return nil, fmt.Errorf("search the table documentation: %w", err)
	}
	for _, r := range res {
		if i := ix.tableIndex(r.ID); i >= 0 {
			sims[i] = float64(r.Similarity)
		}
	}
	qs := stems(expanded)
	bm := ix.bm.Scores(textsearch.UniqueTerms(qs))
	sig := make([]Signals, n)
	evidence := make([][]string, n)
	maxSim, maxBM := 0.0, 0.0
	for i := range n {
		maxSim, maxBM = max(maxSim, sims[i]), max(maxBM, bm[i])
	}
	for i := range n {
		if maxSim > 0 {
			sig[i].Dense = max(0, sims[i]/maxSim)
		}
		if maxBM > 0 {
			sig[i].BM25 = bm[i] / maxBM
		}
	}
	ix.phraseSignal(qs, sig, evidence)
	hits := ix.valueSignal(textsearch.Words(question), sig, evidence)

	direct := make([]float64, n)
	best := 0.0
	w := ix.w
	maxDeg := 1
	for _, j := range ix.joins {
		maxDeg = max(maxDeg, len(j))
	}
	for i := range n {
		s := sig[i]
		direct[i] = w.dense*s.Dense + w.bm25*s.BM25 + w.phrase*s.Phrase + w.value*s.Value
		// Relevance on an absolute scale: the relative signals say which
		// table fits best, not whether any fits at all.
		abs := (w.bm25*bm[i]/(bm[i]+bm25Half) + w.phrase*s.Phrase + w.value*s.Value) / (w.bm25 + w.phrase + w.value)
		best = max(best, abs)
	}
	inherit := ix.inherit(direct)
	scores := make([]TableScore, n)
	for i, t := range ix.cat.Tables {
		sig[i].Join = inherit[i].score
		if inherit[i].via >= 0 && inherit[i].score > 0.05 {
			evidence[i] = append(evidence[i], inherit[i].how+" "+ix.cat.Tables[inherit[i].via].Name)
		}
		scores[i] = TableScore{
			Table: t.Name, Score: direct[i] + inherit[i].score + w.hub*float64(len(ix.joins[i]))/float64(maxDeg),
			Similarity: sims[i], Signals: sig[i], Evidence: evidence[i],
		}
	}
	slices.SortStableFunc(scores, func(a, b TableScore) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return strings.Compare(a.Table, b.Table)
	})
	out := &Retrieval{Query: question, Tables: scores[:min(k, n)], Best: best, BestSimilarity: maxSim, Embedder: ix.label, Values: hits}
	out.Elapsed = time.Since(start)
	return out, nil
}

// tableIndex returns the position of a table in the catalog, or -1.
func (ix *Index) tableIndex(name string) int {
	return slices.IndexFunc(ix.cat.Tables, func(t datasets.Table) bool { return t.Name == name })
}

// phraseSignal scores each table's names and synonyms found in the question
// stems: each hit adds its weight divided by the number of tables sharing
// the phrase, longer phrases counting more; the sum saturates at 1.
func (ix *Index) phraseSignal(qs []string, sig []Signals, evidence [][]string) {
	for i, list := range ix.phrases {
		sum := 0.0
		for _, p := range list {
			if !containsRun(qs, p.stems) {
				continue
			}
			key := strings.Join(p.stems, " ")
			w := p.weight * (1 + 0.5*float64(len(p.stems)-1)) / float64(ix.phraseDF[key]) * ix.specificity(p.stems)
			sum += w
			if w >= 0.5 && len(evidence[i]) < 6 {
				evidence[i] = append(evidence[i], "mentions "+strings.Join(p.stems, " "))
			}
		}
		sig[i].Phrase = 1 - math.Exp(-sum)
	}
}

// specificity is how rare the rarest stem of a phrase is among the table
// documents, relative to a stem found in one document only: "patient",
// named in every table's documentation, says little about which table a
// question needs.
func (ix *Index) specificity(st []string) float64 {
	best := 0.0
	for _, s := range st {
		best = max(best, ix.bm.IDF(s))
	}
	top := ix.bm.IDF("\x00") // a stem no document holds
	if top <= 0 {
		return 1
	}
	return min(1, best/top)
}

// containsRun reports whether run occurs contiguously in s.
func containsRun(s, run []string) bool {
	if len(run) == 0 || len(run) > len(s) {
		return false
	}
	for i := 0; i+len(run) <= len(s); i++ {
		if slices.Equal(s[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// valueSignal scores the stored values the question quotes: each match
// weighs by its length (a long drug or diagnosis name is unambiguous, a
// short word less so) divided by the number of tables holding it.
func (ix *Index) valueSignal(qw []string, sig []Signals, evidence [][]string) []ValueHit {
	if ix.values == nil {
		return nil
	}
	var hits []ValueHit
	sums := make([]float64, len(sig))
	for _, m := range ix.values.match(qw) {
		for _, c := range m.cols {
			col := ix.values.cols[c]
			if len(hits) < maxValueHits {
				hits = append(hits, ValueHit{Table: ix.cat.Tables[col.table].Name, Column: col.column, Value: ix.values.exact[m.phrase].text})
			}
		}
		tables := map[int]string{}
		for _, c := range m.cols {
			col := ix.values.cols[c]
			if _, ok := tables[col.table]; !ok {
				tables[col.table] = col.column
			}
		}
		w := min(1, float64(len(m.phrase))/8) / float64(len(tables))
		for ti, col := range tables {
			sums[ti] += w
			if len(evidence[ti]) < 6 {
				evidence[ti] = append(evidence[ti], fmt.Sprintf("value %q in %s", m.phrase, col))
			}
		}
	}
	for i, s := range sums {
		sig[i].Value = 1 - math.Exp(-2*s)
	}
	return hits
}

// maxValueHits bounds the value hits kept for the prompt.
const maxValueHits = 12

// inherited is the relevance a table inherits from related tables.
type inherited struct {
	score float64
	via   int    // the table it comes from most, -1 for none
	how   string // "needed by", "dictionary of", "joins"
}

// inherit computes what each table inherits from the direct relevance of
// the others: a parent from its children (decaying along ancestors), a
// child from its parents (shared among their children), and other join
// partners a smaller share.
func (ix *Index) inherit(direct []float64) []inherited {
	n := len(direct)
	w := ix.w
	out := make([]inherited, n)
	for i := range out {
		out[i].via = -1
	}
	// up[p]: best w.up^depth * direct over p's descendants.
	up := make([]float64, n)
	upVia := make([]int, n)
	done := make([]bool, n)
	var visit func(p int, depth int) float64
	visit = func(p int, depth int) float64 {
		if done[p] || depth > n {
			return up[p]
		}
		best, via := 0.0, -1
		for _, c := range ix.h.children[p] {
			v := w.up * max(direct[c], w.deep*visit(c, depth+1))
			if v > best {
				best, via = v, c
			}
		}
		up[p], upVia[p], done[p] = best, via, true
		return best
	}
	for p := range n {
		visit(p, 0)
	}
	for i := range n {
		add := func(v float64, via int, how string) {
			out[i].score += v
			if via >= 0 && (out[i].via < 0 || v > out[i].score-v) {
				out[i].via, out[i].how = via, how
			}
		}
		if up[i] > 0 {
			add(up[i], upVia[i], "needed by")
		}
		down, downVia := 0.0, -1
		for _, p := range ix.h.parents[i] {
			if v := w.down * direct[p] / float64(len(ix.h.children[p])); v > down {
				down, downVia = v, p
			}
		}
		if down > 0 {
			add(down, downVia, "belongs to")
		}
		other, otherVia := 0.0, -1
		for _, j := range ix.joins[i] {
			if slices.Contains(ix.h.parents[i], j) || slices.Contains(ix.h.children[i], j) {
				continue
			}
			if v := w.join * direct[j]; v > other {
				other, otherVia = v, j
			}
		}
		if other > 0 {
			add(other, otherVia, "joins")
		}
	}
	return out
}
