package datasets

import (
	"bytes"
	"fmt"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLite's instr, replace and trim (ltrim, rtrim) compare their arguments
// at every position: on texts of a few MB one call takes minutes, on texts
// near the 64 MiB length limit hours, and no interrupt reaches it. The
// runner's connections replace them with these Go versions, which give the
// same results (TestLinearFunctionsMatchSQLite compares them with SQLite's
// own) in time linear in their arguments: instr and replace search with
// bytes.Index, trim looks characters up in a table. The one case left
// quadratic, a trim set holding malformed UTF-8 sequences longer than 4
// bytes, checks sqlite3_is_interrupted as it goes.
//
// LIKE and GLOB stay SQLite's: their cost is bounded by the pattern length
// limit (maxLikePatternBytes) times the text length.

// linearFunctions are the functions installed on each read-only
// connection: name, number of arguments, user data (trim's sides: 1 left,
// 2 right) and implementation.
var linearFunctions = []struct {
	name string
	args int32
	data uintptr
	fn   func(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr)
}{
	{"instr", 2, 0, instrLinear},
	{"replace", 3, 0, replaceLinear},
	{"trim", 1, 3, trimLinear},
	{"trim", 2, 3, trimLinear},
	{"ltrim", 1, 1, trimLinear},
	{"ltrim", 2, 1, trimLinear},
	{"rtrim", 1, 2, trimLinear},
	{"rtrim", 2, 2, trimLinear},
}

// installLinearFunctions overrides SQLite's instr, replace and trim
// functions on the connection.
func (c *sqliteConn) installLinearFunctions() error {
	for _, f := range linearFunctions {
		z, err := libc.CString(f.name)
		if err != nil {
			return err
		}
		rc := sqlite3.Xsqlite3_create_function_v2(c.tls, c.db, z, f.args,
			sqlite3.SQLITE_UTF8|sqlite3.SQLITE_DETERMINISTIC|sqlite3.SQLITE_INNOCUOUS, f.data, cFunc(f.fn), 0, 0, 0)
		libc.Xfree(c.tls, z)
		if rc != sqlite3.SQLITE_OK {
			return fmt.Errorf("install %s: %w", f.name, c.lastError(rc))
		}
	}
	return nil
}

// cFunc turns a function declared at package level (never a closure) into
// the pointer SQLite calls, as modernc.org/sqlite does for its own.
func cFunc[T any](f T) uintptr { return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f})) }

// arg returns argument i of a function call.
func arg(argv uintptr, i int) uintptr {
	return *(*uintptr)(cMem(argv + uintptr(i)*unsafe.Sizeof(uintptr(0))))
}

// cMem is a pointer to memory SQLite allocated (never Go's) at address p.
func cMem(p uintptr) unsafe.Pointer { return unsafe.Add(nil, p) }

// cBytes are the n bytes of SQLite's memory at p, not copied.
func cBytes(p uintptr, n int) []byte { return unsafe.Slice((*byte)(cMem(p)), n) }

// argBytes returns the bytes of a value as text (asText) or as a BLOB,
// without copying them out of SQLite: valid until the value changes. ok is
// false for NULL, and when SQLite ran out of memory (the error is set).
func argBytes(tls *libc.TLS, ctx, v uintptr, asText bool) (b []byte, p uintptr, ok bool) {
	if sqlite3.Xsqlite3_value_type(tls, v) == sqlite3.SQLITE_NULL {
		return nil, 0, false
	}
	if asText {
		p = sqlite3.Xsqlite3_value_text(tls, v)
	} else {
		p = sqlite3.Xsqlite3_value_blob(tls, v)
	}
	n := int(sqlite3.Xsqlite3_value_bytes(tls, v))
	if p == 0 {
		if n > 0 || asText {
			// A value that is not NULL has text unless memory ran out.
			sqlite3.Xsqlite3_result_error_nomem(tls, ctx)
			return nil, 0, false
		}
		return []byte{}, 0, true
	}
	return cBytes(p, n), p, true
}

