package datasets

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"sort"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"
)

// docFiles holds the curated schema documentation, one YAML file per known
// schema (see docs/README.md). It is read-only.
//
//go:embed docs/*
var docFiles embed.FS

// minColumnFit is the share of a table's columns a curated table doc must
// document for the doc to apply to it: high enough that a table that merely
// shares a name ("patients") with a known schema is not mis-documented, low
// enough that a known table with a few extra or missing columns still is.
const minColumnFit = 0.6

// schemaDoc is one curated documentation file: a known schema (profile).
type schemaDoc struct {
	// Profile is the schema's short name, unique among the files.
	Profile string `yaml:"profile"`
	// Title is the human-readable name of the schema.
	Title string `yaml:"title"`
	// Source says where the definitions come from.
	Source string `yaml:"source"`
	// MinTables is how many of the schema's tables a database must have
	// (with mostly documented columns) for the profile to apply.
	MinTables int `yaml:"min_tables"`
	// Notes are schema-wide conventions for the SQL generator.
	Notes []string `yaml:"notes"`
	// Tables documents each table, keyed by table name.
	Tables map[string]tableDocFile `yaml:"tables"`

	// file is the name of the embedded file, for error messages.
	file string
}

// tableDocFile is the curated documentation of one table in a schemaDoc.
type tableDocFile struct {
	// Description says what one row is and what the table is for.
	Description string `yaml:"description"`
	// Columns maps each column name to its meaning.
	Columns map[string]string `yaml:"columns"`
	// Joins are join conditions with other tables.
	Joins []string `yaml:"joins"`
	// Synonyms are clinicians' words for the table's content.
	Synonyms []string `yaml:"synonyms"`
	// Vocabulary maps a word of a question to the terms this schema uses
	// for it in this table ("ward": "transfer careunit"): the schema's own
	// query expansion, applied only to databases that use the profile. The
	// cohort pipeline's general medical vocabulary is in code
	// (app/cohort/thesaurus.go).
	Vocabulary map[string]string `yaml:"vocabulary"`
	// Examples are questions the table helps answer.
	Examples []string `yaml:"examples"`
	// Disclosure marks columns for disclosure control: column name to
	// DisclosureIdentifier or DisclosureQuasiIdentifier.
	Disclosure map[string]string `yaml:"disclosure"`
}

// loadSchemaDocs parses and validates every embedded docs/*.yaml file, in
// file-name order. An error means a broken file in the repository, which the
// package's tests catch.
func loadSchemaDocs() ([]schemaDoc, error) {
	names, err := fs.Glob(docFiles, "docs/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("list schema docs: %w", err)
	}
	sort.Strings(names)
	docs := make([]schemaDoc, 0, len(names))
	seen := map[string]string{}
	for _, name := range names {
		data, err := docFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read schema doc %s: %w", name, err)
		}
		d, err := parseSchemaDoc(data)
		if err != nil {
			return nil, fmt.Errorf("schema doc %s: %w", name, err)
		}
		d.file = path.Base(name)
		if prev, dup := seen[d.Profile]; dup {
			return nil, fmt.Errorf("schema doc %s: profile %q already defined in %s", name, d.Profile, prev)
		}
		seen[d.Profile] = d.file
		docs = append(docs, d)
	}
	return docs, nil
}

// parseSchemaDoc decodes one YAML documentation file strictly (unknown keys
// are errors) and checks it is complete.
func parseSchemaDoc(data []byte) (schemaDoc, error) {
	var d schemaDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return d, fmt.Errorf("parse: %w", err)
	}
	if d.Profile == "" {
		return d, errors.New("missing profile")
	}
	if d.MinTables < 1 {
		return d, fmt.Errorf("profile %s: min_tables must be at least 1", d.Profile)
	}
	if len(d.Tables) == 0 {
		return d, fmt.Errorf("profile %s: no tables", d.Profile)
	}
	tables := map[string]bool{}
	for name, t := range d.Tables {
		low := strings.ToLower(name)
		if tables[low] {
			return d, fmt.Errorf("profile %s: table %s documented twice", d.Profile, name)
		}
		tables[low] = true
		if strings.TrimSpace(t.Description) == "" {
			return d, fmt.Errorf("profile %s: table %s has no description", d.Profile, name)
		}
		if len(t.Columns) == 0 {
			return d, fmt.Errorf("profile %s: table %s documents no column", d.Profile, name)
		}
		for c, class := range t.Disclosure {
			if _, ok := t.column(c); !ok {
				return d, fmt.Errorf("profile %s: disclosure of %s.%s: the column is not documented", d.Profile, name, c)
			}
			if class != DisclosureIdentifier && class != DisclosureQuasiIdentifier {
				return d, fmt.Errorf("profile %s: disclosure of %s.%s: %q is neither %q nor %q", d.Profile, name, c, class, DisclosureIdentifier, DisclosureQuasiIdentifier)
			}
		}
		for w, terms := range t.Vocabulary {
			if w != strings.ToLower(w) || len(strings.Fields(w)) != 1 {
				return d, fmt.Errorf("profile %s: vocabulary of %s: %q must be one lower-case word", d.Profile, name, w)
			}
			if strings.TrimSpace(terms) == "" {
				return d, fmt.Errorf("profile %s: vocabulary of %s: %q has no terms", d.Profile, name, w)
			}
		}
		cols := map[string]bool{}
		for c, meaning := range t.Columns {
			lc := strings.ToLower(c)
			if cols[lc] {
				return d, fmt.Errorf("profile %s: column %s.%s documented twice", d.Profile, name, c)
			}
			cols[lc] = true
			if strings.TrimSpace(meaning) == "" {
				return d, fmt.Errorf("profile %s: column %s.%s has no meaning", d.Profile, name, c)
			}
		}
	}
	return d, nil
}

