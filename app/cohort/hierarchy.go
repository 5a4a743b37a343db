package cohort

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// Limits of the key analysis.
const (
	// maxKeyCheckRows is the largest table whose columns are checked for
	// uniqueness: owners of keys (patients, admissions, stays,
	// dictionaries) are much smaller than the event tables referring to
	// them.
	maxKeyCheckRows = 5_000_000
	// inclusionSample is how many distinct key values of a referring table
	// are looked up in a candidate owner.
	inclusionSample = 200
	// minInclusion is the share of sampled values an owner must hold for
	// the reference to count.
	minInclusion = 0.9
)

// joinCond matches one equality of a documented join, "a.x = b.y".
var joinCond = lazyre.New(`([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)`)

// hierarchy is the many-to-one structure of a database: each row of a
// child table belongs to one row of each parent (a lab result to a lab
// test of the dictionary and to an admission; an ICU stay to an admission;
// an admission to a patient). Indirect parents are left out (transitive
// reduction): an ICU chart event's parent is its ICU stay, whose parent is
// the admission.
type hierarchy struct {
	parents  [][]int
	children [][]int
	// edges describes each parent link as "child.col -> parent.col".
	edges []string
}

// tableColumn names a column of a table of the catalog.
type tableColumn struct {
	table  int
	column string // lower case
}

// buildHierarchy finds the tables that own a key (a column unique and
// never NULL in them, shared with other tables where it repeats) and links
// every table holding that key to its owner: through a documented join or
// declared foreign key when there is one, else when the values held are
// found in the owner. db (the engine's Scanner, in its dialect) may be
// nil: then only declared foreign keys and documented joins to a declared
// primary key count.
func buildHierarchy(ctx context.Context, db datasets.Scanner, cat *datasets.Catalog) (*hierarchy, error) {
	n := len(cat.Tables)
	idx := func(name string) int {
		return slices.IndexFunc(cat.Tables, func(t datasets.Table) bool { return strings.EqualFold(t.Name, name) })
	}
	// Documented and declared links, per (table, column).
	linked := map[tableColumn][]int{}
	addLink := func(a int, ac string, b int) {
		if a < 0 || b < 0 || a == b {
			return
		}
		k := tableColumn{a, strings.ToLower(ac)}
		if !slices.Contains(linked[k], b) {
			linked[k] = append(linked[k], b)
		}
	}
	for i, t := range cat.Tables {
		for _, j := range t.Doc.Joins {
			for _, m := range joinCond().FindAllStringSubmatch(j, -1) {
				a, b := idx(m[1]), idx(m[3])
				if strings.EqualFold(m[2], m[4]) {
					addLink(a, m[2], b)
					addLink(b, m[4], a)
				}
			}
		}
		for _, fk := range t.ForeignKeys {
			if len(fk.Columns) == 1 {
				addLink(i, fk.Columns[0], idx(fk.RefTable))
			}
		}
	}
	// Key-like columns (named like identifiers, or named by a documented
	// join or foreign key) shared by several tables.
	joinCols := map[string]bool{}
	for k := range linked {
		joinCols[k.column] = true
	}
	holders := map[string][]int{}
	for i, t := range cat.Tables {
		for _, c := range t.Columns {
			l := strings.ToLower(c.Name)
			if keyLike(c.Name) || joinCols[l] {
				holders[l] = append(holders[l], i)
			}
		}
	}
	// Owners: tables where a shared column is unique and not NULL.
	owners := map[string][]int{}
	for col, hs := range holders {
		if len(hs) < 2 {
			continue
		}
		for _, ti := range hs {
			ok, err := ownsKey(ctx, db, &cat.Tables[ti], col)
			if err != nil {
				return nil, err
			}
			if ok {
				owners[col] = append(owners[col], ti)
			}
		}
		// A column unique in most of the tables holding it is a row number
		// (row_id), not the key of an entity.
		if len(owners[col])*2 > len(hs) {
			delete(owners, col)
		}
	}
	h := &hierarchy{parents: make([][]int, n), children: make([][]int, n)}
	type edge struct {
		child, parent int
		col           string
	}
	var edges []edge
	for col, os := range owners {
		for _, ti := range holders[col] {
			if slices.Contains(os, ti) {
				continue
			}
			doc := linked[tableColumn{ti, col}]
			var documented []int
			for _, o := range os {
				if slices.Contains(doc, o) {
					documented = append(documented, o)
				}
			}
			cands := documented
			if len(cands) == 0 && db != nil {
				for _, o := range os {
					in, err := included(ctx, db, &cat.Tables[ti], &cat.Tables[o], col)
					if err != nil {
						return nil, err
					}
					if in {
						cands = append(cands, o)
					}
				}
			}
			for _, o := range cands {
				edges = append(edges, edge{ti, o, col})
			}
		}
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.child != b.child {
			return a.child - b.child
		}
		if a.parent != b.parent {
			return a.parent - b.parent
		}
		return strings.Compare(a.col, b.col)
	})
	direct := make([][]int, n)
	for _, e := range edges {
		if !slices.Contains(direct[e.child], e.parent) {
			direct[e.child] = append(direct[e.child], e.parent)
		}
	}
	// Transitive reduction: drop child->parent when parent is reachable
	// through another parent.
	for c := range n {
		for _, p := range direct[c] {
			indirect := false
			for _, q := range direct[c] {
				if q != p && reaches(direct, q, p, map[int]bool{c: true}) {
					indirect = true
					break
				}
			}
			if !indirect {
				h.parents[c] = append(h.parents[c], p)
				h.children[p] = append(h.children[p], c)
			}
		}
	}
	for _, e := range edges {
		if slices.Contains(h.parents[e.child], e.parent) {
			h.edges = append(h.edges, fmt.Sprintf("%s.%s -> %s", cat.Tables[e.child].Name, e.col, cat.Tables[e.parent].Name))
		}
	}
	return h, nil
}

