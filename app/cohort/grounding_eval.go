package cohort

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// Corruption rules: how small models get stored values wrong. Each
// corrupted query changes one literal (every occurrence of it) by one rule;
// a corruption that happens to be another stored value of the column is
// discarded (that is a different question, not a mismatch).
const (
	// RuleCase writes the value in upper case or Title Case (or lower case
	// when it is stored with capitals).
	RuleCase = "case"
	// RuleDropSuffix drops a dose, strength, form or route suffix ("potassium
	// chloride 20 meq/100 ml iv" → "potassium chloride", "ferrous sulfate
	// (liquid)" → "ferrous sulfate").
	RuleDropSuffix = "drop-suffix"
	// RuleSynonym replaces a drug or diagnosis term by a brand name, lay term
	// or abbreviation from the hand list corruptSynonyms.
	RuleSynonym = "synonym"
	// RuleMisspell makes one or two character edits (a letter dropped,
	// doubled, replaced by a keyboard neighbour, or two letters swapped) in a
	// word of at least 4 letters, never its first letter.
	RuleMisspell = "misspell"
)

// CorruptionRules describes the rules, for the benchmark's output.
func CorruptionRules() []string {
	return []string{
		RuleCase + ": the value in UPPER CASE or Title Case (lower case when stored with capitals)",
		RuleDropSuffix + ": a dose, strength, form or route suffix dropped (from the first number, unit, form or route word, or parenthesis)",
		RuleSynonym + ": a drug or diagnosis term replaced by a brand name, lay term or abbreviation (hand list of " + fmt.Sprint(len(corruptSynonyms())) + " terms)",
		RuleMisspell + ": one or two character edits (drop, double, keyboard neighbour, swap) in a word of ≥ 4 letters, not its first letter",
	}
}

// corruptSynonyms is the corruption generator's hand list: clinical term →
// what a model or a user might write instead. Some of these are in the
// grounder's vocabulary (groundTerms) and some are not, on purpose: the
// benchmark reports the synonym rule's rate separately.
var corruptSynonyms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"acetaminophen": "tylenol", "furosemide": "lasix", "ondansetron": "zofran", "pantoprazole": "protonix",
		"warfarin": "coumadin", "metoprolol": "lopressor", "docusate": "colace", "vancomycin": "vanco",
		"potassium chloride": "kcl", "sodium chloride": "nacl", "magnesium sulfate": "mgso4", "aspirin": "asa",
		"atorvastatin": "lipitor", "simvastatin": "zocor", "lorazepam": "ativan", "hydromorphone": "dilaudid",
		"oxycodone": "roxicodone", "gabapentin": "neurontin", "levothyroxine": "synthroid", "amlodipine": "norvasc",
		"lisinopril": "zestril", "albuterol": "ventolin", "polyethylene glycol": "miralax", "bisacodyl": "dulcolax",
		"famotidine": "pepcid", "tamsulosin": "flomax", "dexamethasone": "decadron", "clopidogrel": "plavix",
		"enoxaparin": "lovenox", "metformin": "glucophage", "ciprofloxacin": "cipro", "ceftriaxone": "rocephin",
		"cefazolin": "ancef", "prednisone": "deltasone", "senna": "senokot", "heparin": "hep",
		"insulin": "insulin shot", "sodium bicarbonate": "bicarb", "calcium gluconate": "calcium",
		"hypertension": "high blood pressure", "hyperlipidemia": "high cholesterol", "myocardial infarction": "heart attack",
		"renal": "kidney", "hyponatremia": "low sodium", "hypokalemia": "low potassium", "atrial fibrillation": "afib",
		"congestive heart failure": "chf", "urinary tract infection": "uti", "chronic obstructive pulmonary disease": "copd",
		"esophageal reflux": "acid reflux", "hemorrhage": "bleeding", "pneumonia": "lung infection", "anemia": "low blood count",
		"obesity": "overweight", "syncope": "fainting", "dyspnea": "shortness of breath", "hypotension": "low blood pressure",
		"depressive disorder": "depression", "diabetes mellitus": "diabetes", "malignant neoplasm": "cancer",
		"neoplasm": "tumor", "cerebral infarction": "stroke", "thrombosis": "blood clot", "sepsis": "blood poisoning",
		"hepatic": "liver", "gastric": "stomach", "pulmonary": "lung", "white blood cells": "wbc", "red blood cells": "rbc",
		"hemoglobin": "hgb", "hematocrit": "hct", "platelet count": "platelets", "urea nitrogen": "bun",
		"glucose": "blood sugar", "emergency department": "er", "intensive care unit": "icu", "fracture": "broken bone",
		"calculus": "stone", "cholelithiasis": "gallstones", "nephrolithiasis": "kidney stones", "pyrexia": "fever",
		"edema": "swelling", "pruritus": "itching", "cephalgia": "headache", "emesis": "vomiting",
	}
})

