package evidence

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
