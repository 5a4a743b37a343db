package datasets

import (
	"fmt"
	"strings"
)

// Document returns the text a retriever embeds or scores a question
// against for this table: its name (and the name split into words), kind
// and size, description, synonyms, every column with its declared type,
// meaning and sample values, its joins and example questions. The text
// depends only on the table, so it is stable across runs (sample values are
// sorted).
func (t Table) Document() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", docKindNoun(t.Kind), t.Name)
	if w := docNameWords(t.Name); w != strings.ToLower(t.Name) {
		fmt.Fprintf(&b, " (%s)", w)
	}
	if t.RowCount >= 0 {
		fmt.Fprintf(&b, ", %s", rowsText(&t))
	}
	b.WriteString(".\n")
	if t.Doc.Description != "" {
		b.WriteString(t.Doc.Description)
		b.WriteString("\n")
	}
	if len(t.Doc.Synonyms) > 0 {
		fmt.Fprintf(&b, "Also called: %s.\n", strings.Join(t.Doc.Synonyms, "; "))
	}
	if len(t.Columns) > 0 {
		b.WriteString("Columns:\n")
	}
	for _, c := range t.Columns {
		fmt.Fprintf(&b, "- %s", c.Name)
		if w := docNameWords(c.Name); w != strings.ToLower(c.Name) {
			fmt.Fprintf(&b, " (%s)", w)
		}
		if c.Type != "" {
			fmt.Fprintf(&b, " %s", c.Type)
		}
		if c.Doc != "" {
			fmt.Fprintf(&b, ": %s", c.Doc)
		}
		if vals := docNonEmpty(c.Samples); len(vals) > 0 {
			label := "Values"
			if c.SamplesPartial {
				label = "Values include"
			}
			fmt.Fprintf(&b, " %s: %s.", label, strings.Join(vals, ", "))
		}
		b.WriteString("\n")
	}
	if len(t.Doc.Joins) > 0 {
		b.WriteString("Joins:\n")
		for _, j := range t.Doc.Joins {
			fmt.Fprintf(&b, "- %s\n", j)
		}
	}
	if len(t.Doc.Examples) > 0 {
		b.WriteString("Example questions:\n")
		for _, e := range t.Doc.Examples {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	return b.String()
}

// Text returns a prompt-sized description of the named tables for the SQL
// generator (all tables when no name is given): first the conventions
// (notes) of the known schemas these tables belong to, then for each table a
// comment with its description and size, a CREATE TABLE-like statement whose
// column lines carry the column's meaning and sample values (as SQL
// literals) in a trailing comment, and a comment listing its joins.
// Names are matched case-insensitively; unknown names are skipped and a
// table named twice is described once, in the order first named.
func (c *Catalog) Text(names ...string) string {
	var tables []*Table
	if len(names) == 0 {
		for i := range c.Tables {
			tables = append(tables, &c.Tables[i])
		}
	} else {
		seen := map[*Table]bool{}
		for _, n := range names {
			if t, ok := c.Table(n); ok && !seen[t] {
				seen[t] = true
				tables = append(tables, t)
			}
		}
	}

	var b strings.Builder
	for _, p := range c.Profiles {
		uses := false
		for _, t := range tables {
			uses = uses || t.Doc.Source == p.Name
		}
		if !uses {
			continue
		}
		fmt.Fprintf(&b, "-- Schema: %s\n", p.Title)
		for _, n := range p.Notes {
			fmt.Fprintf(&b, "-- Note: %s\n", docOneLine(n))
		}
		b.WriteString("\n")
	}
	for i, t := range tables {
		if i > 0 {
			b.WriteString("\n")
		}
		catalogWriteCreate(&b, t)
	}
	return b.String()
}

// catalogWriteCreate writes one table of Catalog.Text.
func catalogWriteCreate(b *strings.Builder, t *Table) {
	size := ""
	if t.RowCount >= 0 {
		size = " (" + rowsText(t) + ")"
	}
	fmt.Fprintf(b, "-- %s%s: %s\n", t.Name, size, t.Doc.Description)
	stmt := "CREATE TABLE"
	switch t.Kind {
	case KindView:
		stmt = "CREATE VIEW"
	case KindVirtual:
		stmt = "CREATE VIRTUAL TABLE"
	}
	fmt.Fprintf(b, "%s %s (\n", stmt, t.SQLName())

	type line struct{ def, comment string }
	var lines []line
	pk := t.primaryKey()
	for _, c := range t.Columns {
		def := catalogIdent(c.Name)
		if c.Type != "" {
			def += " " + c.Type
		}
		if c.NotNull {
			def += " NOT NULL"
		}
		if c.Default != "" {
			def += " DEFAULT " + c.Default
		}
		if len(pk) == 1 && c.PrimaryKey == 1 {
			def += " PRIMARY KEY"
		}
		comment := c.Doc
		if len(c.Samples) > 0 {
			label := "Values"
			if c.SamplesPartial {
				label = "Values include"
			}
			quoted := make([]string, len(c.Samples))
			for i, s := range c.Samples {
				quoted[i] = QuoteString(s)
			}
			comment = strings.TrimSpace(comment + " " + label + ": " + strings.Join(quoted, ", ") + ".")
		}
		lines = append(lines, line{def, comment})
	}
	if len(pk) > 1 {
		quoted := make([]string, len(pk))
		for i, p := range pk {
			quoted[i] = catalogIdent(p)
		}
		lines = append(lines, line{def: "PRIMARY KEY (" + strings.Join(quoted, ", ") + ")"})
	}
	for i, l := range lines {
		b.WriteString("  ")
		b.WriteString(l.def)
		if i < len(lines)-1 {
			b.WriteString(",")
		}
		if l.comment != "" {
			b.WriteString(" -- ")
			b.WriteString(docOneLine(l.comment))
		}
		b.WriteString("\n")
	}
	b.WriteString(");\n")
	if len(t.Doc.Joins) > 0 {
		fmt.Fprintf(b, "-- Joins: %s\n", strings.Join(t.Doc.Joins, "; "))
	}
}

// rowsText renders a table's row count: "120 rows", "about 118171367 rows".
func rowsText(t *Table) string {
	if t.RowCountEstimated {
		return fmt.Sprintf("about %d rows", t.RowCount)
	}
	return fmt.Sprintf("%d rows", t.RowCount)
}

// docNonEmpty returns the values that are not blank.
func docNonEmpty(vals []string) []string {
	var out []string
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			out = append(out, v)
		}
	}
	return out
}

