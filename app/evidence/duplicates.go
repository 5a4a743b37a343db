package evidence

import (
	"context"
	"fmt"
	"strings"
	"unicode"
)

// Duplicates finds the records matching a boolean query that duplicate
// another match: the same article imported twice under different keys (a
// PubMed record and an RIS export of it without its PMID, say), recognised
// by the same DOI, or by the same title (letters and digits, case and
// accents folded) and year. Of each group the record with a PMID is kept,
// else the one imported first. It returns the duplicates' IDs, each mapped
// to the ID of the record kept.
func (c *Corpus) Duplicates(ctx context.Context, query string) (map[string]string, error) {
	n, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx, `SELECT r.id, coalesce(r.pmid, ''), coalesce(r.doi, ''), r.title, coalesce(r.year, 0)
		FROM evidence_records r JOIN (SELECT rowid FROM evidence_fts WHERE evidence_fts MATCH ?) m ON m.rowid = r.rowid
		ORDER BY r.pmid IS NULL OR r.pmid = '', r.rowid`, n.FTS5())
	if err != nil {
		return nil, fmt.Errorf("evidence: finding duplicates of %q: %w", query, err)
	}
	defer rows.Close()
	dups := map[string]string{}
	kept := map[string]string{} // key → ID kept
	for rows.Next() {
		var id, pmid, doi, title string
		var year int
		if err := rows.Scan(&id, &pmid, &doi, &title, &year); err != nil {
			return nil, fmt.Errorf("evidence: finding duplicates: %w", err)
		}
		keys := []string{}
		if doi != "" {
			keys = append(keys, "doi:"+strings.ToLower(strings.TrimSpace(doi)))
		}
		if t := titleKey(title); len(t) >= 20 { // short titles ("Editorial") are not evidence
			keys = append(keys, fmt.Sprintf("title:%s|%d", t, year))
		}
		first := ""
		for _, k := range keys {
			if other, ok := kept[k]; ok && first == "" {
				first = other
			}
		}
		if first != "" {
			dups[id] = first
			continue
		}
		for _, k := range keys {
			kept[k] = id
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("evidence: finding duplicates: %w", err)
	}
	return dups, nil
}

// titleKey folds a title for comparison: letters and digits only, lower
// case, accents removed.
func titleKey(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(title) {
		r = foldAccent(r)
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// foldAccent maps common accented Latin letters to their base letter.
func foldAccent(r rune) rune {
	if r < 0xC0 {
		return r
	}
	const from, to = "àáâãäåçèéêëìíîïñòóôõöøùúûüýÿ", "aaaaaaceeeeiiiinoooooouuuuyy"
	fr, tr := []rune(from), []rune(to)
	for i, f := range fr {
		if f == r {
			return tr[i]
		}
	}
	return r
}
