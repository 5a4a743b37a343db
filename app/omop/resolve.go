package omop

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// Bounds of resolution. They keep a full Athena vocabulary (millions of
// concepts, tens of millions of relationships) from costing more than a
// few queries per term.
const (
	// ftsCandidates is how many full-text hits are scored per search text.
	ftsCandidates = 200
	// likeCandidates bounds the LIKE scan used when the database has no
	// concept search index (a CDM not imported by Clinsight).
	likeCandidates = 200
	// maxDescendants bounds the descendants added to one concept set.
	maxDescendants = 20_000
	// maxSubsumesDepth bounds the 'Subsumes' closure used when
	// concept_ancestor is empty.
	maxSubsumesDepth = 12
	// maxAlternatives is how many candidates a set keeps besides its item.
	maxAlternatives = 5
	// minScore is the least score a candidate needs to resolve a term: a
	// third of the term's words in the name, or a close name.
	minScore = 0.35
	// maxTermBytes bounds a term's text.
	maxTermBytes = 200
)

// Resolver finds the concepts of clinical terms in an OMOP CDM database.
// It is safe for concurrent use.
type Resolver struct {
	db          datasets.Scanner
	fts         bool // the concept search index exists
	synonyms    bool // concept_synonym has rows
	ancestors   bool // concept_ancestor has rows
	hasRelation bool // concept_relationship exists

	vocabMu sync.Mutex
	vocab   *spellVocab // nil until loaded
}

// NewResolver inspects db (an OMOP CDM database in SQLite, opened
// read-only) and returns a resolver for it.
func NewResolver(ctx context.Context, db *sql.DB) (*Resolver, error) {
	return NewResolverOn(ctx, datasets.DBScanner{DB: db})
}

// NewResolverOn inspects the OMOP CDM database a scanner reads — SQLite,
// or a PostgreSQL schema through its engine (the look-ups are plain
// reading SQL a read-only role can run: names and synonyms by LIKE, codes,
// 'Maps to' and concept_ancestor by id) — and returns a resolver for it.
func NewResolverOn(ctx context.Context, db datasets.Scanner) (*Resolver, error) {
	r := &Resolver{db: db}
	has := func(name string) (bool, error) {
		q := "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') AND name = " + lit(name) + " COLLATE NOCASE"
		if db.Dialect() == datasets.DialectPostgres {
			q = "SELECT count(*) FROM information_schema.tables WHERE table_schema = ANY (current_schemas(false)) AND lower(table_name) = " + lit(strings.ToLower(name))
		}
		n, err := datasets.ScanInt64s(ctx, db, q)
		return err == nil && n[0] > 0, err
	}
	nonEmpty := func(name string) (bool, error) {
		ok, err := has(name)
		if err != nil || !ok {
			return false, err
		}
		found := false
		err = db.Scan(ctx, "SELECT 1 FROM "+datasets.QuoteIdent(name)+" LIMIT 1", func([]any) error { found = true; return nil })
		return found, err
	}
	ok, err := has("concept")
	if err != nil {
		return nil, fmt.Errorf("read the OMOP vocabulary: %w", err)
	}
	if !ok {
		return nil, errors.New("this database has no concept table: it is not an OMOP CDM database with its vocabulary")
	}
	for _, p := range []struct {
		flag  *bool
		check func(string) (bool, error)
		name  string
	}{
		{&r.fts, has, datasets.OMOPConceptIndex},
		{&r.synonyms, nonEmpty, "concept_synonym"},
		{&r.ancestors, nonEmpty, "concept_ancestor"},
		{&r.hasRelation, has, "concept_relationship"},
	} {
		if *p.flag, err = p.check(p.name); err != nil {
			return nil, fmt.Errorf("read the OMOP vocabulary: %w", err)
		}
	}
	return r, nil
}

