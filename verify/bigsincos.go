package verify

import (
	"math"
	"math/big"
	"sync"
)

// The f64 kernels' tables are correctly rounded (but for rare near-midpoint
// cases), which leaves the f64 bound no room for math.Sincos's own error of
// up to an ulp in the reference. So for f64 packages the reference takes its
// cosines and sines from exactSincos: the float64 angle reduced and expanded
// in sincosPrec-bit arithmetic and rounded once, written apart from
// ropegen's generator.

// sincosPrec is the precision of exactSincos: the angles reach 2^40 or so,
// so reducing them modulo π/2 loses about 40 bits; 192 leaves ~150.
const sincosPrec = 192

var bigPiHalf = sync.OnceValue(func() *big.Float {
	// Machin: π/4 = 4·atan(1/5) − atan(1/239).
	atanInv := func(n int64) *big.Float {
		x := new(big.Float).SetPrec(sincosPrec+32).Quo(big.NewFloat(1).SetPrec(sincosPrec+32), new(big.Float).SetInt64(n))
		x2 := new(big.Float).SetPrec(sincosPrec+32).Mul(x, x)
		sum := new(big.Float).SetPrec(sincosPrec + 32)
		p := new(big.Float).SetPrec(sincosPrec + 32).Set(x)
		t := new(big.Float).SetPrec(sincosPrec + 32)
		for k := int64(0); p.Sign() != 0; k++ {
			t.Quo(p, new(big.Float).SetInt64(2*k+1))
			if k%2 == 1 {
				t.Neg(t)
			}
			sum.Add(sum, t)
			if p.MantExp(nil) < -sincosPrec-40 {
				break
			}
			p.Mul(p, x2)
		}
		return sum
	}
	a := atanInv(5)
	a.Mul(a, new(big.Float).SetInt64(4))
	a.Sub(a, atanInv(239))
	return a.Mul(a, new(big.Float).SetInt64(2)) // π/2 = 2·(π/4)
})

// sincosMemo holds exactSincos's answers by the angle's bits. The checks
// ask for the same angles many times (every head of a token, every
// cache format of a shape drawn from the same seed), each a series in
// big.Float arithmetic that dominates a check's time, under qemu most of
// all. Cleared when it reaches sincosMemoMax entries.
var sincosMemo struct {
	sync.Mutex
	m map[uint64][2]float64
}

const sincosMemoMax = 1 << 20

// exactSincos returns sin x and cos x correctly rounded to float64 (but
// where the exact value lies within about 2^-140 of a rounding boundary).
func exactSincos(x float64) (sin, cos float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN(), math.NaN()
	}
	key := math.Float64bits(x)
	sincosMemo.Lock()
	sc, ok := sincosMemo.m[key]
	sincosMemo.Unlock()
	if ok {
		return sc[0], sc[1]
	}
	sin, cos = seriesSincos(x)
	sincosMemo.Lock()
	if sincosMemo.m == nil || len(sincosMemo.m) >= sincosMemoMax {
		sincosMemo.m = make(map[uint64][2]float64)
	}
	sincosMemo.m[key] = [2]float64{sin, cos}
	sincosMemo.Unlock()
	return sin, cos
}

// seriesSincos is exactSincos without the memo.
func seriesSincos(x float64) (sin, cos float64) {
	prec := uint(sincosPrec)
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(bx, bigPiHalf())
	kf, _ := q.Float64()
	k := math.Round(kf)
	r := new(big.Float).SetPrec(prec).Mul(bigPiHalf(), new(big.Float).SetFloat64(k))
	r.Sub(bx, r) // |r| <= π/4 + tiny
	r2 := new(big.Float).SetPrec(prec).Mul(r, r)
	series := func(term *big.Float, first int64) *big.Float {
		sum := new(big.Float).SetPrec(prec).Set(term)
		t := new(big.Float).SetPrec(prec).Set(term)
		for n := first; ; n += 2 {
			t.Mul(t, r2)
			t.Quo(t, new(big.Float).SetInt64(n*(n+1)))
			t.Neg(t)
			if t.Sign() == 0 || t.MantExp(nil) < sum.MantExp(nil)-int(prec)-8 {
				return sum
			}
			sum.Add(sum, t)
		}
	}
	s := series(r, 2)                                        // r − r³/3! + …
	c := series(new(big.Float).SetPrec(prec).SetInt64(1), 1) // 1 − r²/2! + …
	sf, _ := s.Float64()
	cf, _ := c.Float64()
	switch int64(math.Mod(k, 4)+4) % 4 {
	case 0:
		return sf, cf
	case 1:
		return cf, -sf
	case 2:
		return -sf, -cf
	default:
		return -cf, sf
	}
}
