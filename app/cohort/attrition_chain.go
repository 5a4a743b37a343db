package cohort

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// A cohort statement written as an ordered list of criteria (issue 19 item
// 1): a chain of common table expressions, the first the base population,
// each later one a criterion that reads from the one before it, then the
// statement that selects from the last:
//
//	WITH base AS (SELECT subject_id, anchor_age FROM patients),
//	     women AS (SELECT * FROM base WHERE subject_id IN (…)),
//	     aged_65 AS (SELECT * FROM women WHERE anchor_age >= 65)
//	SELECT COUNT(DISTINCT subject_id) FROM aged_65
//
// The chain is read with the port of SQLite's tokenizer (datasets.TokenizeSQL),
// never with patterns over the text, and rebuilt without the steps a user
// switches off: the next step then reads from the nearest step before it
// that is on.

// MaxChainSteps bounds the steps of a chain (base population included);
// a longer WITH list is not treated as a chain of criteria.
const MaxChainSteps = 20

// maxCriterionChars bounds the words of a criterion.
const maxCriterionChars = 200

// ErrNoChain says that a statement is not a chain of criteria.
var ErrNoChain = errors.New("the statement is not a list of criteria (a base population, then one WITH step per criterion, each reading from the step before)")

// Chain is a cohort statement parsed into its steps.
type Chain struct {
	src   string
	steps []chainStep
	// final is the statement after the WITH list; finalRefs its references
	// to steps.
	final     span
	finalRefs []stepRef
}

// ChainStep describes one step of a chain.
type ChainStep struct {
	// Number is the step's position: 0 is the base population, 1 the
	// first criterion.
	Number int `json:"step"`
	// Name is the common table expression's name.
	Name string `json:"name"`
	// Criterion says in words what the step keeps: the comment written
	// before it (-- women aged 65 or more), else its name in words.
	Criterion string `json:"criterion"`
	// SQL is the step's statement (inside its parentheses).
	SQL string `json:"sql"`
}

type span struct{ start, end int }

// stepRef is a reference to a step's name at bytes [start, end).
type stepRef struct {
	span
	step int
}

type chainStep struct {
	name      string
	nameText  string // the name as written (quoted or not)
	criterion string
	columns   string // "(a, b)" after the name, or ""
	head      string // "AS", "AS MATERIALIZED", "AS NOT MATERIALIZED"
	body      span
	refs      []stepRef
}

// ParseChain reads a statement as a chain of criteria; the error is
// ErrNoChain (wrapped with the reason) when it is not one: no WITH, a
// RECURSIVE one, fewer than two steps or more than MaxChainSteps, a step
// that does not read from the step before it, or a final statement that
// does not read from the last step.
func ParseChain(sql string) (*Chain, error) {
	src := strings.TrimSpace(sql)
	toks := datasets.TokenizeSQL(src)
	notChain := func(why string) (*Chain, error) { return nil, fmt.Errorf("%w: %s", ErrNoChain, why) }
	// A trailing semicolon is allowed; anything after it is not.
	for i, t := range toks {
		if t.Kind == datasets.TokenSemicolon {
			if i != len(toks)-1 {
				return notChain("more than one statement")
			}
			toks = toks[:i]
		}
	}
	word := func(i int) string {
		if i < len(toks) && toks[i].Kind == datasets.TokenWord {
			return strings.ToUpper(toks[i].Text(src))
		}
		return ""
	}
	punct := func(i int, p string) bool {
		return i < len(toks) && toks[i].Kind == datasets.TokenPunct && toks[i].Text(src) == p
	}
	// closing returns the index of the parenthesis closing the one at i.
	closing := func(i int) int {
		depth := 0
		for j := i; j < len(toks); j++ {
			switch {
			case punct(j, "("):
				depth++
			case punct(j, ")"):
				depth--
				if depth == 0 {
					return j
				}
			}
		}
		return -1
	}
	if word(0) != "WITH" {
		return notChain("it does not start with WITH")
	}
	if word(1) == "RECURSIVE" {
		return notChain("a recursive WITH")
	}
	c := &Chain{src: src}
	i := 1
	for {
		if len(c.steps) == MaxChainSteps {
			return notChain(fmt.Sprintf("more than %d steps", MaxChainSteps))
		}
		if i >= len(toks) {
			return notChain("the WITH list is cut short")
		}
		name, ok := toks[i].Identifier(src)
		if !ok || name == "" {
			return notChain("a step has no name")
		}
		st := chainStep{name: name, nameText: toks[i].Text(src), criterion: commentBefore(src[toks[i-1].End:toks[i].Start])}
		i++
		if punct(i, "(") { // a column list
			j := closing(i)
			if j < 0 {
				return notChain("unbalanced parentheses")
			}
			st.columns = src[toks[i].Start:toks[j].End]
			i = j + 1
		}
		if word(i) != "AS" {
			return notChain("a step without AS")
		}
		st.head = "AS"
		i++
		switch {
		case word(i) == "MATERIALIZED":
			st.head += " MATERIALIZED"
			i++
		case word(i) == "NOT" && word(i+1) == "MATERIALIZED":
			st.head += " NOT MATERIALIZED"
			i += 2
		}
		if !punct(i, "(") {
			return notChain("a step without its statement in parentheses")
		}
		j := closing(i)
		if j < 0 {
			return notChain("unbalanced parentheses")
		}
		st.body = span{toks[i].End, toks[j].Start}
		c.steps = append(c.steps, st)
		i = j + 1
		if punct(i, ",") {
			i++
			continue
		}
		break
	}
	if word(i) != "SELECT" {
		return notChain("the WITH list is not followed by a SELECT")
	}
	c.final = span{toks[i].Start, len(src)}
	if len(toks) > 0 {
		c.final.end = toks[len(toks)-1].End
	}
	// References: a step's name used as a table (not a function, not a
	// column after a dot).
	refsIn := func(sp span, before int) []stepRef {
		var out []stepRef
		for k, t := range toks {
			if t.Start < sp.start || t.End > sp.end {
				continue
			}
			id, ok := t.Identifier(src)
			if !ok || (k > 0 && punct(k-1, ".")) || (t.Kind == datasets.TokenWord && punct(k+1, "(")) {
				continue
			}
			for s := 0; s < before; s++ {
				if strings.EqualFold(id, c.steps[s].name) {
					out = append(out, stepRef{span{t.Start, t.End}, s})
					break
				}
			}
		}
		return out
	}
	if len(c.steps) < 2 {
		return notChain("a single step (a base population with no criterion)")
	}
	for s := range c.steps {
		for _, o := range c.steps[:s] {
			if strings.EqualFold(o.name, c.steps[s].name) {
				return notChain("two steps share the name " + c.steps[s].name)
			}
		}
		c.steps[s].refs = refsIn(c.steps[s].body, s)
		if s > 0 && !refersTo(c.steps[s].refs, s-1) {
			return notChain(fmt.Sprintf("the step %s does not read from the step before it (%s)", c.steps[s].name, c.steps[s-1].name))
		}
	}
	c.finalRefs = refsIn(c.final, len(c.steps))
	if !refersTo(c.finalRefs, len(c.steps)-1) {
		return notChain("the final SELECT does not read from the last step")
	}
	return c, nil
}

