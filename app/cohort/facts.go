package cohort

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/lazyre"
)

// Facts are what the pipeline knows about a data set's time frame.
type Facts struct {
	// Now is the data set's fixed current time ("2100-12-31 23:59:00" for
	// EHRSQL, whose dates are shifted into 2100); "" means the real clock.
	Now string
	// PeriodStart and PeriodEnd bound the data's collection period
	// ("2015-01-01", "2024-12-31"); "" when unknown.
	PeriodStart, PeriodEnd string
	// dialect is the engine's SQL, in which applyNow writes the time
	// (set by New from Config.Dialect; "" is SQLite).
	dialect datasets.Dialect
}

// nowCall finds PostgreSQL's now() (with the character before it, if
// any, which must not continue a name).
var nowCall = lazyre.New(`(?i)(?:^|[^\w.'"])now\s*\(\s*\)`)

// fixedNow finds a schema note fixing the current time.
var fixedNow = lazyre.New(`(?i)current time is (?:fixed (?:at|to) )?'(\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2}(?::\d{2})?)?)'`)

// ReadFacts reads the time frame of a data set: a fixed current time from
// the notes of its known schema, and the collection period from the
// clinsight_metadata table (collection_start, collection_end) when the
// database has one. A missing or unreadable table just leaves the period
// unknown.
func ReadFacts(ctx context.Context, runner SQLRunner, cat *datasets.Catalog) Facts {
	var f Facts
	for _, p := range cat.Profiles {
		for _, n := range p.Notes {
			if m := fixedNow().FindStringSubmatch(n); m != nil && f.Now == "" {
				f.Now = m[1]
			}
		}
	}
	if _, ok := cat.Table("clinsight_metadata"); ok && runner != nil {
		res, err := runner.Query(ctx, "SELECT key, value FROM clinsight_metadata WHERE key IN ('collection_start', 'collection_end')")
		if err == nil {
			for _, r := range res.Rows {
				k, _ := r[0].(string)
				v, _ := r[1].(string)
				switch k {
				case "collection_start":
					f.PeriodStart = v
				case "collection_end":
					f.PeriodEnd = v
				}
			}
		}
	}
	return f
}

// Period describes the collection period for people, "" when unknown.
func (f Facts) Period() string {
	switch {
	case f.PeriodStart != "" && f.PeriodEnd != "":
		return f.PeriodStart + " to " + f.PeriodEnd
	case f.PeriodEnd != "":
		return "until " + f.PeriodEnd
	case f.PeriodStart != "":
		return "from " + f.PeriodStart
	}
	return ""
}

// now returns the current time to use in queries: the fixed one, or the
// clock's, as SQLite text.
func (f Facts) now(clock func() time.Time) (text, note string) {
	if f.Now != "" {
		return f.Now, "fixed by the data set"
	}
	return clock().Format("2006-01-02 15:04:05"), "today"
}

// endYear is the last year the data covers: the period's end, else the
// fixed current time's year; 0 when unknown.
func (f Facts) endYear() int {
	for _, s := range []string{f.PeriodEnd, f.Now} {
		if len(s) >= 4 {
			if y, err := strconv.Atoi(s[:4]); err == nil {
				return y
			}
		}
	}
	return 0
}

// applyNow rewrites the SQL functions that read the clock (current_time,
// current_date, current_timestamp, 'now'; on PostgreSQL also
// localtimestamp and now()) to the data set's fixed current time, outside
// string literals other than 'now'. SQLite gets text literals, as its
// dates are text; PostgreSQL typed ones (TIMESTAMP '…', DATE '…'), which
// interval arithmetic needs. Without a fixed time the query is returned
// unchanged.
func (f Facts) applyNow(query string) string {
	if f.Now == "" {
		return query
	}
	day := f.Now
	if len(day) > 10 {
		day = day[:10]
	}
	repl := map[string]string{
		"current_timestamp": "'" + f.Now + "'",
		"current_time":      "'" + f.Now + "'",
		"current_date":      "'" + day + "'",
	}
	if f.dialect == datasets.DialectPostgres {
		ts := "TIMESTAMP '" + f.Now + "'"
		repl = map[string]string{"current_timestamp": ts, "localtimestamp": ts, "current_time": ts, "current_date": "DATE '" + day + "'"}
	}
	var b strings.Builder
	for _, t := range splitKeepingLiterals(query) {
		if t.literal {
			if strings.EqualFold(t.text, "'now'") {
				b.WriteString("'" + f.Now + "'")
			} else {
				b.WriteString(t.text)
			}
			continue
		}
		text := t.text
		if f.dialect == datasets.DialectPostgres {
			text = nowCall().ReplaceAllStringFunc(text, func(m string) string {
				if m[0] != 'n' && m[0] != 'N' { // the character before now(
					return m[:1] + "current_timestamp"
				}
				return "current_timestamp"
			})
		}
		b.WriteString(replaceWords(text, repl))
	}
	return b.String()
}

// textPart is a piece of SQL text: a string literal or the text between.
type textPart struct {
	text    string
	literal bool
}

// splitKeepingLiterals splits SQL into string literals and the rest.
func splitKeepingLiterals(query string) []textPart {
	var out []textPart
	start := 0
	for i := 0; i < len(query); i++ {
		if query[i] != '\'' {
			continue
		}
		if i > start {
			out = append(out, textPart{text: query[start:i]})
		}
		j := i + 1
		for j < len(query) {
			if query[j] == '\'' {
				if j+1 < len(query) && query[j+1] == '\'' {
					j += 2
					continue
				}
				break
			}
			j++
		}
		end := min(j+1, len(query))
		out = append(out, textPart{text: query[i:end], literal: true})
		start, i = end, end-1
	}
	if start < len(query) {
		out = append(out, textPart{text: query[start:]})
	}
	return out
}

// replaceWords replaces whole words (case-insensitive) of text.
func replaceWords(text string, repl map[string]string) string {
	var b strings.Builder
	isWord := func(c byte) bool {
		return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	for i := 0; i < len(text); {
		if !isWord(text[i]) {
			b.WriteByte(text[i])
			i++
			continue
		}
		j := i
		for j < len(text) && isWord(text[j]) {
			j++
		}
		w := text[i:j]
		if r, ok := repl[strings.ToLower(w)]; ok {
			b.WriteString(r)
		} else {
			b.WriteString(w)
		}
		i = j
	}
	return b.String()
}
