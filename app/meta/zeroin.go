package meta

import (
	"context"
	"math"
)

// rootTol is R's default uniroot tolerance, .Machine$double.eps^0.25, which
// metafor's confint.rma.uni uses for the Q-profile limits.
const rootTol = 0x1p-13

// zeroin finds a root of f in [a, b] given fa = f(a) and fb = f(b) of
// opposite signs, by the Forsythe–Malcolm–Moler (Brent) method exactly as R's
// uniroot (R_zeroin2) steps: bisection combined with linear or inverse
// quadratic interpolation, stopping when the bracket is within
// 2·eps·|b| + tol/2 of the estimate. Reproducing R's steps, not only its
// tolerance, is what makes iterative estimates agree with metafor beyond tol.
// ok is false when maxit iterations did not suffice, or when ctx was
// cancelled (it is checked before every step; the caller tells the two
// apart by ctx.Err()).
func zeroin(ctx context.Context, f func(float64) float64, a, b, fa, fb, tol float64, maxit int) (root float64, ok bool) {
	const eps = 0x1p-52
	c, fc := a, fa
	if fa == 0 {
		return a, true
	}
	if fb == 0 {
		return b, true
	}
	for it := 0; it <= maxit; it++ {
		if ctx.Err() != nil {
			return b, false
		}
		prev := b - a
		if math.Abs(fc) < math.Abs(fb) {
			a, b, c = b, c, b
			fa, fb, fc = fb, fc, fb
		}
		tolAct := 2*eps*math.Abs(b) + tol/2
		step := (c - b) / 2
		if math.Abs(step) <= tolAct || fb == 0 {
			return b, true
		}
		if math.Abs(prev) >= tolAct && math.Abs(fa) > math.Abs(fb) {
			var p, q float64
			cb := c - b
			if a == c {
				t1 := fb / fa
				p = cb * t1
				q = 1 - t1
			} else {
				q = fa / fc
				t1 := fb / fc
				t2 := fb / fa
				p = t2 * (cb*q*(q-t1) - (b-a)*(t1-1))
				q = (q - 1) * (t1 - 1) * (t2 - 1)
			}
			if p > 0 {
				q = -q
			} else {
				p = -p
			}
			if p < 0.75*cb*q-math.Abs(tolAct*q)/2 && p < math.Abs(prev*q/2) {
				step = p / q
			}
		}
		if math.Abs(step) < tolAct {
			if step > 0 {
				step = tolAct
			} else {
				step = -tolAct
			}
		}
		a, fa = b, fb
		b += step
		fb = f(b)
		if (fb > 0 && fc > 0) || (fb < 0 && fc < 0) {
			c, fc = a, fa
		}
	}
	return b, false
}

// normTwoSided is the two-sided normal p-value 2·P(Z > |z|), computed with
// erfc so that it keeps full relative precision in the far tail (as R's
// pnorm; 1 − Φ loses it).
func normTwoSided(z float64) float64 {
	return math.Erfc(math.Abs(z) / math.Sqrt2)
}
