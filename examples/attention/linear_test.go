package attention

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/generated/rope128"
)

// elu1 is FeatureMap's formula written again for the naive version.
func elu1(x float32) float32 {
	if x > 0 {
		return x + 1
	}
	return float32(math.Exp(float64(x)))
}

// naiveLinear is RoFormer's eq. (19) term by term, O(n²): for each t and
// j ≤ t the numerator term (R_t φ(q_t))ᵀ(R_j ϕ(k_j)) and the denominator
// term φ(q_t)ᵀϕ(k_j), with features rotated here by rope128.Rotate. It also
// returns, per output, M = Σ_j |numerator term|·|v_j,c| summed with
// |products| inside the dot, and the denominator D, for the tolerance.
func naiveLinear(q, k, v []float32, pos []int32) (out, mag, den []float64) {
	n := len(pos)
	dv := len(v) / n
	feat := func(x []float32) (f, r []float32) {
		f = make([]float32, len(x))
		for i, y := range x {
			f[i] = elu1(y)
		}
		r = append([]float32(nil), f...)
		for t, p := range pos {
			rope128.Rotate(r[t*HeadDim:(t+1)*HeadDim], int(p))
		}
		return f, r
	}
	fq, rq := feat(q)
	fk, rk := feat(k)
	out, mag, den = make([]float64, n*dv), make([]float64, n*dv), make([]float64, n)
	for t := range n {
		num := make([]float64, dv)
		for j := 0; j <= t; j++ {
			var term, absTerm, denTerm float64
			for i := range HeadDim {
				p := float64(rq[t*HeadDim+i]) * float64(rk[j*HeadDim+i])
				term += p
				absTerm += math.Abs(p)
				denTerm += float64(fq[t*HeadDim+i]) * float64(fk[j*HeadDim+i])
			}
			den[t] += denTerm
			for c := range dv {
				num[c] += term * float64(v[j*dv+c])
				mag[t*dv+c] += absTerm * math.Abs(float64(v[j*dv+c]))
			}
		}
		for c := range dv {
			out[t*dv+c] = num[c] / den[t]
		}
	}
	return out, mag, den
}

// TestCausalLinear checks the prefix-sum form against the naive one.
//
// Tolerance: both compute the same real numerator Σ_j Σ_i rq_t,i·rk_j,i·v_j,c
// from the same float32 rotated features (products of two float32 values
// exact in float64), only in other orders; each term passes through at most
// K = n + HeadDim + 2 float64 roundings, so each numerator is within
// K·2⁻⁵³·(1+ε)·M of the exact sum and each denominator (positive terms)
// within relative K·2⁻⁵³(1+ε). Their quotient is within 2·K·2⁻⁵²·M/D plus
// relative 2·K·2⁻⁵² of the exact quotient; and CausalLinear rounds it to
// float32, half an ulp, ≤ 2⁻²⁴·|out|.
func TestCausalLinear(t *testing.T) {
	const n, dv = 40, 24
	r := rand.New(rand.NewPCG(11, 12))
	q, k, v := randVec(r, n*HeadDim, 1), randVec(r, n*HeadDim, 1), randVec(r, n*dv, 1)
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(3 * i) // any positions: every third
	}
	got := CausalLinear(rope128.NewTable(3*n), q, k, v, pos)
	gotNil := CausalLinear(nil, q, k, v, pos)
	want, mag, den := naiveLinear(q, k, v, pos)
	const kk = n + HeadDim + 2
	for i, w := range want {
		g := float64(got[i])
		if math.Float32bits(got[i]) != math.Float32bits(gotNil[i]) {
			t.Fatalf("output %d: table %g, tableless %g: want the same bits", i, got[i], gotNil[i])
		}
		tol := 2*kk*0x1p-52*(mag[i]/den[i/dv]+math.Abs(w)) + 0x1p-24*math.Abs(g)
		if math.Abs(g-w) > tol {
			t.Fatalf("output %d (token %d) = %.9g: want %.9g ± %.3g", i, i/dv, g, w, tol)
		}
	}
}