func refersTo(refs []stepRef, step int) bool {
	for _, r := range refs {
		if r.step == step {
			return true
		}
	}
	return false
}

// commentBefore returns the text of the comments in gap (the white space
// and comments between two tokens), joined by spaces: "-- women" and
// "/* women */" both give "women".
func commentBefore(gap string) string {
	var parts []string
	for rest := gap; rest != ""; {
		switch {
		case strings.HasPrefix(rest, "--"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			parts = append(parts, rest[2:end])
			rest = rest[end:]
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				parts = append(parts, rest[2:])
				rest = ""
				continue
			}
			parts = append(parts, rest[2:2+end])
			rest = rest[2+end+2:]
		default:
			rest = rest[1:]
		}
	}
	text := strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	text = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(text, "Criterion:"), "criterion:"))
	return clip(text, maxCriterionChars)
}

// humanName turns a step's name into words: age_65_plus → "age 65 plus".
func humanName(name string) string {
	return strings.Join(strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }), " ")
}

// Steps describes the steps in order.
func (c *Chain) Steps() []ChainStep {
	out := make([]ChainStep, len(c.steps))
	for i, s := range c.steps {
		words := s.criterion
		if words == "" {
			words = humanName(s.name)
		}
		out[i] = ChainStep{Number: i, Name: s.name, Criterion: words, SQL: strings.TrimSpace(c.src[s.body.start:s.body.end])}
	}
	return out
}

// checkOff validates the steps to switch off and returns them as a set.
func (c *Chain) checkOff(off []int) (map[int]bool, error) {
	set := map[int]bool{}
	for _, n := range off {
		switch {
		case n == 0:
			return nil, errors.New("the base population (step 0) cannot be switched off")
		case n < 0 || n >= len(c.steps):
			return nil, fmt.Errorf("there is no step %d: the criteria are steps 1 to %d", n, len(c.steps)-1)
		}
		set[n] = true
	}
	return set, nil
}

// target returns the step that stands for step s when the steps of off
// are switched off: s itself, or the nearest step before it that is on.
func target(s int, off map[int]bool) int {
	for s > 0 && off[s] {
		s--
	}
	return s
}

// rewrite returns the text of sp with each reference to a step replaced by
// the name of the step standing for it.
func (c *Chain) rewrite(sp span, refs []stepRef, off map[int]bool) string {
	var b strings.Builder
	at := sp.start
	for _, r := range refs {
		b.WriteString(c.src[at:r.start])
		t := target(r.step, off)
		if t == r.step {
			b.WriteString(c.src[r.start:r.end])
		} else {
			b.WriteString(c.steps[t].nameText)
		}
		at = r.end
	}
	b.WriteString(c.src[at:sp.end])
	return b.String()
}

// with returns the WITH list of the steps 0..upto that are on, rebuilt.
func (c *Chain) with(upto int, off map[int]bool) string {
	var b strings.Builder
	b.WriteString("WITH ")
	first := true
	for s := 0; s <= upto; s++ {
		if off[s] {
			continue
		}
		if !first {
			b.WriteString(",\n")
		}
		first = false
		st := c.steps[s]
		b.WriteString(st.nameText)
		if st.columns != "" {
			b.WriteString(" " + st.columns)
		}
		b.WriteString(" " + st.head + " (")
		b.WriteString(c.rewrite(st.body, st.refs, off))
		b.WriteString(")")
	}
	return b.String()
}

// Without returns the statement with the steps of off (numbers from 1)
// switched off: each is left out, and what read from it reads from the
// nearest step before it that is on.
func (c *Chain) Without(off []int) (string, error) {
	set, err := c.checkOff(off)
	if err != nil {
		return "", err
	}
	return c.with(len(c.steps)-1, set) + "\n" + c.rewrite(c.final, c.finalRefs, set), nil
}

// stepQuery returns a statement over the steps up to s (which must be on)
// that ends with tail applied to step s: "SELECT … FROM <step s>".
func (c *Chain) stepQuery(s int, off map[int]bool, selectList string) string {
	return c.with(s, off) + "\nSELECT " + selectList + " FROM " + c.steps[s].nameText
}
