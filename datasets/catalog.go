package datasets

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/progress"
)

// Catalog describes the tables of one SQLite database together with the
// documentation the cohort-discovery pipeline retrieves on: the structure
// read from the database itself, sample values of low-cardinality text
// columns, and per-table documentation, curated when the database matches a
// known schema (a profile) and generated from the structure otherwise.
//
// A Catalog is a plain value: it holds no connection and is safe to share
// once built.
type Catalog struct {
	// Tables are the database's tables, views and virtual tables in name
	// order (case-insensitive), without SQLite's internal tables and without
	// the shadow tables of FTS5 and other virtual tables.
	Tables []Table
	// Profile names the known schema that documents the most tables (for
	// example "ehrsql-2024-mimic-iv"); "" when no table has curated docs.
	Profile string
	// Profiles lists every known schema that documents at least one table,
	// the one documenting most tables first. Profiles[0].Name == Profile.
	Profiles []ProfileInfo
	// Skipped lists the views and virtual tables left out because they
	// cannot be read ("name: reason"): a view over a dropped table, a
	// virtual table of a module this build lacks. Ordinary tables are never
	// skipped: an error reading one fails ReadCatalog.
	Skipped []string
}

// ProfileInfo describes a known schema whose curated documentation a
// catalog uses.
type ProfileInfo struct {
	// Name is the profile's short name, for example "mimic-iv-2.2".
	Name string
	// Title is the human-readable name of the schema.
	Title string
	// Source says where the curated definitions come from.
	Source string
	// Notes are schema-wide conventions the SQL generator must follow
	// (fixed current time, letter case of values, code formats).
	Notes []string
	// Tables is how many tables of the database this profile documents.
	Tables int
}

// TableKind says what kind of schema object a Table is.
type TableKind string

// The kinds of Table.
const (
	// KindTable is an ordinary table.
	KindTable TableKind = "table"
	// KindView is a view; its rows are computed by a query.
	KindView TableKind = "view"
	// KindVirtual is a virtual table, for example an FTS5 full-text index.
	KindVirtual TableKind = "virtual"
)

// Table describes one table or view of a database.
type Table struct {
	// Name is the table's name as spelled in the schema.
	Name string
	// Kind says whether this is a table, a view or a virtual table.
	Kind TableKind
	// Columns are the table's columns in declaration order (hidden columns
	// of virtual tables excluded).
	Columns []TableColumn
	// ForeignKeys are the declared foreign keys (tables only).
	ForeignKeys []ForeignKey
	// RowCount is the number of rows, or -1 when not counted (views, unless
	// CatalogOptions.ViewStats is set).
	RowCount int64
	// RowCountEstimated is true when RowCount is the table's largest rowid
	// rather than a count: for tables above CatalogOptions.ExactCountRows,
	// where count(*) would read the whole table. Only tables whose rowid
	// SQLite assigns itself are estimated (never a table with an INTEGER
	// PRIMARY KEY, whose rowid is a user value such as a subject_id); the
	// estimate is exact for tables that were only ever appended to, as
	// imported tables are.
	RowCountEstimated bool
	// Schema is the schema holding the table on a database server
	// (PostgreSQL), "" for SQLite. Name is then the bare table name, or
	// "schema.name" when two schemas read hold tables of the same name.
	Schema string
	// Doc is the table's documentation, curated or generated.
	Doc TableDoc
}

// SQLName returns the name to write in SQL for the table: schema-qualified
// when the table has a schema ("mimiciv_hosp.patients"), each part quoted
// when it is not a plain identifier.
func (t Table) SQLName() string {
	if t.Schema == "" {
		return catalogIdent(t.Name)
	}
	return catalogIdent(t.Schema) + "." + catalogIdent(strings.TrimPrefix(t.Name, t.Schema+"."))
}

