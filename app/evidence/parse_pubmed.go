package evidence

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/internal/xmlbound"
)

// PubMedReader streams the articles of a PubmedArticleSet. It reads one
// PubmedArticle (or PubmedBookArticle) element at a time, so files of any
// size are read in constant memory.
type PubMedReader struct {
	// d reads the tokens, its nesting bounded (xmlbound); raw is the
	// decoder under it, which knows the line.
	d, raw *xml.Decoder
	budget *recordBudget
	n      int
	begun  bool
}

// NewPubMedReader returns a reader of the PubMed XML in r.
func NewPubMedReader(r io.Reader) *PubMedReader {
	budget := newRecordBudget(r, maxRecordBytes, errRecordTooLarge)
	raw := newXMLDecoder(budget)
	return &PubMedReader{d: xmlbound.NewDecoder(raw, maxXMLDepth), raw: raw, budget: budget}
}

// newXMLDecoder returns the decoder of a literature XML file: HTML's named
// entities accepted (&nbsp; and friends in hand-edited files), UTF-8 only.
func newXMLDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.Entity = xml.HTMLEntity
	d.CharsetReader = func(charset string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(charset) {
		case "utf-8", "us-ascii", "ascii":
			return in, nil
		}
		return nil, fmt.Errorf("character set %q is not supported (save the file as UTF-8)", charset)
	}
	return d
}

// mixedText is element content with inline markup (<i>, <sup>, ...)
// flattened to its text.
type mixedText string

// UnmarshalXML collects the character data of the element and its
// children.
func (m *mixedText) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	var b strings.Builder
	depth := 1
	for depth > 0 {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			depth--
		case xml.CharData:
			b.Write(t)
		}
	}
	*m = mixedText(cleanSpace(b.String()))
	return nil
}

type xmlAbstractText struct {
	Label       string    `xml:"Label,attr"`
	NlmCategory string    `xml:"NlmCategory,attr"`
	Text        mixedText `xml:",any"`
}

// UnmarshalXML reads the attributes and the flattened text.
func (a *xmlAbstractText) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	for _, at := range start.Attr {
		switch at.Name.Local {
		case "Label":
			a.Label = at.Value
		case "NlmCategory":
			a.NlmCategory = at.Value
		}
	}
	return a.Text.UnmarshalXML(d, start)
}

type xmlArticle struct {
	MedlineCitation struct {
		PMID    string `xml:"PMID"`
		Article struct {
			Journal struct {
				Title           string `xml:"Title"`
				ISOAbbreviation string `xml:"ISOAbbreviation"`
				PubDate         struct {
					Year        string `xml:"Year"`
					MedlineDate string `xml:"MedlineDate"`
				} `xml:"JournalIssue>PubDate"`
			} `xml:"Journal"`
			ArticleTitle mixedText         `xml:"ArticleTitle"`
			VernacularT  mixedText         `xml:"VernacularTitle"`
			Abstract     []xmlAbstractText `xml:"Abstract>AbstractText"`
			Authors      []struct {
				LastName       string `xml:"LastName"`
				ForeName       string `xml:"ForeName"`
				Initials       string `xml:"Initials"`
				CollectiveName string `xml:"CollectiveName"`
			} `xml:"AuthorList>Author"`
			PublicationTypes []string `xml:"PublicationTypeList>PublicationType"`
			ELocationIDs     []struct {
				Type  string `xml:"EIdType,attr"`
				Value string `xml:",chardata"`
			} `xml:"ELocationID"`
			ArticleDate []struct {
				Year string `xml:"Year"`
			} `xml:"ArticleDate"`
		} `xml:"Article"`
		MeshHeadings []struct {
			Descriptor string   `xml:"DescriptorName"`
			Qualifiers []string `xml:"QualifierName"`
		} `xml:"MeshHeadingList>MeshHeading"`
		Keywords []mixedText `xml:"KeywordList>Keyword"`
	} `xml:"MedlineCitation"`
	// PubmedBookArticle
	BookDocument struct {
		PMID         string            `xml:"PMID"`
		ArticleTitle mixedText         `xml:"ArticleTitle"`
		BookTitle    mixedText         `xml:"Book>BookTitle"`
		Year         string            `xml:"Book>PubDate>Year"`
		Abstract     []xmlAbstractText `xml:"Abstract>AbstractText"`
	} `xml:"BookDocument"`
	ArticleIDs []struct {
		Type  string `xml:"IdType,attr"`
		Value string `xml:",chardata"`
	} `xml:"PubmedData>ArticleIdList>ArticleId"`
}

