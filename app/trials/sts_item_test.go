package trials

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
)

// The item IDs are stored in users' vector stores: itemID must keep the
// format the first versions wrote with fmt and hash/fnv, or every item
// would be embedded again.
func TestItemIDKeepsTheStoredFormat(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "Breast Cancer", "Placebo", "café au lait — ß", "a|b|c"}
	for range 200 {
		b := make([]byte, r.IntN(40))
		for i := range b {
			b[i] = byte(r.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for i, text := range texts {
		h := fnv.New32a()
		h.Write([]byte(text))
		want := fmt.Sprintf("%s|%d|%08x", "NCT0000"+fmt.Sprint(i), i%7, h.Sum32())
		if got := itemID("NCT0000"+fmt.Sprint(i), i%7, text); got != want {
			t.Fatalf("itemID(%q) = %q, want %q", text, got, want)
		}
	}
}

// dot (gonum's SIMD kernel) agrees with a float64 dot product to float32
// rounding, also for lengths that are not a multiple of the kernel's
// block, and for vectors of different lengths (their common part).
func TestDotAgreesWithFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 3, 4, 7, 16, 33, 384, 385, 768} {
		a, b := make([]float32, n), make([]float32, n+r.IntN(3))
		var want float64
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range b {
			b[i] = float32(r.NormFloat64())
		}
		for i := range a {
			want += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
			t.Errorf("n=%d: dot = %v, want %v", n, got, want)
		}
		if got := dot(b, a); math.Abs(got-want) > 1e-5*(1+math.Abs(want)) {
			t.Errorf("n=%d (swapped): dot = %v, want %v", n, got, want)
		}
	}
}
