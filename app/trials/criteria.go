package trials

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// SplitCriteria splits a trial's eligibility text into inclusion and
// exclusion criteria, one item each. Text before any header counts as
// inclusion. It recognises the header variants of real records
// ("Inclusion Criteria:", "KEY INCLUSION CRITERIA", "Exclusion:",
// "Criteria for exclusion:", "Patients will be excluded if any of the
// following apply:", "(If any of the following apply, the subject MUST NOT
// enter the study):", all-caps section titles such as "DISEASE
// CHARACTERISTICS:"), bullets ("-", "*", "•", "1.", "2)", "a.") and items
// separated by blank lines or wrapped over several lines. Headers never
// become criteria; "None" and "Not applicable" items are dropped.
//
// It takes time linear in the length of the text: the patterns are hand
// scanners anchored at the start of a line or item that never go back
// over what they read, except within bounded windows (a header's "for ..."
// clause, 80 characters), and the checks made on the item being
// accumulated at each new line look at a bounded part of it.
func SplitCriteria(text string) (inclusion, exclusion []string) {
	var sp splitter
	return sp.split(text, Inclusion)
}

// splitCriteriaFrom is SplitCriteria starting in section start (the
// TrialGPT records keep inclusion and exclusion in separate fields, each
// with a truncated header).
func splitCriteriaFrom(text string, start CriterionKind) (inclusion, exclusion []string) {
	var sp splitter
	return sp.split(text, start)
}

// splitter splits criteria. work counts the bytes its scanners examined:
// a test bounds it by a multiple of the text's length.
type splitter struct {
	work int
}

// maxLeadIn is the longest lead-in ("Laboratory values:", four words at
// most) in bytes: a longer item is not one, so that the check made at every
// line on the item being accumulated costs a bounded time.
const maxLeadIn = 256

func (sp *splitter) split(text string, start CriterionKind) (inclusion, exclusion []string) {
	kind := start
	prefix := "" // a short lead-in such as "Laboratory values:" applies to the items below it
	add := func(item string) {
		item = sp.cleanItem(item)
		if item == "" || sp.isEmptyCriterion(item) {
			return
		}
		if prefix != "" {
			item = prefix + " " + item
		}
		if kind == Exclusion {
			exclusion = append(exclusion, item)
		} else {
			inclusion = append(inclusion, item)
		}
	}
	for _, raw := range sp.items(text) {
		item := sp.stripBullet(raw)
		if item == "" {
			continue
		}
		if k, rest, ok := sp.criteriaHeader(item); ok {
			if k != "" {
				kind = k
			}
			prefix = ""
			for _, part := range sp.splitInlineNumbers(rest) {
				add(sp.stripBullet(part))
			}
			continue
		}
		if sp.isLeadIn(item) {
			prefix = strings.TrimSpace(item)
			continue
		}
		for _, part := range sp.splitInlineNumbers(raw) {
			add(sp.stripBullet(part))
		}
	}
	return inclusion, exclusion
}

// items splits text into raw items: paragraphs separated by blank lines,
// and within a paragraph a new item at every line that starts with a
// bullet; other lines continue the item above them.
func (sp *splitter) items(text string) []string {
	sp.work += 3 * len(text) // the line-end rewrites and the line split
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var items []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			items = append(items, s)
		}
		cur.Reset()
	}
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		sp.work += len(line)
		switch {
		case trimmed == "":
			flush()
		case cur.Len() == 0:
			cur.WriteString(trimmed)
		case sp.hasBullet(trimmed) || sp.endsLeadIn(cur.String()) || sp.looksLikeHeaderLine(trimmed) ||
			sp.isLeadIn(trimmed) && startsUpper(trimmed):
			flush()
			cur.WriteString(trimmed)
		default:
			cur.WriteByte(' ')
			cur.WriteString(trimmed)
		}
	}
	flush()
	return items
}

// isSpace is the \s of the patterns this scanner replaced: ASCII white
// space but the vertical tab.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// skipSpaces returns the position of the first byte at or after i that is
// not a space.
func (sp *splitter) skipSpaces(s string, i int) int {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	sp.work += j - i + 1
	return j
}

