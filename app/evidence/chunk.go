package evidence

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Chunk is a numbered passage of a study's text: the unit a model cites
// when it extracts a value, and the unit shown beside the value.
type Chunk struct {
	// N is the chunk's number within the study, from 1 in reading order.
	N int `json:"n"`
	// Section is the heading of the section the chunk comes from
	// ("Title", "Abstract: RESULTS", "Results", "Table 2"), "" when none.
	Section string `json:"section,omitempty"`
	// Text is the passage.
	Text string `json:"text"`
}

// StudyText is one study's text split into numbered chunks for extraction:
// its full text when one was imported, else its title and abstract.
type StudyText struct {
	// ID is the record's ID in the corpus.
	ID string `json:"id"`
	// Title is the record's title.
	Title string `json:"title"`
	// FullText says whether the chunks come from an imported full text
	// (true) or from the title and abstract (false).
	FullText bool `json:"full_text"`
	// Source is the file the full text was imported from, "" for an
	// abstract.
	Source string `json:"source,omitempty"`
	// Chunks are the numbered passages, Chunks[i].N == i+1.
	Chunks []Chunk `json:"chunks"`
}

// Chunk returns the chunk numbered n, and false when there is none.
func (t StudyText) Chunk(n int) (Chunk, bool) {
	if n < 1 || n > len(t.Chunks) {
		return Chunk{}, false
	}
	return t.Chunks[n-1], true
}

// DefaultChunkChars is the longest chunk, in characters, that ChunkText
// makes when asked for no particular size, and the size of the chunks of
// imported full texts and of StudyText's abstracts.
const DefaultChunkChars = 1000

// TableCategory is the Category of a Section that holds a table: its first
// line is the caption ("Table 2. Outcomes at 12 months"), each further line
// one row with its cells joined by " | ". ChunkText splits a table only
// between rows and repeats its caption and header row in every chunk after
// the first, so that each chunk can be read on its own.
const TableCategory = "TABLE"