// table returns the curated doc of a table, matching the name
// case-insensitively.
func (d *schemaDoc) table(name string) (tableDocFile, bool) {
	if t, ok := d.Tables[name]; ok {
		return t, true
	}
	for n, t := range d.Tables {
		if strings.EqualFold(n, name) {
			return t, true
		}
	}
	return tableDocFile{}, false
}

// column returns the curated meaning of a column, matching the name
// case-insensitively.
func (t tableDocFile) column(name string) (string, bool) {
	if m, ok := t.Columns[name]; ok {
		return m, true
	}
	for n, m := range t.Columns {
		if strings.EqualFold(n, name) {
			return m, true
		}
	}
	return "", false
}

// docFit measures how well a curated table doc fits a database table: fit is
// the share of the table's columns the doc documents, jaccard the overlap of
// the two column sets (which penalises docs of much wider tables).
func docFit(t *Table, td tableDocFile) (fit, jaccard float64) {
	if len(t.Columns) == 0 {
		return 0, 0
	}
	docCols := make(map[string]bool, len(td.Columns))
	for c := range td.Columns {
		docCols[strings.ToLower(c)] = true
	}
	inter := 0
	for _, c := range t.Columns {
		if docCols[strings.ToLower(c.Name)] {
			inter++
		}
	}
	union := len(t.Columns) + len(docCols) - inter
	return float64(inter) / float64(len(t.Columns)), float64(inter) / float64(union)
}

// docChoice is a candidate curated doc for one table.
type docChoice struct {
	profile      int // index into the docs
	fit, jaccard float64
}

// applyDocs detects which known schemas the catalog matches and documents
// every table: with the best-fitting curated doc of a matching profile, else
// with documentation generated from its structure.
//
// Detection is per table, then per profile: a curated table doc is a
// candidate for a database table of the same name when it documents at least
// minColumnFit of the table's columns; a profile applies when at least
// MinTables of its tables are candidates. Among the applying profiles, each
// table takes the doc with the highest fit, then the highest column-set
// overlap, then the profile with more candidate tables. So the EHRSQL
// database (row_id everywhere, patients.dob) takes the EHRSQL docs although
// the official MIMIC-IV docs also fit some of its tables, and a database
// mixing MIMIC-IV hosp tables and an imaging table uses two profiles.
func applyDocs(cat *Catalog, docs []schemaDoc) {
	cands := make([][]docChoice, len(cat.Tables))
	perProfile := make([]int, len(docs))
	for ti := range cat.Tables {
		for pi := range docs {
			td, ok := docs[pi].table(cat.Tables[ti].Name)
			if !ok {
				continue
			}
			fit, jac := docFit(&cat.Tables[ti], td)
			if fit < minColumnFit {
				continue
			}
			cands[ti] = append(cands[ti], docChoice{profile: pi, fit: fit, jaccard: jac})
			perProfile[pi]++
		}
	}
	used := make([]int, len(docs))
	lx := newNameLexicon(cat)
	for ti := range cat.Tables {
		t := &cat.Tables[ti]
		best := -1
		var bc docChoice
		for _, c := range cands[ti] {
			if perProfile[c.profile] < docs[c.profile].MinTables {
				continue
			}
			if best < 0 || docBetter(c, bc, perProfile) {
				best, bc = c.profile, c
			}
		}
		if best < 0 {
			generateDoc(cat, t, lx)
			continue
		}
		used[best]++
		td, _ := docs[best].table(t.Name)
		curatedDoc(cat, t, td, docs[best].Profile, lx)
	}

	cat.Profiles = nil
	for pi, n := range used {
		if n == 0 {
			continue
		}
		d := docs[pi]
		cat.Profiles = append(cat.Profiles, ProfileInfo{
			Name: d.Profile, Title: d.Title, Source: d.Source,
			Notes: append([]string(nil), d.Notes...), Tables: n,
		})
	}
	sort.SliceStable(cat.Profiles, func(i, j int) bool { return cat.Profiles[i].Tables > cat.Profiles[j].Tables })
	cat.Profile = ""
	if len(cat.Profiles) > 0 {
		cat.Profile = cat.Profiles[0].Name
	}
}

