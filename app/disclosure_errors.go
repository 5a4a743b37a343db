package app

import (
	"strings"
)

// quotesOtherText reports whether a PostgreSQL error message quotes text
// ("…") that the statement does not hold, ignoring case and the quotes of
// identifiers: the server quotes the statement's own names (relation
// "patientz" does not exist, syntax error at or near "FORM"), but a value
// read at run time too, when a column is cast to regclass or regtype or
// passed to current_setting or has_table_privilege (relation "10014729"
// does not exist: a patient's identifier). The lines that echo the
// statement (LINE n: and its caret) are skipped.
func quotesOtherText(query, msg string) bool {
	q := strings.ToLower(strings.ReplaceAll(query, `"`, ""))
	for _, line := range strings.Split(msg, "\n") {
		if strings.HasPrefix(line, "LINE ") || strings.TrimSpace(line) == "^" || strings.HasSuffix(line, "^") && strings.TrimSpace(strings.TrimRight(line, "^")) == "" {
			continue
		}
		for {
			i := strings.IndexByte(line, '"')
			if i < 0 {
				break
			}
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				break
			}
			quoted := strings.ToLower(line[i+1 : i+1+j])
			if quoted != "" && !strings.Contains(q, quoted) {
				return true
			}
			line = line[i+1+j+1:]
		}
	}
	return false
}
