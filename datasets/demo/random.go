package demo

import (
	"math"
	"math/rand/v2"
	"time"
)

// Stream constants select independent PCG streams from one seed, so that a
// change in how one part is generated does not shift the others.
const (
	streamClinical uint64 = 0x636c696e6963616c // "clinical"
	streamImaging  uint64 = 0x696d6167696e6721 // "imaging!"
)

// newRand returns the deterministic generator of one stream.
func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// between returns an integer uniformly drawn from [lo, hi].
func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// uniform returns a float uniformly drawn from [lo, hi).
func uniform(r *rand.Rand, lo, hi float64) float64 { return lo + (hi-lo)*r.Float64() }

// normal returns a normally distributed value.
func normal(r *rand.Rand, mean, sd float64) float64 { return mean + sd*r.NormFloat64() }

// logNormal returns a log-normally distributed value with the given median
// and log-scale standard deviation.
func logNormal(r *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*r.NormFloat64())
}

// clamp limits v to [lo, hi].
func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// pick returns a uniformly chosen element of xs, which must not be empty.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// choice is a value with a relative weight.
type choice[T any] struct {
	v T
	w float64
}

// pickWeighted returns a value chosen with probability proportional to its
// weight; cs must hold at least one positive weight.
func pickWeighted[T any](r *rand.Rand, cs []choice[T]) T {
	total := 0.0
	for _, c := range cs {
		total += c.w
	}
	x := r.Float64() * total
	for _, c := range cs {
		if x < c.w {
			return c.v
		}
		x -= c.w
	}
	return cs[len(cs)-1].v
}

// Layouts of the TIMESTAMP and DATE columns.
const (
	timestampLayout = "2006-01-02 15:04:05"
	dateLayout      = "2006-01-02"
)

// mustDate parses a YYYY-MM-DD constant of this package.
func mustDate(s string) time.Time {
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		panic("demo: bad date constant " + s)
	}
	return t
}

// hours returns a duration of h hours (fractional hours allowed), rounded to
// the minute as hospital timestamps are.
func hours(h float64) time.Duration {
	return time.Duration(math.Round(h*60)) * time.Minute
}

// days returns a duration of d days, rounded to the minute.
func days(d float64) time.Duration { return hours(d * 24) }

// nullString maps "" to SQL NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