// ChunkText splits sections into numbered chunks, N from 1 in reading
// order: one or more chunks per section (labelled with the section's
// Label), each at most maxChars characters (DefaultChunkChars when maxChars
// ≤ 0) unless a single sentence (or table row) is longer; a "sentence" of
// more than four times maxChars (text without punctuation, as a PDF can
// give) is cut between words into pieces of at most maxChars. A section's text
// is split between paragraphs (lines) first and between sentences within a
// paragraph; a sentence ends at ".", "?" or "!" followed by a space and a
// capital letter, digit or opening bracket, but not after abbreviations
// ("et al.", "e.g.", "vs.", "Fig.", initials), so "p = 0.03", "95% CI
// 1.2–3.4" and "Smith et al. (2019)" stay whole. Sections without text make
// no chunk.
func ChunkText(sections []Section, maxChars int) []Chunk {
	if maxChars <= 0 {
		maxChars = DefaultChunkChars
	}
	var out []Chunk
	add := func(label, text string) {
		out = append(out, Chunk{N: len(out) + 1, Section: label, Text: text})
	}
	for _, s := range sections {
		var lines []string
		for _, l := range strings.Split(s.Text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		// The head a table's continuation chunks repeat.
		var head string
		if s.Category == TableCategory && len(lines) > 2 {
			head = lines[0] + "\n" + lines[1]
			if runeLen(head) > maxChars/2 {
				head = ""
			}
		}
		var b strings.Builder
		n := 0 // characters in b
		flush := func() {
			if n > 0 {
				add(s.Label, b.String())
			}
			b.Reset()
			n = 0
		}
		for li, line := range lines {
			units := []string{line}
			if s.Category != TableCategory {
				units = splitSentences(line)
			}
			units = cutRunaways(units, maxChars)
			for ui, u := range units {
				ul := runeLen(u)
				if n > 0 && n+1+ul > maxChars {
					flush()
					if head != "" && li > 1 && runeLen(head)+1+ul <= maxChars {
						b.WriteString(head)
						n = runeLen(head)
					}
				}
				if n > 0 {
					if ui == 0 {
						b.WriteByte('\n')
					} else {
						b.WriteByte(' ')
					}
					n++
				}
				b.WriteString(u)
				n += ul
			}
		}
		flush()
	}
	return out
}

// cutRunaways cuts every unit longer than four times limit between words
// into pieces of at most limit characters (within a word when a word is
// longer than limit).
func cutRunaways(units []string, limit int) []string {
	long := false
	for _, u := range units {
		long = long || runeLen(u) > 4*limit
	}
	if !long {
		return units
	}
	var out []string
	for _, u := range units {
		if runeLen(u) <= 4*limit {
			out = append(out, u)
			continue
		}
		var piece []rune
		for _, w := range strings.Fields(u) {
			for rw := []rune(w); len(rw) > 0; {
				room := limit - len(piece)
				if len(piece) > 0 {
					room-- // the space before the word
				}
				switch {
				case len(rw) <= room:
					if len(piece) > 0 {
						piece = append(piece, ' ')
					}
					piece, rw = append(piece, rw...), nil
				case len(piece) > 0:
					out, piece = append(out, string(piece)), piece[:0]
				default: // a word longer than max
					out, rw = append(out, string(rw[:limit])), rw[limit:]
				}
			}
		}
		if len(piece) > 0 {
			out = append(out, string(piece))
		}
	}
	return out
}

// runeLen is the length of s in characters.
func runeLen(s string) int { return utf8.RuneCountInString(s) }

// abbreviations are words that end with a period without ending a
// sentence (lower case, without the period).
var abbreviations = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"al": true, "e.g": true, "i.e": true, "eg": true, "ie": true, "vs": true, "cf": true, "ca": true, "approx": true,
		"fig": true, "figs": true, "no": true, "nos": true, "ref": true, "refs": true, "eq": true, "tab": true,
		"suppl": true, "vol": true, "pp": true, "p": true, "dr": true, "prof": true, "mr": true, "mrs": true,
		"ms": true, "st": true, "jr": true, "resp": true, "incl": true, "inc": true, "ltd": true, "co": true, "etc": true,
	}
})

// splitSentences splits a paragraph into its sentences (see ChunkText for
// where a sentence ends); the sentences joined by single spaces give the
// paragraph back up to white space.
func splitSentences(p string) []string {
	var out []string
	start := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c != '.' && c != '?' && c != '!' {
			continue
		}
		j := i + 1
		for j < len(p) && strings.IndexByte(`)]"'`, p[j]) >= 0 {
			j++
		}
		if j < len(p) && p[j] >= 0x80 { // ” ’ closing a quotation
			if r, size := utf8.DecodeRuneInString(p[j:]); r == '”' || r == '’' {
				j += size
			}
		}
		if j >= len(p) || (p[j] != ' ' && p[j] != '\t') {
			continue
		}
		k := j
		for k < len(p) && (p[k] == ' ' || p[k] == '\t') {
			k++
		}
		if k >= len(p) {
			continue
		}
		next, _ := utf8.DecodeRuneInString(p[k:])
		if !unicode.IsUpper(next) && !unicode.IsDigit(next) && !strings.ContainsRune(`("[“'`, next) {
			continue
		}
		if c == '.' && j == i+1 && isAbbreviation(p[start:i]) {
			continue
		}
		if s := strings.TrimSpace(p[start:j]); s != "" {
			out = append(out, s)
		}
		start = k
		i = k - 1
	}
	if s := strings.TrimSpace(p[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// isAbbreviation reports whether the word that ends text (before a period)
// is an abbreviation or an initial.
func isAbbreviation(text string) bool {
	w := text
	if i := strings.LastIndexAny(w, " \t(["); i >= 0 {
		w = w[i+1:]
	}
	if w == "" {
		return false
	}
	if utf8.RuneCountInString(w) == 1 {
		r, _ := utf8.DecodeRuneInString(w)
		return unicode.IsLetter(r) // an initial: "J. Smith"
	}
	return abbreviations()[strings.ToLower(w)]
}
