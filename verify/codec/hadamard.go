package codec

import (
	"fmt"
	"math"
)

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