// isBulletRune reports a bullet character: - * • · ‣ ◦ ▪ – — >.
func isBulletRune(r rune) bool {
	switch r {
	case '-', '*', '•', '·', '‣', '◦', '▪', '–', '—', '>':
		return true
	}
	return false
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// bulletEnd returns the end of the bullet or list number that starts s,
// with the white space after it, or -1. A bullet is a run of bullet
// characters; a number "1." "2)" "(3)" "1.2" "1.2.3)"; a letter "a." "(b)";
// or a roman numeral "(iv)" "ii)". It must be followed by white space or
// end the text.
func (sp *splitter) bulletEnd(s string) int {
	// A run of bullet characters.
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !isBulletRune(r) {
			break
		}
		i += size
	}
	if i > 0 {
		return sp.spaceAfter(s, i)
	}
	open := 0
	if len(s) > 0 && s[0] == '(' {
		open = 1
	}
	// A list number: one or two digits and a dot or parenthesis, then
	// digits, dots and parentheses, a dot or parenthesis only after a digit.
	d := open
	for d < len(s) && isDigit(s[d]) && d-open < 3 {
		d++
	}
	sp.work += d + 1
	if n := d - open; n >= 1 && n <= 2 && d < len(s) && (s[d] == '.' || s[d] == ')') {
		j := d + 1
		for j < len(s) && (isDigit(s[j]) || (s[j] == '.' || s[j] == ')') && isDigit(s[j-1])) {
			j++
		}
		sp.work += j - d
		return sp.spaceAfter(s, j)
	}
	// A letter and a dot or parenthesis.
	if open+1 < len(s) && isASCIILetter(s[open]) && (s[open+1] == '.' || s[open+1] == ')') {
		return sp.spaceAfter(s, open+2)
	}
	// A lower-case roman numeral to ten and a parenthesis.
	j := open
	for j < len(s) && j-open < 5 && (s[j] == 'i' || s[j] == 'v' || s[j] == 'x') {
		j++
	}
	sp.work += j - open + 1
	if j < len(s) && s[j] == ')' {
		switch s[open:j] {
		case "i", "ii", "iii", "iv", "v", "vi", "vii", "viii", "ix", "x":
			return sp.spaceAfter(s, j+1)
		}
	}
	return -1
}

// spaceAfter returns the end of the white space at i, which must be there
// unless i ends s; -1 otherwise.
func (sp *splitter) spaceAfter(s string, i int) int {
	if i == len(s) {
		return i
	}
	if !isSpace(s[i]) {
		return -1
	}
	return sp.skipSpaces(s, i)
}

func (sp *splitter) hasBullet(s string) bool { return sp.bulletEnd(s) >= 0 }

// stripBullet removes leading bullets and list numbers (repeatedly: "1. -
// item").
func (sp *splitter) stripBullet(s string) string {
	s = sp.trimSpace(s)
	for range 3 {
		end := sp.bulletEnd(s)
		if end < 0 {
			break
		}
		s = sp.trimSpace(s[end:])
	}
	return s
}

// trimSpace is strings.TrimSpace, counting its work.
func (sp *splitter) trimSpace(s string) string {
	t := strings.TrimSpace(s)
	sp.work += len(s) - len(t) + 2
	return t
}

// foldEq reports whether r equals the ASCII character w ignoring case as
// the patterns' (?i) did: with Unicode simple folding (the Kelvin sign is a
// k, the long s an s).
func foldEq(r rune, w byte) bool {
	if r < utf8.RuneSelf {
		c := byte(r)
		if isASCIILetter(c) && isASCIILetter(w) {
			return c|0x20 == w|0x20
		}
		return c == w
	}
	for f := unicode.SimpleFold(rune(w)); f != rune(w); f = unicode.SimpleFold(f) {
		if f == r {
			return true
		}
	}
	return false
}

