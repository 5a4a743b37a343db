package postgres

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

var _ datasets.Engine = (*Engine)(nil)

// smallTableRows is the largest table the catalog counts exactly: a bounded
// count(*) of at most this many rows takes milliseconds. Larger tables
// report pg_class.reltuples, the estimate of the last VACUUM or ANALYZE
// (Table.RowCountEstimated); CountRows counts one exactly on request.
const smallTableRows = 100_000

// Sampling bounds, as for SQLite (see datasets.CatalogOptions).
const (
	maxSampleLen     = 80
	sampleCompareLen = 4 * maxSampleLen
)

// relation is a table-like object of the catalog.
type relation struct {
	oid      uint32
	schema   string
	name     string
	kind     datasets.TableKind
	reltup   float64 // pg_class.reltuples; -1 when never analysed
	comment  string
	material bool // a materialised view: it has stored rows
}

// Catalog reads the tables, views and materialised views of the engine's
// schemas that the role may read: columns with their types, primary and
// foreign keys, COMMENT ON text, row counts (exact for small tables,
// pg_class.reltuples estimates for larger ones) and the values of
// low-cardinality text columns (pre-selected with pg_stats, read from a
// TABLESAMPLE of large tables); then documents every table with the
// curated documentation of the known schema it matches (MIMIC-IV in
// mimic-code's layout matches by table name within its schemas), else from
// its structure and comments. Every statement runs in the engine's
// read-only transactions.
func (e *Engine) Catalog(ctx context.Context, opts datasets.CatalogOptions) (*datasets.Catalog, error) {
	if opts.MaxDistinct == 0 {
		opts.MaxDistinct = datasets.DefaultMaxDistinct
	}
	if opts.SampleScanRows <= 0 {
		opts.SampleScanRows = datasets.DefaultSampleScanRows
	}
	cat := &datasets.Catalog{}
	var com comments
	err := e.withTx(ctx, true, func(conn *pgx.Conn) error {
		rels, err := e.catalogRelations(ctx, conn)
		if err != nil {
			return err
		}
		names := displayNames(rels)
		byOID := map[uint32]int{}
		for i, r := range rels {
			byOID[r.oid] = i
			cat.Tables = append(cat.Tables, datasets.Table{
				Name: names[i], Schema: r.schema, Kind: r.kind, RowCount: -1,
			})
		}
		if com, err = catalogColumns(ctx, conn, rels, byOID, cat); err != nil {
			return err
		}
		if err := catalogKeys(ctx, conn, rels, byOID, names, cat); err != nil {
			return err
		}
		stats, err := catalogDistinct(ctx, conn, e.schemas)
		if err != nil {
			return err
		}
		for i, r := range rels {
			if err := ctx.Err(); err != nil {
				return err
			}
			opts.Progress.Send(progress.Report{Stage: "catalog: " + names[i], Done: int64(i), Total: int64(len(rels)), Unit: "tables"})
			t := &cat.Tables[i]
			if r.kind == datasets.KindView && !r.material && !opts.ViewStats {
				continue
			}
			if err := catalogCount(ctx, conn, r, t); err != nil {
				return err
			}
			if opts.MaxDistinct < 0 {
				continue
			}
			if err := catalogSamples(ctx, conn, r, t, stats, opts); err != nil {
				return err
			}
		}
		opts.Progress.Send(progress.Report{Stage: "catalog", Done: int64(len(rels)), Total: int64(len(rels)), Unit: "tables"})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the catalog of %s: %w", e.describe, e.translate(ctx, "", err))
	}
	if err := datasets.DocumentCatalog(cat, opts); err != nil {
		return nil, err
	}
	com.apply(cat)
	return cat, nil
}

// comments holds the COMMENT ON text of tables (by catalog name) and
// columns (by catalog name and column).
type comments struct {
	tables  map[string]string
	columns map[[2]string]string
}

// apply puts COMMENT ON text where the documentation was generated: a
// DBA's comment says more than a table's name.
func (com comments) apply(cat *datasets.Catalog) {
	tableComments, columnComments := com.tables, com.columns
	for i := range cat.Tables {
		t := &cat.Tables[i]
		if t.Doc.Source != datasets.GeneratedDocSource {
			continue
		}
		if c := tableComments[t.Name]; c != "" {
			t.Doc.Description = oneLine(c) + " " + t.Doc.Description
		}
		for j := range t.Columns {
			if c := columnComments[[2]string{t.Name, t.Columns[j].Name}]; c != "" {
				t.Columns[j].Doc = oneLine(c)
			}
		}
	}
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// catalogRelations lists the readable tables, views and materialised views
// of the engine's schemas (partitions left out: their parent is listed),
// in search_path order then by name.
func (e *Engine) catalogRelations(ctx context.Context, conn *pgx.Conn) ([]relation, error) {
	rows, err := conn.Query(ctx, `
SELECT c.oid, n.nspname::text, c.relname::text, c.relkind::text, c.reltuples::float8,
       coalesce(obj_description(c.oid, 'pg_class'), '')
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = ANY($1::text[])
   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
   AND NOT c.relispartition
   AND has_table_privilege(c.oid, 'SELECT')
 ORDER BY array_position($1::text[], n.nspname::text), lower(c.relname), c.relname`, e.schemas)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	var out []relation
	for rows.Next() {
		var r relation
		var kind string
		if err := rows.Scan(&r.oid, &r.schema, &r.name, &kind, &r.reltup, &r.comment); err != nil {
			return nil, fmt.Errorf("list tables: %w", err)
		}
		switch kind {
		case "v":
			r.kind = datasets.KindView
		case "m":
			r.kind, r.material = datasets.KindView, true
		default:
			r.kind = datasets.KindTable
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	return out, nil
}

// displayNames names each relation by its bare name, or schema.name where
// two schemas hold the same name.
func displayNames(rels []relation) []string {
	count := map[string]int{}
	for _, r := range rels {
		count[strings.ToLower(r.name)]++
	}
	names := make([]string, len(rels))
	for i, r := range rels {
		names[i] = r.name
		if count[strings.ToLower(r.name)] > 1 {
			names[i] = r.schema + "." + r.name
		}
	}
	return names
}

// catalogColumns reads every relation's columns in one query, and the
// comments on tables and columns.
func catalogColumns(ctx context.Context, conn *pgx.Conn, rels []relation, byOID map[uint32]int, cat *datasets.Catalog) (comments, error) {
	com := comments{tables: map[string]string{}, columns: map[[2]string]string{}}
	oids := make([]uint32, len(rels))
	for i, r := range rels {
		oids[i] = r.oid
		if r.comment != "" {
			com.tables[cat.Tables[i].Name] = r.comment
		}
	}
	rows, err := conn.Query(ctx, `
SELECT a.attrelid, a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       coalesce(pg_get_expr(d.adbin, d.adrelid), ''), coalesce(col_description(a.attrelid, a.attnum), '')
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid = ANY($1::oid[]) AND a.attnum > 0 AND NOT a.attisdropped
 ORDER BY a.attrelid, a.attnum`, oids)
	if err != nil {
		return com, fmt.Errorf("read columns: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			oid     uint32
			c       datasets.TableColumn
			comment string
		)
		if err := rows.Scan(&oid, &c.Name, &c.Type, &c.NotNull, &c.Default, &comment); err != nil {
			return com, fmt.Errorf("read columns: %w", err)
		}
		t := &cat.Tables[byOID[oid]]
		t.Columns = append(t.Columns, c)
		if comment != "" {
			com.columns[[2]string{t.Name, c.Name}] = comment
		}
	}
	if err := rows.Err(); err != nil {
		return com, fmt.Errorf("read columns: %w", err)
	}
	return com, nil
}

// catalogKeys reads primary and foreign keys. A foreign key to a table
// outside the catalog names it schema-qualified.
func catalogKeys(ctx context.Context, conn *pgx.Conn, rels []relation, byOID map[uint32]int, names []string, cat *datasets.Catalog) error {
	oids := make([]uint32, len(rels))
	for i, r := range rels {
		oids[i] = r.oid
	}
	rows, err := conn.Query(ctx, `
SELECT c.conrelid, c.contype::text,
       ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i)
               JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i),
       coalesce(c.confrelid, 0), coalesce(rn.nspname::text, ''), coalesce(rc.relname::text, ''),
       ARRAY(SELECT a.attname::text FROM unnest(c.confkey) WITH ORDINALITY k(n, i)
               JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.n ORDER BY k.i)
  FROM pg_constraint c
  LEFT JOIN pg_class rc ON rc.oid = c.confrelid
  LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace
 WHERE c.conrelid = ANY($1::oid[]) AND c.contype IN ('p', 'f')
 ORDER BY c.conrelid, c.contype, c.conname`, oids)
	if err != nil {
		return fmt.Errorf("read keys: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			oid, refOID      uint32
			typ, rSch, rName string
			cols, refCols    []string
		)
		if err := rows.Scan(&oid, &typ, &cols, &refOID, &rSch, &rName, &refCols); err != nil {
			return fmt.Errorf("read keys: %w", err)
		}
		t := &cat.Tables[byOID[oid]]
		if typ == "p" {
			for pos, name := range cols {
				for j := range t.Columns {
					if t.Columns[j].Name == name {
						t.Columns[j].PrimaryKey = pos + 1
					}
				}
			}
			continue
		}
		ref := rSch + "." + rName
		if i, ok := byOID[refOID]; ok {
			ref = names[i]
		}
		t.ForeignKeys = append(t.ForeignKeys, datasets.ForeignKey{Columns: cols, RefTable: ref, RefColumns: refCols})
	}
	return rows.Err()
}

// distinctStats holds pg_stats.n_distinct by schema, table and column:
// positive, a count of distinct values; negative, minus their share of the
// rows.
type distinctStats map[[3]string]float64

// catalogDistinct reads the planner's distinct-value estimates of the
// schemas' columns (those the role may read).
func catalogDistinct(ctx context.Context, conn *pgx.Conn, schemas []string) (distinctStats, error) {
	rows, err := conn.Query(ctx, `SELECT schemaname::text, tablename::text, attname::text, n_distinct::float8
  FROM pg_stats WHERE schemaname = ANY($1::text[]) AND NOT inherited`, schemas)
	if err != nil {
		return nil, fmt.Errorf("read column statistics: %w", err)
	}
	defer rows.Close()
	out := distinctStats{}
	for rows.Next() {
		var s, t, c string
		var n float64
		if err := rows.Scan(&s, &t, &c, &n); err != nil {
			return nil, fmt.Errorf("read column statistics: %w", err)
		}
		out[[3]string{s, t, c}] = n
	}
	return out, rows.Err()
}

// qualified returns the relation's name for SQL.
func (r relation) qualified() string { return pgx.Identifier{r.schema, r.name}.Sanitize() }

// catalogCount fills a table's row count: exact up to smallTableRows
// (counted with a bounded scan), else the reltuples estimate.
func catalogCount(ctx context.Context, conn *pgx.Conn, r relation, t *datasets.Table) error {
	if r.reltup > smallTableRows {
		t.RowCount, t.RowCountEstimated = int64(math.Round(r.reltup)), true
		return nil
	}
	var n int64
	q := fmt.Sprintf("SELECT count(*) FROM (SELECT 1 FROM %s LIMIT %d) AS s", r.qualified(), smallTableRows+1)
	if err := conn.QueryRow(ctx, q).Scan(&n); err != nil {
		return fmt.Errorf("count rows of %s: %w", t.Name, err)
	}
	t.RowCount = n
	if n > smallTableRows { // statistics out of date
		t.RowCount, t.RowCountEstimated = max(n, int64(math.Round(r.reltup))), true
	}
	return nil
}

// sampleable reports whether a column type holds text worth sampling.
func sampleable(typ string) bool {
	t := strings.ToLower(typ)
	return strings.Contains(t, "char") || t == "text" || t == "citext" || t == "name"
}

// catalogSamples fills the Samples of a table's low-cardinality text
// columns. The planner's statistics rule out columns with many distinct
// values; the others are read from at most SampleScanRows rows, a
// TABLESAMPLE of a larger table, in one statement for the table.
func catalogSamples(ctx context.Context, conn *pgx.Conn, r relation, t *datasets.Table, stats distinctStats, opts datasets.CatalogOptions) error {
	var cols []int
	for i, c := range t.Columns {
		if !sampleable(c.Type) {
			continue
		}
		if n, ok := stats[[3]string{r.schema, r.name, c.Name}]; ok {
			if n > float64(opts.MaxDistinct) || (n < 0 && -n*float64(max(t.RowCount, 1)) > float64(opts.MaxDistinct)) {
				continue
			}
		}
		cols = append(cols, i)
	}
	if len(cols) == 0 || t.RowCount == 0 {
		return nil
	}
	partial := t.RowCount > int64(opts.SampleScanRows)
	from := r.qualified()
	if partial {
		pct := math.Min(100, 100*3*float64(opts.SampleScanRows)/float64(t.RowCount))
		from += fmt.Sprintf(" TABLESAMPLE SYSTEM (%.6f) REPEATABLE (42)", pct)
	}
	inner := make([]string, len(cols))
	aggs := make([]string, len(cols))
	for k, i := range cols {
		c := pgx.Identifier{t.Columns[i].Name}.Sanitize()
		inner[k] = fmt.Sprintf("%s AS c%d", c, k)
		aggs[k] = fmt.Sprintf("ARRAY(SELECT DISTINCT left(s.c%d::text, %d) FROM s WHERE s.c%d IS NOT NULL LIMIT %d)",
			k, sampleCompareLen, k, opts.MaxDistinct+1)
	}
	q := fmt.Sprintf("WITH s AS MATERIALIZED (SELECT %s FROM %s LIMIT %d) SELECT %s",
		strings.Join(inner, ", "), from, opts.SampleScanRows, strings.Join(aggs, ", "))
	vals := make([][]string, len(cols))
	dest := make([]any, len(cols))
	for k := range vals {
		dest[k] = &vals[k]
	}
	if err := conn.QueryRow(ctx, q).Scan(dest...); err != nil {
		return fmt.Errorf("sample %s: %w", t.Name, err)
	}
	for k, i := range cols {
		if len(vals[k]) == 0 || len(vals[k]) > opts.MaxDistinct {
			continue
		}
		t.Columns[i].Samples = sampleSet(vals[k])
		t.Columns[i].SamplesPartial = partial
	}
	return nil
}

// sampleSet cuts values to maxSampleLen characters (marking a cut with
// "…"), removes duplicates and sorts them.
func sampleSet(vals []string) []string {
	seen := map[string]bool{}
	out := make([]string, 0, len(vals))
	for _, v := range vals {
		if utf8.RuneCountInString(v) > maxSampleLen {
			v = string([]rune(v)[:maxSampleLen-1]) + "…"
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// CountRows counts the rows of a catalog table exactly (count(*) may read
// the whole table: it runs under the engine's timeout). name is a catalog
// name or schema.name.
func (e *Engine) CountRows(ctx context.Context, name string) (int64, error) {
	schema, table := "", name
	if i := strings.IndexByte(name, '.'); i >= 0 {
		schema, table = name[:i], name[i+1:]
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout+cancelGrace)
	defer cancel()
	var n int64
	err := e.withTx(ctx, true, func(conn *pgx.Conn) error {
		if schema == "" {
			for _, s := range e.schemas {
				var ok bool
				if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", pgx.Identifier{s, table}.Sanitize()).Scan(&ok); err != nil {
					return err
				}
				if ok {
					schema = s
					break
				}
			}
			if schema == "" {
				return refuse("", "no table %q in schemas %s", name, strings.Join(e.schemas, ", "))
			}
		} else if !contains(e.schemas, schema) {
			return refuse("", "schema %q is not among the source's schemas (%s)", schema, strings.Join(e.schemas, ", "))
		}
		return conn.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, table}.Sanitize()).Scan(&n)
	})
	if err != nil {
		return 0, e.translate(ctx, "", err)
	}
	return n, nil
}
