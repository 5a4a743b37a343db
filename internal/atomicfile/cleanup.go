package atomicfile

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lockState is what tryLock learnt about a temporary file's writer.
type lockState int

const (
	lockUnknown lockState = iota // the file system cannot tell
	lockFree                     // no live writer holds the file
	lockHeld                     // a live writer holds the file
)

// Ages after which an unlocked temporary file counts as abandoned.
const (
	// graceAge covers the instant between creating a temporary file and
	// locking it, when its process is still running (or its PID was
	// reused, as in containers).
	graceAge = time.Minute
	// legacyAge applies to the temporary workbooks of earlier versions,
	// whose writers did not lock them.
	legacyAge = time.Hour
	// unknownAge applies where locks cannot be checked.
	unknownAge = 24 * time.Hour
)

// cleanStale removes abandoned temporary files of this package (and of the
// exporter of earlier versions) from dir; see the package documentation
// for the rule. It never fails: whatever cannot be checked is left alone.
func cleanStale(dir string, now time.Time) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		pid, ours := parseTempName(name)
		legacy := !ours && isLegacyWorkbookTemp(name)
		if (!ours && !legacy) || !e.Type().IsRegular() {
			continue
		}
		removeIfStale(filepath.Join(dir, name), pid, legacy, now)
	}
}

// removeIfStale removes one candidate when it is abandoned, holding its
// lock meanwhile so that no writer can take it up.
func removeIfStale(path string, pid int, legacy bool, now time.Time) {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	age := now.Sub(fi.ModTime())
	state, f := tryLock(path)
	if f != nil {
		defer f.Close()
	}
	var stale bool
	switch {
	case state == lockHeld:
		stale = false
	case state == lockUnknown:
		stale = age >= unknownAge
	case legacy:
		stale = age >= legacyAge && looksLikePartialZip(f)
	default:
		stale = processGone(pid) || age >= graceAge
	}
	if stale {
		_ = os.Remove(path)
	}
}

// parseTempName reports whether name is exactly a temporary file name of
// this package, Prefix + PID + "-" + base-36 random + "-" + name + ".tmp",
// and returns the PID.
func parseTempName(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, false
	}
	if rest, ok = strings.CutSuffix(rest, tempSuffix); !ok {
		return 0, false
	}
	pidText, rest, ok := strings.Cut(rest, "-")
	if !ok || len(pidText) == 0 || len(pidText) > 10 || pidText[0] == '0' || !allIn(pidText, "0123456789") {
		return 0, false
	}
	pid, err := strconv.Atoi(pidText)
	if err != nil || pid > 1<<31-1 {
		return 0, false
	}
	random, base, ok := strings.Cut(rest, "-")
	if !ok || len(random) == 0 || len(random) > 13 || !allIn(random, "0123456789abcdefghijklmnopqrstuvwxyz") || base == "" {
		return 0, false
	}
	return pid, true
}

// isLegacyWorkbookTemp reports whether name is a temporary workbook of the
// exporter of earlier versions: "." + name ending in .xlsx + "." + base-36
// random + ".tmp".
func isLegacyWorkbookTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return false
	}
	if rest, ok = strings.CutSuffix(rest, tempSuffix); !ok {
		return false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return false
	}
	base, random := rest[:i], rest[i+1:]
	return len(random) > 0 && len(random) <= 13 && allIn(random, "0123456789abcdefghijklmnopqrstuvwxyz") &&
		len(base) > len(".xlsx") && strings.EqualFold(base[len(base)-len(".xlsx"):], ".xlsx")
}

// looksLikePartialZip reports whether f is empty or starts like a zip
// archive, as the earlier exporter's temporary workbooks do.
func looksLikePartialZip(f *os.File) bool {
	if f == nil {
		return false
	}
	head := make([]byte, 4)
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && err == io.EOF:
		return true
	case err != nil:
		return false
	}
	return bytes.Equal(head, []byte("PK\x03\x04"))
}

// allIn reports whether every byte of s is one of chars.
func allIn(s, chars string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(chars, s[i]) < 0 {
			return false
		}
	}
	return true
}
