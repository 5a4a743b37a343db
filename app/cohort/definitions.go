package cohort

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/internal/inputfile"
)

// Saved cohort definitions (issue 19 item 3): the question, its criteria,
// the SQL, the data source, the parameters, when it was made and the
// counts then, kept as one JSON file per definition in the workspace, run
// again later (the same SQL) with the differences in counts, and exported
// and imported as a file so that a colleague can run it on their copy of
// the data.

// Definition file format.
const (
	// DefinitionFormat names the file format in every file.
	DefinitionFormat = "clinsight-cohort-definition"
	// DefinitionVersion is the version of the format this build writes
	// and reads.
	DefinitionVersion = 1
	// MaxDefinitionBytes bounds a definition file.
	MaxDefinitionBytes = 1 << 20
	// MaxDefinitions bounds the definitions a workspace lists.
	MaxDefinitions = 2000
	// maxRuns bounds the runs a definition remembers (the newest kept).
	maxRuns = 100
	// maxCriteria bounds the criteria of a definition.
	maxCriteria = 200
)

// Definition is a saved cohort definition.
type Definition struct {
	Format  string `json:"format"`
	Version int    `json:"version"`
	// ID names the definition in its workspace (its file's name without
	// .json): lower-case letters, digits and hyphens.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Question is the question as asked.
	Question string `json:"question,omitempty"`
	// Criteria are the cohort's criteria in order: the steps of a CTE
	// chain, or the concept sets of an OMOP definition.
	Criteria []string `json:"criteria,omitempty"`
	// SQL is the statement that selects the cohort.
	SQL string `json:"sql"`
	// Source is the data source it runs on.
	Source DefinitionSource `json:"source"`
	// Parameters are the pipeline's settings and models when it was made.
	Parameters map[string]string `json:"parameters,omitempty"`
	// Created is when it was saved; Counts the counts then.
	Created time.Time        `json:"created"`
	Counts  DefinitionCounts `json:"counts"`
	// Runs are the later runs, oldest first (at most 100).
	Runs []DefinitionRun `json:"runs,omitempty"`
	// ImportedFrom says where an imported definition came from.
	ImportedFrom *DefinitionOrigin `json:"imported_from,omitempty"`
}

// DefinitionSource names a data source in a portable way.
type DefinitionSource struct {
	Name        string `json:"name"`
	Kind        string `json:"kind,omitempty"`
	Description string `json:"description,omitempty"`
}

// DefinitionCounts are the counts of a run of the definition.
type DefinitionCounts struct {
	// Rows is the number of rows of the statement's result.
	Rows int64 `json:"rows"`
	// Patients is the number of distinct patients (-1 when the result has
	// no patient column); PatientColumn names that column.
	Patients      int64  `json:"patients"`
	PatientColumn string `json:"patient_column,omitempty"`
	// SuppressedBelow, when at least 2, says that counts below it were
	// replaced by 0 (a source whose data may be seen only as aggregates):
	// a 0 then reads "<k".
	SuppressedBelow int `json:"suppressed_below,omitempty"`
}

// Under returns the counts as a source that shows aggregates only under
// a minimum cell size k may show them: counts from 1 to k−1 become 0 and
// SuppressedBelow is k. k < 2 returns c unchanged.
func (c DefinitionCounts) Under(k int) DefinitionCounts {
	if k < 2 {
		return c
	}
	small := func(n int64) bool { return n >= 1 && n < int64(k) }
	if small(c.Rows) {
		c.Rows = 0
	}
	if small(c.Patients) {
		c.Patients = 0
	}
	c.SuppressedBelow = k
	return c
}

// count renders one count ("<k" when suppressed).
func (c DefinitionCounts) count(n int64) string {
	if n == 0 && c.SuppressedBelow >= 2 {
		return "<" + strconv.Itoa(c.SuppressedBelow)
	}
	return strconv.FormatInt(n, 10)
}

// hidden reports whether a count is suppressed.
func (c DefinitionCounts) hidden(n int64) bool { return n == 0 && c.SuppressedBelow >= 2 }

// Text renders the counts: "412 rows, 120 patients" (or "<11 rows").
func (c DefinitionCounts) Text() string {
	s := c.count(c.Rows) + " rows"
	if c.Patients >= 0 {
		s += ", " + c.count(c.Patients) + " patients"
	}
	return s
}

// DefinitionRun is one later run.
type DefinitionRun struct {
	At     time.Time        `json:"at"`
	Source string           `json:"source"`
	Counts DefinitionCounts `json:"counts"`
	// SQL is the statement the model wrote when the question was asked
	// again (regenerated); empty when the saved statement was run.
	SQL string `json:"sql,omitempty"`
}