// conceptColumns are the concept columns scanConcept reads.
const conceptColumns = "concept_id, coalesce(concept_name, ''), coalesce(domain_id, ''), coalesce(vocabulary_id, ''), coalesce(concept_class_id, ''), coalesce(standard_concept, ''), coalesce(concept_code, ''), coalesce(invalid_reason, '')"

// scanConcept reads a row of conceptColumns.
func scanConcept(v []any) Concept {
	return Concept{ID: asInt(v[0]), Name: asText(v[1]), Domain: asText(v[2]), Vocabulary: asText(v[3]),
		Class: asText(v[4]), Standard: asText(v[5]), Code: asText(v[6]), InvalidReason: asText(v[7])}
}

// asInt reads an integer value of a scanned row (0 for NULL).
func asInt(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	case []byte:
		n, _ := strconv.ParseInt(string(x), 10, 64)
		return n
	}
	return 0
}

// asText reads a text value of a scanned row ("" for NULL).
func asText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	}
	return fmt.Sprint(v)
}

// lit writes s as an SQL string literal (the same in SQLite and in
// PostgreSQL with standard_conforming_strings); NUL bytes are dropped.
func lit(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, "\x00", ""), "'", "''") + "'"
}

// scanConcepts runs a query of conceptColumns and returns its concepts.
func (r *Resolver) scanConcepts(ctx context.Context, q string) ([]Concept, error) {
	var out []Concept
	err := r.db.Scan(ctx, q, func(v []any) error { out = append(out, scanConcept(v)); return nil })
	return out, err
}

// scanIDs runs a query of one integer column and returns its values.
func (r *Resolver) scanIDs(ctx context.Context, q string) ([]int64, error) {
	var out []int64
	err := r.db.Scan(ctx, q, func(v []any) error { out = append(out, asInt(v[0])); return nil })
	return out, err
}

// concepts reads the concepts with the given ids (missing ids are left out).
func (r *Resolver) concepts(ctx context.Context, ids []int64) (map[int64]Concept, error) {
	out := make(map[int64]Concept, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(len(ids), start+500)]
		cs, err := r.scanConcepts(ctx, "SELECT "+conceptColumns+" FROM concept WHERE concept_id IN ("+idList(chunk)+")")
		if err != nil {
			return nil, fmt.Errorf("read concepts: %w", err)
		}
		for _, c := range cs {
			out[c.ID] = c
		}
	}
	return out, nil
}

// Concept returns the concept with the given id.
func (r *Resolver) Concept(ctx context.Context, id int64) (Concept, bool, error) {
	m, err := r.concepts(ctx, []int64{id})
	c, ok := m[id]
	return c, ok, err
}

// idList renders ids as an SQL list "1, 2, 3".
func idList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ", ")
}

// codeLike matches texts that look like vocabulary codes: SNOMED and
// RxNorm numbers, ICD-10 (E11.9, I21), ICD-9 (250.00), LOINC (4548-4).
var codeLike = lazyre.New(`^(?:[0-9]{3,18}|[A-Za-z][0-9]{2}(?:\.?[0-9A-Za-z]{1,4})?|[0-9]{3}\.[0-9]{1,2}|[0-9]{1,7}-[0-9]|V[0-9]{2}(?:\.[0-9]{1,2})?)$`)

// IsCode reports whether a text looks like a vocabulary code.
func IsCode(s string) bool { return codeLike().MatchString(strings.TrimSpace(s)) }

