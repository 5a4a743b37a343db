package cohort

import (
	"regexp"
	"strings"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// dialectPrompt is what the prompts say about the SQL the source's engine
// speaks (generate.tmpl's .Dialect).
type dialectPrompt struct {
	// Name is the dialect's name for the model: "SQLite", "PostgreSQL".
	Name string
	// TextMatch is the rule for case-insensitive free-text filters.
	TextMatch string
	// Rules are the dialect's further rules, one line each.
	Rules []string
}

// dialectOf returns the prompt text of an engine's dialect; SQLite when
// unknown.
func dialectOf(d datasets.Dialect) dialectPrompt {
	if d == datasets.DialectPostgres {
		return dialectPrompt{
			Name:      "PostgreSQL",
			TextMatch: "column ILIKE '%term%'",
			Rules: []string{
				"Write table names as they are listed, schema-qualified where the schema shows one (mimiciv_hosp.patients); identifiers are lower case unless listed in double quotes.",
				"Cast with :: (valuenum::numeric, charttime::date); round a double precision with ROUND(x::numeric, 2).",
				"Write times as typed literals (TIMESTAMP '2100-12-31 23:59:00', DATE '2100-12-31'); do date arithmetic with intervals (charttime >= TIMESTAMP '2100-12-31 23:59:00' - INTERVAL '1 year'), durations with EXTRACT(EPOCH FROM (b - a)) / 86400 for days or AGE(b, a); take parts with EXTRACT(YEAR FROM t) or DATE_TRUNC('month', t); never strftime, julianday or datetime().",
				"Every subquery in FROM needs an alias; a boolean is TRUE/FALSE; text is joined with ||.",
			},
		}
	}
	return dialectPrompt{Name: "SQLite", TextMatch: "LOWER(column) LIKE '%term%'"}
}

// unknownNames match the errors of both engines about names that do not
// exist, with the kind of name (column, table, function) and the name:
// SQLite's "no such column: x", PostgreSQL's `column "x" does not exist`,
// `column p.x does not exist`, `relation "x" does not exist`,
// `function x(integer) does not exist`, `missing FROM-clause entry for
// table "x"`.
var unknownNames = []struct {
	re         func() *regexp.Regexp
	kind, name int // submatch indexes; kind 0 means "table"
}{
	{lazyre.New(`no such (column|table|function): ([^\s,;]+)`), 1, 2},
	{lazyre.New(`(column) ("[^"]+"|[^\s"]+) does not exist`), 1, 2},
	{lazyre.New(`relation ("[^"]+"|[^\s"]+) does not exist`), 0, 1},
	{lazyre.New(`(function) ([^\s(]+)\([^)]*\) does not exist`), 1, 2},
	{lazyre.New(`missing FROM-clause entry for table ("[^"]+"|[^\s"]+)`), 0, 1},
}

// unknownNamesIn returns the unknown names an engine's error names, as
// [kind, name] pairs ("column", "sex").
func unknownNamesIn(msg string) [][2]string {
	var out [][2]string
	for _, u := range unknownNames {
		for _, m := range u.re().FindAllStringSubmatch(msg, -1) {
			kind := "table"
			if u.kind > 0 {
				kind = m[u.kind]
			}
			out = append(out, [2]string{kind, strings.Trim(m[u.name], `"'`+"`")})
		}
	}
	return out
}

// tableSQL returns the SQL name of a catalog table for a statement the
// pipeline writes itself (a value check), or name quoted when the catalog
// has no such table.
func tableSQL(cat *datasets.Catalog, name string) string {
	if t, ok := cat.Table(name); ok {
		return datasets.QualifiedName(t)
	}
	return datasets.QuoteIdent(name)
}