// DefinitionOrigin records an import.
type DefinitionOrigin struct {
	// ID and Source are the definition's id and data source where it was
	// exported; At is when it was imported.
	ID     string    `json:"id"`
	Source string    `json:"source"`
	At     time.Time `json:"at"`
}

// Rerun is the outcome of running a saved definition again.
type Rerun struct {
	Definition Definition
	// SQL is the statement that was counted: the saved one, or the one the
	// model wrote when the question was asked again (Regenerated).
	SQL         string
	Regenerated bool
	// Then are the counts at creation; Previous the last run before this
	// one (nil when none); Now the counts of this run.
	Then     DefinitionCounts
	Previous *DefinitionRun
	Now      DefinitionCounts
}

// Changes says how the counts changed since the definition was made, in
// words ("rows 412 → 415 (+3); patients 120 → 121 (+1)").
func (r Rerun) Changes() string {
	then, now := r.Then, r.Now
	d := func(what string, a, b int64) string {
		switch {
		case then.hidden(a) || now.hidden(b):
			return fmt.Sprintf("%s %s → %s", what, then.count(a), now.count(b))
		case a == b:
			return fmt.Sprintf("%s %d (unchanged)", what, b)
		}
		return fmt.Sprintf("%s %d → %d (%+d)", what, a, b, b-a)
	}
	s := d("rows", r.Then.Rows, r.Now.Rows)
	if r.Now.Patients >= 0 && r.Then.Patients >= 0 {
		s += "; " + d("patients", r.Then.Patients, r.Now.Patients)
	}
	return s
}

// NewDefinition makes a definition from an answer.
func NewDefinition(ans *Answer, name string, src DefinitionSource, counts DefinitionCounts, now time.Time) (Definition, error) {
	if ans == nil || strings.TrimSpace(ans.SQL) == "" {
		return Definition{}, errors.New("save the cohort: there is no statement to save")
	}
	if strings.TrimSpace(name) == "" {
		name = ans.Question
	}
	name = clip(strings.TrimSpace(name), 200)
	if name == "" {
		name = "cohort"
	}
	d := Definition{
		Format: DefinitionFormat, Version: DefinitionVersion,
		ID: DefinitionID(name, now), Name: name, Question: ans.Question,
		Criteria: Criteria(ans), SQL: ans.SQL, Source: src,
		Parameters: map[string]string{
			"top_k":         strconv.Itoa(ans.Settings.TopK),
			"min_relevance": strconv.FormatFloat(ans.Settings.MinRelevance, 'g', -1, 64),
			"max_attempts":  strconv.Itoa(ans.Settings.MaxAttempts),
			"temperature":   strconv.FormatFloat(ans.Settings.Temperature, 'g', -1, 64),
			"seed":          strconv.Itoa(ans.Settings.Seed),
		},
		Created: now.UTC().Truncate(time.Second), Counts: counts,
	}
	if len(ans.Models) > 0 {
		d.Parameters["models"] = strings.Join(ans.Models, ", ")
	}
	if ans.Template != "" {
		d.Parameters["template"] = ans.Template
	}
	if ans.Settings.Now != "" {
		d.Parameters["now"] = ans.Settings.Now
	}
	return d, d.Validate()
}

// Criteria lists an answer's criteria: the names of the common table
// expressions of a WITH chain (base population, then one per criterion),
// or the concept sets of an OMOP answer.
func Criteria(ans *Answer) []string {
	var out []string
	for _, cs := range ans.ConceptSets {
		out = append(out, cs.Name)
	}
	if len(out) == 0 && ans.Attrition != nil { // a chain of criteria, in words (attrition.go)
		for _, s := range ans.Attrition.Steps {
			out = append(out, s.Criterion)
		}
	}
	if len(out) == 0 {
		out = cteNames(ans.SQL)
	}
	if len(out) > maxCriteria {
		out = out[:maxCriteria]
	}
	return out
}

// cteNames returns the names of the top-level common table expressions of
// a statement that starts with WITH.
func cteNames(sql string) []string {
	toks := strings.FieldsFunc(stripSQLStrings(sql), func(r rune) bool { return unicode.IsSpace(r) })
	if len(toks) == 0 || !strings.EqualFold(toks[0], "with") {
		return nil
	}
	s := stripSQLStrings(sql)
	lower := strings.ToLower(s)
	i := strings.Index(lower, "with") + 4
	var names []string
	depth := 0
	expectName := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == '(':
			depth++
			i++
		case c == ')':
			depth--
			i++
			if depth == 0 {
				// after a CTE body: a comma continues the list, anything else ends it
				j := i
				for j < len(s) && unicode.IsSpace(rune(s[j])) {
					j++
				}
				if j < len(s) && s[j] == ',' {
					expectName, i = true, j+1
					continue
				}
				return names
			}
		case depth == 0 && expectName && (isIdentByte(c) || c == '"'):
			j := i
			if c == '"' {
				j = i + 1
				for j < len(s) && s[j] != '"' {
					j++
				}
				j++
			} else {
				for j < len(s) && isIdentByte(s[j]) {
					j++
				}
			}
			word := strings.Trim(s[i:min(j, len(s))], `"`)
			if !strings.EqualFold(word, "recursive") {
				names = append(names, word)
				expectName = false
			}
			i = j
		default:
			i++
		}
	}
	return names
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stripSQLStrings blanks the contents of single-quoted literals and
// comments so that their parentheses and words are not read as SQL.
func stripSQLStrings(sql string) string {
	b := []byte(sql)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\'':
			for i++; i < len(b) && b[i] != '\''; i++ {
				b[i] = ' '
			}
		case b[i] == '-' && i+1 < len(b) && b[i+1] == '-':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		}
	}
	return string(b)
}

