package meta

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// Small dense helpers for the p×p matrices of a meta-regression (p is the
// number of model coefficients, a handful). The k×k matrices metafor forms
// (W, P, PV) are never built: every trace it needs is rewritten as a sum
// over studies plus traces of p×p products, so memory stays O(k·p).

// gram returns X' diag(d) X.
func gram(x [][]float64, d []float64) [][]float64 {
	p := len(x[0])
	g := newSquare(p)
	for i, row := range x {
		for a := 0; a < p; a++ {
			da := d[i] * row[a]
			for b := a; b < p; b++ {
				g[a][b] += da * row[b]
			}
		}
	}
	for a := 0; a < p; a++ {
		for b := 0; b < a; b++ {
			g[a][b] = g[b][a]
		}
	}
	return g
}

func newSquare(p int) [][]float64 {
	m := make([][]float64, p)
	for i := range m {
		m[i] = make([]float64, p)
	}
	return m
}

// invXWX returns (X'WX)⁻¹ and log det(X'WX) computed, as metafor's .invcalc,
// from the QR decomposition of √W·X. ok is false when X'WX is singular.
func invXWX(x [][]float64, w []float64) (inv [][]float64, logDet float64, ok bool) {
	k, p := len(x), len(x[0])
	a := mat.NewDense(k, p, nil)
	for i, row := range x {
		sw := math.Sqrt(w[i])
		for j, v := range row {
			a.Set(i, j, sw*v)
		}
	}
	var qr mat.QR
	qr.Factorize(a)
	var rd mat.Dense
	qr.RTo(&rd)
	r := mat.NewTriDense(p, mat.Upper, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			r.SetTri(i, j, rd.At(i, j))
		}
	}
	for j := 0; j < p; j++ {
		d := math.Abs(r.At(j, j))
		if !(d > 0) || math.IsInf(d, 0) {
			return nil, 0, false
		}
		logDet += 2 * math.Log(d)
	}
	var ri mat.TriDense
	if err := ri.InverseTri(r); err != nil {
		return nil, 0, false
	}
	inv = newSquare(p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			var s float64
			for l := max(i, j); l < p; l++ {
				s += ri.At(i, l) * ri.At(j, l)
			}
			inv[i][j] = s
		}
	}
	return inv, logDet, true
}

// matMul returns a·b for square matrices.
func matMul(a, b [][]float64) [][]float64 {
	p := len(a)
	c := newSquare(p)
	for i := 0; i < p; i++ {
		for l := 0; l < p; l++ {
			if a[i][l] == 0 {
				continue
			}
			for j := 0; j < p; j++ {
				c[i][j] += a[i][l] * b[l][j]
			}
		}
	}
	return c
}

// trProd returns tr(a·b).
func trProd(a, b [][]float64) float64 {
	var s float64
	for i := range a {
		for j := range a {
			s += a[i][j] * b[j][i]
		}
	}
	return s
}

// matVec returns a·v.
func matVec(a [][]float64, v []float64) []float64 {
	out := make([]float64, len(a))
	for i, row := range a {
		for j, x := range row {
			out[i] += x * v[j]
		}
	}
	return out
}

// xtDy returns X' diag(d) y.
func xtDy(x [][]float64, d, y []float64) []float64 {
	out := make([]float64, len(x[0]))
	for i, row := range x {
		for j, v := range row {
			out[j] += v * d[i] * y[i]
		}
	}
	return out
}

// subMatrix returns the rows and columns idx of a.
func subMatrix(a [][]float64, idx []int) [][]float64 {
	s := newSquare(len(idx))
	for i, r := range idx {
		for j, c := range idx {
			s[i][j] = a[r][c]
		}
	}
	return s
}

// symInverse inverts a symmetric positive-definite matrix by Cholesky (R's
// chol2inv(chol(.))); ok is false when it is not positive definite.
func symInverse(a [][]float64) (inv [][]float64, logDet float64, ok bool) {
	p := len(a)
	s := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			s.SetSym(i, j, a[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		return nil, 0, false
	}
	var out mat.SymDense
	if err := ch.InverseTo(&out); err != nil {
		return nil, 0, false
	}
	inv = newSquare(p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			inv[i][j] = out.At(i, j)
		}
	}
	return inv, ch.LogDet(), true
}

// projection holds, for weights w and design X, A = (X'WX)⁻¹ and what the
// traces of P = W − WXAX'W need; P itself is never formed.
type projection struct {
	x      [][]float64
	w      []float64
	a      [][]float64
	logDet float64
	beta   []float64 // A X'W y
	resid  []float64 // y − Xβ
	// io is set when X is the intercept alone: the traces are then sums
	// over the weights, taken in one pass (ioSums).
	io bool
}

