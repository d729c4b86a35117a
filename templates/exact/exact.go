// Package exact holds ropegen's correctly rounded powers and logarithms and
// the dynamic NTK frequencies built on them. They compute in math/big, whose
// integer arithmetic gives the same bits on every machine, and round once,
// so that frequencies do not depend on the machine that computes them.
//
// Package spec computes every frequency with them. ropegen copies
// dynamic.go and pow.go into the packages that compute dynamic NTK
// frequencies at run time (package templates), so that a table built there
// has the bits ropegen itself would compute. Everything here imports only
// the standard library.
package exact

import "math"

// Pow returns x^y correctly rounded (but within 2⁻¹⁵⁰ of a rounding
// boundary) for finite x > 0 and finite y; math.Pow otherwise.
func Pow(x, y float64) float64 { return exactPow(x, y) }

// PowOf returns y ↦ Pow(x, y), bit for bit, computing ln x once. The
// function reuses its state: use it from one goroutine only.
func PowOf(x float64) func(y float64) float64 { return exactPowOf(x) }

// Ln returns ln x correctly rounded (same caveat as Pow) for finite x > 0;
// math.Log otherwise.
func Ln(x float64) float64 { return exactLn(x) }

// DynamicFreqs sets f to dynamic NTK's frequencies for a table of n > origCtx
// positions: θ_i = b^(−2i/r), b = base·((factor·n/origCtx) − (factor − 1))^(r/(r−2)),
// every step rounded to float64 in that order.
func DynamicFreqs(f []float64, base, factor float64, origCtx, r, n int) {
	dynamicFreqs(f, base, factor, origCtx, r, n)
}

// exactLn returns ln x for finite x > 0, rounded once from exactPrec bits
// (math.Log for other arguments).
func exactLn(x float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return math.Log(x)
	}
	r, _ := bigLog(x).Float64()
	return r
}
