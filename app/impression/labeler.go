package impression

import (
	"strings"
	"sync"
)

// LabelerVersion identifies the labeler's rules; it is stored with the
// labels at import, so reports labelled by other rules can be relabelled.
const LabelerVersion = "rules-2"

// Mention is one observation mentioned in a text, with the label its
// context gives it.
type Mention struct {
	// Observation is what is mentioned; for a mention of an abnormality
	// outside the 14 observations it is NoFinding with Other set.
	Observation Observation
	// Other marks an abnormality outside the 14 observations (it rules out
	// No Finding when positive or uncertain).
	Other bool
	// Text is the matched phrase.
	Text string
	// Label is positive, negative or uncertain.
	Label Label
}

// LabelText labels a report text (FINDINGS and IMPRESSION together) with
// CheXpert's 14 observations, as CheXpert's rule-based labeler does:
// mentions found by phrase (with synonyms), each classified negative
// ("no", "without", "negative for", "clear of", "resolved", ...), uncertain
// ("may", "possible", "cannot exclude", "versus", "or", a question mark,
// ...) or positive; mentions of one observation combine as CheXpert's
// aggregation does (a positive wins, then uncertain, then negative); No
// Finding is positive when nothing but support devices is positive or
// uncertain, and blank otherwise. Observations never mentioned are Blank.
// Only the first maxLabelBytes of text are read (a report's findings and
// impression at their import bounds), so a huge text costs no more than
// that.
func LabelText(text string) Labels {
	labels, _ := labelText(text, false)
	return labels
}

func labelText(text string, keep bool) (Labels, []Mention) {
	if len(text) > maxLabelBytes {
		text = text[:maxLabelBytes]
	}
	r := compiledRules()
	found := [NumObservations][]Label{}
	var mentions []Mention
	otherFinding := false
	for _, sent := range splitSentences(text) {
		for _, m := range r.classify(sent) {
			if keep {
				mentions = append(mentions, m)
			}
			if m.Other {
				if m.Label != Negative {
					otherFinding = true
				}
				continue
			}
			found[m.Observation] = append(found[m.Observation], m.Label)
			// CheXpert: heart failure makes cardiomegaly uncertain.
			if m.Observation == Edema && m.Label != Negative && (m.Text == "heart failure" || m.Text == "chf") {
				found[Cardiomegaly] = append(found[Cardiomegaly], Uncertain)
			}
		}
	}
	labels := BlankLabels()
	noFinding := !otherFinding
	for o := range NumObservations {
		ls := found[o]
		if len(ls) == 0 || Observation(o) == NoFinding {
			continue
		}
		labels[o] = aggregate(ls)
		if Observation(o) != SupportDevices && labels[o] != Negative {
			noFinding = false
		}
	}
	if noFinding {
		labels[NoFinding] = Positive
	}
	return labels, mentions
}

// aggregate combines the labels of several mentions of one observation as
// CheXpert does: any positive gives positive, else any uncertain gives
// uncertain, else negative.
func aggregate(ls []Label) Label {
	out := Negative
	for _, l := range ls {
		switch {
		case l == Positive:
			return Positive
		case l == Uncertain:
			out = Uncertain
		}
	}
	return out
}

// sentence is a lowercased sentence split into words, with commas kept as
// "," tokens.
type sentence struct {
	toks     []string
	question bool
}

// splitSentences lowercases text and splits it into sentences at . ! ? ;
// and line breaks (a period between digits stays inside the number). A
// sentence longer than maxSentenceWords words is split after each
// maxSentenceWords (classifying a sentence costs the square of its words).
func splitSentences(text string) []sentence {
	var out []sentence
	var cur []string
	var word strings.Builder
	flushWord := func() {
		if word.Len() > 0 {
			cur = append(cur, word.String())
			word.Reset()
		}
		if len(cur) >= maxSentenceWords {
			out = append(out, sentence{toks: cur})
			cur = nil
		}
	}
	end := func(question bool) {
		flushWord()
		if len(cur) > 0 {
			out = append(out, sentence{toks: cur, question: question})
		}
		cur = nil
	}
	b := []byte(text)
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= 'A' && c <= 'Z':
			word.WriteByte(c + 'a' - 'A')
		case (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'):
			word.WriteByte(c)
		case c == '.' && word.Len() > 0 && i+1 < len(b) && b[i+1] >= '0' && b[i+1] <= '9' && isDigits(word.String()):
			word.WriteByte(c)
		case c == '.' || c == '!' || c == ';' || c == '\n' || c == '\r':
			end(false)
		case c == '?':
			end(true)
		case c == ',':
			flushWord()
			cur = append(cur, ",")
		default:
			flushWord()
		}
	}
	end(false)
	return out
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// pword is one word of a compiled phrase.
type pword struct {
	text   string
	prefix bool
}

// matcher finds the longest phrase of a list at a position.
type matcher struct {
	pats    [][]pword
	payload []int
	exact   map[string][]int
	prefix  []int
}

func newMatcher() *matcher { return &matcher{exact: map[string][]int{}} }