// docBetter reports whether candidate a beats b for the same table.
func docBetter(a, b docChoice, perProfile []int) bool {
	if a.fit != b.fit {
		return a.fit > b.fit
	}
	if a.jaccard != b.jaccard {
		return a.jaccard > b.jaccard
	}
	if perProfile[a.profile] != perProfile[b.profile] {
		return perProfile[a.profile] > perProfile[b.profile]
	}
	return a.profile < b.profile
}

// curatedDoc documents a table from its curated doc; columns the doc does
// not know get generated meanings, and joins naming a table the database
// lacks are left out (a MIMIC-IV subset has no icustays to join).
func curatedDoc(cat *Catalog, t *Table, td tableDocFile, profile string, lx *nameLexicon) {
	var joins []string
	for _, j := range td.Joins {
		ok := true
		for _, name := range docJoinTables(j) {
			if _, found := cat.Table(name); !found {
				ok = false
			}
		}
		if ok {
			joins = append(joins, j)
		}
	}
	t.Doc = TableDoc{
		Description: docOneLine(td.Description),
		Joins:       joins,
		Synonyms:    append([]string(nil), td.Synonyms...),
		Vocabulary:  maps.Clone(td.Vocabulary),
		Examples:    append([]string(nil), td.Examples...),
		Source:      profile,
	}
	for i := range t.Columns {
		c := &t.Columns[i]
		c.Disclosure = ""
		for n, class := range td.Disclosure {
			if strings.EqualFold(n, c.Name) {
				c.Disclosure = class
			}
		}
		if m, ok := td.column(c.Name); ok {
			c.Doc = docOneLine(m)
		} else {
			c.Doc = generatedColumnDoc(t, c, lx)
		}
	}
}

// generateDoc documents a table that matches no known schema from its name,
// columns, keys and row count: the words of its name (split into known words
// by lx, abbreviations written out) are its synonyms, and each column's are
// its meaning.
func generateDoc(cat *Catalog, t *Table, lx *nameLexicon) {
	split := lx.words(t.Name)
	words := strings.Join(split, " ")
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q", docKindNoun(t.Kind), t.Name)
	if words != strings.ToLower(t.Name) {
		fmt.Fprintf(&b, " (%s)", words)
	}
	fmt.Fprintf(&b, " with %d columns", len(t.Columns))
	if t.RowCount >= 0 {
		fmt.Fprintf(&b, " and %s", rowsText(t))
	}
	b.WriteString(".")
	if pk := t.primaryKey(); len(pk) > 0 {
		fmt.Fprintf(&b, " One row per %s.", strings.Join(pk, ", "))
	}
	if len(t.ForeignKeys) > 0 {
		var refs []string
		for _, fk := range t.ForeignKeys {
			refs = docAppendUnique(refs, fk.RefTable)
		}
		fmt.Fprintf(&b, " References %s.", strings.Join(refs, ", "))
	}
	b.WriteString(" No curated documentation: described from the database schema.")

	t.Doc = TableDoc{Description: b.String(), Joins: generatedJoins(cat, t), Source: GeneratedDocSource}
	if words != strings.ToLower(t.Name) {
		t.Doc.Synonyms = []string{words}
	}
	if full, ok := expandAbbreviations(split); ok {
		t.Doc.Synonyms = append(t.Doc.Synonyms, strings.Join(full, " "))
	}
	for i := range t.Columns {
		t.Columns[i].Doc = generatedColumnDoc(t, &t.Columns[i], lx)
	}
}

// generatedColumnDoc describes a column from the words of its name (split
// into known words by lx, abbreviations written out) and its keys (the type
// is shown beside the meaning wherever the meaning is shown).
func generatedColumnDoc(t *Table, c *TableColumn, lx *nameLexicon) string {
	words, _ := expandAbbreviations(lx.words(c.Name))
	parts := []string{strings.Join(words, " ")}
	if c.PrimaryKey > 0 {
		parts = append(parts, "primary key")
	}
	for _, fk := range t.ForeignKeys {
		for i, col := range fk.Columns {
			if strings.EqualFold(col, c.Name) {
				parts = append(parts, "references "+fk.RefTable+"."+fk.RefColumns[i])
			}
		}
	}
	return strings.Join(parts, "; ")
}