// TestLinearShift checks RoFormer's numerator terms (R_m φ(q))ᵀ(R_n ϕ(k)) for
// every m ≥ n of a sequence at positions 0… and at 10⁶…: each moves by no
// more than B₀ + B_S (bound_test.go, scale 1, no narrowing), from the
// features rotated as CausalLinear rotates them. The float32-angle RoPE's
// movement is logged beside ours.
func TestLinearShift(t *testing.T) {
	const n = 64
	r := rand.New(rand.NewPCG(13, 14))
	q, k := randVec(r, n*HeadDim, 1), randVec(r, n*HeadDim, 1)
	pos0, posS := make([]int32, n), make([]int32, n)
	for i := range pos0 {
		pos0[i], posS[i] = int32(i), int32(shift+i)
	}
	tab := rope128.NewTable(n)
	fq, rq0 := features(tab, q, pos0)
	fk, rk0 := features(tab, k, pos0)
	_, rqS := features(nil, q, posS) // a table to 10⁶ would be 1 GiB
	_, rkS := features(nil, k, posS)
	f32 := func(f []float32, start int) []float32 {
		x := append([]float32(nil), f...)
		for t := range n {
			rotateF32Angle(x[t*HeadDim:(t+1)*HeadDim], start+t)
		}
		return x
	}
	gq0, gk0, gqS, gkS := f32(fq, 0), f32(fk, 0), f32(fq, shift), f32(fk, shift)

	tok := func(x []float32, i int) []float32 { return x[i*HeadDim:][:HeadDim] }
	var ours, oursRatio, maxBound, f32Max, maxTerm float64
	for m := range n {
		for j := 0; j <= m; j++ {
			a, b := dotF32(tok(rq0, m), tok(rk0, j)), dotF32(tok(rqS, m), tok(rkS, j))
			bound := scoreBound(tok(fq, m), tok(fk, j), tok(rk0, j), nil, 1) +
				scoreBound(tok(fq, m), tok(fk, j), tok(rkS, j), nil, 1)
			d := math.Abs(a - b)
			if d > bound {
				t.Errorf("query %d key %d: numerator term %.9g at 0, %.9g at +10⁶: moved %.3g, bound %.3g", m, j, a, b, d, bound)
			}
			ours, oursRatio, maxBound = max(ours, d), max(oursRatio, d/bound), max(maxBound, bound)
			f32Max = max(f32Max, math.Abs(dotF32(tok(gq0, m), tok(gk0, j))-dotF32(tok(gqS, m), tok(gkS, j))))
			maxTerm = max(maxTerm, math.Abs(a))
		}
	}
	t.Logf("linear-attention numerator terms (max |term| = %.3g), moved by the 10⁶ shift: ropegen max %.3g (at most %.2f of its bound; bounds ≤ %.3g); float32-angle max %.3g",
		maxTerm, ours, oursRatio, maxBound, f32Max)
	// As in TestCacheShift: float32 angles at 10⁶ are off by up to 2⁻⁵ rad,
	// while without narrowing our bound is 2⁻²²-relative: thousands of times
	// apart here (fixed seed, deterministic).
	if f32Max <= maxBound {
		t.Errorf("float32-angle max movement %.3g: expected it to exceed every ropegen bound (max %.3g)", f32Max, maxBound)
	}
}

// TestCausalLinearPanics checks the messages of bad arguments.
func TestCausalLinearPanics(t *testing.T) {
	x := make([]float32, 2*HeadDim)
	for _, tc := range []struct {
		name, want string
		f          func()
	}{
		{"q", "len(q) = 256: want len(pos)·HeadDim = 128", func() { CausalLinear(nil, x, x, x, []int32{0}) }},
		{"k", "len(k) = 128", func() { CausalLinear(nil, x, x[:HeadDim], x, []int32{0, 1}) }},
		{"v", "len(v) = 3", func() { CausalLinear(nil, x, x, x[:3], []int32{0, 1}) }},
		{"pos", "pos[1] = -1", func() { CausalLinear(nil, x, x, x, []int32{0, -1}) }},
		{"table", "pos[1] = 1", func() { CausalLinear(rope128.NewTable(1), x, x, x, []int32{0, 1}) }},
		{"feature", "len(dst) = 1", func() { FeatureMap(make([]float32, 1), x) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				msg, _ := recover().(string)
				if !strings.Contains(msg, tc.want) {
					t.Fatalf("panic %q: want one containing %q", msg, tc.want)
				}
			}()
			tc.f()
		})
	}
}
