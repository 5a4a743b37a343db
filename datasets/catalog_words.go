package datasets

import (
	"regexp"
	"strings"
	"sync"
)

// The words of identifiers, for documentation generated from a database's
// structure: "labevents" is read "lab events", "valueuom" "value unit of
// measure". An identifier is split at underscores and case changes
// (docNameWords), then each run of letters is split into known words
// (segment), then general abbreviations are written out (nameAbbreviations).
//
// The known words (nameLexicon) are general, never the names of one schema:
// the words of the OMOP CDM 5.4 documentation (a standard clinical data
// model, embedded for its own profile), English function words, the written
// out abbreviations, and the words of the database's own sampled values.

// nameAbbreviations are general abbreviations of clinical and data
// vocabulary found in column and table names, written out. They are not the
// abbreviations of one schema; ambiguous ones ("hr": hour or heart rate,
// "pt": patient or prothrombin time, "org": organism or organisation) are
// left out. Chosen on the dev half of the EHRSQL valid questions (see
// app/cohort RetrievalHalf).
var nameAbbreviations = map[string]string{
	"adm":   "admission",
	"admit": "admission",
	"amt":   "amount",
	"bmi":   "body mass index",
	"bp":    "blood pressure",
	"cnt":   "count",
	"dept":  "department",
	"desc":  "description",
	"descr": "description",
	"diag":  "diagnosis",
	"disch": "discharge",
	"dob":   "date of birth",
	"dod":   "date of death",
	"dt":    "date",
	"dttm":  "date time",
	"dur":   "duration",
	"dx":    "diagnosis",
	"ed":    "emergency department",
	"enc":   "encounter",
	"er":    "emergency room",
	"freq":  "frequency",
	"hosp":  "hospital",
	"ht":    "height",
	"hx":    "history",
	"icu":   "intensive care unit",
	"id":    "identifier",
	"img":   "image",
	"info":  "information",
	"lab":   "laboratory",
	"loc":   "location",
	"los":   "length of stay",
	"med":   "medication",
	"meds":  "medications",
	"micro": "microbiology",
	"nbr":   "number",
	"num":   "number",
	"obs":   "observation",
	"proc":  "procedure",
	"px":    "procedure",
	"qty":   "quantity",
	"ref":   "reference",
	"rx":    "prescription",
	"seq":   "sequence",
	"spec":  "specimen",
	"temp":  "temperature",
	"tx":    "treatment",
	"uom":   "unit of measure",
	"val":   "value",
	"wt":    "weight",
}

// nameFunctionWords are the English function words that identifiers glue
// to others ("intime", "linksto").
var nameFunctionWords = strings.Fields(`a an and as at by for from in into of off on or out over per the to under up with`)

// nameWordRE matches a word of a text.
var nameWordRE = regexp.MustCompile(`[a-z]+`)

// generalNameWords returns the general known words (see the top of this
// file), read once from the embedded OMOP CDM documentation.
var generalNameWords = sync.OnceValue(func() map[string]bool {
	words := map[string]bool{}
	if data, err := docFiles.ReadFile("docs/omop-cdm-5.4.yaml"); err == nil {
		for _, w := range nameWordRE.FindAllString(strings.ToLower(string(data)), -1) {
			if len(w) >= 2 {
				words[w] = true
			}
		}
	}
	for a, full := range nameAbbreviations {
		words[a] = true
		for _, w := range strings.Fields(full) {
			words[w] = true
		}
	}
	return words
})

// nameLexicon is the set of known words used to split identifiers: the
// general words and the words of the catalog's sampled values.
type nameLexicon struct {
	set map[string]bool
}

// newNameLexicon returns the lexicon of a catalog: the general words and
// the words of its sampled values that are not its own identifiers.
func newNameLexicon(cat *Catalog) *nameLexicon {
	lx := &nameLexicon{set: map[string]bool{}}
	for w := range generalNameWords() {
		lx.set[w] = true
	}
	// Values that name a table or column ("inputevents" in a column saying
	// which table an item belongs to) are identifiers, not known words.
	names := map[string]bool{}
	for _, t := range cat.Tables {
		names[strings.Join(nameWordRE.FindAllString(strings.ToLower(t.Name), -1), "")] = true
		for _, c := range t.Columns {
			names[strings.Join(nameWordRE.FindAllString(strings.ToLower(c.Name), -1), "")] = true
		}
	}
	for _, t := range cat.Tables {
		for _, c := range t.Columns {
			for _, v := range c.Samples {
				for _, w := range nameWordRE.FindAllString(strings.ToLower(v), -1) {
					if len(w) >= 2 && !names[w] {
						lx.set[w] = true
					}
				}
			}
		}
	}
	return lx
}