// catalogIdent returns name as written when it is a plain identifier that is not
// an SQL keyword, else quoted.
func catalogIdent(name string) string {
	if name == "" || catalogKeyword(name) {
		return QuoteIdent(name)
	}
	for i, r := range name {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return QuoteIdent(name)
		}
	}
	return name
}

// catalogKeyword reports whether name is an SQLite keyword that cannot be used
// as a bare identifier in common positions.
func catalogKeyword(name string) bool {
	switch strings.ToUpper(name) {
	case "ABORT", "ACTION", "ADD", "AFTER", "ALL", "ALTER", "ALWAYS", "ANALYZE", "AND", "AS", "ASC",
		"ATTACH", "AUTOINCREMENT", "BEFORE", "BEGIN", "BETWEEN", "BY", "CASCADE", "CASE", "CAST",
		"CHECK", "COLLATE", "COLUMN", "COMMIT", "CONFLICT", "CONSTRAINT", "CREATE", "CROSS",
		"CURRENT", "CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DATABASE", "DEFAULT",
		"DEFERRABLE", "DEFERRED", "DELETE", "DESC", "DETACH", "DISTINCT", "DO", "DROP", "EACH",
		"ELSE", "END", "ESCAPE", "EXCEPT", "EXCLUDE", "EXCLUSIVE", "EXISTS", "EXPLAIN", "FAIL",
		"FILTER", "FIRST", "FOLLOWING", "FOR", "FOREIGN", "FROM", "FULL", "GENERATED", "GLOB",
		"GROUP", "GROUPS", "HAVING", "IF", "IGNORE", "IMMEDIATE", "IN", "INDEX", "INDEXED",
		"INITIALLY", "INNER", "INSERT", "INSTEAD", "INTERSECT", "INTO", "IS", "ISNULL", "JOIN",
		"KEY", "LAST", "LEFT", "LIKE", "LIMIT", "MATCH", "MATERIALIZED", "NATURAL", "NO", "NOT",
		"NOTHING", "NOTNULL", "NULL", "NULLS", "OF", "OFFSET", "ON", "OR", "ORDER", "OTHERS",
		"OUTER", "OVER", "PARTITION", "PLAN", "PRAGMA", "PRECEDING", "PRIMARY", "QUERY", "RAISE",
		"RANGE", "RECURSIVE", "REFERENCES", "REGEXP", "REINDEX", "RELEASE", "RENAME", "REPLACE",
		"RESTRICT", "RETURNING", "RIGHT", "ROLLBACK", "ROW", "ROWS", "SAVEPOINT", "SELECT", "SET",
		"TABLE", "TEMP", "TEMPORARY", "THEN", "TIES", "TO", "TRANSACTION", "TRIGGER", "UNBOUNDED",
		"UNION", "UNIQUE", "UPDATE", "USING", "VACUUM", "VALUES", "VIEW", "VIRTUAL", "WHEN",
		"WHERE", "WINDOW", "WITH", "WITHOUT":
		return true
	}
	return false
}