func newProjection(x [][]float64, w, y []float64) (projection, bool) {
	if isInterceptOnly(x) {
		// The weighted mean, computed directly as metafor's result equals
		// it to the last bit in the cases that matter (identical studies).
		var sw, swy float64
		for i, wi := range w {
			sw += wi
			swy += wi * y[i]
		}
		if !(sw > 0) || math.IsInf(sw, 0) {
			return projection{}, false
		}
		pr := projection{x: x, w: w, a: [][]float64{{1 / sw}}, logDet: math.Log(sw), beta: []float64{swy / sw}, io: true}
		pr.resid = make([]float64, len(y))
		for i := range y {
			pr.resid[i] = y[i] - pr.beta[0]
		}
		return pr, true
	}
	a, ld, ok := invXWX(x, w)
	if !ok {
		return projection{}, false
	}
	pr := projection{x: x, w: w, a: a, logDet: ld}
	pr.beta = matVec(a, xtDy(x, w, y))
	pr.resid = make([]float64, len(y))
	for i, row := range x {
		var f float64
		for j, v := range row {
			f += v * pr.beta[j]
		}
		pr.resid[i] = y[i] - f
	}
	return pr, true
}

// yPy is y'Py = Σ wᵢ rᵢ².
func (pr projection) yPy() float64 {
	var s float64
	for i, r := range pr.resid {
		s += pr.w[i] * r * r
	}
	return s
}

// yPPy is y'PPy = Σ (wᵢ rᵢ)².
func (pr projection) yPPy() float64 {
	var s float64
	for i, r := range pr.resid {
		s += pr.w[i] * r * pr.w[i] * r
	}
	return s
}

// powWD returns the vector wᵢⁿ·dᵢ (d nil means 1).
func (pr projection) powWD(n int, d []float64) []float64 {
	out := make([]float64, len(pr.w))
	for i, w := range pr.w {
		v := powInt(w, n)
		if d != nil {
			v *= d[i]
		}
		out[i] = v
	}
	return out
}

// powInt is math.Pow(w, n) for a small n ≥ 1, to the last bit, by
// multiplication where that gives the same bits. math.Pow splits w into a
// mantissa in [½, 1) and an exponent, multiplies the mantissas (w², then
// w·w² for n = 3) and scales by the exponent; scaling by a power of 2
// commutes with rounding while every result is a normal number, so for
// |w| in [2⁻³⁰⁰, 2³⁰⁰] it equals w·w and (w·w)·w. Elsewhere (never for the
// weights of real studies) it is math.Pow. The leave-one-out, cumulative
// and influence refits spent two thirds of their time in math.Pow.
func powInt(w float64, n int) float64 {
	if a := math.Abs(w); a >= 0x1p-300 && a <= 0x1p300 {
		switch n {
		case 1:
			return w
		case 2:
			return w * w
		case 3:
			return w * w * w
		}
	}
	return math.Pow(w, float64(n))
}

func sum(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s
}

// ioSums returns Σwᵢ, Σwᵢ² and Σwᵢ³ in one pass without allocating: each
// power as powWD computes it, each sum from 0 in study order, as sum and
// gram (whose products with the intercept's 1 are exact) add them. For an
// intercept-only X, trPD(nil) and trPPD(nil) are these sums combined as the
// p×p code would combine them, to the last bit.
func (pr projection) ioSums() (s1, s2, s3 float64) {
	for _, w := range pr.w {
		s1 += powInt(w, 1)
		s2 += powInt(w, 2)
		s3 += powInt(w, 3)
	}
	return s1, s2, s3
}

// trPD is tr(P·D) for D = diag(d) (d nil: tr P).
func (pr projection) trPD(d []float64) float64 {
	if pr.io && d == nil {
		s1, s2, _ := pr.ioSums()
		return s1 - float64(pr.a[0][0]*s2) // Σw − tr(A·Σw²)
	}
	return sum(pr.powWD(1, d)) - trProd(pr.a, gram(pr.x, pr.powWD(2, d)))
}

// trPPD is tr(P·P·D) (d nil: tr PP = Σ P_ij²).
func (pr projection) trPPD(d []float64) float64 {
	if pr.io && d == nil {
		_, s2, s3 := pr.ioSums()
		a := pr.a[0][0]
		var ab float64 // matMul(A, B): skipped when A is 0
		if a != 0 {
			ab = float64(a * s2)
		}
		return s2 - 2*float64(a*s3) + float64(ab*ab)
	}
	w2 := pr.powWD(2, nil)
	w2d := w2 // the same values when d is nil: computed once
	if d != nil {
		w2d = pr.powWD(2, d)
	}
	b := gram(pr.x, w2)
	m := b
	if d != nil {
		m = gram(pr.x, w2d)
	}
	c := gram(pr.x, pr.powWD(3, d))
	return sum(w2d) - 2*trProd(pr.a, c) + trProd(matMul(pr.a, b), matMul(pr.a, m))
}

// trPDPD is tr(P·D·P·D) (metafor's sum(PV * t(PV)) for D = V).
func (pr projection) trPDPD(d []float64) float64 {
	d2 := make([]float64, len(d))
	for i, v := range d {
		d2[i] = v * v
	}
	m := gram(pr.x, pr.powWD(2, d))
	am := matMul(pr.a, m)
	return sum(pr.powWD(2, d2)) - 2*trProd(pr.a, gram(pr.x, pr.powWD(3, d2))) + trProd(am, am)
}

func isInterceptOnly(x [][]float64) bool {
	for _, row := range x {
		if len(row) != 1 || row[0] != 1 {
			return false
		}
	}
	return true
}