// dropSuffixWord matches a word that starts a dose, strength, form or route
// suffix.
var dropSuffixWord = lazyre.New(`^(\(|\d|\.\d|mg$|mcg$|g$|gm$|ml$|meq$|units?$|%|tabs?$|tablets?$|caps?$|capsules?$|iv$|po$|sc$|sq$|im$|pr$|inj|injection$|soln$|solution$|susp|syringe$|bag$|vial$|patch$|cream$|ointment$|neb$|inh|er$|sr$|ec$|xl$|dr$|liquid$|elixir$|drops?$|flush$|premix$|/)`)

// Corruption is one corrupted literal.
type Corruption struct {
	Rule   string `json:"rule"`
	Table  string `json:"table"`
	Column string `json:"column"`
	From   string `json:"from"`
	To     string `json:"to"`
}

// CorruptQuery corrupts one literal of query that names a stored value
// (chosen with rng, every occurrence changed alike) by one of the rules
// (tried in an order drawn from rng until one gives a string that is not a
// stored value of the column). ok is false when no literal can be
// corrupted.
func (g *Grounder) CorruptQuery(ctx context.Context, query string, rng *rand.Rand) (string, Corruption, bool, error) {
	type target struct {
		ref literalRef
		col int
	}
	var targets []target
	seen := map[string]bool{}
	for _, ref := range g.literalRefs(query) {
		col := g.column(ref.table, ref.column)
		key := ref.table + "." + ref.column + "=" + ref.value
		if col < 0 || seen[key] || strings.HasSuffix(ref.op, "LIKE") || countLetters(ref.value) < 3 {
			continue
		}
		stored := slices.ContainsFunc(g.candidates(col).cands, func(c groundCand) bool { return g.matches(ref, false, c.text) })
		if !stored {
			continue
		}
		seen[key] = true
		targets = append(targets, target{ref, col})
	}
	if len(targets) == 0 {
		return query, Corruption{}, false, nil
	}
	t := targets[rng.IntN(len(targets))]
	rules := []string{RuleCase, RuleDropSuffix, RuleSynonym, RuleMisspell}
	rng.Shuffle(len(rules), func(i, j int) { rules[i], rules[j] = rules[j], rules[i] })
	for _, rule := range rules {
		to := corruptValue(rule, t.ref.value, rng)
		if to == "" || to == t.ref.value {
			continue
		}
		probe := t.ref
		probe.value = to
		if slices.ContainsFunc(g.candidates(t.col).cands, func(c groundCand) bool { return g.matches(probe, false, c.text) }) {
			continue
		}
		if stored, err := g.stored(ctx, probe, false); err != nil {
			return query, Corruption{}, false, err
		} else if stored {
			continue
		}
		// Rewrite every occurrence of the literal compared with this column.
		var b strings.Builder
		last := 0
		for _, ref := range g.literalRefs(query) {
			if ref.table == t.ref.table && ref.column == t.ref.column && ref.value == t.ref.value {
				b.WriteString(query[last:ref.start])
				b.WriteString("'" + strings.ReplaceAll(to, "'", "''") + "'")
				last = ref.end
			}
		}
		b.WriteString(query[last:])
		return b.String(), Corruption{Rule: rule, Table: t.ref.table, Column: t.ref.column, From: t.ref.value, To: to}, true, nil
	}
	return query, Corruption{}, false, nil
}

func countLetters(s string) int {
	n := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}

// corruptValue applies one rule to a value; "" when the rule does not
// apply.
func corruptValue(rule, v string, rng *rand.Rand) string {
	switch rule {
	case RuleCase:
		if strings.ToLower(v) != v {
			return strings.ToLower(v)
		}
		if rng.IntN(2) == 0 {
			return strings.ToUpper(v)
		}
		return titleCase(v)
	case RuleDropSuffix:
		ws := strings.Fields(v)
		for k := 1; k < len(ws); k++ {
			if dropSuffixWord().MatchString(strings.ToLower(ws[k])) {
				return strings.TrimRight(strings.Join(ws[:k], " "), " ,;:-/")
			}
		}
		return ""
	case RuleSynonym:
		low := " " + strings.ToLower(v) + " "
		keys := make([]string, 0, len(corruptSynonyms()))
		for k := range corruptSynonyms() {
			if strings.Contains(low, " "+k+" ") {
				keys = append(keys, k)
			}
		}
		if len(keys) == 0 {
			return ""
		}
		slices.Sort(keys)
		k := keys[rng.IntN(len(keys))]
		return strings.TrimSpace(strings.Replace(low, " "+k+" ", " "+corruptSynonyms()[k]+" ", 1))
	case RuleMisspell:
		return misspell(v, 1+rng.IntN(2), rng)
	}
	return ""
}

