package export

import (
	"strconv"
	"strings"
)

// Excel's sheet name rules.
const (
	// maxSheetName is the longest sheet name, in UTF-16 code units.
	maxSheetName = 31
	// defaultSheetName replaces a blank name.
	defaultSheetName = "Results"
)

// sanitizeSheetName adjusts name to Excel's rules: control characters and
// []:*?/\ are replaced by '_', and so is the apostrophe (Excel refuses it at
// either end, and excelize does not quote it inside the autofilter's defined
// name); surrounding spaces are trimmed; a blank name becomes "Results"; the
// name is cut to 31 UTF-16 code units; "History", which Excel reserves,
// becomes "History_". Uniqueness is sheetNamer's job.
func sanitizeSheetName(name string) string {
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(`[]:*?/\'`, r) {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimSpace(cutUTF16(strings.TrimSpace(name), maxSheetName))
	switch {
	case name == "":
		return defaultSheetName
	case strings.EqualFold(name, "History"):
		return name + "_"
	}
	return name
}

// cutUTF16 returns the longest prefix of s of at most n UTF-16 code units
// that does not split a character.
func cutUTF16(s string, n int) string {
	units := 0
	for i, r := range s {
		if r >= 0x10000 {
			units += 2
		} else {
			units++
		}
		if units > n {
			return s[:i]
		}
	}
	return s
}

// sheetNamer hands out sheet names that are unique in a workbook, comparing
// them as Excel does, without regard to case.
type sheetNamer struct {
	used map[string]bool
}

// unique returns base, a sanitised name, or when it is taken base followed
// by " (2)", " (3)", … (base shortened as needed to stay within 31 UTF-16
// code units), and records the result as taken.
func (sn *sheetNamer) unique(base string) string {
	if sn.used == nil {
		sn.used = make(map[string]bool)
	}
	name := base
	for n := 2; sn.used[strings.ToLower(name)]; n++ {
		suffix := " (" + strconv.Itoa(n) + ")"
		name = strings.TrimSpace(cutUTF16(base, maxSheetName-len(suffix))) + suffix
	}
	sn.used[strings.ToLower(name)] = true
	return name
}