// Next returns the next article, io.EOF after the last one.
func (p *PubMedReader) Next() (Record, error) {
	p.budget.reset()
	for {
		line, _ := p.raw.InputPos()
		tok, err := p.d.Token()
		if err == io.EOF {
			if !p.begun {
				return Record{}, &ParseError{Line: line, Err: errors.New("no PubmedArticleSet element: this is not PubMed XML")}
			}
			return Record{}, io.EOF
		}
		if err != nil {
			return Record{}, p.syntaxErr(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "PubmedArticleSet", "PubmedBookArticleSet":
			p.begun = true
			continue
		case "PubmedArticle", "PubmedBookArticle":
			if !p.begun {
				p.begun = true // a bare article is accepted too
			}
		case "DeleteCitation":
			if err := p.d.Skip(); err != nil {
				return Record{}, p.syntaxErr(err)
			}
			continue
		default:
			if !p.begun {
				return Record{}, &ParseError{Line: line, Err: fmt.Errorf("the root element is <%s>, not <PubmedArticleSet>: this is not PubMed XML", se.Name.Local)}
			}
			if err := p.d.Skip(); err != nil {
				return Record{}, p.syntaxErr(err)
			}
			continue
		}
		p.n++
		var a xmlArticle
		if err := p.d.DecodeElement(&a, &se); err != nil {
			return Record{}, &ParseError{Record: p.n, Line: line, Err: syntaxCause(err)}
		}
		rec := a.record()
		rec.Line = line
		if rec.PMID == "" {
			return Record{}, recordErr(p.n, &rec, line, errors.New("the article has no PMID"))
		}
		if !isPMID(rec.PMID) {
			return Record{}, recordErr(p.n, nil, line, fmt.Errorf("PMID %q is not a number", rec.PMID))
		}
		if err := rec.Validate(); err != nil {
			return Record{}, recordErr(p.n, &rec, line, err)
		}
		return rec, nil
	}
}

func (p *PubMedReader) syntaxErr(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return &ParseError{Record: p.n, Line: se.Line, Err: fmt.Errorf("malformed XML: %s", se.Msg)}
	}
	var de *xmlbound.DepthError
	if errors.As(err, &de) {
		// Between records (a skipped element): no record is at fault.
		return &ParseError{Line: de.Line, Err: fmt.Errorf("%w: is this a PubMed file?", err)}
	}
	line, _ := p.raw.InputPos()
	return &ParseError{Record: p.n, Line: line, Err: err}
}

func syntaxCause(err error) error {
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("malformed XML at line %d: %s", se.Line, se.Msg)
	}
	var de *xmlbound.DepthError
	if errors.As(err, &de) {
		return fmt.Errorf("%w at line %d", err, de.Line)
	}
	return err
}

func (a *xmlArticle) record() Record {
	mc := &a.MedlineCitation
	art := &mc.Article
	r := Record{PMID: strings.TrimSpace(mc.PMID)}
	if r.PMID == "" && a.BookDocument.PMID != "" {
		b := &a.BookDocument
		r.PMID = strings.TrimSpace(b.PMID)
		r.Title = string(b.ArticleTitle)
		if r.Title == "" {
			r.Title = string(b.BookTitle)
		}
		r.Journal = string(b.BookTitle)
		r.Year = parseYear(b.Year)
		r.Sections = sections(b.Abstract)
		r.PublicationTypes = []string{"Book Chapter"}
		return r
	}
	r.Title = strings.TrimSpace(string(art.ArticleTitle))
	if r.Title == "" || r.Title == "[Not Available]." {
		r.Title = string(art.VernacularT)
	}
	r.Title = strings.TrimSuffix(strings.TrimPrefix(r.Title, "["), "].") // translated titles: "[Title]."
	r.Sections = sections(art.Abstract)
	r.Journal = cleanSpace(art.Journal.Title)
	if r.Journal == "" {
		r.Journal = cleanSpace(art.Journal.ISOAbbreviation)
	}
	r.Year = parseYear(art.Journal.PubDate.Year)
	if r.Year == 0 {
		r.Year = parseYear(art.Journal.PubDate.MedlineDate)
	}
	if r.Year == 0 && len(art.ArticleDate) > 0 {
		r.Year = parseYear(art.ArticleDate[0].Year)
	}
	for _, au := range art.Authors {
		switch {
		case au.CollectiveName != "":
			r.Authors = append(r.Authors, cleanSpace(au.CollectiveName))
		case au.LastName != "":
			name := cleanSpace(au.LastName + " " + au.ForeName)
			if au.ForeName == "" {
				name = cleanSpace(au.LastName + " " + au.Initials)
			}
			r.Authors = append(r.Authors, name)
		}
	}
	for _, pt := range art.PublicationTypes {
		if pt = cleanSpace(pt); pt != "" {
			r.PublicationTypes = append(r.PublicationTypes, pt)
		}
	}
	for _, mh := range mc.MeshHeadings {
		d := cleanSpace(mh.Descriptor)
		if d == "" {
			continue
		}
		if len(mh.Qualifiers) == 0 {
			r.MeSH = append(r.MeSH, d)
		}
		for _, q := range mh.Qualifiers {
			r.MeSH = append(r.MeSH, d+"/"+cleanSpace(q))
		}
	}
	for _, k := range mc.Keywords {
		if k != "" {
			r.Keywords = append(r.Keywords, string(k))
		}
	}
	for _, id := range art.ELocationIDs {
		if strings.EqualFold(id.Type, "doi") {
			r.DOI = strings.TrimSpace(id.Value)
		}
	}
	for _, id := range a.ArticleIDs {
		if strings.EqualFold(id.Type, "doi") && r.DOI == "" {
			r.DOI = strings.TrimSpace(id.Value)
		}
	}
	return r
}

func sections(ab []xmlAbstractText) []Section {
	var out []Section
	for _, s := range ab {
		if s.Text == "" {
			continue
		}
		out = append(out, Section{Label: cleanSpace(s.Label), Category: strings.ToUpper(strings.TrimSpace(s.NlmCategory)), Text: string(s.Text)})
	}
	return out
}