// instrLinear is instr(X, Y): the position of the first Y in X, counted in
// characters (in bytes when both are BLOBs) from 1; 0 if there is none; 1
// for an empty Y; NULL if either is NULL.
func instrLinear(tls *libc.TLS, ctx uintptr, _ int32, argv uintptr) {
	x, y := arg(argv, 0), arg(argv, 1)
	tx, ty := sqlite3.Xsqlite3_value_type(tls, x), sqlite3.Xsqlite3_value_type(tls, y)
	if tx == sqlite3.SQLITE_NULL || ty == sqlite3.SQLITE_NULL {
		return
	}
	isText := tx != sqlite3.SQLITE_BLOB || ty != sqlite3.SQLITE_BLOB
	hay, _, ok := argBytes(tls, ctx, x, isText)
	if !ok {
		return
	}
	needle, _, ok := argBytes(tls, ctx, y, isText)
	if !ok {
		return
	}
	sqlite3.Xsqlite3_result_int64(tls, ctx, instrPosition(hay, needle, isText))
}

// instrPosition is SQLite's instr on bytes: in text, a match starts at the
// first byte or at a byte that is not a UTF-8 continuation byte, and the
// position counts such bytes.
func instrPosition(hay, needle []byte, isText bool) int64 {
	if len(needle) == 0 {
		return 1
	}
	from := 0
	for {
		i := bytes.Index(hay[from:], needle)
		if i < 0 {
			return 0
		}
		at := from + i
		if !isText {
			return int64(at) + 1
		}
		if at == 0 || !isContinuation(hay[at]) {
			n := int64(1)
			for _, b := range hay[1 : at+1] {
				if !isContinuation(b) {
					n++
				}
			}
			return n
		}
		from = at + 1
	}
}

func isContinuation(b byte) bool { return b&0xc0 == 0x80 }

// replaceLinear is replace(X, Y, Z): X with every Y, left to right and
// not overlapping, replaced by Z; X unchanged when Y is empty or starts
// with a NUL byte; NULL if any is NULL. The result is text.
func replaceLinear(tls *libc.TLS, ctx uintptr, _ int32, argv uintptr) {
	str, pStr, ok := argBytes(tls, ctx, arg(argv, 0), true)
	if !ok {
		return
	}
	pat, _, ok := argBytes(tls, ctx, arg(argv, 1), true)
	if !ok {
		return
	}
	if len(pat) == 0 || pat[0] == 0 {
		resultText(tls, ctx, pStr, len(str))
		return
	}
	rep, _, ok := argBytes(tls, ctx, arg(argv, 2), true)
	if !ok {
		return
	}
	size := int64(len(str))
	if len(rep) != len(pat) {
		size += int64(bytes.Count(str, pat)) * int64(len(rep)-len(pat))
	}
	db := sqlite3.Xsqlite3_context_db_handle(tls, ctx)
	if size > int64(sqlite3.Xsqlite3_limit(tls, db, sqlite3.SQLITE_LIMIT_LENGTH, -1)) {
		sqlite3.Xsqlite3_result_error_toobig(tls, ctx)
		return
	}
	p := sqlite3.Xsqlite3_malloc64(tls, uint64(size)+1)
	if p == 0 {
		sqlite3.Xsqlite3_result_error_nomem(tls, ctx)
		return
	}
	out := cBytes(p, int(size)+1)
	j := 0
	for {
		i := bytes.Index(str, pat)
		if i < 0 {
			break
		}
		j += copy(out[j:], str[:i])
		j += copy(out[j:], rep)
		str = str[i+len(pat):]
	}
	j += copy(out[j:], str)
	out[j] = 0
	sqlite3.Xsqlite3_result_text64(tls, ctx, p, uint64(j), cFunc(sqlite3.Xsqlite3_free), sqlite3.SQLITE_UTF8)
}

// resultText sets the result to the n bytes of text at p (SQLite copies
// them); an empty text, not NULL, when n is 0.
func resultText(tls *libc.TLS, ctx, p uintptr, n int) {
	if p == 0 {
		p = libc.Xmalloc(tls, 1)
		if p == 0 {
			sqlite3.Xsqlite3_result_error_nomem(tls, ctx)
			return
		}
		defer libc.Xfree(tls, p)
	}
	sqlite3.Xsqlite3_result_text64(tls, ctx, p, uint64(n), sqlite3.SQLITE_TRANSIENT, sqlite3.SQLITE_UTF8)
}