// known reports whether w or its singular is a known word.
func (lx *nameLexicon) known(w string) bool {
	if lx.set[w] {
		return true
	}
	if s, ok := strings.CutSuffix(w, "es"); ok && len(s) >= 2 && lx.set[s] {
		return true
	}
	if s, ok := strings.CutSuffix(w, "s"); ok && len(s) >= 2 && lx.set[s] {
		return true
	}
	return false
}

// function reports whether w is an English function word.
func (lx *nameLexicon) function(w string) bool {
	for _, f := range nameFunctionWords {
		if f == w {
			return true
		}
	}
	return false
}

// Costs of a segmentation: a known word costs nameKnownCost, a function
// word a little more (so that it does not break a known word apart), and an
// unknown stretch of n letters nameUnknownCost + n*nameUnknownPerLetter (so
// that an unknown stretch is split off only beside a known word), and one
// shorter than nameMinUnknown letters cannot be split off at all.
const (
	nameMinUnknown       = 3
	nameNoSplitCost      = 1000.0
	nameKnownCost        = 1.0
	nameFunctionCost     = 1.5
	nameUnknownCost      = 1.0
	nameUnknownPerLetter = 0.5
	// nameMaxRun bounds the letters of a run that are segmented.
	nameMaxRun = 64
)

// segment splits a run of lower-case letters into known words with the
// least cost (dynamic programming over the split points); a known run is
// kept whole.
func (lx *nameLexicon) segment(run string) []string {
	if len(run) < 4 || len(run) > nameMaxRun || lx.known(run) || lx.function(run) {
		return []string{run}
	}
	n := len(run)
	cost := make([]float64, n+1)
	back := make([]int, n+1)
	for i := 1; i <= n; i++ {
		cost[i] = -1
		for j := 0; j < i; j++ {
			piece := run[j:i]
			var c float64
			switch {
			case len(piece) >= 2 && lx.known(piece):
				c = nameKnownCost
			case len(piece) >= 2 && lx.function(piece):
				c = nameFunctionCost
			case len(piece) < nameMinUnknown && (j > 0 || i < n):
				c = nameNoSplitCost // "label" is not "lab" + "el"
			default:
				c = nameUnknownCost + nameUnknownPerLetter*float64(len(piece))
			}
			if total := cost[j] + c; cost[i] < 0 || total < cost[i] {
				cost[i], back[i] = total, j
			}
		}
	}
	var pieces []string
	for i := n; i > 0; i = back[i] {
		pieces = append(pieces, run[back[i]:i])
	}
	for l, r := 0, len(pieces)-1; l < r; l, r = l+1, r-1 {
		pieces[l], pieces[r] = pieces[r], pieces[l]
	}
	// Adjacent unknown pieces were one stretch.
	var out []string
	for _, p := range pieces {
		if len(out) > 0 && !lx.known(p) && !lx.function(p) && !lx.known(out[len(out)-1]) && !lx.function(out[len(out)-1]) {
			out[len(out)-1] += p
			continue
		}
		out = append(out, p)
	}
	return out
}

// words returns the words of an identifier, split and segmented
// ("first_careunit" gives "first care unit").
func (lx *nameLexicon) words(name string) []string {
	var out []string
	for _, w := range strings.Fields(docNameWords(name)) {
		out = append(out, lx.segment(w)...)
	}
	return out
}

// expanded returns words with the general abbreviations written out
// ("value uom" gives "value unit of measure"), and whether any was.
func expandAbbreviations(words []string) ([]string, bool) {
	var out []string
	changed := false
	for _, w := range words {
		if full, ok := nameAbbreviations[w]; ok {
			out = append(out, strings.Fields(full)...)
			changed = true
			continue
		}
		out = append(out, w)
	}
	return out, changed
}
