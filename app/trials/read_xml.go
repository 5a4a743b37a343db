package trials

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/internal/xmlbound"
)

// ctgovXML is a ClinicalTrials.gov classic XML record (<clinical_study>),
// the format of the TREC 2021 collection; only the fields Clinsight reads.
type ctgovXML struct {
	NCTID         string   `xml:"id_info>nct_id"`
	BriefTitle    string   `xml:"brief_title"`
	OfficialTitle string   `xml:"official_title"`
	Summary       string   `xml:"brief_summary>textblock"`
	Description   string   `xml:"detailed_description>textblock"`
	Status        string   `xml:"overall_status"`
	Phase         string   `xml:"phase"`
	Conditions    []string `xml:"condition"`
	Interventions []struct {
		Type string `xml:"intervention_type"`
		Name string `xml:"intervention_name"`
	} `xml:"intervention"`
	Keywords      []string `xml:"keyword"`
	ConditionMeSH []string `xml:"condition_browse>mesh_term"`
	DrugMeSH      []string `xml:"intervention_browse>mesh_term"`
	Eligibility   struct {
		Criteria string `xml:"criteria>textblock"`
		Gender   string `xml:"gender"`
		MinAge   string `xml:"minimum_age"`
		MaxAge   string `xml:"maximum_age"`
	} `xml:"eligibility"`
}

// readCTGovXML streams the <clinical_study> elements of r (one per file in
// the registry's downloads; any number is accepted) and passes each trial
// to fn. A record larger than the record bound is refused (the XML
// decoder holds a text in memory whole, so texts cannot be cut as they
// stream; they are cut once read).
func readCTGovXML(ctx context.Context, r io.Reader, src string, lim *readLimits, sink recordSink) error {
	budget := &boundedReader{r: r, left: int64(lim.recordBytes()), err: recordTooLarge(lim.recordBytes())}
	raw := xml.NewDecoder(budget)
	raw.Strict = false
	// Nesting bounded (xmlbound): encoding/xml keeps an entry per open
	// element and DecodeElement follows the nesting whole, within the
	// record's byte budget (millions of levels in a few MB).
	dec := xmlbound.NewDecoder(raw, 0)
	n := 0
	invalid := func(line int, err error) error {
		if errors.Is(err, errRecordTooLarge) {
			return &RecordError{File: src, Line: line, Err: err}
		}
		return &RecordError{File: src, Line: line, Err: fmt.Errorf("invalid XML: %w", err)}
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return invalid(rawLine(raw), err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "clinical_study" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		line := rawLine(raw)
		var rec ctgovXML
		if err := dec.DecodeElement(&rec, &se); err != nil {
			return invalid(line, err)
		}
		size := int64(lim.recordBytes()) - budget.left
		budget.left = int64(lim.recordBytes()) // the next record's
		n++
		err = sink(func(*recordDecoder) (Trial, []Cut, error) {
			t := rec.trial()
			t.Source = src
			cuts, err := finishTrial(&t, lim)
			if err != nil {
				return Trial{}, nil, &RecordError{File: src, Line: line, ID: t.ID, Err: err}
			}
			return t, recordCuts(src, line, t.ID, nil, cuts), nil
		}, int(size))
		if err != nil {
			return err
		}
	}
	if n == 0 {
		return &RecordError{File: src, Err: errors.New("no <clinical_study> record found")}
	}
	return nil
}

// rawLine is the line the decoder reading the file has reached.
func rawLine(dec *xml.Decoder) int {
	line, _ := dec.InputPos()
	return line
}

// trial converts the XML record.
func (x *ctgovXML) trial() Trial {
	t := Trial{
		ID:          strings.TrimSpace(x.NCTID),
		Title:       oneLine(x.BriefTitle),
		Summary:     paragraphText(x.Summary),
		Description: paragraphText(x.Description),
		Status:      oneLine(x.Status),
		Phase:       oneLine(x.Phase),
		Conditions:  cleanList(x.Conditions),
		Keywords:    cleanList(x.Keywords),
		MeSH:        cleanList(append(append([]string(nil), x.ConditionMeSH...), x.DrugMeSH...)),
	}
	if t.Title == "" {
		t.Title = oneLine(x.OfficialTitle)
	}
	for _, iv := range x.Interventions {
		t.Interventions = append(t.Interventions, iv.Name)
	}
	t.Interventions = cleanList(t.Interventions)
	t.Inclusion, t.Exclusion = SplitCriteria(x.Eligibility.Criteria)
	t.Sex = ParseSex(x.Eligibility.Gender)
	t.MinAge, _ = ParseAge(x.Eligibility.MinAge)
	t.MaxAge, _ = ParseAge(x.Eligibility.MaxAge)
	if t.Sex == SexUnknown && x.Eligibility.Gender == "" && x.Eligibility.MinAge == "" && x.Eligibility.MaxAge == "" {
		t.Sex = "" // no structured eligibility: finishTrial infers it
	} else if t.Sex == SexUnknown {
		t.Sex = SexAll
	}
	return t
}

// oneLine collapses whitespace.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// paragraphText joins the wrapped lines of a registry text block, keeping
// paragraph breaks.
func paragraphText(s string) string {
	var paras []string
	for p := range strings.SplitSeq(strings.ReplaceAll(s, "\r\n", "\n"), "\n\n") {
		if q := oneLine(p); q != "" {
			paras = append(paras, q)
		}
	}
	return strings.Join(paras, "\n")
}

// cleanList trims items, drops empty ones and duplicates (case-insensitive),
// keeping the first spelling.
func cleanList(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		it = oneLine(it)
		k := strings.ToLower(it)
		if it == "" || seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, it)
	}
	return out
}
