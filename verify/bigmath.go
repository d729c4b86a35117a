package verify

import (
	"math"
	"math/big"
)

// bigPrec is the precision of the extended-precision arithmetic: far more
// than the 106 bits of a product of two float64s, so sums, norms and dot
// products below carry a relative error of about 2^-256, negligible next to
// every bound they enter.
const bigPrec = 256

func newBig(v float64) *big.Float { return new(big.Float).SetPrec(bigPrec).SetFloat64(v) }

// bigDot returns Σ a[j]·b[j] over the indices in idx (all if idx is nil).
func bigDot(a, b []float64, idx []int) *big.Float {
	sum, p := newBig(0), newBig(0)
	add := func(j int) {
		p.SetFloat64(a[j])
		p.Mul(p, newBig(b[j]))
		sum.Add(sum, p)
	}
	if idx == nil {
		for j := range a {
			add(j)
		}
	} else {
		for _, j := range idx {
			add(j)
		}
	}
	return sum
}

// bigNorm returns sqrt(Σ a[j]²) over idx (all if nil).
func bigNorm(a []float64, idx []int) *big.Float {
	s := bigDot(a, a, idx)
	if s.Sign() == 0 {
		return s
	}
	return s.Sqrt(s)
}

// absDiff returns |a − b| rounded to float64.
func absDiff(a, b *big.Float) float64 {
	d := new(big.Float).SetPrec(bigPrec).Sub(a, b)
	f, _ := d.Abs(d).Float64()
	return f
}

// bigLn returns ln v for v > 0: v = m·2^e with m in [0.5, 1), ln v =
// e·ln 2 + ln m, each logarithm from the series ln m = 2·atanh((m−1)/(m+1)).
func bigLn(v float64) *big.Float {
	m, e := math.Frexp(v)
	r := lnSeries(newBig(m))
	l2 := lnSeries(newBig(2))
	return r.Add(r, l2.Mul(l2, newBig(float64(e))))
}

// lnSeries returns ln m = 2·Σ z^(2k+1)/(2k+1), z = (m−1)/(m+1), for m in
// [0.5, 2] (|z| <= 1/3, so each term gains more than three bits).
func lnSeries(m *big.Float) *big.Float {
	one := newBig(1)
	z := new(big.Float).SetPrec(bigPrec).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(bigPrec).Add(m, one))
	z2 := new(big.Float).SetPrec(bigPrec).Mul(z, z)
	sum, pow, term := newBig(0), new(big.Float).SetPrec(bigPrec).Set(z), newBig(0)
	for k := 0; k < 4*bigPrec; k++ {
		term.Quo(pow, newBig(float64(2*k+1)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -bigPrec-8 {
			break
		}
		pow.Mul(pow, z2)
	}
	return sum.Mul(sum, newBig(2))
}

// bigExp returns e^y: y = k·ln 2 + r with |r| <= ln 2/2 + tiny, e^r from its
// Taylor series, then scaled by 2^k exactly.
func bigExp(y *big.Float) *big.Float {
	l2 := lnSeries(newBig(2))
	yf, _ := y.Float64()
	k := math.Round(yf / math.Ln2)
	r := new(big.Float).SetPrec(bigPrec).Mul(l2, newBig(k))
	r.Sub(y, r)
	sum, term := newBig(1), newBig(1)
	for n := 1; n < 4*bigPrec; n++ {
		term.Mul(term, r)
		term.Quo(term, newBig(float64(n)))
		sum.Add(sum, term)
		if term.Sign() == 0 || term.MantExp(nil)-sum.MantExp(nil) < -bigPrec-8 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}

// defaultFreq returns base^(−num/den) rounded to float64, computed as
// exp(−(num/den)·ln base) in 256-bit arithmetic, with the exact rational
// exponent: written apart from ropegen's generator, which rounds the
// exponent to float64 first and computes the power with its own 160-bit
// exactPow.
func defaultFreq(base float64, num, den int) float64 {
	y := bigLn(base)
	y.Mul(y, newBig(float64(-num)))
	y.Quo(y, newBig(float64(den)))
	f, _ := bigExp(y).Float64()
	return f
}