// prefixFold matches word (lower-case ASCII) at s[i:] ignoring case and
// returns the end of the match.
func (sp *splitter) prefixFold(s string, i int, word string) (int, bool) {
	j := i
	for k := 0; k < len(word); k++ {
		if j >= len(s) {
			sp.work += j - i + 1
			return 0, false
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if !foldEq(r, word[k]) {
			sp.work += j - i + 1
			return 0, false
		}
		j += size
	}
	sp.work += j - i + 1
	return j, true
}

// matchAny matches the first of words at s[i:] (ignoring case) and returns
// the end of the match.
func (sp *splitter) matchAny(s string, i int, words []string) (int, bool) {
	if i >= len(s) {
		return 0, false
	}
	c := s[i]
	for _, w := range words {
		// An ASCII byte must be the word's first letter, in either case.
		if c < utf8.RuneSelf && c|0x20 != w[0] {
			continue
		}
		if end, ok := sp.prefixFold(s, i, w); ok {
			return end, true
		}
	}
	return 0, false
}

// The words of a header: an optional modifier ("Key"), the section word,
// an optional "criteria"; the bare form (a header alone on its line)
// knows only the first four section words.
var (
	headerModifiers = []string{"key", "main", "major", "general", "other", "additional", "specific", "study", "patient", "subject", "participant"}
	headerWords     = []string{"inclusion", "exclusion", "eligibility", "selection", "enrollment", "enrolment"}
	bareHeaderWords = headerWords[:4]
	headerFor       = []string{"for", "of", "in", "applicable to"}
	criteriaForWord = []string{"inclusion", "exclusion", "eligibility", "participation"}
)

// spaces1 matches one or more white-space bytes at s[i:] and returns their
// end.
func (sp *splitter) spaces1(s string, i int) (int, bool) {
	j := sp.skipSpaces(s, i)
	return j, j > i
}

// modifier matches a header modifier at s[i:], with a plural s and the
// white space after it, and returns the end.
func (sp *splitter) modifier(s string, i int) (int, bool) {
	m, ok := sp.matchAny(s, i, headerModifiers)
	if !ok {
		return 0, false
	}
	if m < len(s) {
		if r, size := utf8.DecodeRuneInString(s[m:]); foldEq(r, 's') {
			m += size // the s, then white space must follow
		}
	}
	return sp.spaces1(s, m)
}

// headerStart matches the start of a header at s[0:]: an optional "(",
// white space, an optional modifier and white space, and one of words. It
// calls rest with the span of the section word for each way of reading
// the start, preferring a "(" and a modifier, until rest succeeds, and
// returns what rest returned.
func (sp *splitter) headerStart(s string, words []string, rest func(ws, we int) (int, bool)) (end, ws, we int, ok bool) {
	for _, open := range []bool{true, false} {
		i := 0
		if open {
			if len(s) == 0 || s[0] != '(' {
				continue
			}
			i = 1
		}
		i = sp.skipSpaces(s, i)
		for _, withMod := range []bool{true, false} {
			j := i
			if withMod {
				m, ok := sp.modifier(s, j)
				if !ok {
					continue
				}
				j = m
			}
			we, ok := sp.matchAny(s, j, words)
			if !ok {
				continue
			}
			if end, ok := rest(j, we); ok {
				return end, j, we, true
			}
		}
	}
	return 0, 0, 0, false
}

// criteriaWord matches " criteria" or " criterion" at s[i:] and returns its
// end.
func (sp *splitter) criteriaWord(s string, i int) (int, bool) {
	j, ok := sp.spaces1(s, i)
	if !ok {
		return 0, false
	}
	return sp.matchAny(s, j, []string{"criteria", "criterion"})
}

// isWordRune is the \w of the (?i) patterns replaced: ASCII letters,
// digits and _, and the Kelvin sign and long s that fold to k and s.
func isWordRune(r rune) bool {
	return r < utf8.RuneSelf && (isASCIILetter(byte(r)) || isDigit(byte(r)) || r == '_') || r == '\u212A' || r == '\u017F'
}

// isBareHeader matches a header without a colon: only the header words,
// then nothing but punctuation.
func (sp *splitter) isBareHeader(item string) bool {
	nonWordToEnd := func(i int) (int, bool) {
		for j, r := range item[i:] {
			if isWordRune(r) {
				sp.work += j + 1
				return 0, false
			}
		}
		sp.work += len(item) - i + 1
		return len(item), true
	}
	_, _, _, ok := sp.headerStart(item, bareHeaderWords, func(_, we int) (int, bool) {
		if c, ok := sp.criteriaWord(item, we); ok {
			if end, ok := nonWordToEnd(c); ok {
				return end, true
			}
		}
		return nonWordToEnd(we)
	})
	return ok
}

// headerEnd matches the end of a header from i: white space, an optional
// ")", white space, and a colon, a dash or the end of the item; it returns
// the position after it.
func (sp *splitter) headerEnd(item string, i int) (int, bool) {
	j := sp.skipSpaces(item, i)
	if j < len(item) && item[j] == ')' {
		j = sp.skipSpaces(item, j+1)
	}
	switch {
	case j == len(item):
		return j, true
	case item[j] == ':' || item[j] == '-':
		return j + 1, true
	case strings.HasPrefix(item[j:], "–"):
		return j + len("–"), true
	}
	return 0, false
}

// maxHeaderFor is the longest "for ..." clause of a header, in characters.
const maxHeaderFor = 80

// headerMatch matches an eligibility section header at the start of an
// item: "[(][modifier] inclusion|exclusion|eligibility|selection|
// enrollment [criteria|criterion] [for|of|in|applicable to <up to 80
// characters without a colon>] [)]" followed by a colon, a dash or the end
// of the item. It returns the end of the header and the span of the
// section word.
func (sp *splitter) headerMatch(item string) (end, ws, we int, ok bool) {
	// tail is the rest of the header after the section word (and its
	// "criteria"): the longest "for" clause that ends the header, else none.
	tail := func(i int) (int, bool) {
		if j, ok := sp.spaces1(item, i); ok {
			if k, ok := sp.matchAny(item, j, headerFor); ok {
				if a, ok := sp.spaces1(item, k); ok {
					// Up to 80 characters other than a colon, the longest first.
					ends := []int{a}
					for p := a; p < len(item) && len(ends) <= maxHeaderFor; {
						r, size := utf8.DecodeRuneInString(item[p:])
						if r == ':' {
							break
						}
						p += size
						ends = append(ends, p)
					}
					sp.work += ends[len(ends)-1] - a + 1
					for x := len(ends) - 1; x >= 0; x-- {
						if e, ok := sp.headerEnd(item, ends[x]); ok {
							return e, true
						}
					}
				}
			}
		}
		return sp.headerEnd(item, i)
	}
	return sp.headerStart(item, headerWords, func(_, we int) (int, bool) {
		if c, ok := sp.criteriaWord(item, we); ok {
			if e, ok := tail(c); ok {
				return e, true
			}
		}
		return tail(we)
	})
}

// criteriaFor matches "[key] criteria for|of inclusion|exclusion|
// eligibility|participation[:]" at the start of an item and returns the
// end of the match and the span of the section word.
func (sp *splitter) criteriaFor(item string) (end, ws, we int, ok bool) {
	starts := []int{0}
	if k, ok := sp.prefixFold(item, 0, "key"); ok {
		if j, ok := sp.spaces1(item, k); ok {
			starts = []int{j, 0}
		}
	}
	for _, i := range starts {
		c, ok := sp.prefixFold(item, i, "criteria")
		if !ok {
			continue
		}
		j, ok := sp.spaces1(item, c)
		if !ok {
			continue
		}
		if j, ok = sp.matchAny(item, j, []string{"for", "of"}); !ok {
			continue
		}
		if ws, ok = sp.spaces1(item, j); !ok {
			continue
		}
		if we, ok = sp.matchAny(item, ws, criteriaForWord); !ok {
			continue
		}
		end = sp.skipSpaces(item, we)
		if end < len(item) && item[end] == ':' {
			end = sp.skipSpaces(item, end+1)
		}
		return end, ws, we, true
	}
	return 0, 0, 0, false
}

// criteriaHeader recognises a header item. kind is the section it opens
// ("" when it does not say, e.g. "Eligibility criteria:"), rest any
// criterion text on the same line after the header.
func (sp *splitter) criteriaHeader(item string) (kind CriterionKind, rest string, ok bool) {
	bare := sp.isBareHeader(item)
	if bare {
		sp.work += len(item)
		low := strings.ToLower(item)
		switch {
		case strings.Contains(low, "inclusion"):
			return Inclusion, "", true
		case strings.Contains(low, "exclusion"):
			return Exclusion, "", true
		}
		return "", "", true
	}
	if end, ws, we, ok := sp.headerMatch(item); ok {
		word := strings.ToLower(item[ws:we])
		sp.work += len(item)
		rest = strings.TrimSpace(item[end:])
		// "Inclusion in another trial" is a criterion, not a header: a
		// header ends with a colon or a dash, or is nothing but the
		// header words.
		head := strings.TrimSpace(item[:end])
		marked := strings.HasSuffix(head, ":") || strings.HasSuffix(head, "-") || strings.HasSuffix(head, "–")
		if !marked {
			return "", "", false
		}
		if strings.Count(head, " ") > 12 {
			return "", "", false
		}
		switch word {
		case "inclusion":
			return Inclusion, rest, true
		case "exclusion":
			return Exclusion, rest, true
		}
		return "", rest, true
	}
	if end, ws, we, ok := sp.criteriaFor(item); ok {
		word := strings.ToLower(item[ws:we])
		sp.work += len(item)
		rest = strings.TrimSpace(item[end:])
		switch word {
		case "inclusion":
			return Inclusion, rest, true
		case "exclusion":
			return Exclusion, rest, true
		}
		return "", rest, true
	}
	if sp.isLeadInHeader(item) {
		low := strings.ToLower(item)
		if exclusionCue(low) {
			return Exclusion, "", true
		}
		return Inclusion, "", true
	}
	if sp.isCapsHeader(item) {
		return "", "", true
	}
	return "", "", false
}

// exclusionCue reports whether a header sentence opens the exclusions.
func exclusionCue(low string) bool {
	for _, cue := range []string{"exclu", "must not", "not be eligible", "not eligible", "ineligib", "not be included", "not be enrolled", "will not"} {
		if strings.Contains(low, cue) {
			return true
		}
	}
	return false
}

// isLeadInHeader recognises a sentence introducing a list of criteria:
// it ends with a colon and speaks of "the following" or of being
// eligible/excluded ("Patients will be excluded if any of the following
// apply:", "Subjects must meet all of the following criteria:").
func (sp *splitter) isLeadInHeader(item string) bool {
	s := strings.TrimSpace(strings.Trim(sp.trimSpace(item), "()"))
	if !strings.HasSuffix(s, ":") || len(s) > 160 {
		return false
	}
	sp.work += 10 * len(s)
	low := strings.ToLower(s)
	if !strings.Contains(low, "following") && !strings.Contains(low, "criteria") {
		return false
	}
	for _, cue := range []string{"eligib", "exclu", "inclu", "must", "enter", "enrol", "particip", "criteria"} {
		if strings.Contains(low, cue) {
			return true
		}
	}
	return false
}

// isCapsHeader recognises all-caps section titles of older records
// ("DISEASE CHARACTERISTICS:", "PRIOR CONCURRENT THERAPY:").
func (sp *splitter) isCapsHeader(item string) bool {
	s := sp.trimSpace(item)
	if !strings.HasSuffix(s, ":") || len(s) > 60 {
		return false
	}
	sp.work += len(s)
	letters := 0
	for _, r := range s {
		if unicode.IsLetter(r) {
			if unicode.IsLower(r) {
				return false
			}
			letters++
		}
	}
	return letters >= 3
}

// looksLikeHeaderLine reports whether a line inside a paragraph starts a
// new section (so it is not joined to the line above).
func (sp *splitter) looksLikeHeaderLine(line string) bool {
	_, _, ok := sp.criteriaHeader(sp.stripBullet(line))
	return ok
}

// isLeadIn recognises a short lead-in ("Laboratory values:", "Age:") whose
// items follow: up to four words ending with a colon, at most maxLeadIn
// bytes.
func (sp *splitter) isLeadIn(item string) bool {
	s := sp.trimSpace(item)
	if !strings.HasSuffix(s, ":") || len(s) <= 1 || len(s) > maxLeadIn {
		return false
	}
	sp.work += len(s)
	return len(strings.Fields(s)) <= 4
}

// endsLeadIn reports whether the text accumulated so far is a lead-in, so
// that the next line starts an item of its own. It is asked at every line
// of a paragraph: an item too long to be a lead-in is not looked at.
func (sp *splitter) endsLeadIn(s string) bool {
	if len(s) > 2*maxLeadIn || !strings.HasSuffix(s, ":") {
		return false
	}
	return sp.isLeadIn(sp.stripBullet(s))
}

// cleanItem tidies a criterion: collapses whitespace, strips stray
// leading punctuation.
func (sp *splitter) cleanItem(s string) string {
	sp.work += 3 * len(s)
	if !tidy(s) {
		s = strings.Join(strings.Fields(s), " ")
	}
	s = strings.TrimLeft(s, ":;,.-–— ")
	return strings.TrimSpace(s)
}

// tidy reports whether strings.Fields and a join would leave s as it is:
// ASCII without white space other than single spaces between words.
func tidy(s string) bool {
	if s == "" || s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf, c == '\t', c == '\n', c == '\v', c == '\f', c == '\r':
			return false
		case c == ' ' && s[i+1] == ' ':
			return false
		}
	}
	return true
}

