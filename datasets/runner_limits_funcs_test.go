package datasets

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// sqlValue is a value as a SQL literal: text and BLOBs as hex so that any
// byte (NUL, malformed UTF-8) gets through.
type sqlValue struct {
	kind string // text, blob, int, real, null
	b    []byte
}

func (v sqlValue) literal() string {
	switch v.kind {
	case "text":
		return "CAST(x'" + hex.EncodeToString(v.b) + "' AS TEXT)"
	case "blob":
		return "x'" + hex.EncodeToString(v.b) + "'"
	case "null":
		return "NULL"
	}
	return string(v.b)
}

// randomValue draws a short value, mostly text built from pieces that
// matter to instr, replace and trim: ASCII, spaces, a two-byte character,
// lone continuation and lead bytes, NUL.
func randomValue(rng *rand.Rand) sqlValue {
	pieces := []string{"a", "b", "ab", " ", "é", "\x80", "\xc3", "\x00", "x", "aa", "€"}
	var b strings.Builder
	for range rng.IntN(7) {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	switch k := rng.IntN(20); {
	case k < 13:
		return sqlValue{"text", []byte(b.String())}
	case k < 17:
		return sqlValue{"blob", []byte(b.String())}
	case k < 18:
		return sqlValue{"int", []byte(fmt.Sprint(rng.IntN(300) - 100))}
	case k < 19:
		return sqlValue{"real", []byte("1.5")}
	}
	return sqlValue{"null", nil}
}

// TestLinearFunctionsMatchSQLite: the runner's instr, replace, trim, ltrim
// and rtrim give what SQLite's own give (read through database/sql, whose
// connections keep them), value and type, over random arguments.
func TestLinearFunctionsMatchSQLite(t *testing.T) {
	path := newFixtureDB(t)
	r := newTestRunner(t, path, RunnerOptions{})
	db, err := sql.Open(DriverName, "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	text := func(s string) string { return sqlValue{"text", []byte(s)}.literal() }
	// Sets where a lone lead byte (a one-byte character) and a two-byte
	// character both match: SQLite takes the one first in the set.
	fixed := [][3]string{
		{text("éaé"), text("é\xc3a"), text("")},
		{text("éaé"), text("\xc3aé"), text("")},
		{text("\xc3\xa9\x80\x80a"), text("\xc3\xa9\x80\x80\xc3"), text("z")},
		{text(""), text(""), text("")},
	}
	calls := 0
	for i := range 1000 + len(fixed) {
		x, y, z := randomValue(rng).literal(), randomValue(rng).literal(), randomValue(rng).literal()
		if i < len(fixed) {
			x, y, z = fixed[i][0], fixed[i][1], fixed[i][2]
		}
		exprs := []string{
			"instr(" + x + ", " + y + ")", "replace(" + x + ", " + y + ", " + z + ")",
			"trim(" + x + ")", "ltrim(" + x + ")", "rtrim(" + x + ")",
			"trim(" + x + ", " + y + ")", "ltrim(" + x + ", " + y + ")", "rtrim(" + x + ", " + y + ")",
		}
		var cols []string
		for _, e := range exprs {
			cols = append(cols, e, "typeof("+e+")")
		}
		q := "SELECT " + strings.Join(cols, ", ")
		res, err := r.Query(context.Background(), q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		want := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range want {
			ptrs[i] = &want[i]
		}
		if err := db.QueryRow(q).Scan(ptrs...); err != nil {
			t.Fatalf("SQLite's own: %s: %v", q, err)
		}
		for i, got := range res.Rows[0] {
			if g, w := fmt.Sprintf("%T %q", normal(got), fmt.Sprint(normal(got))), fmt.Sprintf("%T %q", normal(want[i]), fmt.Sprint(normal(want[i]))); g != w {
				t.Errorf("%s: runner %s, SQLite %s", cols[i], g, w)
			}
			calls++
		}
	}
	t.Logf("%d values compared", calls)
}

// normal makes the runner's and database/sql's values comparable.
func normal(v any) any {
	switch v := v.(type) {
	case Blob:
		return []byte(v)
	case int:
		return int64(v)
	}
	return v
}

// TestLinearFunctionsOnLongText: instr, replace and trim on texts near the
// length limit finish in seconds with the right answer. SQLite's own
// compare at every position: instr(32 MiB, 16 MiB) and replace are about
// 2.5·10^14 byte comparisons (hours at the 37 bytes/ns measured here), the
// trim below 8·10^12 calls of memcmp (days).
func TestLinearFunctionsOnLongText(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{Timeout: 20 * time.Second})
	const n = 16 << 20
	for _, c := range []struct{ q, want string }{
		{fmt.Sprintf("SELECT instr(%s, %s || 'b')", aText(2*n), aText(n)), "0"},
		{fmt.Sprintf("SELECT instr(%s || 'b', %s || 'b')", aText(2*n), aText(n)), fmt.Sprint(n + 1)},
		{fmt.Sprintf("SELECT length(replace(%s, %s || 'b', 'x'))", aText(2*n), aText(n)), fmt.Sprint(2 * n)},
		{fmt.Sprintf("SELECT length(replace(%s, 'aa', 'b'))", aText(2*n)), fmt.Sprint(n)},
		{fmt.Sprintf("SELECT length(trim(%s, printf('%%.*c', 4000000, 'b') || 'a'))", aText(8<<20)), "0"},
	} {
		start := time.Now()
		res, err := r.Query(context.Background(), c.q)
		d := time.Since(start)
		if err != nil {
			t.Errorf("%.60s…: %v", c.q, err)
			continue
		}
		t.Logf("%.70s… = %v in %s", c.q, res.Rows[0][0], d.Round(time.Millisecond))
		if got := fmt.Sprint(res.Rows[0][0]); got != c.want {
			t.Errorf("%.60s… = %s, want %s", c.q, got, c.want)
		}
	}
	_, err := r.Query(context.Background(), fmt.Sprintf("SELECT replace(%s, 'a', 'bb')", aText(40<<20)))
	var qe *QueryError
	if !errors.As(err, &qe) || !strings.Contains(qe.Message, "larger than 64 MiB") {
		t.Errorf("replace growing past the length limit: %v (%T), want the size limit's QueryError", err, err)
	}
}

// TestTrimSlowSetIsInterrupted: a trim set holding a malformed character
// longer than 4 bytes is matched as SQLite does, character by character,
// and the time limit interrupts it: Query returns a plain TimeoutError at
// the limit, nothing left running.
func TestTrimSlowSetIsInterrupted(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{Timeout: time.Second})
	set := "CAST(x'c38080808080' AS TEXT) || printf('%.*c', 1000000, 'b') || 'a'"
	start := time.Now()
	_, err := r.Query(context.Background(), "SELECT trim("+aText(4<<20)+", "+set+")")
	elapsed := time.Since(start)
	t.Logf("slow trim under a 1 s limit: %s, %v", elapsed.Round(time.Millisecond), err)
	var te *TimeoutError
	if !errors.As(err, &te) || te.LeftRunning {
		t.Fatalf("got %v (%T), want a *TimeoutError, nothing left running", err, err)
	}
	if elapsed > time.Second+interruptGrace {
		t.Errorf("returned after %s, want within the grace", elapsed)
	}
	if n := r.abandoned.Running(); n != 0 {
		t.Errorf("%d statements left running", n)
	}
	res, err := r.Query(context.Background(), "SELECT trim('xxhixx', CAST(x'c38080808080' AS TEXT) || 'x')")
	if err != nil || res.Rows[0][0] != "hi" {
		t.Errorf("short slow trim: %v %v", res, err)
	}
}
