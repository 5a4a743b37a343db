package trials

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ctgovV2 is a ClinicalTrials.gov API v2 study ("protocolSection" ...);
// only the fields Clinsight reads.
type ctgovV2 struct {
	ProtocolSection v2Protocol `json:"protocolSection"`
	DerivedSection  v2Derived  `json:"derivedSection"`
}

// v2Protocol is the protocol section of an API v2 study.
type v2Protocol struct {
	Identification struct {
		NCTID         string `json:"nctId"`
		BriefTitle    string `json:"briefTitle"`
		OfficialTitle string `json:"officialTitle"`
	} `json:"identificationModule"`
	Status struct {
		Overall string `json:"overallStatus"`
	} `json:"statusModule"`
	Description struct {
		Brief    string `json:"briefSummary"`
		Detailed string `json:"detailedDescription"`
	} `json:"descriptionModule"`
	Conditions struct {
		Conditions []string `json:"conditions"`
		Keywords   []string `json:"keywords"`
	} `json:"conditionsModule"`
	Design struct {
		Phases []string `json:"phases"`
	} `json:"designModule"`
	Arms struct {
		Interventions []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"interventions"`
	} `json:"armsInterventionsModule"`
	Eligibility struct {
		Criteria string `json:"eligibilityCriteria"`
		Sex      string `json:"sex"`
		MinAge   string `json:"minimumAge"`
		MaxAge   string `json:"maximumAge"`
	} `json:"eligibilityModule"`
}

// v2Derived is the derived section of an API v2 study (the MeSH terms).
type v2Derived struct {
	ConditionBrowse struct {
		Meshes []struct {
			Term string `json:"term"`
		} `json:"meshes"`
	} `json:"conditionBrowseModule"`
	InterventionBrowse struct {
		Meshes []struct {
			Term string `json:"term"`
		} `json:"meshes"`
	} `json:"interventionBrowseModule"`
}

func (v *ctgovV2) trial() Trial {
	p := &v.ProtocolSection
	t := Trial{
		ID:          strings.TrimSpace(p.Identification.NCTID),
		Title:       oneLine(p.Identification.BriefTitle),
		Summary:     paragraphText(p.Description.Brief),
		Description: paragraphText(p.Description.Detailed),
		Status:      enumText(p.Status.Overall),
		Conditions:  cleanList(p.Conditions.Conditions),
		Keywords:    cleanList(p.Conditions.Keywords),
	}
	if t.Title == "" {
		t.Title = oneLine(p.Identification.OfficialTitle)
	}
	var phases []string
	for _, ph := range p.Design.Phases {
		phases = append(phases, enumText(ph))
	}
	t.Phase = strings.Join(phases, "/")
	for _, iv := range p.Arms.Interventions {
		t.Interventions = append(t.Interventions, iv.Name)
	}
	t.Interventions = cleanList(t.Interventions)
	for _, m := range v.DerivedSection.ConditionBrowse.Meshes {
		t.MeSH = append(t.MeSH, m.Term)
	}
	for _, m := range v.DerivedSection.InterventionBrowse.Meshes {
		t.MeSH = append(t.MeSH, m.Term)
	}
	t.MeSH = cleanList(t.MeSH)
	t.Inclusion, t.Exclusion = SplitCriteria(p.Eligibility.Criteria)
	e := p.Eligibility
	t.MinAge, _ = ParseAge(e.MinAge)
	t.MaxAge, _ = ParseAge(e.MaxAge)
	t.Sex = ParseSex(e.Sex)
	if t.Sex == SexUnknown && e.Sex == "" && e.MinAge == "" && e.MaxAge == "" {
		t.Sex = ""
	} else if t.Sex == SexUnknown {
		t.Sex = SexAll
	}
	return t
}

// enumText turns an API v2 enum ("ACTIVE_NOT_RECRUITING", "PHASE2") into
// words ("Active not recruiting", "Phase 2").
func enumText(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.ToUpper(s) != s {
		return s
	}
	w := strings.ToLower(strings.ReplaceAll(s, "_", " "))
	if rest, ok := strings.CutPrefix(w, "phase"); ok && rest != "" && rest[0] != ' ' {
		w = "phase " + rest
	}
	if w == "na" {
		return "N/A"
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

// trialGPT is a record of the TrialGPT corpora (and BIRCO's {_id, text}).
type trialGPT struct {
	ID       string        `json:"_id"`
	Title    string        `json:"title"`
	Text     string        `json:"text"`
	Metadata *trialGPTMeta `json:"metadata"`
}

// trialGPTMeta is the metadata of a TrialGPT record.
type trialGPTMeta struct {
	BriefTitle   string   `json:"brief_title"`
	Phase        string   `json:"phase"`
	Drugs        string   `json:"drugs"`
	Diseases     string   `json:"diseases"`
	DrugsList    []string `json:"drugs_list"`
	DiseasesList []string `json:"diseases_list"`
	Inclusion    string   `json:"inclusion_criteria"`
	Exclusion    string   `json:"exclusion_criteria"`
	Summary      string   `json:"brief_summary"`
}

func (g *trialGPT) trial() Trial {
	t := Trial{ID: strings.TrimSpace(g.ID), Title: oneLine(g.Title)}
	m := g.Metadata
	if m == nil {
		// BIRCO: free text only (summary and description).
		t.Description = paragraphText(g.Text)
		return t
	}
	if t.Title == "" {
		t.Title = oneLine(m.BriefTitle)
	}
	t.Phase = oneLine(m.Phase)
	// "diseases" keeps items with commas ("Heart Failure, Congestive")
	// that "diseases_list" splits.
	t.Conditions = cleanList(pyStringList(m.Diseases, m.DiseasesList))
	t.Interventions = cleanList(pyStringList(m.Drugs, m.DrugsList))
	t.Summary = paragraphText(m.Summary)
	inc1, exc1 := splitCriteriaFrom(m.Inclusion, Inclusion)
	inc2, exc2 := splitCriteriaFrom(m.Exclusion, Exclusion)
	t.Inclusion = append(inc1, inc2...)
	t.Exclusion = append(exc1, exc2...)
	return t
}

// jsonAny is either shape of JSON record, an API v2 study or a
// TrialGPT/BIRCO record, so that a record is decoded in one pass; the
// pointers tell which keys were present.
type jsonAny struct {
	Protocol *v2Protocol   `json:"protocolSection"`
	Derived  v2Derived     `json:"derivedSection"`
	ID       *string       `json:"_id"`
	Title    string        `json:"title"`
	Text     string        `json:"text"`
	Metadata *trialGPTMeta `json:"metadata"`
}

// recordDecoder decodes JSON records into a struct it reuses from one
// record to the next. Each goroutine has its own.
type recordDecoder struct {
	rec jsonAny
}

var (
	keyProtocol = []byte(`"protocolSection"`)
	keyID       = []byte(`"_id"`)
)

// jsonRecord decodes one JSON object of unknown shape: an API v2 study or a
// TrialGPT/BIRCO record. The common records are decoded in one pass; any
// other (an error, a key present with a null value or spelt in another
// case) goes through jsonRecordProbe, whose results and messages are the
// reference.
func (d *recordDecoder) jsonRecord(raw []byte) (Trial, error) {
	d.rec = jsonAny{}
	if err := json.Unmarshal(raw, &d.rec); err == nil {
		switch r := &d.rec; {
		case r.Protocol != nil && bytes.Contains(raw, keyProtocol):
			v := ctgovV2{ProtocolSection: *r.Protocol, DerivedSection: r.Derived}
			return v.trial(), nil
		case r.Protocol == nil && r.ID != nil && bytes.Contains(raw, keyID) && !bytes.Contains(raw, keyProtocol):
			g := trialGPT{ID: *r.ID, Title: r.Title, Text: r.Text, Metadata: r.Metadata}
			return g.trial(), nil
		case !bytes.Contains(raw, keyProtocol) && !bytes.Contains(raw, keyID):
			return Trial{}, errUnknownRecord
		}
	}
	return jsonRecordProbe(raw)
}

// errUnknownRecord is the error of a JSON record of neither shape.
var errUnknownRecord = errors.New(`unknown record: expected a ClinicalTrials.gov API v2 study ("protocolSection") or a JSONL trial ("_id")`)

// jsonRecordProbe decodes a record by looking at its keys first, then
// decoding it as the shape they say.
func jsonRecordProbe(raw []byte) (Trial, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return Trial{}, fmt.Errorf("invalid JSON: %w", err)
	}
	switch {
	case probe["protocolSection"] != nil:
		var v ctgovV2
		if err := json.Unmarshal(raw, &v); err != nil {
			return Trial{}, fmt.Errorf("invalid ClinicalTrials.gov study: %w", err)
		}
		return v.trial(), nil
	case probe["_id"] != nil:
		var g trialGPT
		if err := json.Unmarshal(raw, &g); err != nil {
			return Trial{}, fmt.Errorf("invalid trial record: %w", err)
		}
		return g.trial(), nil
	}
	return Trial{}, errUnknownRecord
}

// readJSONLines reads one JSON record per line (TrialGPT, BIRCO, or API
// v2 studies), passing each trial to fn. Each line streams through a
// jsonClip: its long strings are cut as they are read, so a line of any
// length takes the memory of its cut form, and a line larger than the
// record bound even so is refused. Errors name the line.
func readJSONLines(ctx context.Context, r io.Reader, src string, lim *readLimits, sink recordSink) error {
	br := bufio.NewReaderSize(r, 1<<20)
	clip := &jsonClip{max: lim.fieldBytes()}
	line, n := 0, 0
	for {
		raw, eof, err := clipLine(br, clip, lim.recordBytes())
		if err != nil {
			return &RecordError{File: src, Line: line + 1, ID: peekID(raw), Err: err}
		}
		if len(raw) > 0 {
			line++
			if line%256 == 0 {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
			}
			raw = bytes.TrimSpace(raw)
			if len(raw) > 0 {
				// The line and the cuts are the reader's buffers: the job,
				// which may run later on another goroutine, gets copies.
				raw, clipped, line := bytes.Clone(raw), slices.Clone(clip.cuts), line
				n++
				err := sink(func(d *recordDecoder) (Trial, []Cut, error) {
					t, perr := d.jsonRecord(raw)
					if perr != nil {
						return Trial{}, nil, &RecordError{File: src, Line: line, ID: peekID(raw), Err: perr}
					}
					t.Source = src
					cuts, ferr := finishTrial(&t, lim)
					if ferr != nil {
						return Trial{}, nil, &RecordError{File: src, Line: line, ID: t.ID, Err: ferr}
					}
					return t, recordCuts(src, line, t.ID, clipped, cuts), nil
				}, len(raw))
				if err != nil {
					return err
				}
			}
		}
		if eof {
			break
		}
	}
	if n == 0 {
		return &RecordError{File: src, Err: errors.New("no trial record found")}
	}
	return nil
}

// readJSONDocument reads a .json file: one API v2 study, an array of
// studies, or an API page {"studies": [...]} (streamed element by element).
// The text streams through a jsonClip (long strings are cut as they are
// read), and a record larger than the record bound even so is refused.
func readJSONDocument(ctx context.Context, r io.Reader, src string, lim *readLimits, sink recordSink) error {
	cr := newClipReader(r, lim.fieldBytes(), lim.recordBytes())
	dec := json.NewDecoder(cr)
	n := 0
	invalid := func(line int, err error) error {
		if errors.Is(err, errRecordTooLarge) {
			return &RecordError{File: src, Line: line, Err: err}
		}
		return &RecordError{File: src, Line: line, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	emit := func(raw json.RawMessage) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		clipped := cr.c.takeCuts(dec.InputOffset())
		cr.mark = dec.InputOffset()
		rec := n
		return sink(func(d *recordDecoder) (Trial, []Cut, error) {
			t, err := d.jsonRecord(raw)
			if err != nil {
				return Trial{}, nil, &RecordError{File: src, Line: rec, ID: peekID(raw), Err: err}
			}
			t.Source = src
			cuts, err := finishTrial(&t, lim)
			if err != nil {
				return Trial{}, nil, &RecordError{File: src, Line: rec, ID: t.ID, Err: err}
			}
			return t, recordCuts(src, rec, t.ID, clipped, cuts), nil
		}, len(raw))
	}
	streamArray := func() error {
		for dec.More() {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return invalid(n+1, err)
			}
			if err := emit(raw); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	}
	tok, err := dec.Token()
	if err != nil {
		return invalid(0, err)
	}
	switch tok {
	case json.Delim('['):
		if err := streamArray(); err != nil {
			return err
		}
	case json.Delim('{'):
		fields := map[string]json.RawMessage{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return invalid(0, err)
			}
			key, _ := kt.(string)
			if key == "studies" {
				if t, err := dec.Token(); err != nil || t != json.Delim('[') {
					return &RecordError{File: src, Err: errors.New(`"studies" is not an array`)}
				}
				if err := streamArray(); err != nil {
					return err
				}
				continue
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return invalid(0, err)
			}
			fields[key] = raw
		}
		if fields["protocolSection"] != nil || fields["_id"] != nil {
			raw, _ := json.Marshal(fields)
			if err := emit(raw); err != nil {
				return err
			}
		}
	default:
		return &RecordError{File: src, Err: errors.New("expected a JSON object or array")}
	}
	if n == 0 {
		return &RecordError{File: src, Err: errors.New("no trial record found")}
	}
	return nil
}

// peekID finds a record's identifier for an error message, however broken
// the rest is.
func peekID(raw []byte) string {
	s := string(raw[:min(len(raw), 64<<10)]) // an id is near the start
	for _, key := range []string{`"nctId"`, `"_id"`, `"nct_id"`} {
		i := strings.Index(s, key)
		if i < 0 {
			continue
		}
		rest := strings.TrimLeft(s[i+len(key):], " \t:")
		if strings.HasPrefix(rest, `"`) {
			if j := strings.IndexByte(rest[1:], '"'); j >= 0 && j < 40 {
				return rest[1 : 1+j]
			}
		}
	}
	return ""
}

// pyStringList parses a Python list literal of strings ("['a', "b's"]"),
// returning fallback when s is not one.
func pyStringList(s string, fallback []string) []string {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
		return fallback
	}
	var out []string
	body := s[1 : len(s)-1]
	for i := 0; i < len(body); {
		switch c := body[i]; {
		case c == ' ' || c == ',':
			i++
		case c == '\'' || c == '"':
			var b strings.Builder
			j := i + 1
			for ; j < len(body) && body[j] != c; j++ {
				if body[j] == '\\' && j+1 < len(body) {
					j++
				}
				b.WriteByte(body[j])
			}
			if j >= len(body) {
				return fallback
			}
			out = append(out, b.String())
			i = j + 1
		default:
			return fallback
		}
	}
	return out
}