// TableColumn describes one column of a table.
type TableColumn struct {
	// Name is the column's name as spelled in the schema.
	Name string
	// Type is the declared type as written (for example "VARCHAR(20)"), ""
	// when the column was declared without one.
	Type string
	// NotNull is true when the column is declared NOT NULL.
	NotNull bool
	// Default is the SQL text of the declared default value, "" when none.
	Default string
	// PrimaryKey is the column's 1-based position in the primary key, 0 when
	// it is not part of it.
	PrimaryKey int
	// Samples are all distinct non-NULL text values of a low-cardinality
	// text column (at most CatalogOptions.MaxDistinct), sorted; nil when the
	// column has more distinct values, is not text, or was not sampled.
	// Values longer than 80 characters are cut and end with "…".
	Samples []string
	// SamplesPartial is true when Samples come from the first
	// CatalogOptions.SampleScanRows rows only, so other values may exist.
	SamplesPartial bool
	// Doc is the column's meaning: curated (units, codes, value spellings)
	// or generated from its name, type and keys.
	Doc string
	// Disclosure is the column's disclosure-control class from the
	// curated docs: DisclosureIdentifier, DisclosureQuasiIdentifier, or ""
	// when not marked.
	Disclosure string
}

// Disclosure-control classes of TableColumn.Disclosure.
const (
	// DisclosureIdentifier marks a column that identifies a person or
	// carries identifying text (a source identifier, a name, an address,
	// a clinical note): never to be shown in a result.
	DisclosureIdentifier = "identifier"
	// DisclosureQuasiIdentifier marks a column that identifies a person in
	// combination with others (birth date, zip code, race): to be reported
	// only in aggregates.
	DisclosureQuasiIdentifier = "quasi-identifier"
)

// ForeignKey is a declared foreign key of a table.
type ForeignKey struct {
	// Columns are the referencing columns of this table.
	Columns []string
	// RefTable is the referenced table.
	RefTable string
	// RefColumns are the referenced columns, in the order of Columns; when
	// the declaration omits them they are the referenced table's primary key.
	RefColumns []string
}

// TableDoc is the human documentation of a table, the text retrieval and
// SQL generation rely on. Column meanings are in TableColumn.Doc.
type TableDoc struct {
	// Description says what one row is (the grain) and what the table is for.
	Description string
	// Joins are join conditions with other tables, for example
	// "labevents.itemid = d_labitems.itemid".
	Joins []string
	// Synonyms are words a clinician may use for the table's content
	// ("blood test" for a lab table).
	Synonyms []string
	// Vocabulary maps a word of a question to the terms the schema uses for
	// it in this table ("ward": "transfer careunit"): the curated profile's
	// own query expansion (see docs/README.md). Empty for generated
	// documentation.
	Vocabulary map[string]string
	// Examples are questions the table helps answer, in clinicians' words.
	Examples []string
	// Source is the profile the documentation comes from, or
	// GeneratedDocSource when it was generated from the schema.
	Source string
}

// GeneratedDocSource is TableDoc.Source for documentation generated from
// the database structure rather than curated.
const GeneratedDocSource = "generated"

// CatalogOptions tunes ReadCatalog. The zero value is ready to use.
type CatalogOptions struct {
	// MaxDistinct is the most distinct values a text column may have for its
	// values to be listed in TableColumn.Samples: 0 means 30; a negative value
	// turns sampling off.
	MaxDistinct int
	// SampleScanRows bounds the rows read per column when sampling: 0 means
	// 100,000. Larger tables are sampled from their first rows only (and
	// TableColumn.SamplesPartial is set), which keeps the catalog fast on full
	// MIMIC-IV tables of 100M+ rows.
	SampleScanRows int
	// ExactCountRows is the largest table counted with count(*): 0 means
	// 5,000,000. Larger tables report their largest rowid as an estimate
	// (Table.RowCountEstimated), found in microseconds where counting a
	// 300M-row chartevents would take tens of seconds.
	ExactCountRows int64
	// ViewStats also counts the rows of views and samples their columns;
	// off by default because a view may be an expensive query.
	ViewStats bool
	// GeneratedDocsOnly skips the curated documentation: every table gets
	// documentation generated from its structure.
	GeneratedDocsOnly bool
	// Progress, when set, receives one report per table read.
	Progress progress.Func
}