// keyLike reports whether a column is named like an identifier: "id",
// "*_id", "*Id", "*ID", "*UID".
func keyLike(name string) bool {
	l := strings.ToLower(name)
	return l == "id" || strings.HasSuffix(l, "_id") || strings.HasSuffix(name, "Id") ||
		strings.HasSuffix(name, "ID") || strings.HasSuffix(name, "UID")
}

// reaches reports whether to is an ancestor of (or is) from.
func reaches(parents [][]int, from, to int, seen map[int]bool) bool {
	if from == to {
		return true
	}
	if seen[from] {
		return false
	}
	seen[from] = true
	for _, p := range parents[from] {
		if reaches(parents, p, to, seen) {
			return true
		}
	}
	return false
}

// ownsKey reports whether column col of t is a key: declared as the
// table's only primary-key column, or (with a database) unique and never
// NULL in a non-empty table of at most maxKeyCheckRows rows.
func ownsKey(ctx context.Context, db datasets.Scanner, t *datasets.Table, col string) (bool, error) {
	c, ok := t.Column(col)
	if !ok {
		return false, nil
	}
	pk := 0
	for _, x := range t.Columns {
		if x.PrimaryKey > 0 {
			pk++
		}
	}
	if pk == 1 && c.PrimaryKey == 1 {
		return true, nil
	}
	if db == nil || t.Kind != datasets.KindTable || t.RowCount <= 0 || t.RowCount > maxKeyCheckRows {
		return false, nil
	}
	q := datasets.QuoteIdent(c.Name)
	n, err := datasets.ScanInt64s(ctx, db, fmt.Sprintf("SELECT count(*), count(%s), count(DISTINCT %s) FROM %s", q, q, datasets.QualifiedName(t)))
	if err != nil {
		return false, fmt.Errorf("check the key %s.%s: %w", t.Name, c.Name, err)
	}
	rows, nonNull, distinct := n[0], n[1], n[2]
	return rows > 0 && nonNull == rows && distinct == rows, nil
}

// included reports whether the values of col in child are (mostly) found
// in owner: a sample of up to inclusionSample distinct values, at least
// minInclusion of them present. An empty child gives false, and so do
// columns the database cannot compare (PostgreSQL: a text column of one
// table and an integer of the other).
func included(ctx context.Context, db datasets.Scanner, child, owner *datasets.Table, col string) (bool, error) {
	q := datasets.QuoteIdent(col)
	// Written for both dialects: subqueries aliased, no boolean sum.
	query := fmt.Sprintf(`SELECT count(*), coalesce(sum(CASE WHEN v IN (SELECT %s FROM %s) THEN 1 ELSE 0 END), 0)
		FROM (SELECT DISTINCT %s AS v FROM (SELECT %s FROM %s WHERE %s IS NOT NULL LIMIT 20000) AS s LIMIT %d) AS d`,
		q, datasets.QualifiedName(owner), q, q, datasets.QualifiedName(child), q, inclusionSample)
	n, err := datasets.ScanInt64s(ctx, db, query)
	if err != nil {
		var qe *datasets.QueryError
		if errors.As(err, &qe) && ctx.Err() == nil && db.Dialect() == datasets.DialectPostgres && strings.HasPrefix(qe.SQLState(), "42") {
			return false, nil // the types do not compare: not the same key
		}
		return false, fmt.Errorf("compare %s.%s with %s: %w", child.Name, col, owner.Name, err)
	}
	total, found := n[0], n[1]
	return total > 0 && float64(found) >= minInclusion*float64(total), nil
}