// trimLinear is trim, ltrim and rtrim (user data: 1 left, 2 right, 3
// both) with one argument (spaces) or two (the characters of Y, up to its
// first NUL byte, each a lead byte and the continuation bytes after it).
// At each end it removes, again and again, the first character of the set,
// in the set's order, that the text starts (ends) with, as SQLite does.
func trimLinear(tls *libc.TLS, ctx uintptr, argc int32, argv uintptr) {
	in, pIn, ok := argBytes(tls, ctx, arg(argv, 0), true)
	if !ok {
		return
	}
	set := []byte(" ")
	if argc == 2 {
		if set, _, ok = argBytes(tls, ctx, arg(argv, 1), true); !ok {
			return
		}
		if i := bytes.IndexByte(set, 0); i >= 0 {
			set = set[:i]
		}
	}
	sides := sqlite3.Xsqlite3_user_data(tls, ctx)
	t := newTrimSet(tls, ctx, set)
	if t == nil {
		return
	}
	from, to := 0, len(in)
	if sides&1 != 0 {
		for from < to {
			n, stop := t.match(tls, ctx, in[from:to], true)
			if stop {
				return
			}
			if n == 0 {
				break
			}
			from += n
		}
	}
	if sides&2 != 0 {
		for from < to {
			n, stop := t.match(tls, ctx, in[from:to], false)
			if stop {
				return
			}
			if n == 0 {
				break
			}
			to -= n
		}
	}
	resultText(tls, ctx, pIn+uintptr(from), to-from)
}

// trimSet is the character set of a trim: chars in the set's order, and
// for characters of up to 4 bytes (all of well-formed UTF-8) the index of
// their first occurrence, to find a match without trying every character.
type trimSet struct {
	chars [][]byte
	// byte1 holds the first index + 1 of each one-byte character.
	byte1 [256]int32
	// longer holds the first index of each character of 2 to 4 bytes.
	longer map[string]int32
	// slow is set when a character is longer than 4 bytes (malformed
	// UTF-8): match then tries every character, as SQLite does, and looks
	// whether SQLite was told to interrupt every 65,536 tries (tries).
	slow  bool
	tries uint64
}

// newTrimSet reads the character set of a trim. It returns nil when SQLite
// was told to interrupt while it read a long set (the error is set).
func newTrimSet(tls *libc.TLS, ctx uintptr, set []byte) *trimSet {
	t := &trimSet{}
	for i := 0; i < len(set); {
		if len(t.chars)&0xffff == 0xffff && interrupted(tls, ctx) {
			return nil
		}
		j := i + 1
		if set[i] >= 0xc0 {
			for j < len(set) && isContinuation(set[j]) {
				j++
			}
		}
		t.chars = append(t.chars, set[i:j])
		i = j
	}
	for k, c := range t.chars {
		switch {
		case len(c) == 1:
			if t.byte1[c[0]] == 0 {
				t.byte1[c[0]] = int32(k) + 1
			}
		case len(c) <= 4:
			if t.longer == nil {
				t.longer = make(map[string]int32)
			}
			if _, seen := t.longer[string(c)]; !seen {
				t.longer[string(c)] = int32(k)
			}
		default:
			t.slow = true
		}
	}
	return t
}

// match returns the length of the set's first character that s starts
// with (atStart) or ends with, 0 if none. stop is set when SQLite was told
// to interrupt during a slow match (the error is set).
func (t *trimSet) match(tls *libc.TLS, ctx uintptr, s []byte, atStart bool) (n int, stop bool) {
	piece := func(l int) []byte {
		if atStart {
			return s[:l]
		}
		return s[len(s)-l:]
	}
	if t.slow {
		for _, c := range t.chars {
			if t.tries++; t.tries&0xffff == 0 && interrupted(tls, ctx) {
				return 0, true
			}
			if len(c) <= len(s) && bytes.Equal(piece(len(c)), c) {
				return len(c), false
			}
		}
		return 0, false
	}
	best, bestLen := int32(-1), 0
	if k := t.byte1[piece(1)[0]]; k != 0 {
		best, bestLen = k-1, 1
	}
	for l := 2; l <= 4 && l <= len(s) && t.longer != nil; l++ {
		if k, ok := t.longer[string(piece(l))]; ok && (best < 0 || k < best) {
			best, bestLen = k, l
		}
	}
	return bestLen, false
}

// interrupted reports whether SQLite was told to interrupt the statement
// calling a function, and if so sets the call's error to SQLITE_INTERRUPT.
func interrupted(tls *libc.TLS, ctx uintptr) bool {
	if sqlite3.Xsqlite3_is_interrupted(tls, sqlite3.Xsqlite3_context_db_handle(tls, ctx)) == 0 {
		return false
	}
	sqlite3.Xsqlite3_result_error_code(tls, ctx, sqlite3.SQLITE_INTERRUPT)
	return true
}
