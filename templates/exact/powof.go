package exact

import (
	"math"
	"math/big"
	"sync"
)

// pow.go is copied whole into the packages that compute dynamic NTK
// frequencies, so it stays as small as it is; the code here gives the
// generator the same bits faster. exactPow computes ln 2 twice and ln x
// once per call, each a series of some 40 terms at exactPrec bits, so the
// 2048 frequencies of a 4096-wide head took about 0.2 s. exactPowOf
// computes ln 2 once per process and ln x once per base, with exactly
// bigLog's and bigExpOf's operations on the same values at the same
// precision: big.Float rounds each operation to its result's precision, so
// the same operations on the same operands give the same bits
// (TestExactPowOfMatchesExactPow checks it).

// ln2Once is ln2(), computed on first use. Callers must not modify it.
var ln2Once = sync.OnceValue(ln2)

// exactPowOf returns the function y ↦ exactPow(x, y), bit for bit, for one
// x and many y. The function reuses its big.Floats: one goroutine only.
func exactPowOf(x float64) func(y float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) {
		return func(y float64) float64 { return exactPow(x, y) }
	}
	lnx := bigLogOnce(x)
	l, nf := exactFloat(0), exactFloat(0)
	r, sum, t, u := exactFloat(0), exactFloat(0), exactFloat(0), exactFloat(0)
	return func(y float64) float64 {
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return exactPow(x, y)
		}
		// exactPow: l = ln x · y, then bigExpOf(l).
		l.Mul(lnx, nf.SetFloat64(y))
		yf, _ := l.Float64()
		k := math.Round(yf / math.Ln2)
		r.Mul(ln2Once(), nf.SetFloat64(k))
		r.Sub(l, r)
		sum.SetInt64(1)
		t.SetInt64(1)
		for n := 1; t.Sign() != 0; n++ {
			u.Mul(t, r) // t.Mul(t, r), without the copy an aliased product makes
			t.Quo(u, nf.SetInt64(int64(n)))
			sum.Add(sum, t)
			if t.MantExp(nil) < sum.MantExp(nil)-exactPrec-2 {
				break
			}
		}
		v, _ := sum.SetMantExp(sum, int(k)).Float64()
		return v
	}
}

// bigLogOnce is bigLog with ln2Once for ln2: the same value.
func bigLogOnce(x float64) *big.Float {
	m, e := math.Frexp(x)
	if m < math.Sqrt2/2 {
		m, e = 2*m, e-1
	}
	l := atanhLog(exactFloat(m))
	return l.Add(l, new(big.Float).SetPrec(exactPrec).Mul(ln2Once(), exactFloat(float64(e))))
}