// titleCase capitalises the first letter of every word.
func titleCase(s string) string {
	rs := []rune(s)
	for i, r := range rs {
		if i == 0 || !unicode.IsLetter(rs[i-1]) && !unicode.IsDigit(rs[i-1]) && rs[i-1] != '\'' {
			rs[i] = unicode.ToUpper(r)
		}
	}
	return string(rs)
}

// keyboardNeighbours lists the neighbouring keys of each letter (QWERTY),
// by byte (an array: static data, no work at program start).
var keyboardNeighbours = [256]string{
	'a': "qsz", 'b': "vn", 'c': "xv", 'd': "sf", 'e': "wr", 'f': "dg", 'g': "fh", 'h': "gj", 'i': "uo", 'j': "hk",
	'k': "jl", 'l': "k", 'm': "n", 'n': "bm", 'o': "ip", 'p': "o", 'q': "wa", 'r': "et", 's': "ad", 't': "ry",
	'u': "yi", 'v': "cb", 'w': "qe", 'x': "zc", 'y': "tu", 'z': "x",
}

// misspell makes n character edits in the letters of one word of at least
// 4 ASCII letters, never its first letter; "" when there is none.
func misspell(v string, n int, rng *rand.Rand) string {
	type span struct{ start, end int }
	var words []span
	start := -1
	for i := 0; i <= len(v); i++ {
		letter := i < len(v) && v[i] >= 'a' && v[i] <= 'z'
		switch {
		case letter && start < 0:
			start = i
		case !letter && start >= 0:
			if i-start >= 4 {
				words = append(words, span{start, i})
			}
			start = -1
		}
	}
	if len(words) == 0 {
		return ""
	}
	w := words[rng.IntN(len(words))]
	word := []byte(v[w.start:w.end])
	for range n {
		p := 1 + rng.IntN(len(word)-1)
		switch rng.IntN(4) {
		case 0: // drop
			if len(word) > 3 {
				word = append(word[:p], word[p+1:]...)
			}
		case 1: // double
			word = append(word[:p+1], word[p:]...)
		case 2: // keyboard neighbour
			if nb := keyboardNeighbours[word[p]]; nb != "" {
				word[p] = nb[rng.IntN(len(nb))]
			}
		default: // swap with the previous letter (not the first)
			if p >= 2 && word[p] != word[p-1] {
				word[p], word[p-1] = word[p-1], word[p]
			} else if p+1 < len(word) {
				word[p], word[p+1] = word[p+1], word[p]
			}
		}
	}
	return v[:w.start] + string(word) + v[w.end:]
}

// GroundingCase is one corrupted query of the benchmark.
type GroundingCase struct {
	ID         string `json:"id"`
	Half       string `json:"half"`
	Corruption `json:"corruption"`
	Before     bool           `json:"match_before"`
	After      bool           `json:"match_after"`
	Rewrites   []ValueRewrite `json:"rewrites,omitempty"`
	Choices    []ValueChoice  `json:"choices,omitempty"`
	// best and second are the scores of the two best stored values of the
	// corrupted literal and bestGold whether the best is the gold value
	// (for tuning the thresholds on the development half).
	best, second float64
	bestGold     bool
}

// GroundingRate is the answer-match rate of a set of corrupted queries.
type GroundingRate struct {
	N           int     `json:"n"`
	MatchBefore float64 `json:"match_before"`
	MatchAfter  float64 `json:"match_after"`
}

// GroundingReport is the outcome of EvaluateGrounding.
type GroundingReport struct {
	Seed uint64 `json:"seed"`
	// Rules are the corruption rules.
	Rules []string `json:"rules"`
	// GroundingRate is over every corrupted query.
	GroundingRate
	// Dev and Test split the corrupted queries by question id hash
	// (groundingHalf): the thresholds were chosen on Dev.
	Dev  GroundingRate            `json:"dev"`
	Test GroundingRate            `json:"test"`
	Rule map[string]GroundingRate `json:"by_rule"`
	// Uncorrupted is the number of gold queries grounded as they are;
	// RewrittenUncorrupted how many grounding changed at all and
	// ChangedUncorrupted how many of those then gave another answer than
	// the gold one.
	Uncorrupted          int `json:"uncorrupted"`
	RewrittenUncorrupted int `json:"rewritten_uncorrupted"`
	ChangedUncorrupted   int `json:"changed_uncorrupted"`
	// NotCorrupted counts the gold queries without a literal naming a
	// stored value (left out of the corrupted set).
	NotCorrupted int             `json:"not_corrupted"`
	Cases        []GroundingCase `json:"-"`
}

