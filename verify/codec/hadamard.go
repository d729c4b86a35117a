package codec

import (
	"fmt"
	"math"
)

// The normalized Walsh–Hadamard transform of Hadamard-rotated caches.
//
// llama.cpp (#21038, "llama : rotate activations for better
// quantization", merged 2026-04-01 as 744c0c73) multiplies Q, K and V by
// H_n/√n before a quantized cache stores them and the attention output by
// it again (H_n is symmetric and H_n·H_n = n·I, so the normalized matrix
// is its own inverse), n×n blocks along the head: for K, n is the largest
// power of two dividing the head size (build_input_k_rot: from 64, doubled
// while it divides), for V a fixed 64; it rotates only when the cache type
// is quantized and the head size is a multiple of 64 (attn_rot_k,
// attn_rot_v in src/llama-kv-cache.cpp), so heads of 96 or 80 are not
// rotated there. ggml builds H_n in Sylvester order, H[i][j] =
// (−1)^popcount(i&j) (tests/test-backend-ops.cpp, test_mul_mat_hadamard),
// and its CPU backend computes the product as a fast transform
// (ggml_compute_forward_fwht_f32 in src/ggml-cpu/ops.cpp, ggml-org/ggml at
// d99724f2b141fed9e1a9f402213506c081433465): it scales by 1.0f/sqrtf(n)
// first, then butterflies.
//
// ropegen fixes its own arithmetic, the same bits on every backend: blocks
// of n = 2^k values (n the largest power of two dividing the head size, as
// llama.cpp's K rotation for every head size it rotates, and defined for
// the others: 96 gives blocks of 32, 80 of 16; HadamardN takes any other
// n, such as llama.cpp's 64 for V), and in each block the butterflies
// first, for s = 1, 2, 4, …, n/2, for every i with i&s = 0,
//
//	(x_i, x_{i+s}) ← (fl(x_i + x_{i+s}), fl(x_i − x_{i+s})),
//
// which leaves Σ_j H[i][j]·x_j in x_i, then every value multiplied by
// c = fl32(1/√n): 2^(−k/2) exactly for even k, 2^(−(k−1)/2)·0x1.6a09e6p-1
// for odd k. The inverse is the same function.
//
// Error bound. Let y = (H_n/√n)·x exactly and ŷ the computed block, with
// u = 2⁻²⁴ and γ_m = m·u/(1 − m·u). After stage t every value is
// Σ_j ±x_j·Π(1 + δ), one factor |δ| ≤ u per stage on the path of x_j (a
// sum that underflows is exact, so this holds for subnormals too); c is
// (1/√n)(1 + ε), |ε| ≤ u, ε = 0 for even k; the product rounds once more,
// relative u, or absolute 2⁻¹⁵⁰ where it underflows. With no overflow,
//
//	|ŷ_i − y_i| ≤ γ_{k+2}·(1/√n)·Σ_j |x_j| + 2⁻¹⁵⁰   (γ_{k+1} for even k),
//
// at most γ_{k+2}·‖x‖₂ + 2⁻¹⁵⁰ since Σ|x_j| ≤ √n·‖x‖₂: for n = 128, about
// 9u·‖x‖₂ = 5.4e-7·‖x‖₂. The test checks it against a float64 transform on
// random blocks.

// HadamardBlock is the block size of the transform of d values: the
// largest power of two dividing d (d > 0).
func HadamardBlock(d int) int {
	if d <= 0 {
		panic(fmt.Sprintf("codec: HadamardBlock: %d values: want > 0", d))
	}
	return d & -d
}

// Hadamard applies the normalized Walsh–Hadamard transform, in place, to
// the blocks of HadamardBlock(len(x)) values of the head x.
func Hadamard(x []float32) {
	if len(x) == 0 {
		return
	}
	HadamardN(x, HadamardBlock(len(x)))
}

// InverseHadamard undoes Hadamard: the normalized matrix is its own
// inverse, so it is the same computation (exact only up to the bound in
// the package's Hadamard section, twice).
func InverseHadamard(x []float32) { Hadamard(x) }

// HadamardN applies the transform in place to the blocks of n values of
// x; n must be a power of two dividing len(x).
func HadamardN(x []float32, n int) {
	if n <= 0 || n&(n-1) != 0 || len(x)%n != 0 {
		panic(fmt.Sprintf("codec: HadamardN: blocks of %d over %d values: want a power of two dividing the length", n, len(x)))
	}
	c := hadamardScale(n)
	for b := 0; b < len(x); b += n {
		blk := x[b : b+n]
		for s := 1; s < n; s *= 2 {
			for i := range blk {
				if i&s == 0 {
					blk[i], blk[i+s] = blk[i]+blk[i+s], blk[i]-blk[i+s]
				}
			}
		}
		for i := range blk {
			blk[i] *= c
		}
	}
}

// invSqrt2 is 1/√2 rounded to float32 (0x3F3504F3).
const invSqrt2 = float32(0x1.6a09e6p-1)

// hadamardScale is fl32(1/√n) for n = 2^k.
func hadamardScale(n int) float32 {
	k := 0
	for 1<<k < n {
		k++
	}
	c := float32(math.Ldexp(1, -k/2))
	if k%2 == 1 {
		c *= invSqrt2 // exact: a power of two times a float32
	}
	return c
}