// DefinitionID makes an id from a name and a time: the name's words in
// lower case joined by hyphens (at most 40 characters), then the time.
func DefinitionID(name string, t time.Time) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(name) {
		if b.Len() >= 40 {
			break
		}
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			hyphen = false
		} else {
			hyphen = true
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "cohort"
	}
	return slug + "-" + t.UTC().Format("20060102-150405")
}

// validID reports whether id can name a definition file.
func validID(id string) bool {
	if id == "" || len(id) > 80 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// Validate checks a definition.
func (d Definition) Validate() error {
	switch {
	case d.Format != DefinitionFormat:
		return fmt.Errorf("it is not a Clinsight cohort definition (format %q)", d.Format)
	case d.Version < 1 || d.Version > DefinitionVersion:
		return fmt.Errorf("it is a cohort definition of version %d, which this version of Clinsight does not read (it reads version %d)", d.Version, DefinitionVersion)
	case !validID(d.ID):
		return fmt.Errorf("its id %q is not valid (lower-case letters, digits and hyphens)", clip(d.ID, 90))
	case strings.TrimSpace(d.SQL) == "":
		return errors.New("it holds no SQL statement")
	case strings.TrimSpace(d.Source.Name) == "":
		return errors.New("it names no data source")
	case d.Created.IsZero():
		return errors.New("it has no creation time")
	case len(d.Criteria) > maxCriteria:
		return fmt.Errorf("it has %d criteria, more than %d", len(d.Criteria), maxCriteria)
	case len(d.Runs) > maxRuns:
		return fmt.Errorf("it records %d runs, more than %d", len(d.Runs), maxRuns)
	}
	return nil
}

// Marshal encodes a definition as indented JSON.
func (d Definition) Marshal() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	if len(b)+1 > MaxDefinitionBytes {
		return nil, fmt.Errorf("the cohort definition is %d bytes, more than the %d a definition may hold", len(b), MaxDefinitionBytes)
	}
	return append(b, '\n'), nil
}

// ReadDefinition reads a definition file: at most MaxDefinitionBytes, one
// JSON object of the format, checked.
func ReadDefinition(path string) (Definition, error) {
	f, _, err := inputfile.Open(path) // a named pipe would block for ever
	if err != nil {
		return Definition{}, fmt.Errorf("read the cohort definition %s: %w", path, err)
	}
	defer f.Close()
	d, err := ParseDefinition(f)
	if err != nil {
		return Definition{}, fmt.Errorf("read the cohort definition %s: %w", path, err)
	}
	return d, nil
}