// Search returns the standard concepts that best match a term, best first
// (at most limit): codes looked up directly, names and synonyms through the
// full-text index (with misspelt words corrected against the vocabulary's
// words), non-standard matches replaced by the standard concepts they map
// to, candidates in the term's domain ranked first.
func (r *Resolver) Search(ctx context.Context, t Term, limit int) ([]Candidate, error) {
	texts := t.Search
	if len(texts) == 0 {
		texts = []string{t.Text}
	}
	domain := normalizeDomain(t.Domain)
	var all []Candidate
	for i, text := range texts {
		text = strings.TrimSpace(text)
		if len(text) > maxTermBytes {
			text = text[:maxTermBytes]
		}
		if text == "" {
			continue
		}
		// An expansion (abbreviation, lay term) ranks just below a name
		// the question spells out.
		weight := 1.0
		if i > 0 {
			weight = 0.97
		}
		var cs []Candidate
		var err error
		if t.Code || IsCode(text) {
			cs, err = r.byCode(ctx, text)
		}
		if err == nil && len(cs) == 0 && !t.Code {
			cs, err = r.byName(ctx, text)
		}
		if err != nil {
			return nil, err
		}
		for j := range cs {
			cs[j].Match = cs[j].Score
			cs[j].Score *= weight
		}
		all = append(all, cs...)
	}
	all, err := r.toStandard(ctx, all)
	if err != nil {
		return nil, err
	}
	for i := range all {
		switch {
		case domain == "":
		case all[i].Domain == domain:
			all[i].Score += 0.15
		default:
			all[i].Score -= 0.1
		}
		if all[i].IsStandard() {
			all[i].Score += 0.03
		}
	}
	// One candidate per concept, the best-scored.
	sort.SliceStable(all, func(i, j int) bool { return better(all[i], all[j]) })
	seen := map[int64]bool{}
	out := all[:0]
	for _, c := range all {
		if seen[c.ID] || c.Score < minScore {
			continue
		}
		seen[c.ID] = true
		out = append(out, c)
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return slices.Clone(out), nil
}

// better orders candidates: score, then standard first, then shorter name,
// then id (deterministic).
func better(a, b Candidate) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.IsStandard() != b.IsStandard() {
		return a.IsStandard()
	}
	if len(a.Name) != len(b.Name) {
		return len(a.Name) < len(b.Name)
	}
	return a.ID < b.ID
}

// byCode looks a code up in concept.concept_code, as typed and with or
// without the dot ICD codes carry in OMOP.
func (r *Resolver) byCode(ctx context.Context, code string) ([]Candidate, error) {
	code = strings.TrimSpace(code)
	forms := []string{code, strings.ToUpper(code)}
	if !strings.Contains(code, ".") && len(code) > 3 && code[0] >= 'A' && code[0] <= 'Z' {
		forms = append(forms, code[:3]+"."+code[3:]) // E119 → E11.9
	}
	forms = append(forms, strings.ReplaceAll(code, ".", ""))
	lits := make([]string, len(forms))
	for i, f := range forms {
		lits[i] = lit(f)
	}
	cs, err := r.scanConcepts(ctx, "SELECT "+conceptColumns+" FROM concept WHERE concept_code IN ("+strings.Join(lits, ", ")+") ORDER BY concept_id LIMIT 50")
	if err != nil {
		return nil, fmt.Errorf("look up code %s: %w", code, err)
	}
	var out []Candidate
	for _, c := range cs {
		out = append(out, Candidate{Concept: c, Score: 1.1, Via: "code", Matched: c.Code})
	}
	return out, nil
}

// hit is a name or synonym matching a search text.
type hit struct {
	id      int64
	text    string
	synonym bool
}

// byName finds concepts whose name or synonym matches the text's words.
func (r *Resolver) byName(ctx context.Context, text string) ([]Candidate, error) {
	words := termWords(text)
	if len(words) == 0 {
		return nil, nil
	}
	words, err := r.correct(ctx, words)
	if err != nil {
		return nil, err
	}
	hits, err := r.nameHits(ctx, words, true)
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 && len(words) > 1 {
		if hits, err = r.nameHits(ctx, words, false); err != nil {
			return nil, err
		}
	}
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(hits))
	for _, h := range hits {
		ids = append(ids, h.id)
	}
	byID, err := r.concepts(ctx, ids)
	if err != nil {
		return nil, err
	}
	q := stemSet(words)
	var out []Candidate
	for _, h := range hits {
		c, ok := byID[h.id]
		if !ok {
			continue
		}
		via := "name"
		if h.synonym {
			via = "synonym"
		}
		out = append(out, Candidate{Concept: c, Score: matchScore(q, h.text), Via: via, Matched: h.text})
	}
	return out, nil
}

