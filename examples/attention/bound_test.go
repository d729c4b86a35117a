package attention

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ropegen/ropegen/generated/rope128"
)

// shift is how far the relative-position tests move a whole sequence.
const shift = 1_000_000

// ropeEps is the contract's per-pair factor (docs/contract.md §6): a rotated
// value y of the pair (x_a, x_b) is within ropeEps·(|x_a| + |x_b|) of the
// exact rotation, k = 4 and u = 2⁻²⁴ for float32, times A = 1, at every
// position below 2²⁴. The exact rotation is by the angle p·θ_i with θ_i the
// float64 value in Freqs taken as an exact real number.
const ropeEps = 4 * 0x1p-24 * rope128.AttentionFactor

// The relative-position bound, used by both examples' tests.
//
// A score is s = c·Σ_i q̃_i·k̃_i, summed in float64, where q̃ is the query
// (or feature) x_q rotated by position m and k̃ the key x_k rotated by n, as
// the kernels return them (for the Cache, k̃ is the f16 value read back), and
// c is the scale (1/√HeadDim, or 1 for a linear-attention numerator term).
// With the exact rotations q* = R_m·x_q and k* = R_n·x_k let
// s* = c·Σ_i q*_i·k*_i. Since R_mᵀR_n = R_{n−m}, s* is the same at m+S and
// n+S for every shift S, exactly. So for one score computed unshifted (s₀)
// and shifted (s_S),
//
//	|s₀ − s_S| ≤ |s₀ − s*| + |s_S − s*| ≤ B₀ + B_S,
//
// each B from that run's own vectors:
//
//   - |q̃_i − q*_i| ≤ e_q,i = ropeEps·(|x_q,a| + |x_q,b|), (a, b) the pair of i
//     (contract §6), and likewise e_k,i for the key; a key narrowed to f16
//     adds one f16 ulp of the stored value (contract §6: "f16/bf16 add one
//     ulp of the storage type"; round-to-nearest-even guarantees half of it).
//   - q̃_i·k̃_i − q*_i·k*_i = (q̃_i − q*_i)·k̃_i + q*_i·(k̃_i − k*_i), and
//     |q*_i| ≤ r_q,i = √(x_q,a² + x_q,b²), as a rotation keeps each pair's
//     length. So the exact sum is within c·Σ_i (e_q,i·|k̃_i| + r_q,i·e_k,i).
//   - Rounding: each product q̃_i·k̃_i of two float32 values is exact in
//     float64; summing HeadDim of them and scaling by c (c itself rounded)
//     adds at most (HeadDim+2)·2⁻⁵³·(1+ε)·c·Σ_i |q̃_i·k̃_i|
//     ≤ HeadDim·2⁻⁵²·c·Σ_i (r_q,i + e_q,i)·|k̃_i| (HeadDim ≥ 3).
//   - Evaluating B itself in float64 takes under 4·HeadDim roundings of
//     positive terms, relative error < 2⁻⁴³; B is multiplied by 1 + 2⁻⁴⁰.
//
// B_S grows with nothing but the vectors: the contract's bound holds at every
// position below 2²⁴, so a shift of 10⁶ costs no more than a shift of 0.

// scoreBound returns B for one score: xq and xk are the unrotated query and
// key (or features), kOut the rotated key as used (widened from f16 for the
// cache), kULP[i] the f16 ulp of kOut[i] (nil when the key is not narrowed),
// and scale the factor c.
func scoreBound(xq, xk []float32, kOut []float32, kULP []float64, scale float64) float64 {
	var rotErr, mag float64
	for i := range HeadDim {
		a := i &^ 1 // interleaved pairs (2i, 2i+1)
		qa, qb := float64(xq[a]), float64(xq[a+1])
		ka, kb := float64(xk[a]), float64(xk[a+1])
		eq := ropeEps * (math.Abs(qa) + math.Abs(qb))
		ek := ropeEps * (math.Abs(ka) + math.Abs(kb))
		if kULP != nil {
			ek += kULP[i]
		}
		rq := math.Hypot(qa, qb)
		k := math.Abs(float64(kOut[i]))
		rotErr += eq*k + rq*ek
		mag += (rq + eq) * k
	}
	b := scale * (rotErr + HeadDim*0x1p-52*mag)
	return b * (1 + 0x1p-40)
}

// f16ULP returns the spacing of binary16 values at |f16 value h|: 2⁻²⁴ for
// zero and subnormals, 2^(e−25) for a normal with biased exponent e.
func f16ULP(h uint16) float64 {
	e := int(h>>10) & 0x1f
	if e == 0 {
		return 0x1p-24
	}
	return math.Ldexp(1, e-25)
}

// rotateF32Angle rotates every head of x by position pos the way Hugging Face
// transformers and vLLM compute RoPE in float32: the angle is
// float32(pos)·float32(θ_i) rounded to float32, cos and sin of that float32
// angle rounded to float32, then y_a = x_a·c − x_b·s and y_b = x_b·c + x_a·s
// in float32 (without fused multiply-add). At pos ≈ 10⁶ the float32 angle is
// off by up to half its ulp, 2⁻⁵ rad, plus pos·θ_i·2⁻²⁴ ≈ 0.06·θ_i rad from
// rounding θ_i: that rotation error does not cancel between two positions.
func rotateF32Angle(x []float32, pos int) {
	for h := 0; h < len(x); h += HeadDim {
		for i, theta := range rope128.Freqs {
			ang := float32(pos) * float32(theta)
			c, s := float32(math.Cos(float64(ang))), float32(math.Sin(float64(ang)))
			a, b := h+2*i, h+2*i+1
			xa, xb := x[a], x[b]
			x[a] = float32(xa*c) - float32(xb*s)
			x[b] = float32(xb*c) + float32(xa*s)
		}
	}
}

// randVec returns n values, normally distributed with standard deviation
// sd, with a few values 8 times larger, as activations have.
func randVec(r *rand.Rand, n int, sd float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(sd * r.NormFloat64())
		if r.IntN(32) == 0 {
			x[i] *= 8
		}
	}
	return x
}

// TestScoreBoundCatchesError makes sure the bound is not vacuous: a score
// whose rotated key carries an error of 10 bounds' worth in one value fails it.
func TestScoreBoundCatchesError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xq, xk := randVec(r, HeadDim, 1), randVec(r, HeadDim, 1)
	q, k := append([]float32(nil), xq...), append([]float32(nil), xk...)
	rope128.Rotate(q, 17)
	rope128.Rotate(k, 5)
	b := scoreBound(xq, xk, k, nil, 1)
	if b <= 0 || b > 1e-4*math.Abs(dotF32(q, k))+1e-3 {
		t.Fatalf("bound %g for score %g: want a small positive bound", b, dotF32(q, k))
	}
	kBad := append([]float32(nil), k...)
	i := 0
	for j := range q { // the largest |q_j| shows an error in k_j best
		if math.Abs(float64(q[j])) > math.Abs(float64(q[i])) {
			i = j
		}
	}
	kBad[i] += float32(10 * b / math.Abs(float64(q[i])))
	if d := math.Abs(dotF32(q, kBad) - dotF32(q, k)); d <= 2*b {
		t.Fatalf("perturbed score moved %g: want > 2·bound = %g", d, 2*b)
	}
}
