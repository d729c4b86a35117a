package attention_test

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/examples/attention"
	"github.com/ropegen/ropegen/generated/kv128f16"
	"github.com/ropegen/ropegen/generated/rope128"
)

// vec returns a deterministic head vector for token t of stream seed.
func vec(seed, t int) []float32 {
	x := make([]float32, attention.HeadDim)
	for i := range x {
		x[i] = float32(math.Sin(float64(1+seed*7+t*3) * float64(i+1) * 0.37))
	}
	return x
}

// A decode loop of one head: each Step rotates the token's key into the f16
// cache (kv128f16's ApplyStore), rotates its query, and attends to every cached
// token. The same tokens 10⁶ positions later, in a cache without a table
// (which would take 1 GiB), give the same scores to within the f16 rounding.
func ExampleCache() {
	const tokens = 4
	near := attention.NewCache(kv128f16.NewTable(tokens), 1, 0)
	far := attention.NewCache(nil, 1, 1_000_000)
	for t := range tokens {
		q, k, v := vec(1, t), vec(1, t), vec(2, t) // each query matches its own key
		for i := range q {
			q[i] *= 0.5
		}
		out := near.Step(q, k, v)
		far.Step(q, k, v)
		fmt.Printf("token %d: out[0:2] = %6.3f %6.3f\n", t, out[0], out[1])
		fmt.Printf("  scores, positions from %7d:", near.Pos()-1-t)
		for _, s := range near.Scores(0) {
			fmt.Printf(" %6.3f", s)
		}
		fmt.Printf("\n  scores, positions from %7d:", far.Pos()-1-t)
		for _, s := range far.Scores(0) {
			fmt.Printf(" %6.3f", s)
		}
		fmt.Println()
	}
	// Output:
	// token 0: out[0:2] = -0.669 -0.995
	//   scores, positions from       0:  2.813
	//   scores, positions from 1000000:  2.813
	// token 1: out[0:2] =  0.313  0.595
	//   scores, positions from       0: -0.041  2.842
	//   scores, positions from 1000000: -0.041  2.842
	// token 2: out[0:2] =  0.876  0.131
	//   scores, positions from       0:  0.011 -0.041  2.831
	//   scores, positions from 1000000:  0.011 -0.041  2.831
	// token 3: out[0:2] =  0.380 -0.502
	//   scores, positions from       0:  0.018 -0.002 -0.030  1.245
	//   scores, positions from 1000000:  0.018 -0.002 -0.030  1.244
}

// RoFormer's linear attention over four tokens at positions 0…3, and the same
// tokens at 10⁶…10⁶+3 rotated without a table: RoPE acts in the numerator
// only, which depends on the positions through their differences.
func ExampleCausalLinear() {
	const tokens, dv = 4, 2
	var q, k, v []float32
	for t := range tokens {
		q, k = append(q, vec(0, t)...), append(k, vec(1, t)...)
		v = append(v, float32(t), float32(1-t))
	}
	near := attention.CausalLinear(rope128.NewTable(tokens), q, k, v, []int32{0, 1, 2, 3})
	far := attention.CausalLinear(nil, q, k, v, []int32{1e6, 1e6 + 1, 1e6 + 2, 1e6 + 3})
	for t := range tokens {
		fmt.Printf("token %d at %d: %8.5f %8.5f   at %d: %8.5f %8.5f\n", t, t, near[t*dv], near[t*dv+1], 1_000_000+t, far[t*dv], far[t*dv+1])
	}
	// Output:
	// token 0 at 0:  0.00000  1.00000   at 1000000:  0.00000  1.00000
	// token 1 at 1:  0.49784  0.47337   at 1000001:  0.49784  0.47337
	// token 2 at 2:  0.98808 -0.04046   at 1000002:  0.98808 -0.04046
	// token 3 at 3:  1.55767 -0.63776   at 1000003:  1.55767 -0.63776
}

// A paged f16 cache of one head in blocks of 16 rows: a context shift drops
// tokens 1…4 of six and moves the last one back four positions, in place,
// with the package's Shift; the next token's scores then match those of a
// fresh cache holding the kept tokens, to within the f16 rounding. The
// unshifted token 0 scores the same bits in both.
func ExamplePagedCache_Shift() {
	tab := kv128f16.NewTable(16)
	shifted := attention.NewPagedF16(tab, 1, 2)
	for t := range 6 {
		shifted.Step(vec(3, t), vec(4, t), vec(5, t))
	}
	shifted.Shift(1, 4) // keep token 0, drop 1…4; token 5 moves to position 1
	fresh := attention.NewPagedF16(tab, 1, 2)
	for _, t := range []int{0, 5} {
		fresh.Step(vec(3, t), vec(4, t), vec(5, t))
	}
	shifted.Step(vec(3, 6), vec(4, 6), vec(5, 6))
	fresh.Step(vec(3, 6), vec(4, 6), vec(5, 6))
	fmt.Println("next position:", shifted.Pos(), fresh.Pos())
	fmt.Printf("after the shift: %.4f\n", shifted.Scores(0))
	fmt.Printf("fresh:           %.4f\n", fresh.Scores(0))
	// Output:
	// next position: 3 3
	// after the shift: [-0.1048 0.2292 0.0467]
	// fresh:           [-0.1048 0.2291 0.0467]
}