// nameHits queries the concept search index (or, when the database has
// none — PostgreSQL, a CDM not imported by Clinsight — concept names and
// synonyms with LIKE, shortest names first) for names holding all the
// words (all) or any of them.
func (r *Resolver) nameHits(ctx context.Context, words []string, all bool) ([]hit, error) {
	var q string
	if r.fts {
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		}
		op := " "
		if !all {
			op = " OR "
		}
		match := "{name} : (" + strings.Join(quoted, op) + ")"
		q = "SELECT concept_id, name, synonym FROM " + datasets.OMOPConceptIndex +
			" WHERE " + datasets.OMOPConceptIndex + " MATCH " + lit(match) + " ORDER BY bm25(" + datasets.OMOPConceptIndex + ") LIMIT " + strconv.Itoa(ftsCandidates)
	} else {
		where := func(column string) string {
			conds := make([]string, len(words))
			for i, w := range words {
				conds[i] = "lower(" + column + ") LIKE " + lit("%"+likeEscape(strings.ToLower(w))+"%") + ` ESCAPE '\'`
			}
			op := " AND "
			if !all {
				op = " OR "
			}
			return "(" + strings.Join(conds, op) + ")"
		}
		q = "SELECT concept_id, concept_name AS name, 0 AS synonym FROM concept WHERE " + where("concept_name")
		if r.synonyms {
			q += " UNION ALL SELECT concept_id, concept_synonym_name, 1 FROM concept_synonym WHERE " + where("concept_synonym_name")
		}
		q = "SELECT concept_id, name, synonym FROM (" + q + ") AS hits ORDER BY length(name), concept_id, synonym LIMIT " + strconv.Itoa(likeCandidates)
	}
	var out []hit
	err := r.db.Scan(ctx, q, func(v []any) error {
		out = append(out, hit{id: asInt(v[0]), text: asText(v[1]), synonym: asInt(v[2]) != 0})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("search concepts for %q: %w", strings.Join(words, " "), err)
	}
	return out, nil
}

// likeEscape escapes the wildcards of a LIKE pattern (escape character \).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// romanNumerals are normalised to digits in terms and names ("type II").
var romanNumerals = map[string]string{"ii": "2", "iii": "3", "iv": "4"}