// Defaults of CatalogOptions.
const (
	// DefaultMaxDistinct is the default of CatalogOptions.MaxDistinct.
	DefaultMaxDistinct = 30
	// DefaultSampleScanRows is the default of CatalogOptions.SampleScanRows.
	DefaultSampleScanRows = 100_000
	// DefaultExactCountRows is the default of CatalogOptions.ExactCountRows.
	DefaultExactCountRows = 5_000_000
	// maxSampleLen is the longest sample value kept, in characters.
	maxSampleLen = 80
	// sampleCompareLen is how many leading characters of a value sampling
	// reads and tells values apart by: a value is never read whole.
	sampleCompareLen = 4 * maxSampleLen
)

// ReadCatalog reads the structure of the database behind db (its "main"
// schema): tables, views and virtual tables with their columns, primary and
// foreign keys, row counts and sample values of low-cardinality text
// columns; then documents every table from the embedded curated docs of the
// known schema it matches, or from its structure. db may be read-only.
// Cancelling ctx interrupts the running statement and returns ctx's error.
func ReadCatalog(ctx context.Context, db *sql.DB, opts CatalogOptions) (*Catalog, error) {
	if opts.MaxDistinct == 0 {
		opts.MaxDistinct = DefaultMaxDistinct
	}
	if opts.SampleScanRows <= 0 {
		opts.SampleScanRows = DefaultSampleScanRows
	}
	if opts.ExactCountRows <= 0 {
		opts.ExactCountRows = DefaultExactCountRows
	}
	objs, err := catalogObjects(ctx, db)
	if err != nil {
		return nil, err
	}
	cat := &Catalog{Tables: make([]Table, 0, len(objs))}
	for i, o := range objs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read catalog: %w", err)
		}
		opts.Progress.Send(progress.Report{Stage: "catalog: " + o.name, Done: int64(i), Total: int64(len(objs)), Unit: "tables"})
		t, err := catalogReadTable(ctx, db, o, opts)
		if err != nil {
			if ctx.Err() != nil { // the driver reports an interrupt in its own words
				return nil, fmt.Errorf("read catalog at %s: %w", o.name, ctx.Err())
			}
			if o.kind == KindTable {
				return nil, err
			}
			cat.Skipped = append(cat.Skipped, o.name+": "+err.Error())
			continue
		}
		cat.Tables = append(cat.Tables, t)
	}
	opts.Progress.Send(progress.Report{Stage: "catalog", Done: int64(len(objs)), Total: int64(len(objs)), Unit: "tables"})
	catalogResolveFKs(cat)

	var docs []schemaDoc
	if !opts.GeneratedDocsOnly {
		if docs, err = loadSchemaDocs(); err != nil {
			return nil, err
		}
	}
	applyDocs(cat, docs)
	return cat, nil
}

// Table returns the table or view with the given name, compared
// case-insensitively as SQLite does, and whether it exists. A table with a
// schema is also found by its schema-qualified name.
func (c *Catalog) Table(name string) (*Table, bool) {
	for i := range c.Tables {
		if strings.EqualFold(c.Tables[i].Name, name) {
			return &c.Tables[i], true
		}
	}
	for i := range c.Tables {
		t := &c.Tables[i]
		if t.Schema != "" && strings.EqualFold(t.Schema+"."+strings.TrimPrefix(t.Name, t.Schema+"."), name) {
			return t, true
		}
	}
	return nil, false
}

// Column returns the column with the given name, compared
// case-insensitively, and whether it exists.
func (t Table) Column(name string) (*TableColumn, bool) {
	for i := range t.Columns {
		if strings.EqualFold(t.Columns[i].Name, name) {
			return &t.Columns[i], true
		}
	}
	return nil, false
}

// schemaObject is a table-like entry of pragma_table_list.
type schemaObject struct {
	name string
	kind TableKind
}