// add compiles phrases with a payload (an index into the caller's table).
func (m *matcher) add(payload int, phrases ...string) {
	for _, ph := range phrases {
		var pat []pword
		for _, w := range splitPhrase(ph) {
			p := pword{text: w}
			if strings.HasSuffix(w, "*") {
				p = pword{text: strings.TrimSuffix(w, "*"), prefix: true}
			}
			pat = append(pat, p)
		}
		if len(pat) == 0 {
			continue
		}
		id := len(m.pats)
		m.pats = append(m.pats, pat)
		m.payload = append(m.payload, payload)
		if pat[0].prefix {
			m.prefix = append(m.prefix, id)
		} else {
			m.exact[pat[0].text] = append(m.exact[pat[0].text], id)
		}
	}
}

// splitPhrase splits a phrase like a text: lowercase words, punctuation
// and hyphens as separators ("*" is kept as the prefix marker).
func splitPhrase(ph string) []string {
	return strings.FieldsFunc(strings.ToLower(ph), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '*')
	})
}

// longest returns the length and payload of the longest phrase starting at
// toks[i] (length 0 when none).
func (m *matcher) longest(toks []string, i int) (n, payload int) {
	try := func(id int) {
		pat := m.pats[id]
		if len(pat) <= n || i+len(pat) > len(toks) {
			return
		}
		for k, p := range pat {
			t := toks[i+k]
			if p.prefix {
				if !strings.HasPrefix(t, p.text) {
					return
				}
			} else if t != p.text {
				return
			}
		}
		n, payload = len(pat), m.payload[id]
	}
	for _, id := range m.exact[toks[i]] {
		try(id)
	}
	for _, id := range m.prefix {
		if strings.HasPrefix(toks[i], m.pats[id][0].text) {
			try(id)
		}
	}
	return n, payload
}

// span is a matched phrase [start, end) with its payload.
type span struct{ start, end, payload int }

// spans scans toks left to right taking the longest match at each
// position, skipping positions covered by skip.
func (m *matcher) spans(toks []string, skip []bool) []span {
	var out []span
	for i := 0; i < len(toks); {
		if skip != nil && skip[i] {
			i++
			continue
		}
		n, p := m.longest(toks, i)
		if n == 0 {
			i++
			continue
		}
		out = append(out, span{i, i + n, p})
		i += n
	}
	return out
}

// ruleSet holds the compiled phrase tables (read-only once built).
type ruleSet struct {
	mentions                      *matcher
	preNeg, postNeg, pseudo       *matcher
	preNegUnc, preUnc, postUnc    *matcher
	terminators                   *matcher
	enlarged, borderline, normalQ *matcher
}

// compiledRules are the phrase tables, compiled on first use (not at
// program start); read-only afterwards.
var compiledRules = sync.OnceValue(compileRules)

// compileRules compiles the phrase tables.
func compileRules() *ruleSet {
	r := &ruleSet{mentions: newMatcher()}
	for i, pr := range mentionRules {
		r.mentions.add(i, pr.phrases...)
	}
	list := func(phrases []string) *matcher {
		m := newMatcher()
		for i, p := range phrases {
			m.add(i, p)
		}
		return m
	}
	r.preNeg, r.postNeg, r.pseudo = list(preNegation), list(postNegation), list(pseudoTriggers)
	r.preNegUnc, r.preUnc, r.postUnc = list(preNegationUncertainty), list(preUncertainty), list(postUncertainty)
	r.terminators = list(scopeTerminators)
	r.enlarged, r.borderline, r.normalQ = list(enlargedQualifiers), list(borderlineQualifiers), list(normalQualifiers)
	return r
}

// Windows (in words) within which triggers act.
const (
	postNegWindow = 4
	preUncWindow  = 6
	postUncWindow = 4
	orWindow      = 2
	preNegUncWin  = 8
	attrBefore    = 3
)

// rawMention is a mention found in a sentence before classification.
type rawMention struct {
	start, end int
	rule       phraseRule
}