// emptyCriteria are the items that state there is no criterion (compared
// ignoring case, without a final full stop); so is a run of dashes.
var emptyCriteria = []string{
	"none", "nil", "n/a", "na", "not applicable", "not specified", "no exclusion", "no exclusions", "no exclusion criteria",
	"there are no exclusion criteria", "there are no inclusion criteria", "this study has no", "this study has no exclusion criteria",
}

func (sp *splitter) isEmptyCriterion(s string) bool {
	sp.work += 2 * len(s)
	t := strings.TrimSuffix(strings.TrimSpace(s), ".")
	for _, e := range emptyCriteria {
		if strings.EqualFold(t, e) {
			return true
		}
	}
	if t != "" && strings.Trim(t, "-") == "" {
		return true
	}
	// Punctuation only.
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

func startsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// inlineNumbers finds the inline list numbers "2)" of s: one or two digits
// and ")", at the start of s or after white space, and followed by white
// space; it returns where each starts (its white space included) and its
// number. Matches do not overlap: the white space after a number is not
// the white space before the next.
func (sp *splitter) inlineNumbers(s string) (starts, nums []int) {
	sp.work += len(s) + 1
	for i := 0; i < len(s); {
		j := -1
		switch {
		case i == 0 && isDigit(s[0]):
			j = 0
		case isSpace(s[i]):
			j = i + 1
		}
		if j < 0 {
			i++
			continue
		}
		d := j
		for d < len(s) && isDigit(s[d]) && d-j < 3 {
			d++
		}
		if n := d - j; n >= 1 && n <= 2 && d+1 < len(s) && s[d] == ')' && isSpace(s[d+1]) {
			v, _ := strconv.Atoi(s[j:d])
			starts, nums = append(starts, i), append(nums, v)
			i = d + 2
			continue
		}
		i++
	}
	return starts, nums
}

// splitInlineNumbers splits "1) are not married 2) have had a
// hysterectomy" into its numbered parts when the numbers run 1, 2, 3... (or
// continue from an earlier number) at least twice; other text is returned
// as is.
func (sp *splitter) splitInlineNumbers(s string) []string {
	starts, nums := sp.inlineNumbers(s)
	if len(starts) < 2 {
		return []string{s}
	}
	var cuts []int
	prev := -1
	for k, at := range starts {
		if prev < 0 || nums[k] == prev+1 {
			cuts = append(cuts, at)
			prev = nums[k]
		}
	}
	if len(cuts) < 2 {
		return []string{s}
	}
	var out []string
	if head := strings.TrimSpace(s[:cuts[0]]); head != "" {
		out = append(out, head)
	}
	for i, c := range cuts {
		end := len(s)
		if i+1 < len(cuts) {
			end = cuts[i+1]
		}
		if part := sp.stripBullet(s[c:end]); part != "" {
			out = append(out, part)
		}
	}
	return out
}