// generatedJoins lists a table's joins: its declared foreign keys, the
// foreign keys of other tables that reference it, and, for tables not linked
// so, key-like columns ("subject_id", "PatientID") of the same name in other
// tables (undeclared keys, common in CSV imports), at most maxSharedJoins of
// those. A bare "id" is each table's own key, never a shared one, and so is
// a column that is the primary key of both tables (docOwnKey).
func generatedJoins(cat *Catalog, t *Table) []string {
	const maxSharedJoins = 6
	var joins []string
	linked := map[string]bool{}
	for _, fk := range t.ForeignKeys {
		joins = docAppendUnique(joins, docJoinText(t.Name, fk.Columns, fk.RefTable, fk.RefColumns))
		linked[strings.ToLower(fk.RefTable)] = true
	}
	for _, o := range cat.Tables {
		for _, fk := range o.ForeignKeys {
			if strings.EqualFold(fk.RefTable, t.Name) {
				joins = docAppendUnique(joins, docJoinText(t.Name, fk.RefColumns, o.Name, fk.Columns))
				linked[strings.ToLower(o.Name)] = true
			}
		}
	}
	shared := 0
	for _, c := range t.Columns {
		if !docIsIDName(c.Name) || strings.EqualFold(c.Name, "id") {
			continue
		}
		for _, o := range cat.Tables {
			if shared >= maxSharedJoins {
				return joins
			}
			if strings.EqualFold(o.Name, t.Name) || linked[strings.ToLower(o.Name)] {
				continue
			}
			if _, ok := o.Column(c.Name); ok && !(docOwnKey(t, c.Name) && docOwnKey(&o, c.Name)) {
				joins = append(joins, docJoinText(t.Name, []string{c.Name}, o.Name, []string{c.Name}))
				shared++
			}
		}
	}
	return joins
}

// docOwnKey reports whether column is the whole primary key of t: two tables
// each keyed by a column of the same name ("row_id" numbering each table's
// rows) do not join on it.
func docOwnKey(t *Table, column string) bool {
	pk := t.primaryKey()
	return len(pk) == 1 && strings.EqualFold(pk[0], column)
}

// docJoinTables returns the table names a join text refers to as
// "table.column"; placeholders such as "<any event table>.subject_id" are
// not names.
func docJoinTables(join string) []string {
	var names []string
	isWord := func(b byte) bool {
		return b == '_' || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9')
	}
	for i := 0; i < len(join); {
		if !isWord(join[i]) {
			i++
			continue
		}
		start := i
		for i < len(join) && isWord(join[i]) {
			i++
		}
		preceded := start > 0 && (join[start-1] == '.' || join[start-1] == '\'')
		if i+1 < len(join) && join[i] == '.' && isWord(join[i+1]) && !preceded && !(join[start] >= '0' && join[start] <= '9') {
			names = docAppendUnique(names, join[start:i])
		}
	}
	return names
}

// docJoinText renders a join condition "a.x = b.y AND a.z = b.w".
func docJoinText(a string, acols []string, b string, bcols []string) string {
	conds := make([]string, 0, len(acols))
	for i := range acols {
		bc := ""
		if i < len(bcols) {
			bc = bcols[i]
		}
		conds = append(conds, a+"."+acols[i]+" = "+b+"."+bc)
	}
	return strings.Join(conds, " AND ")
}

// docIsIDName reports whether a column name looks like a key: "id", "*_id" or
// "*Id"/"*ID".
func docIsIDName(name string) bool {
	l := strings.ToLower(name)
	if l == "id" || strings.HasSuffix(l, "_id") {
		return true
	}
	return strings.HasSuffix(name, "Id") || strings.HasSuffix(name, "ID") || strings.HasSuffix(name, "UID")
}

// docKindNoun names a table kind in a sentence.
func docKindNoun(k TableKind) string {
	switch k {
	case KindView:
		return "View"
	case KindVirtual:
		return "Virtual table"
	default:
		return "Table"
	}
}

// docNameWords splits an identifier into lower-case words: on underscores,
// hyphens, dots and spaces, and at camel-case boundaries, so that
// "d_labitems" gives "d labitems" and "SOPInstanceUID" gives "sop instance uid".
func docNameWords(name string) string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(words, " ")
}

// docOneLine collapses runs of white space, including newlines, into single
// spaces.
func docOneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// docAppendUnique appends s to list unless it is already there.
func docAppendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
