package cohort

import (
	"encoding/json"
	"errors"
	"strings"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// ErrNoSQL is returned by ExtractSQL when a reply holds no SQL statement.
var ErrNoSQL = errors.New("the reply contains no SQL statement")

// fence matches a Markdown code fence and its info string.
var fence = lazyre.New("(?s)```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|$)")

// sqlStart finds the first word that can begin a reading statement.
var sqlStart = lazyre.New(`(?i)\b(SELECT|WITH)\b`)

// otherStart finds a statement of another kind (in capitals, or opening a
// line, so that English words such as "update" in prose are not taken for
// SQL). Such statements are extracted too: the read-only runner, not the
// extractor, decides what may run, and its refusal is what the model must
// hear.
var otherStart = lazyre.New(`\b(INSERT|UPDATE|DELETE|DROP|CREATE|ALTER|ATTACH|DETACH|PRAGMA|VACUUM|REPLACE|VALUES|EXPLAIN|REINDEX|ANALYZE|BEGIN|COMMIT)\b|(?im)^\s*(insert|update|delete|drop|create|alter|attach|detach|pragma|vacuum|replace|values|explain|reindex|analyze|begin|commit)\b`)

// ExtractSQL finds the SQL statement in a model's reply: a JSON object
// with an "sql" (or "query") field, a Markdown code fence (an ```sql one
// first), or prose around a statement (SELECT or WITH, or any other verb
// written in capitals or opening a line). The
// statement is returned without surrounding whitespace or a trailing
// semicolon; text after the first statement's terminating semicolon is
// dropped.
func ExtractSQL(reply string) (string, error) {
	text := strings.TrimSpace(reply)
	if text == "" {
		return "", ErrNoSQL
	}
	if s, ok := sqlFromJSON(text); ok {
		return ExtractSQL(s)
	}
	if ms := fence().FindAllStringSubmatch(text, -1); len(ms) > 0 {
		body := ""
		for _, m := range ms {
			if strings.EqualFold(m[1], "sql") || strings.EqualFold(m[1], "sqlite") {
				body = m[2]
				break
			}
		}
		if body == "" {
			for _, m := range ms {
				if s, ok := sqlFromJSON(strings.TrimSpace(m[2])); ok {
					body = s
					break
				}
				if sqlStart().MatchString(m[2]) || otherStart().MatchString(m[2]) {
					body = m[2]
					break
				}
			}
		}
		if body != "" {
			text = body
		}
	}
	loc := sqlStart().FindStringIndex(text)
	if other := otherStart().FindStringSubmatchIndex(text); other != nil {
		start := other[2]
		if start < 0 {
			start = other[4]
		}
		if loc == nil || start < loc[0] {
			loc = []int{start, start}
		}
	}
	if loc == nil {
		return "", ErrNoSQL
	}
	stmt := firstStatement(text[loc[0]:])
	if stmt == "" {
		return "", ErrNoSQL
	}
	return stmt, nil
}

// sqlFromJSON reads the "sql" or "query" string of a JSON object.
func sqlFromJSON(text string) (string, bool) {
	if !strings.HasPrefix(text, "{") {
		return "", false
	}
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&obj); err != nil {
		return "", false
	}
	for _, k := range []string{"sql", "query", "SQL"} {
		if s, ok := obj[k].(string); ok && strings.TrimSpace(s) != "" {
			return s, true
		}
	}
	return "", false
}

// firstStatement returns text up to its first semicolon outside strings,
// identifiers and comments (as SQLite's tokenizer finds them), or up to a
// blank line followed by prose, trimmed.
func firstStatement(text string) string {
	end := len(text)
	prev := 0
	for _, t := range datasets.TokenizeSQL(text) {
		if k := strings.Index(text[prev:t.Start], "\n\n"); k >= 0 &&
			!looksLikeSQL(strings.TrimLeft(text[prev+k:], "\n\r\t ")) {
			end = prev + k
			break
		}
		if t.Kind == datasets.TokenSemicolon {
			end = t.Start
			break
		}
		prev = t.End
	}
	return strings.TrimSpace(text[:end])
}

// looksLikeSQL reports whether text continues a statement (starts with an
// SQL word or punctuation) rather than prose.
func looksLikeSQL(text string) bool {
	if text == "" {
		return false
	}
	fields := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' || r == '(' })
	if len(fields) == 0 {
		return true
	}
	switch strings.ToUpper(fields[0]) {
	case "SELECT", "FROM", "WHERE", "JOIN", "LEFT", "INNER", "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "AND", "OR", "ON", "WITH", "AS", "CASE", "WHEN", "END", ")", "EXCEPT", "INTERSECT":
		return true
	}
	// A comment continues the statement (the criteria of a chain are
	// written as comments before its steps).
	return strings.HasPrefix(text, ")") || strings.HasPrefix(text, ",") || strings.HasPrefix(text, "--") || strings.HasPrefix(text, "/*")
}