// classify finds the mentions of a sentence and labels each.
func (r *ruleSet) classify(s sentence) []Mention {
	toks := s.toks
	var raws []rawMention
	for _, sp := range r.mentions.spans(toks, nil) {
		pr := mentionRules[sp.payload]
		if pr.kind == exclusion {
			continue
		}
		raws = append(raws, rawMention{sp.start, sp.end, pr})
	}
	if len(raws) == 0 {
		return nil
	}
	// Trigger words inside pseudo-triggers ("no change") do not count.
	skip := make([]bool, len(toks))
	for _, sp := range r.pseudo.spans(toks, nil) {
		for k := sp.start; k < sp.end; k++ {
			skip[k] = true
		}
	}
	// A word right after "no" qualifies what follows ("no visualized
	// pneumothorax", "no increased opacity"): it does not end the clause.
	termSkip := make([]bool, len(toks))
	for k := 1; k < len(toks); k++ {
		termSkip[k] = toks[k-1] == "no"
	}
	ctx := triggerContext{
		toks:      toks,
		preNeg:    r.preNeg.spans(toks, skip),
		postNeg:   r.postNeg.spans(toks, skip),
		preNegUnc: r.preNegUnc.spans(toks, nil),
		preUnc:    r.preUnc.spans(toks, skip),
		postUnc:   r.postUnc.spans(toks, skip),
		terms:     r.terminators.spans(toks, termSkip),
		question:  s.question,
	}
	out := make([]Mention, len(raws))
	attrDone := make([]bool, len(raws))
	// Attribute mentions right to left, so that "heart size and mediastinal
	// contours are normal" passes the qualifier back to the first.
	for i := len(raws) - 1; i >= 0; i-- {
		m := raws[i]
		if m.rule.kind != attribute {
			continue
		}
		next := len(toks)
		if i+1 < len(raws) {
			next = raws[i+1].start
		}
		prev := 0
		if i > 0 {
			prev = raws[i-1].end
		}
		label, ok := r.qualify(toks[m.end:next], ctx, m.end)
		if !ok {
			label, ok = r.qualify(toks[max(prev, m.start-attrBefore):m.start], ctx, max(prev, m.start-attrBefore))
		}
		if !ok && i+1 < len(raws) && raws[i+1].rule.kind == attribute && attrDone[i+1] && onlyConnectors(toks[m.end:next]) {
			label, ok = out[i+1].Label, true
		}
		if ok {
			out[i] = Mention{Observation: m.rule.obs, Text: strings.Join(toks[m.start:m.end], " "), Label: label}
			attrDone[i] = true
		}
	}
	var res []Mention
	for i, m := range raws {
		switch m.rule.kind {
		case attribute:
			if attrDone[i] {
				res = append(res, out[i])
			}
			continue
		case otherFinding:
			res = append(res, Mention{Observation: NoFinding, Other: true, Text: strings.Join(toks[m.start:m.end], " "), Label: ctx.label(m.start, m.end)})
			continue
		}
		res = append(res, Mention{Observation: m.rule.obs, Text: strings.Join(toks[m.start:m.end], " "), Label: ctx.label(m.start, m.end)})
	}
	return res
}

// onlyConnectors reports whether the words between two attribute mentions
// only join them ("and", "the", a comma).
func onlyConnectors(toks []string) bool {
	for _, t := range toks {
		switch t {
		case "and", "the", ",", "or", "its", "their":
		default:
			return false
		}
	}
	return true
}

// qualify labels an attribute mention from the words qualifying it
// (window, starting at index off of the sentence): borderline → uncertain,
// negated or normal → negative, enlarged → positive; ok is false when the
// words do not qualify it.
func (r *ruleSet) qualify(window []string, ctx triggerContext, off int) (Label, bool) {
	if len(window) == 0 {
		return 0, false
	}
	negated := false
	for _, t := range window {
		if t == "not" || t == "no" || t == "without" {
			negated = true
		}
	}
	hasEnlarged := len(r.enlarged.spans(window, nil)) > 0
	switch {
	case hasEnlarged && negated:
		return Negative, true
	case len(r.borderline.spans(window, nil)) > 0:
		return Uncertain, true
	case hasEnlarged:
		for _, sp := range ctx.preUnc {
			if sp.start >= off-2 && sp.end <= off+len(window) && ctx.toks[sp.start] != "or" {
				return Uncertain, true
			}
		}
		return Positive, true
	case len(r.normalQ.spans(window, nil)) > 0:
		return Negative, true
	}
	return 0, false
}

// triggerContext holds the trigger spans of one sentence.
type triggerContext struct {
	toks                                        []string
	preNeg, postNeg, preNegUnc, preUnc, postUnc []span
	terms                                       []span
	question                                    bool
}

// clause returns the bounds of the clause around [start, end): from after
// the last scope terminator before it to the first one after it.
func (c triggerContext) clause(start, end int) (left, right int) {
	right = len(c.toks)
	for _, t := range c.terms {
		if t.end <= start && t.end > left {
			left = t.end
		}
		if t.start >= end && t.start < right {
			right = t.start
		}
	}
	return left, right
}

// label classifies a direct mention at [start, end).
func (c triggerContext) label(start, end int) Label {
	left, right := c.clause(start, end)
	for _, sp := range c.preNegUnc {
		if sp.end <= start && start-sp.end <= preNegUncWin && sp.start >= left ||
			sp.start >= end && sp.start-end <= preNegUncWin && sp.start < right {
			return Uncertain
		}
	}
	for _, sp := range c.preNeg {
		if sp.end <= start && sp.start >= left {
			return Negative
		}
	}
	for _, sp := range c.postNeg {
		if sp.start >= end && sp.start-end <= postNegWindow && sp.start < right {
			return Negative
		}
	}
	if c.question {
		return Uncertain
	}
	for _, sp := range c.preUnc {
		w := preUncWindow
		if c.toks[sp.start] == "or" || c.toks[sp.start] == "and" {
			w = orWindow
		}
		if sp.end <= start && start-sp.end <= w && sp.start >= left {
			return Uncertain
		}
	}
	for _, sp := range c.postUnc {
		w := postUncWindow
		if c.toks[sp.start] == "or" {
			w = orWindow
		}
		if sp.start >= end && sp.start-end <= w && sp.start < right {
			return Uncertain
		}
	}
	return Positive
}
