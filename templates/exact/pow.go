package exact

import (
	"math"
	"math/big"
)

// Frequencies must not depend on the machine that computes them: a package
// generated on an arm64 laptop must be byte for byte the one CI generates
// on amd64, and a table built at run time must hold the bits ropegen would
// compute. math.Pow, math.Log and math.Exp do not promise that (amd64 runs
// assembly for Log and Exp; on arm64 the compiler fuses the multiply-adds
// of their Go code), and they differed in the last bit of 9 of the 64
// default frequencies of head dim 128. So powers and logarithms come from
// exactPow and exactLn, which compute in big.Float, whose integer
// arithmetic gives the same bits everywhere, and round once.

// exactPrec is the precision, in bits, of exactPow's and exactLn's
// intermediate values: far more than the 53 bits they round to.
const exactPrec = 160

// exactPow returns x^y for finite x > 0 and finite y: exp(y·ln x) in
// exactPrec-bit arithmetic, rounded once to float64 (so it is x^y correctly
// rounded but in the rare case where x^y lies within 2⁻¹⁵⁰ of a rounding
// boundary). Other arguments, which only an invalid spec reaches, go to
// math.Pow.
func exactPow(x, y float64) float64 {
	if !(x > 0) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
		return math.Pow(x, y)
	}
	l := bigLog(x)
	l.Mul(l, exactFloat(y))
	r, _ := bigExpOf(l).Float64()
	return r
}

func exactFloat(v float64) *big.Float { return new(big.Float).SetPrec(exactPrec).SetFloat64(v) }

// bigLog returns ln x, x = m·2^e with m in [1/√2, √2): e·ln 2 + ln m.
func bigLog(x float64) *big.Float {
	m, e := math.Frexp(x) // m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m, e = 2*m, e-1
	}
	l := atanhLog(exactFloat(m))
	return l.Add(l, new(big.Float).SetPrec(exactPrec).Mul(ln2(), exactFloat(float64(e))))
}

// ln2 returns ln 2 to exactPrec bits.
func ln2() *big.Float { return atanhLog(exactFloat(2)) }

// atanhLog returns ln m = 2·atanh(z), z = (m−1)/(m+1), by its series
// 2·Σ z^(2k+1)/(2k+1); |z| <= 1/3 for m in [1/2, 2].
func atanhLog(m *big.Float) *big.Float {
	one := exactFloat(1)
	z := new(big.Float).SetPrec(exactPrec).Sub(m, one)
	z.Quo(z, new(big.Float).SetPrec(exactPrec).Add(m, one))
	z2 := new(big.Float).SetPrec(exactPrec).Mul(z, z)
	sum := new(big.Float).SetPrec(exactPrec)
	p := new(big.Float).SetPrec(exactPrec).Set(z)
	t := new(big.Float).SetPrec(exactPrec)
	for k := 0; p.Sign() != 0; k++ {
		t.Quo(p, exactFloat(float64(2*k+1)))
		sum.Add(sum, t)
		if t.MantExp(nil) < sum.MantExp(nil)-exactPrec-2 {
			break
		}
		p.Mul(p, z2)
	}
	return sum.Mul(sum, exactFloat(2))
}

// bigExpOf returns e^y: y = k·ln 2 + r, |r| <= ln 2/2 (about), e^r by its
// Taylor series, times 2^k exactly.
func bigExpOf(y *big.Float) *big.Float {
	yf, _ := y.Float64()
	k := math.Round(yf / math.Ln2)
	r := new(big.Float).SetPrec(exactPrec).Mul(ln2(), exactFloat(k))
	r.Sub(y, r)
	sum, t := exactFloat(1), exactFloat(1)
	for n := 1; t.Sign() != 0; n++ {
		t.Mul(t, r)
		t.Quo(t, exactFloat(float64(n)))
		sum.Add(sum, t)
		if t.MantExp(nil) < sum.MantExp(nil)-exactPrec-2 {
			break
		}
	}
	return sum.SetMantExp(sum, int(k))
}
