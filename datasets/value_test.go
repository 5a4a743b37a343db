package datasets

import (
	"math"
	"testing"
	"time"
)

// Number, Text and QuoteString read and write the values both engines
// return (SQLite: int64, float64, string; PostgreSQL also int32, float32
// and time.Time).
func TestValueHelpers(t *testing.T) {
	for _, c := range []struct {
		v    any
		want float64
		ok   bool
	}{
		{int64(3), 3, true}, {int32(-2), -2, true}, {1.5, 1.5, true}, {float32(0.5), 0.5, true},
		{" 7.25 ", 7.25, true}, {"seven", 0, false}, {math.NaN(), 0, false}, {nil, 0, false},
	} {
		if got, ok := Number(c.v); ok != c.ok || (ok && got != c.want) {
			t.Errorf("Number(%#v) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, ""}, {" F ", "F"}, {int64(42), "42"}, {2.0, "2"}, {2.5, "2.5"}, {1e20, "100000000000000000000"},
		{time.Date(2180, 7, 23, 0, 0, 0, 0, time.UTC), "2180-07-23"},
		{time.Date(2180, 7, 23, 6, 5, 4, 0, time.UTC), "2180-07-23 06:05:04"},
		{Blob{0xab}, "ab"},
	} {
		if got := Text(c.v); got != c.want {
			t.Errorf("Text(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := QuoteString("O'Brien"); got != "'O''Brien'" {
		t.Errorf("QuoteString = %s", got)
	}
}
