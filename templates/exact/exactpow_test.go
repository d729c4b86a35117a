package exact

import (
	"math"
	"math/rand/v2"
	"testing"
)

// checkPowOf compares exactPowOf(x) with exactPow(x, y) for every y, in
// order, so that the function's reused values are exercised too.
func checkPowOf(t *testing.T, x float64, ys []float64) {
	t.Helper()
	pow := exactPowOf(x)
	for _, y := range ys {
		got, want := pow(y), exactPow(x, y)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("exactPowOf(%v)(%v) = %v (%#x), exactPow = %v (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

// freqExponents are −2i/r for i < r/2: the exponents defaultFreqs raises a
// base to.
func freqExponents(r int) []float64 {
	ys := make([]float64, r/2)
	for i := range ys {
		ys[i] = -float64(2*i) / float64(r)
	}
	return ys
}

// exactPowOf gives exactPow's bits: on every exponent defaultFreqs uses for
// the bases of the checked-in configs and generated packages, NTK-scaled
// bases, every rotary dim up to 64 and the usual larger ones, and on random
// bases and exponents across float64's range, including results that
// overflow, underflow and are subnormal, and arguments exactPow hands to
// math.Pow.
func TestExactPowOfMatchesExactPow(t *testing.T) {
	bases := []float64{10000, 1e6, 150000, 500000, 5e6, 2, 1.5, 1.0000001, 100, 1e300,
		ntkBase(10000, 4, 128), ntkBase(10000, 8, 64), ntkBase(500000, 2, 128)}
	rs := []int{80, 96, 128, 256}
	for r := 2; r <= 64; r += 2 {
		rs = append(rs, r)
	}
	for _, x := range bases {
		for _, r := range rs {
			checkPowOf(t, x, freqExponents(r))
		}
	}
	if !testing.Short() {
		checkPowOf(t, 10000, freqExponents(4096))
		checkPowOf(t, 1e6, freqExponents(1024))
	}
	rng := rand.New(rand.NewPCG(13, 4096))
	for range 200 {
		var x float64
		switch rng.IntN(4) {
		case 0:
			x = 1 + rng.Float64()*1e6
		case 1:
			x = rng.Float64()
		case 2: // any positive finite float64, subnormals included
			x = math.Float64frombits(rng.Uint64N(0x7ff0000000000000-1) + 1)
		case 3:
			x = 1 + rng.Float64()*1e-6
		}
		ys := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -2048.0 / 4096}
		for range 10 {
			switch rng.IntN(3) {
			case 0:
				ys = append(ys, rng.Float64()*2-1)
			case 1:
				ys = append(ys, (rng.Float64()*2-1)*100)
			case 2: // far past overflow and underflow for most x
				ys = append(ys, (rng.Float64()*2-1)*1e5)
			}
		}
		checkPowOf(t, x, ys)
	}
	// Arguments exactPow leaves to math.Pow.
	for _, x := range []float64{0, math.Copysign(0, -1), -2, math.Inf(1), math.Inf(-1), math.NaN()} {
		checkPowOf(t, x, []float64{0, -0.5, 0.5, 2, -3})
	}
	checkPowOf(t, 10000, []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0.25})
}

// ntkBase is static NTK's scaled base, base·s^(r/(r−2)), as package spec
// computes it.
func ntkBase(base, factor float64, r int) float64 {
	return base * exactPow(factor, float64(r)/float64(r-2))
}
