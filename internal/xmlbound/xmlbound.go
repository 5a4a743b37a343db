// Package xmlbound bounds the nesting of the XML Clinsight reads
// (PubMed, JATS full texts, Open-i reports). encoding/xml keeps an entry
// per open element, and its Skip and DecodeElement follow the nesting
// whole: a PubMed file of 2 million nested elements (14 MB, under the
// per-record byte bound) took 12.7 s and 373 MB in clinsight evidence
// import before this bound. Real files nest some tens of elements deep.
package xmlbound

import (
	"encoding/xml"
	"fmt"
)

// MaxDepth is the default bound: far deeper than any PubMed, JATS or
// Open-i file (under 30 levels), far below what costs memory.
const MaxDepth = 256

// DepthError is the error of an element nested deeper than the bound.
type DepthError struct {
	// Max is the bound.
	Max int
	// Line is the line of the input where the element deeper than the
	// bound opens.
	Line int
}

// Error says how deep; the caller says where (Line), as it does for its
// other errors.
func (e *DepthError) Error() string {
	return fmt.Sprintf("the XML is nested more than %d levels deep", e.Max)
}

// depthReader passes on the tokens of a decoder, counting the elements
// open, and fails once more than max are.
type depthReader struct {
	raw   *xml.Decoder
	max   int
	depth int
	err   error
}

func (r *depthReader) Token() (xml.Token, error) {
	if r.err != nil {
		return nil, r.err
	}
	tok, err := r.raw.Token()
	switch tok.(type) {
	case xml.StartElement:
		if r.depth++; r.depth > r.max {
			line, _ := r.raw.InputPos()
			r.err = &DepthError{Max: r.max, Line: line}
			return nil, r.err
		}
	case xml.EndElement:
		r.depth--
	}
	return tok, err
}

// NewDecoder returns a decoder of the tokens of raw (set up by the caller:
// Strict, Entity, CharsetReader) that fails with a *DepthError once more
// than max elements are open, max ≤ 0 meaning MaxDepth. Every way of
// reading it is bounded: Token, Skip, Decode and DecodeElement. raw
// checks the XML as before; the returned decoder only passes on its
// tokens. Ask raw, not the returned decoder, for InputPos and
// InputOffset, and read no token from raw directly.
func NewDecoder(raw *xml.Decoder, max int) *xml.Decoder {
	if max <= 0 {
		max = MaxDepth
	}
	d := xml.NewTokenDecoder(&depthReader{raw: raw, max: max})
	d.Strict = raw.Strict
	return d
}