// catalogObjects returns the user tables, views and virtual tables of the main
// schema, sorted by name, skipping sqlite_* tables and shadow tables.
func catalogObjects(ctx context.Context, db *sql.DB) ([]schemaObject, error) {
	rows, err := db.QueryContext(ctx, `SELECT name, type FROM pragma_table_list WHERE schema = 'main'`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	defer rows.Close()
	var out []schemaObject
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		if strings.HasPrefix(strings.ToLower(name), "sqlite_") {
			continue
		}
		var kind TableKind
		switch typ {
		case "table":
			kind = KindTable
		case "view":
			kind = KindView
		case "virtual":
			kind = KindVirtual
		default: // "shadow": internal storage of FTS5, R*Tree and similar
			continue
		}
		out = append(out, schemaObject{name: name, kind: kind})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := strings.ToLower(out[i].name), strings.ToLower(out[j].name)
		if a != b {
			return a < b
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

// catalogReadTable reads one table's columns, keys, row count and samples.
func catalogReadTable(ctx context.Context, db *sql.DB, o schemaObject, opts CatalogOptions) (Table, error) {
	t := Table{Name: o.name, Kind: o.kind, RowCount: -1}
	var err error
	if t.Columns, err = catalogColumns(ctx, db, o.name); err != nil {
		return t, err
	}
	if o.kind == KindTable {
		if t.ForeignKeys, err = catalogForeignKeys(ctx, db, o.name); err != nil {
			return t, err
		}
	}
	stats := o.kind != KindView || opts.ViewStats
	if !stats {
		return t, nil
	}
	exactLimit := opts.ExactCountRows
	if hasRowidAlias(t.Columns) {
		exactLimit = math.MaxInt64 // the rowid is a user key: max(rowid) says nothing about the count
	}
	if t.RowCount, t.RowCountEstimated, err = catalogRowCount(ctx, db, o, exactLimit); err != nil {
		return t, err
	}
	if opts.MaxDistinct < 0 || o.kind == KindVirtual {
		return t, nil
	}
	if err := catalogSampleTable(ctx, db, &t, opts.MaxDistinct, opts.SampleScanRows); err != nil {
		return t, err
	}
	return t, nil
}

// catalogRowCount counts the rows of a table or view. An ordinary table
// whose largest rowid exceeds exactLimit is not counted: its largest rowid
// is returned as an estimate. WITHOUT ROWID tables are always counted.
func catalogRowCount(ctx context.Context, db *sql.DB, o schemaObject, exactLimit int64) (n int64, estimated bool, err error) {
	q := QuoteIdent(o.name)
	if o.kind == KindTable {
		var maxRowid sql.NullInt64
		err := db.QueryRowContext(ctx, "SELECT max(rowid) FROM "+q).Scan(&maxRowid)
		switch {
		case err == nil && maxRowid.Valid && maxRowid.Int64 > exactLimit:
			return maxRowid.Int64, true, nil
		case err != nil && ctx.Err() != nil:
			return 0, false, fmt.Errorf("count rows of %s: %w", o.name, err)
		} // else small, empty, or WITHOUT ROWID ("no such column: rowid"): count
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+q).Scan(&n); err != nil {
		return 0, false, fmt.Errorf("count rows of %s: %w", o.name, err)
	}
	return n, false, nil
}

// hasRowidAlias reports whether a table's primary key is a single INTEGER
// column, which SQLite makes an alias of the rowid.
func hasRowidAlias(cols []TableColumn) bool {
	n, alias := 0, false
	for _, c := range cols {
		if c.PrimaryKey > 0 {
			n++
			alias = strings.EqualFold(strings.TrimSpace(c.Type), "INTEGER")
		}
	}
	return n == 1 && alias
}

// catalogColumns reads the columns of a table or view with pragma_table_xinfo.
func catalogColumns(ctx context.Context, db *sql.DB, table string) ([]TableColumn, error) {
	rows, err := db.QueryContext(ctx,
		`SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid`, table)
	if err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	defer rows.Close()
	var cols []TableColumn
	for rows.Next() {
		var (
			c      TableColumn
			dflt   sql.NullString
			hidden int
		)
		if err := rows.Scan(&c.Name, &c.Type, &c.NotNull, &dflt, &c.PrimaryKey, &hidden); err != nil {
			return nil, fmt.Errorf("read columns of %s: %w", table, err)
		}
		if hidden == 1 { // hidden column of a virtual table (FTS5 rank, table-named column)
			continue
		}
		c.Default = dflt.String
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read columns of %s: %w", table, err)
	}
	return cols, nil
}

// catalogForeignKeys reads the declared foreign keys of a table.
func catalogForeignKeys(ctx context.Context, db *sql.DB, table string) ([]ForeignKey, error) {
	rows, err := db.QueryContext(ctx,
		`SELECT id, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq`, table)
	if err != nil {
		return nil, fmt.Errorf("read foreign keys of %s: %w", table, err)
	}
	defer rows.Close()
	var (
		fks    []ForeignKey
		lastID = -1
	)
	for rows.Next() {
		var (
			id       int
			ref, src string
			to       sql.NullString
		)
		if err := rows.Scan(&id, &ref, &src, &to); err != nil {
			return nil, fmt.Errorf("read foreign keys of %s: %w", table, err)
		}
		if id != lastID {
			fks = append(fks, ForeignKey{RefTable: ref})
			lastID = id
		}
		fk := &fks[len(fks)-1]
		fk.Columns = append(fk.Columns, src)
		fk.RefColumns = append(fk.RefColumns, to.String)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read foreign keys of %s: %w", table, err)
	}
	return fks, nil
}

// catalogResolveFKs fills referenced columns left implicit in a
// declaration ("REFERENCES patients") with the referenced primary key.
func catalogResolveFKs(cat *Catalog) {
	for ti := range cat.Tables {
		for fi := range cat.Tables[ti].ForeignKeys {
			fk := &cat.Tables[ti].ForeignKeys[fi]
			ref, ok := cat.Table(fk.RefTable)
			if !ok {
				continue
			}
			pk := ref.primaryKey()
			for i := range fk.RefColumns {
				if fk.RefColumns[i] == "" && i < len(pk) {
					fk.RefColumns[i] = pk[i]
				}
			}
		}
	}
}

// primaryKey returns the names of the primary-key columns in key order.
func (t Table) primaryKey() []string {
	var pk []string
	for pos := 1; ; pos++ {
		found := false
		for _, c := range t.Columns {
			if c.PrimaryKey == pos {
				pk = append(pk, c.Name)
				found = true
			}
		}
		if !found {
			return pk
		}
	}
}

// catalogSampleable reports whether a column of the declared type may hold text
// worth sampling: SQLite TEXT affinity (CHAR, CLOB, TEXT in the type) or no
// declared type at all (typical of CSV imports).
func catalogSampleable(declType string) bool {
	t := strings.ToUpper(declType)
	if strings.TrimSpace(t) == "" {
		return true
	}
	if strings.Contains(t, "INT") { // INTEGER affinity wins over TEXT
		return false
	}
	return strings.Contains(t, "CHAR") || strings.Contains(t, "CLOB") || strings.Contains(t, "TEXT")
}

// catalogProbeRows is how many leading rows the first sampling stage reads
// per column to rule out high-cardinality columns cheaply.
const catalogProbeRows = 5_000

// catalogSampleTable fills Samples of the table's low-cardinality text
// columns, reading at most scanRows rows (the first ones) of the table.
//
// A column is low-cardinality when it has at most maxDistinct distinct text
// values. Finding that out means reading every row, which done column by
// column costs one table scan per column: 0.3 s for the 28 text columns of
// the 72k-row MIMIC-IV demo emar_detail, and seconds on full MIMIC-IV. So
// sampling goes in two stages: each column's distinct values in the first
// catalogProbeRows rows (a cheap query that stops as soon as maxDistinct is
// exceeded) rule out identifiers, names and free text; then a single scan
// collects the distinct values of all the remaining columns at once.
func catalogSampleTable(ctx context.Context, db *sql.DB, t *Table, maxDistinct, scanRows int) error {
	partial := t.RowCount > int64(scanRows)
	probeOnly := t.RowCount <= catalogProbeRows // the probe reads every row
	var remaining []int
	for i := range t.Columns {
		c := &t.Columns[i]
		if !catalogSampleable(c.Type) {
			continue
		}
		vals, err := catalogProbe(ctx, db, t.Name, c.Name, maxDistinct, min(scanRows, catalogProbeRows))
		if err != nil {
			return err
		}
		if vals == nil {
			continue // above maxDistinct already, or no text at all
		}
		if probeOnly {
			c.Samples = catalogSampleSet(vals)
		} else {
			remaining = append(remaining, i)
		}
	}
	if len(remaining) > 0 {
		if err := catalogScanDistinct(ctx, db, t, remaining, maxDistinct, scanRows); err != nil {
			return err
		}
	}
	for i := range t.Columns {
		t.Columns[i].SamplesPartial = partial && t.Columns[i].Samples != nil
	}
	return nil
}

// catalogProbe returns the distinct text values of a column among its first
// rows rows, or nil when there are more than maxDistinct (or none).
func catalogProbe(ctx context.Context, db *sql.DB, table, column string, maxDistinct, rows int) ([]string, error) {
	col := QuoteIdent(column)
	// Only the start of each value leaves SQLite (samples are cut to
	// maxSampleLen anyway): a column of huge texts must not be copied
	// whole into memory.
	q := fmt.Sprintf("SELECT DISTINCT substr(%s, 1, %d) FROM (SELECT %s FROM %s LIMIT %d) WHERE typeof(%s) = 'text' LIMIT %d",
		col, sampleCompareLen, col, QuoteIdent(table), rows, col, maxDistinct+1)
	rs, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("sample %s.%s: %w", table, column, err)
	}
	defer rs.Close()
	var vals []string
	for rs.Next() {
		var v string
		if err := rs.Scan(&v); err != nil {
			return nil, fmt.Errorf("sample %s.%s: %w", table, column, err)
		}
		vals = append(vals, v)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("sample %s.%s: %w", table, column, err)
	}
	if len(vals) == 0 || len(vals) > maxDistinct {
		return nil, nil
	}
	return vals, nil
}

// catalogScanDistinct reads the first scanRows rows of a table once and sets
// the Samples of the given columns that have at most maxDistinct distinct
// text values. Each column's distinct values come back as one JSON array;
// these columns had few values in the probe, so the arrays stay small
// unless a column changes character deep into the table (bounded by
// scanRows values).
func catalogScanDistinct(ctx context.Context, db *sql.DB, t *Table, cols []int, maxDistinct, scanRows int) error {
	inner := make([]string, len(cols))
	aggs := make([]string, len(cols))
	for k, i := range cols {
		col := QuoteIdent(t.Columns[i].Name)
		inner[k] = col
		aggs[k] = fmt.Sprintf("json_group_array(DISTINCT substr(%s, 1, %d)) FILTER (WHERE typeof(%s) = 'text')", col, sampleCompareLen, col)
	}
	q := fmt.Sprintf("SELECT %s FROM (SELECT %s FROM %s LIMIT %d)",
		strings.Join(aggs, ", "), strings.Join(inner, ", "), QuoteIdent(t.Name), scanRows)
	arrays := make([]sql.NullString, len(cols))
	dest := make([]any, len(cols))
	for k := range arrays {
		dest[k] = &arrays[k]
	}
	if err := db.QueryRowContext(ctx, q).Scan(dest...); err != nil {
		return fmt.Errorf("sample %s: %w", t.Name, err)
	}
	for k, i := range cols {
		var vals []string
		if arrays[k].Valid {
			if err := json.Unmarshal([]byte(arrays[k].String), &vals); err != nil {
				return fmt.Errorf("sample %s.%s: %w", t.Name, t.Columns[i].Name, err)
			}
		}
		if len(vals) > 0 && len(vals) <= maxDistinct {
			t.Columns[i].Samples = catalogSampleSet(vals)
		}
	}
	return nil
}

// catalogSampleSet turns distinct values into Samples: cut to maxSampleLen
// characters, deduplicated again after cutting, sorted.
func catalogSampleSet(vals []string) []string {
	seen := make(map[string]bool, len(vals))
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		v = catalogTruncate(v, maxSampleLen)
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// catalogTruncate cuts s to at most n characters, marking a cut with "…".
func catalogTruncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
