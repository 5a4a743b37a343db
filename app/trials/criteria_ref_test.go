package trials

// The regular-expression criteria splitter that the hand scanner of
// criteria.go replaced, kept as the reference the scanner is compared with
// (TestSplitCriteriaMatchesReference, FuzzSplitCriteriaMatchesReference).
// Its only change: lead-ins are bounded like the scanner's (maxLeadIn).

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// refSplitCriteriaFrom is the former splitCriteriaFrom.
func refSplitCriteriaFrom(text string, start CriterionKind) (inclusion, exclusion []string) {
	kind := start
	prefix := "" // a short lead-in such as "Laboratory values:" applies to the items below it
	add := func(item string) {
		item = refCleanItem(item)
		if item == "" || refIsEmptyCriterion(item) {
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
	for _, raw := range refCriteriaItems(text) {
		item := refStripBullet(raw)
		if item == "" {
			continue
		}
		if k, rest, ok := refCriteriaHeader(item); ok {
			if k != "" {
				kind = k
			}
			prefix = ""
			for _, part := range refSplitInlineNumbers(rest) {
				add(refStripBullet(part))
			}
			continue
		}
		if refIsLeadIn(item) {
			prefix = strings.TrimSpace(item)
			continue
		}
		for _, part := range refSplitInlineNumbers(raw) {
			add(refStripBullet(part))
		}
	}
	return inclusion, exclusion
}

// refCriteriaItems splits text into raw items: paragraphs separated by blank
// lines, and within a paragraph a new item at every line that starts with a
// bullet; other lines continue the item above them.
func refCriteriaItems(text string) []string {
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
		switch {
		case trimmed == "":
			flush()
		case cur.Len() == 0:
			cur.WriteString(trimmed)
		case refHasBullet(trimmed) || refEndsLeadIn(cur.String()) || refLooksLikeHeaderLine(trimmed) ||
			refIsLeadIn(trimmed) && refStartsUpper(trimmed):
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

// refBulletRE matches a bullet or list number at the start of an item.
var refBulletRE = regexp.MustCompile(`^(?:[-*•·‣◦▪–—>]+|\(?\d{1,2}[.)](?:\d{1,2}[.)]?)*|\(?[a-zA-Z][.)]|\(?(?:i|ii|iii|iv|v|vi|vii|viii|ix|x)\))(?:\s+|$)`)

func refHasBullet(s string) bool { return refBulletRE.MatchString(s) }

// refStripBullet removes leading bullets and list numbers (repeatedly: "1. -
// item").
func refStripBullet(s string) string {
	s = strings.TrimSpace(s)
	for range 3 {
		loc := refBulletRE.FindStringIndex(s)
		if loc == nil {
			break
		}
		s = strings.TrimSpace(s[loc[1]:])
	}
	return s
}

// refHeaderRE matches an eligibility section header at the start of an item;
// group 1 is the section word, the rest of the item follows the colon.
var refHeaderRE = regexp.MustCompile(`(?i)^\(?\s*(?:(?:key|main|major|general|other|additional|specific|study|patient|subject|participant)s?\s+)?` +
	`(inclusion|exclusion|eligibility|selection|enrollment|enrolment)(?:\s+criteria|\s+criterion)?` +
	`(?:\s+(?:for|of|in|applicable to)\s+[^:]{0,80})?\s*\)?\s*(?::|-|–|$)`)

// refBareHeaderRE matches a header without a colon: only the header words.
var refBareHeaderRE = regexp.MustCompile(`(?i)^\(?\s*(?:(?:key|main|major|general|other|additional|specific|study|patient|subject|participant)s?\s+)?` +
	`(?:inclusion|exclusion|eligibility|selection)(?:\s+criteria|\s+criterion)?\W*$`)

// refCriteriaForRE matches "criteria for inclusion/exclusion".
var refCriteriaForRE = regexp.MustCompile(`(?i)^(?:key\s+)?criteria\s+(?:for|of)\s+(inclusion|exclusion|eligibility|participation)\s*:?\s*`)

// refCriteriaHeader recognises a header item. kind is the section it opens
// ("" when it does not say, e.g. "Eligibility criteria:"), rest any
// criterion text on the same line after the header.
func refCriteriaHeader(item string) (kind CriterionKind, rest string, ok bool) {
	if refBareHeaderRE.MatchString(item) {
		low := strings.ToLower(item)
		switch {
		case strings.Contains(low, "inclusion"):
			return Inclusion, "", true
		case strings.Contains(low, "exclusion"):
			return Exclusion, "", true
		}
		return "", "", true
	}
	if m := refHeaderRE.FindStringSubmatchIndex(item); m != nil {
		word := strings.ToLower(item[m[2]:m[3]])
		rest = strings.TrimSpace(item[m[1]:])
		// "Inclusion in another trial" is a criterion, not a header: a
		// header ends with a colon or a dash, or is nothing but the
		// header words.
		head := strings.TrimSpace(item[:m[1]])
		marked := strings.HasSuffix(head, ":") || strings.HasSuffix(head, "-") || strings.HasSuffix(head, "–")
		if !marked && !refBareHeaderRE.MatchString(item) {
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
	if m := refCriteriaForRE.FindStringSubmatchIndex(item); m != nil {
		word := strings.ToLower(item[m[2]:m[3]])
		rest = strings.TrimSpace(item[m[1]:])
		switch word {
		case "inclusion":
			return Inclusion, rest, true
		case "exclusion":
			return Exclusion, rest, true
		}
		return "", rest, true
	}
	if refIsLeadInHeader(item) {
		low := strings.ToLower(item)
		if refExclusionCue(low) {
			return Exclusion, "", true
		}
		return Inclusion, "", true
	}
	if refIsCapsHeader(item) {
		return "", "", true
	}
	return "", "", false
}

// refExclusionCue reports whether a header sentence opens the exclusions.
func refExclusionCue(low string) bool {
	for _, cue := range []string{"exclu", "must not", "not be eligible", "not eligible", "ineligib", "not be included", "not be enrolled", "will not"} {
		if strings.Contains(low, cue) {
			return true
		}
	}
	return false
}

// refIsLeadInHeader recognises a sentence introducing a list of criteria:
// it ends with a colon and speaks of "the following" or of being
// eligible/excluded ("Patients will be excluded if any of the following
// apply:", "Subjects must meet all of the following criteria:").
func refIsLeadInHeader(item string) bool {
	s := strings.TrimSpace(strings.Trim(strings.TrimSpace(item), "()"))
	if !strings.HasSuffix(s, ":") || len(s) > 160 {
		return false
	}
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

// refIsCapsHeader recognises all-caps section titles of older records
// ("DISEASE CHARACTERISTICS:", "PRIOR CONCURRENT THERAPY:").
func refIsCapsHeader(item string) bool {
	s := strings.TrimSpace(item)
	if !strings.HasSuffix(s, ":") || len(s) > 60 {
		return false
	}
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

// refLooksLikeHeaderLine reports whether a line inside a paragraph starts a
// new section (so it is not joined to the line above).
func refLooksLikeHeaderLine(line string) bool {
	_, _, ok := refCriteriaHeader(refStripBullet(line))
	return ok
}

// refIsLeadIn recognises a short lead-in ("Laboratory values:", "Age:") whose
// items follow: up to four words ending with a colon.
func refIsLeadIn(item string) bool {
	s := strings.TrimSpace(item)
	// The one intended change of the scanner: a lead-in is at most
	// maxLeadIn bytes.
	return strings.HasSuffix(s, ":") && len(strings.Fields(s)) <= 4 && len(s) > 1 && len(s) <= maxLeadIn
}

// refEndsLeadIn reports whether the text accumulated so far is a lead-in, so
// that the next line starts an item of its own.
func refEndsLeadIn(s string) bool { return refIsLeadIn(refStripBullet(s)) }

// refCleanItem tidies a criterion: collapses whitespace, strips stray
// leading punctuation.
func refCleanItem(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.TrimLeft(s, ":;,.-–— ")
	return strings.TrimSpace(s)
}

// refEmptyCriterionRE matches items that state there is no criterion.
var refEmptyCriterionRE = regexp.MustCompile(`(?i)^(?:none|nil|n/?a|na|not applicable|not specified|no exclusions?|no exclusion criteria|there are no (?:exclusion|inclusion) criteria|this study has no(?: exclusion criteria)?|-+)\.?$`)

func refIsEmptyCriterion(s string) bool {
	if refEmptyCriterionRE.MatchString(strings.TrimSpace(s)) {
		return true
	}
	// Punctuation only.
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// refInlineNumberRE matches an inline list number "2)" preceded by a space.
var refInlineNumberRE = regexp.MustCompile(`(?:^|\s)(\d{1,2})\)\s`)

func refStartsUpper(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

// refSplitInlineNumbers splits "1) are not married 2) have had a
// hysterectomy" into its numbered parts when the numbers run 1, 2, 3... (or
// continue from an earlier number) at least twice; other text is returned
// as is.
func refSplitInlineNumbers(s string) []string {
	locs := refInlineNumberRE.FindAllStringSubmatchIndex(s, -1)
	if len(locs) < 2 {
		return []string{s}
	}
	var cuts []int
	prev := -1
	for _, m := range locs {
		n, _ := strconv.Atoi(s[m[2]:m[3]])
		if prev < 0 || n == prev+1 {
			cuts = append(cuts, m[0])
			prev = n
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
		if part := refStripBullet(s[c:end]); part != "" {
			out = append(out, part)
		}
	}
	return out
}