// ParseDefinition decodes and checks a definition (at most
// MaxDefinitionBytes are read).
func ParseDefinition(r io.Reader) (Definition, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDefinitionBytes+1))
	if err != nil {
		return Definition{}, err
	}
	if len(data) > MaxDefinitionBytes {
		return Definition{}, fmt.Errorf("the file is larger than %d bytes: it is not a cohort definition", MaxDefinitionBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var d Definition
	if err := dec.Decode(&d); err != nil {
		return Definition{}, fmt.Errorf("the file is damaged or is not a cohort definition: %w", err)
	}
	if dec.More() {
		return Definition{}, errors.New("the file is damaged: there is more after the definition")
	}
	if err := d.Validate(); err != nil {
		return Definition{}, fmt.Errorf("the file is not a usable cohort definition: %w", err)
	}
	return d, nil
}

// PatientColumn returns the column of a result that identifies a patient
// in a source of the given kind or profile ("" when none does).
func PatientColumn(columns []string, profile string) string {
	for _, want := range disclosure.IndividualColumns(profile) {
		for _, c := range columns {
			if strings.EqualFold(c, want) {
				return c
			}
		}
	}
	return ""
}

// CountCohort runs a cohort statement and counts its rows and, when its
// result has the patient column, its distinct patients. The statement is
// wrapped, so the counts are not limited by the row cap.
func CountCohort(ctx context.Context, q Querier, sql, profile string) (DefinitionCounts, error) {
	stmt := strings.TrimRight(strings.TrimSpace(sql), "; \t\n")
	cols, err := columnsOf(ctx, q, "("+stmt+")")
	if err != nil {
		return DefinitionCounts{}, fmt.Errorf("run the cohort statement: %w", err)
	}
	names := make([]string, 0, len(cols))
	for c := range cols {
		names = append(names, c)
	}
	sort.Strings(names)
	c := DefinitionCounts{Patients: -1, PatientColumn: PatientColumn(names, profile)}
	count := "SELECT COUNT(*), NULL FROM (" + stmt + ") AS q"
	if c.PatientColumn != "" {
		count = "SELECT COUNT(*), COUNT(DISTINCT " + datasets.QuoteIdent(c.PatientColumn) + ") FROM (" + stmt + ") AS q"
	}
	res, err := q.Query(ctx, count)
	if err != nil {
		return DefinitionCounts{}, fmt.Errorf("count the cohort: %w", err)
	}
	if len(res.Rows) != 1 {
		return DefinitionCounts{}, errors.New("count the cohort: no count came back")
	}
	n, _ := datasets.Number(res.Rows[0][0])
	c.Rows = int64(n)
	if c.PatientColumn != "" {
		p, _ := datasets.Number(res.Rows[0][1])
		c.Patients = int64(p)
	}
	return c, nil
}

// DefinitionStore keeps definitions as <Dir>/<id>.json.
type DefinitionStore struct{ Dir string }

func (s DefinitionStore) path(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("no saved cohort definition is called %q", clip(id, 90))
	}
	return filepath.Join(s.Dir, id+".json"), nil
}

// Save writes a definition atomically (replacing the file of the same id).
func (s DefinitionStore) Save(d Definition) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("save the cohort definition: %w", err)
	}
	if len(d.Runs) > maxRuns {
		d.Runs = d.Runs[len(d.Runs)-maxRuns:]
	}
	data, err := d.Marshal()
	if err != nil {
		return fmt.Errorf("save the cohort definition: %w", err)
	}
	p, err := s.path(d.ID)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return fmt.Errorf("save the cohort definition: %w", err)
	}
	if err := atomicfile.WriteFile(p, data, 0o644); err != nil {
		return fmt.Errorf("save the cohort definition %s: %w", d.ID, err)
	}
	return nil
}

// Exists reports whether a definition of that id is saved.
func (s DefinitionStore) Exists(id string) bool {
	p, err := s.path(id)
	if err != nil {
		return false
	}
	_, err = os.Lstat(p)
	return err == nil
}

// Load reads a saved definition.
func (s DefinitionStore) Load(id string) (Definition, error) {
	p, err := s.path(id)
	if err != nil {
		return Definition{}, err
	}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return Definition{}, fmt.Errorf("no saved cohort definition is called %q", id)
	}
	d, err := ReadDefinition(p)
	if err != nil {
		return Definition{}, err
	}
	if d.ID != id {
		return Definition{}, fmt.Errorf("the cohort definition file %s holds the definition %q", p, d.ID)
	}
	return d, nil
}

// List reads the saved definitions, newest first. Files that cannot be
// read are left as they are and reported in problems.
func (s DefinitionStore) List() (defs []Definition, problems []error, err error) {
	entries, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list the saved cohort definitions: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") {
			continue
		}
		if len(defs)+len(problems) >= MaxDefinitions {
			problems = append(problems, fmt.Errorf("more than %d cohort definitions: the rest are not listed", MaxDefinitions))
			break
		}
		d, err := s.Load(strings.TrimSuffix(name, ".json"))
		if err != nil {
			problems = append(problems, err)
			continue
		}
		defs = append(defs, d)
	}
	slices.SortStableFunc(defs, func(a, b Definition) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return defs, problems, nil
}

// FreeID returns id when no definition has it, else id-2, id-3, …
func (s DefinitionStore) FreeID(id string) string {
	if !s.Exists(id) {
		return id
	}
	for i := 2; i < 10000; i++ {
		c := fmt.Sprintf("%s-%d", id, i)
		if !s.Exists(c) {
			return c
		}
	}
	return DefinitionID(id, time.Now())
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

// FindPatientColumn returns the column of a statement's result that
// identifies a patient in a source of the given kind or profile ("" when
// none does). No rows are read.
func FindPatientColumn(ctx context.Context, q Querier, sql, profile string) (string, error) {
	stmt := strings.TrimRight(strings.TrimSpace(sql), "; \t\n")
	res, err := q.Query(ctx, "SELECT * FROM ("+stmt+") AS t LIMIT 0")
	if err != nil {
		return "", fmt.Errorf("run the cohort statement: %w", err)
	}
	return PatientColumn(res.ColumnNames(), profile), nil
}