// termWords splits a search text into the words looked up: lower case,
// roman numerals as digits, stop words dropped.
func termWords(text string) []string {
	var out []string
	for _, w := range textsearch.Words(text) {
		if d, ok := romanNumerals[w]; ok {
			w = d
		}
		if textsearch.IsStopWord(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

// stemSet returns the Porter stems of words.
func stemSet(words []string) map[string]bool {
	out := make(map[string]bool, len(words))
	for _, w := range words {
		out[textsearch.PorterStem(w)] = true
	}
	return out
}

// matchScore scores a concept name against the term's stems: the share of
// the term's words in the name weighs most, the share of the name's words
// in the term breaks ties towards the simplest concept ("Type 2 diabetes
// mellitus" before "Retinopathy due to type 2 diabetes mellitus"), and an
// exact match adds a bonus.
func matchScore(term map[string]bool, name string) float64 {
	n := stemSet(termWords(name))
	if len(term) == 0 || len(n) == 0 {
		return 0
	}
	inter := 0
	for s := range term {
		if n[s] {
			inter++
		}
	}
	qcov := float64(inter) / float64(len(term))
	ncov := float64(inter) / float64(len(n))
	s := 0.55*qcov + 0.35*ncov
	if inter == len(term) && inter == len(n) {
		s += 0.1
	}
	return s
}

// toStandard replaces each non-standard candidate by the standard concepts
// it maps to ('Maps to' in concept_relationship), keeping its score; a
// non-standard concept that maps to nothing stays, ranked lower.
func (r *Resolver) toStandard(ctx context.Context, cs []Candidate) ([]Candidate, error) {
	var out []Candidate
	for _, c := range cs {
		if c.IsStandard() {
			out = append(out, c)
			continue
		}
		targets, err := r.mapsTo(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		if len(targets) == 0 {
			c.Score -= 0.2
			out = append(out, c)
			continue
		}
		for _, t := range targets {
			src := c.Concept
			out = append(out, Candidate{Concept: t, Score: c.Score, Match: c.Match, Via: "maps to", Matched: c.Matched, MappedFrom: &src})
		}
	}
	return out, nil
}

// mapsTo returns the valid standard concepts a concept maps to.
func (r *Resolver) mapsTo(ctx context.Context, id int64) ([]Concept, error) {
	if !r.hasRelation {
		return nil, nil
	}
	ids, err := r.scanIDs(ctx, fmt.Sprintf("SELECT concept_id_2 FROM concept_relationship WHERE concept_id_1 = %d AND relationship_id = 'Maps to' AND coalesce(invalid_reason, '') = '' AND concept_id_2 <> concept_id_1 ORDER BY concept_id_2 LIMIT 20", id))
	if err != nil {
		return nil, fmt.Errorf("map concept %d to standard: %w", id, err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	byID, err := r.concepts(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []Concept
	for _, t := range ids {
		if c, ok := byID[t]; ok && c.IsStandard() {
			out = append(out, c)
		}
	}
	return out, nil
}

// Resolve turns a term into a concept set: its best standard candidate as
// the item (with descendants), the next ones as alternatives, the ids and
// person counts. ok is false when no candidate scores enough.
func (r *Resolver) Resolve(ctx context.Context, t Term) (set ConceptSet, ok bool, err error) {
	cands, err := r.Search(ctx, t, maxAlternatives+1)
	if err != nil || len(cands) == 0 {
		return ConceptSet{}, false, err
	}
	best := cands[0]
	set = ConceptSet{
		Name:         setName(t),
		Term:         t,
		Items:        []SetItem{{Concept: best.Concept, IncludeDescendants: true, MappedFrom: best.MappedFrom}},
		Alternatives: cands[1:],
		itemMatch:    best.Match,
	}
	if err := r.Refresh(ctx, &set); err != nil {
		return set, false, err
	}
	return set, true, nil
}

// setName names a set after its term, lower case, in words.
func setName(t Term) string {
	name := strings.Join(textsearch.Words(t.Text), " ")
	if t.Code || name == "" {
		return strings.TrimSpace(t.Text)
	}
	return name
}

// Refresh recomputes a set's domain, ids (items and descendants, less the
// excluded) and person counts after its items changed.
func (r *Resolver) Refresh(ctx context.Context, set *ConceptSet) error {
	set.Domain = ""
	for _, it := range set.Items {
		if !it.Excluded {
			set.Domain = it.Domain
			break
		}
	}
	var direct, withDesc, excluded []int64
	for _, it := range set.Items {
		switch {
		case it.Excluded:
			excluded = append(excluded, it.ID)
		case it.IncludeDescendants:
			withDesc = append(withDesc, it.ID)
			direct = append(direct, it.ID)
		default:
			direct = append(direct, it.ID)
		}
	}
	desc, source, err := r.descendants(ctx, withDesc)
	if err != nil {
		return err
	}
	ids := map[int64]bool{}
	for _, id := range direct {
		ids[id] = true
	}
	set.Descendants = 0
	for _, id := range desc {
		if !ids[id] {
			ids[id] = true
			set.Descendants++
		}
	}
	for _, id := range excluded {
		delete(ids, id)
	}
	set.IDs = set.IDs[:0]
	for id := range ids {
		set.IDs = append(set.IDs, id)
	}
	slices.Sort(set.IDs)
	set.DescendantSource = ""
	if set.Descendants > 0 {
		set.DescendantSource = source
	}
	if set.Persons, err = r.Persons(ctx, set.Domain, set.IDs); err != nil {
		return err
	}
	directIDs := slices.DeleteFunc(slices.Clone(direct), func(id int64) bool { return slices.Contains(excluded, id) })
	if set.PersonsDirect, err = r.Persons(ctx, set.Domain, directIDs); err != nil {
		return err
	}
	return nil
}

// descendants returns the descendants of the given concepts (not the
// concepts themselves) from concept_ancestor, or, when it is empty, the
// closure of 'Subsumes' in concept_relationship, and which source was used.
func (r *Resolver) descendants(ctx context.Context, ids []int64) ([]int64, string, error) {
	if len(ids) == 0 {
		return nil, "", nil
	}
	if r.ancestors {
		out, err := r.scanIDs(ctx, "SELECT DISTINCT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id IN ("+idList(ids)+") AND descendant_concept_id NOT IN ("+idList(ids)+") ORDER BY descendant_concept_id LIMIT "+strconv.Itoa(maxDescendants))
		if err != nil {
			return nil, "", fmt.Errorf("read descendants: %w", err)
		}
		return out, "concept_ancestor", nil
	}
	if !r.hasRelation {
		return nil, "", nil
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	var out []int64
	frontier := ids
	for depth := 0; depth < maxSubsumesDepth && len(frontier) > 0 && len(out) < maxDescendants; depth++ {
		found, err := r.scanIDs(ctx, "SELECT DISTINCT concept_id_2 FROM concept_relationship WHERE concept_id_1 IN ("+idList(frontier)+") AND relationship_id = 'Subsumes' AND coalesce(invalid_reason, '') = '' ORDER BY concept_id_2")
		if err != nil {
			return nil, "", fmt.Errorf("read descendants: %w", err)
		}
		var next []int64
		for _, id := range found {
			if !seen[id] {
				seen[id] = true
				next = append(next, id)
			}
		}
		out = append(out, next...)
		frontier = next
	}
	if len(out) > maxDescendants {
		out = out[:maxDescendants]
	}
	return out, "concept_relationship 'Subsumes'", nil
}

// Persons counts the distinct persons with an event of any of the concepts
// in the domain's event table; -1 when the domain has no event table or
// the database lacks it.
func (r *Resolver) Persons(ctx context.Context, domain string, ids []int64) (int64, error) {
	dt, ok := domainTables[domain]
	if !ok {
		return -1, nil
	}
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := datasets.ScanInt64s(ctx, r.db, "SELECT COUNT(DISTINCT person_id) FROM "+dt.table+" WHERE "+dt.column+" IN ("+idList(ids)+")")
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "no such table") || strings.Contains(msg, "does not exist") {
			return -1, nil
		}
		return 0, fmt.Errorf("count persons with %s concepts: %w", strings.ToLower(domain), err)
	}
	return n[0], nil
}

// SearchHits is Search with the persons each concept finds with its
// descendants (what it adds to a concept set: an ingredient finds the
// persons given its clinical drugs); counts of fewer than k persons (but
// some) are hidden, as an aggregate-only source's minimum cell size asks
// (k ≤ 0 hides nothing).
func (r *Resolver) SearchHits(ctx context.Context, t Term, limit, k int) ([]Hit, error) {
	cands, err := r.Search(ctx, t, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(cands))
	for i, c := range cands {
		out[i].Candidate = c
		desc, _, err := r.descendants(ctx, []int64{c.ID})
		if err != nil {
			return nil, err
		}
		if out[i].Persons, err = r.Persons(ctx, c.Domain, append([]int64{c.ID}, desc...)); err != nil {
			return nil, err
		}
		if SmallCount(out[i].Persons, k) {
			out[i].Persons, out[i].PersonsUnder = -1, k
		}
	}
	return out, nil
}
