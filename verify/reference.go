package verify

import (
	"fmt"
	"math"
)

// Matrix returns the dense headDim×headDim float64 matrix A·R_pos of docs/contract.md
// §1, built independently of any kernel: explicit zeros everywhere except,
// for each pair i with indices (a, b) of the layout ("interleaved": (2i,
// 2i+1), "neox": (i, i+rotaryDim/2)), the 2×2 block
//
//	[ A·cos φ   −A·sin φ ]   rows a, b; columns a, b
//	[ A·sin φ    A·cos φ ]
//
// of eq. (11) of the RoFormer paper, with φ = float64(pos)·freqs[i] and cos,
// sin from math.Sincos; and 1 on the diagonal for indices >= rotaryDim,
// which pass through unscaled. The inverse (backward) transform A·R_pos^T is
// its transpose. Matrix panics on arguments that do not describe a kernel.
func Matrix(headDim, rotaryDim int, layout string, freqs []float64, attn float64, pos int) [][]float64 {
	return matrix(headDim, rotaryDim, layout, freqs, attn, pos, math.Sincos)
}

// matrix is Matrix with cos and sin from sincos.
func matrix(headDim, rotaryDim int, layout string, freqs []float64, attn float64, pos int, sincos func(float64) (float64, float64)) [][]float64 {
	if headDim <= 0 || rotaryDim < 0 || rotaryDim%2 != 0 || rotaryDim > headDim ||
		len(freqs) != rotaryDim/2 || (layout != "interleaved" && layout != "neox") {
		panic(fmt.Sprintf("verify.Matrix: bad shape headDim=%d rotaryDim=%d layout=%q len(freqs)=%d",
			headDim, rotaryDim, layout, len(freqs)))
	}
	m := make([][]float64, headDim)
	for i := range m {
		m[i] = make([]float64, headDim)
	}
	for j := rotaryDim; j < headDim; j++ {
		m[j][j] = 1
	}
	pa, pb := pairIndices(rotaryDim, layout)
	for i, th := range freqs {
		sin, cos := sincos(float64(pos) * th)
		a, b := pa[i], pb[i]
		m[a][a], m[a][b] = attn*cos, -(attn * sin)
		m[b][a], m[b][b] = attn*sin, attn*cos
	}
	return m
}

// MulVec returns m·x, or m^T·x when transpose is set, in float64, summing
// each row in index order. The explicit zeros of a Matrix contribute exact
// zeros only for finite x.
func MulVec(m [][]float64, x []float64, transpose bool) []float64 {
	n := len(m)
	if len(x) != n {
		panic(fmt.Sprintf("verify.MulVec: len(x) = %d, want %d", len(x), n))
	}
	y := make([]float64, n)
	for i := range n {
		var sum float64
		for j := range n {
			v := m[i][j]
			if transpose {
				v = m[j][i]
			}
			sum += float64(v * x[j])
		}
		y[i] = sum
	}
	return y
}

// Reference returns A·R_pos·h (inverse: A·R_pos^T·h) for every head h of x
// (len(x) must be a multiple of headDim), computed in float64 with the dense
// Matrix. It is the float64 reference the accuracy checks compare against.
func Reference(headDim, rotaryDim int, layout string, freqs []float64, attn float64, pos int, inverse bool, x []float64) []float64 {
	return reference(headDim, rotaryDim, layout, freqs, attn, pos, inverse, x, math.Sincos)
}

// reference is Reference with cos and sin from sincos.
func reference(headDim, rotaryDim int, layout string, freqs []float64, attn float64, pos int, inverse bool, x []float64, sincos func(float64) (float64, float64)) []float64 {
	if len(x)%headDim != 0 {
		panic(fmt.Sprintf("verify.Reference: len(x) = %d is not a multiple of headDim %d", len(x), headDim))
	}
	m := matrix(headDim, rotaryDim, layout, freqs, attn, pos, sincos)
	y := make([]float64, 0, len(x))
	for h := 0; h < len(x); h += headDim {
		y = append(y, MulVec(m, x[h:h+headDim], inverse)...)
	}
	return y
}
