package gen

import (
	_ "embed"
	"math"
	"strings"
)

// This file is compiled into package gen, where sincos_test.go proves its
// accuracy, and its sincos function is also copied verbatim into every
// generated float32 package (see sincosSource), so the function tested here is
// the function the packages run.

//go:embed sincos.go
var thisFile string

// sincosSource returns the source of sincos and its constants: from the doc
// comment of sincosMax to the end of this file.
func sincosSource() string {
	const marker = "\n// sincosMax is" // at the start of a line: not this one
	i := strings.Index(thisFile, marker)
	if i < 0 {
		panic("gen: sincos.go: marker not found")
	}
	return strings.TrimSpace(thisFile[i:])
}

// sincosMax is the angle up to which sincos reduces with its own four-part
// constant: below it k = round(x·2/π) < 2³¹, so k times each 22-bit part of
// π/2 is exact. Angles p·θ_i with p < 2²⁴ stay below it for θ_i < 200.
const sincosMax = 0x1p31

// Cody–Waite split of π/2: sincosP1, P2 and P3 carry 22 significant bits
// each, sincosP4 the next 53; together they are π/2 to within 2⁻¹²².
const (
	sincosP1 = 0x1.921fbp+0
	sincosP2 = 0x1.5110bp-22
	sincosP3 = 0x1.1846980p-44
	sincosP4 = 0x1.3198a2e037073p-69
)

// sincos sets sin[i] and cos[i] to the sine and cosine of the angle
// φ_i = pos·freqs[i], the product rounded to float64 (ROPE.md §4), for every
// i < len(freqs). It is as accurate as math.Sincos (within 3 float64 ulps,
// and accurate next to multiples of π/2 too, where math.Sincos is not) but straight-line and branch-free
// below sincosMax (math.Sincos beyond it), and it has no fused multiply-add
// on any architecture: every product is converted explicitly, so it returns
// the same bits everywhere. φ is reduced to r = φ − k·π/2, |r| <= π/4 (to
// within rounding), with the four-part constant (each step exact where the
// difference is small); sin r and cos r are math.Sincos's polynomials
// (Cephes) on [−π/4, π/4], evaluated by Estrin's scheme; the quadrant k mod 4
// swaps and negates them with integer operations instead of branches.
func sincos(sin, cos []float64, pos float64, freqs []float64) {
	sin, cos = sin[:len(freqs)], cos[:len(freqs)]
	for i, theta := range freqs {
		x := float64(pos * theta)
		if !(x < sincosMax) {
			sin[i], cos[i] = math.Sincos(x)
			continue
		}
		const magic = 0x1.8p52 // adding it rounds to an integer, kept in the low bits
		kb := float64(x*(2/math.Pi)) + magic
		q := math.Float64bits(kb)
		k := kb - magic
		r := x - float64(k*sincosP1)
		r -= float64(k * sincosP2)
		r -= float64(k * sincosP3)
		r -= float64(k * sincosP4)
		z := float64(r * r)
		z2 := float64(z * z)
		z4 := float64(z2 * z2)
		s0 := float64(8.33333333332211858878e-3*z) - 1.66666666666666307295e-1
		s1 := float64(2.75573136213857245213e-6*z) - 1.98412698295895385996e-4
		s2 := float64(1.58962301576546568060e-10*z) - 2.50507477628578072866e-8
		s := r + float64(float64(r*z)*(s0+float64(z2*s1)+float64(z4*s2)))
		c0 := float64(-1.38888888888730564116e-3*z) + 4.16666666666665929218e-2
		c1 := float64(-2.75573141792967388112e-7*z) + 2.48015872888517045348e-5
		c2 := float64(-1.13585365213876817300e-11*z) + 2.08757008419747316778e-9
		c := (1 - float64(0.5*z)) + float64(z2*(c0+float64(z2*c1)+float64(z4*c2)))
		// Quadrant q: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s).
		sb, cb := math.Float64bits(s), math.Float64bits(c)
		swap := (sb ^ cb) & -(q & 1)
		sb, cb = sb^swap, cb^swap
		sin[i] = math.Float64frombits(sb ^ (q&2)<<62)
		cos[i] = math.Float64frombits(cb ^ ((q+1)&2)<<62)
	}
}