// groundingHalf assigns an EHRSQL question to the development or the test
// half by the FNV-1a hash of its id.
func groundingHalf(id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	if h.Sum32()%2 == 0 {
		return "dev"
	}
	return "test"
}

// EvaluateGrounding measures value grounding without a model on the
// answerable items with gold answers (items flagged Unrunnable are left
// out): each gold query is grounded as it is (it must keep its gold
// answer), then one of its literals is corrupted (CorruptQuery, with a
// generator seeded by seed and the question id) and the corrupted query's
// answer is compared with the gold answer before and after grounding.
// Answers compare as the EHRSQL task does. progress, if not nil, is called
// after each item.
func EvaluateGrounding(ctx context.Context, g *Grounder, runner SQLRunner, items []eval.EHRSQLItem, seed uint64, progress func(done, total int)) (*GroundingReport, error) {
	if g == nil {
		return nil, fmt.Errorf("value grounding needs the value index of the database")
	}
	rep := &GroundingReport{Seed: seed, Rules: CorruptionRules(), Rule: map[string]GroundingRate{}}
	answer := func(q string) [][]string {
		res, err := runner.Query(ctx, q)
		if err != nil {
			return nil
		}
		return eval.EHRSQLAnswer(res.Rows)
	}
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !it.Answerable || it.Unrunnable || it.GoldAnswer == "" {
			continue
		}
		gold, err := eval.ParseEHRSQLGold(it.GoldAnswer)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", it.ID, err)
		}
		q := eval.EHRSQLQuery(it.GoldSQL)
		rep.Uncorrupted++
		gr, err := g.Ground(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", it.ID, err)
		}
		if gr.SQL != q {
			rep.RewrittenUncorrupted++
			if !eval.SameEHRSQLAnswer(answer(gr.SQL), gold) {
				rep.ChangedUncorrupted++
			}
		}
		h := fnv.New64a()
		h.Write([]byte(it.ID))
		rng := rand.New(rand.NewPCG(seed, h.Sum64()))
		cq, c, ok, err := g.CorruptQuery(ctx, q, rng)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", it.ID, err)
		}
		if !ok {
			rep.NotCorrupted++
			continue
		}
		gc := GroundingCase{ID: it.ID, Half: groundingHalf(it.ID), Corruption: c}
		gc.Before = eval.SameEHRSQLAnswer(answer(cq), gold)
		gr, err = g.Ground(ctx, cq)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", it.ID, err)
		}
		gc.Rewrites, gc.Choices = gr.Rewrites, gr.Choices
		gc.After = gc.Before
		if gr.SQL != cq {
			gc.After = eval.SameEHRSQLAnswer(answer(gr.SQL), gold)
		}
		if col := g.column(c.Table, c.Column); col >= 0 {
			if sc := rankValues(c.To, g.candidates(col)); len(sc) > 0 {
				gc.best, gc.bestGold = sc[0].score, sc[0].text == c.From
				if len(sc) > 1 {
					gc.second = sc[1].score
				}
				if sc[0].contains && slices.ContainsFunc(sc[1:], func(s scoredValue) bool { return s.contains }) {
					gc.second = gc.best // a family: never applied
				}
			}
		}
		rep.Cases = append(rep.Cases, gc)
		if progress != nil {
			progress(i+1, len(items))
		}
	}
	rep.GroundingRate = rateOf(rep.Cases, func(GroundingCase) bool { return true })
	rep.Dev = rateOf(rep.Cases, func(c GroundingCase) bool { return c.Half == "dev" })
	rep.Test = rateOf(rep.Cases, func(c GroundingCase) bool { return c.Half == "test" })
	for _, r := range []string{RuleCase, RuleDropSuffix, RuleSynonym, RuleMisspell} {
		rep.Rule[r] = rateOf(rep.Cases, func(c GroundingCase) bool { return c.Rule == r })
	}
	return rep, nil
}

// rateOf is the match rate of the cases keep selects.
func rateOf(cases []GroundingCase, keep func(GroundingCase) bool) GroundingRate {
	var r GroundingRate
	before, after := 0, 0
	for _, c := range cases {
		if !keep(c) {
			continue
		}
		r.N++
		if c.Before {
			before++
		}
		if c.After {
			after++
		}
	}
	if r.N > 0 {
		r.MatchBefore, r.MatchAfter = float64(before)/float64(r.N), float64(after)/float64(r.N)
	}
	return r
}
