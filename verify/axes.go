package verify

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// Multi-axis RoPE (docs/contract.md §9): token j has N positions
// pos[j·N : (j+1)·N] and pair i turns by the position on axis Axis[i].
// Dynamic NTK (§3): a table of n > OrigCtx positions takes the base
// base·((s·n/L) − (s − 1))^(R/(R−2)).

// Axes describes a multi-axis package's entry points (docs/contract.md §9):
// its tables take N positions per token, and pair i turns by the position
// on axis Axis[i]. The rest of the suite drives the package's tables with
// one position per token (text tokens: each axis at that position); Axes
// reaches the tables' own forms.
type Axes[T Elem] struct {
	// N is the number of positions per token (the package's Axes), at
	// least 2.
	N int
	// Axis maps each pair to its axis: RotaryDim/2 values, each < N.
	Axis []uint8
	// ApplySeq(tab, x, pos) calls tab's ApplySeq with N positions per
	// token; ApplyInverseSeq calls its ApplyInverseSeq.
	ApplySeq        func(tab Table[T], x []T, pos []int32)
	ApplyInverseSeq func(tab Table[T], x []T, pos []int32)
}

// matrixAxes is Matrix for a token with a position on each axis, with cos
// and sin from sincos: pair i's block turns by φ = float64(pos[axis[i]])·freqs[i].
func matrixAxes(headDim, rotaryDim int, layout string, freqs []float64, axis []uint8, attn float64, pos []int, sincos func(float64) (float64, float64)) [][]float64 {
	if len(axis) != len(freqs) {
		panic(fmt.Sprintf("verify.matrixAxes: len(axis) = %d, len(freqs) = %d", len(axis), len(freqs)))
	}
	m := Matrix(headDim, rotaryDim, layout, make([]float64, len(freqs)), attn, 0)
	pa, pb := pairIndices(rotaryDim, layout)
	for i, th := range freqs {
		if int(axis[i]) >= len(pos) {
			panic(fmt.Sprintf("verify.matrixAxes: axis[%d] = %d, but %d positions", i, axis[i], len(pos)))
		}
		sin, cos := sincos(float64(pos[axis[i]]) * th)
		a, b := pa[i], pb[i]
		m[a][a], m[a][b] = attn*cos, -(attn * sin)
		m[b][a], m[b][b] = attn*sin, attn*cos
	}
	return m
}

// DynamicFreqs returns Hugging Face's dynamic NTK frequencies for a
// sequence of n > origCtx tokens, written apart from ropegen's generator:
// the base factor as Python evaluates ((factor·n/L) − (factor − 1)) in
// float64, its power R/(R−2) and then base'^(−2i/R) in 256-bit arithmetic,
// each rounded once.
func DynamicFreqs(base, factor float64, origCtx, rotaryDim, n int) []float64 {
	t := factor*float64(n)/float64(origCtx) - (factor - 1)
	y := bigLn(t)
	y.Mul(y, newBig(float64(rotaryDim)))
	y.Quo(y, newBig(float64(rotaryDim-2)))
	p, _ := bigExp(y).Float64()
	b := base * p
	f := make([]float64, rotaryDim/2)
	for i := range f {
		f[i] = defaultFreq(b, 2*i, rotaryDim)
	}
	return f
}

// sincos returns the reference's sine and cosine: exactSincos for f64
// kernels, whose correctly rounded tables leave no room for math.Sincos's
// error; math.Sincos, far more accurate than the float32 bound needs,
// otherwise.
func (s *suite[T]) sincos() func(float64) (float64, float64) {
	if s.c.kind == kF64 {
		return exactSincos
	}
	return math.Sincos
}

// tableFreqs returns the frequencies a table of n positions must follow:
// the long factors or the dynamic frequencies past OrigCtx, else Freqs.
func (s *suite[T]) tableFreqs(n int) []float64 {
	switch {
	case s.k.LongFreqs != nil && n > s.k.OrigCtx:
		return s.k.LongFreqs
	case s.k.DynamicFactor != 0 && n > s.k.OrigCtx:
		return DynamicFreqs(s.k.Base, s.k.DynamicFactor, s.k.OrigCtx, s.rd, n)
	}
	return s.k.Freqs
}

// axesRef returns A·R·x (A·R^T·x for inverse) in float64 for the heads of
// one token at positions pos (one per axis), and the accuracy bound of
// refBound per index.
func (s *suite[T]) axesRef(x []T, pos []int, inverse bool) (ref, bound []float64) {
	m := matrixAxes(s.hd, s.rd, s.k.Layout, s.k.Freqs, s.k.Axes.Axis, s.attn, pos, s.sincos())
	xf := s.widen(x)
	ref = make([]float64, len(x))
	bound = make([]float64, len(x))
	k := 4 * s.c.u * s.attn
	for h := 0; h < len(x); h += s.hd {
		copy(ref[h:], MulVec(m, xf[h:h+s.hd], inverse))
		for i := range s.pa {
			a, b := h+s.pa[i], h+s.pb[i]
			base := k * (math.Abs(xf[a]) + math.Abs(xf[b]))
			bound[a] = base + s.c.storageULP(ref[a])
			bound[b] = base + s.c.storageULP(ref[b])
		}
	}
	return ref, bound
}

// axesPos draws positions for tokens tokens: each token's axes all equal one
// time in four (a text token), else independent; and half the time after
// the first token, each axis keeps the previous token's position with
// probability 1/2 (patches of an image row share time and height), so that
// ApplyAxes's reuse of the axes it has mixed is exercised.
func (s *suite[T]) axesPos(rng *rand.Rand, tokens int) []int32 {
	pos := make([]int32, tokens*s.k.Axes.N)
	for j := range tokens {
		p := int32(rng.IntN(s.n))
		keep := j > 0 && rng.IntN(2) == 0
		for a := range s.k.Axes.N {
			if rng.IntN(4) != 0 {
				p = int32(rng.IntN(s.n))
			}
			if keep && rng.IntN(2) == 0 {
				p = pos[(j-1)*s.k.Axes.N+a]
			}
			pos[j*s.k.Axes.N+a] = p
		}
	}
	return pos
}

// checkAxes runs the multi-axis checks when the package has them.
func checkAxes[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if s.k.Axes == nil {
		t.Logf("1-D package: no multi-axis entry points")
		return
	}
	checkAxesText(t, s)
	checkAxesAccuracy(t, s)
	checkAxesRelative(t, s)
	checkAxesBackends(t, s)
	checkAxesPanics(t, s)
	checkAxesGuard(t, s)
}

// checkAxesText: a token whose axes all hold one position gets exactly the
// bits of ApplySeq (ApplyInverseSeq) at that position, on inputs that mix
// the special values.
func checkAxesText[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		tokens := rapid.IntRange(1, 4).Draw(rt, "tokens")
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		x := s.drawSpecials(rt, "x", tokens*heads*s.hd, false)
		seq := make([]int32, tokens)
		pos := make([]int32, 0, tokens*s.k.Axes.N)
		for j := range seq {
			seq[j] = int32(s.posGen(false).Draw(rt, "pos"))
			for range s.k.Axes.N {
				pos = append(pos, seq[j])
			}
		}
		for _, inverse := range []bool{false, true} {
			ya, ys := slices.Clone(x), slices.Clone(x)
			if inverse {
				s.k.Axes.ApplyInverseSeq(s.tab, ya, pos)
				s.tab.ApplyInverseSeq(ys, seq)
			} else {
				s.k.Axes.ApplySeq(s.tab, ya, pos)
				s.tab.ApplySeq(ys, seq)
			}
			if i := s.firstDiff(ya, ys); i >= 0 {
				rt.Fatalf("inverse=%v: equal positions %v: ApplyAxes gives %s at index %d, ApplySeq %s", inverse, seq, s.c.show(ya[i]), i%s.hd, s.c.show(ys[i]))
			}
		}
	})
}

// checkAxesAccuracy compares ApplyAxes and ApplyInverseAxes with the float64
// multi-axis reference: |y_j − y_ref_j| <= B_j per rotated index, unchanged
// bits past RotaryDim.
func checkAxesAccuracy[T Elem](t tb, s *suite[T]) {
	t.Helper()
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		pos := make([]int, s.k.Axes.N)
		pos32 := make([]int32, s.k.Axes.N)
		for a := range pos {
			pos[a] = s.posGen(false).Draw(rt, "pos")
			pos32[a] = int32(pos[a])
		}
		x := s.drawNormals(rt, "x", heads*s.hd)
		for _, inverse := range []bool{false, true} {
			y := slices.Clone(x)
			if inverse {
				s.k.Axes.ApplyInverseSeq(s.tab, y, pos32)
			} else {
				s.k.Axes.ApplySeq(s.tab, y, pos32)
			}
			ref, bound := s.axesRef(x, pos, inverse)
			for j := range y {
				if s.partner[j%s.hd] < 0 {
					if s.c.bits(y[j]) != s.c.bits(x[j]) {
						rt.Fatalf("positions %v: index %d >= RotaryDim changed", pos, j%s.hd)
					}
					continue
				}
				d := math.Abs(s.c.toF64(y[j]) - ref[j])
				if !(d <= bound[j]) {
					rt.Fatalf("inverse=%v positions %v, index %d (axis %d): y = %s, reference %.17g: |error| %.3g > bound %.3g",
						inverse, pos, j%s.hd, s.k.Axes.Axis[s.pairOf(j%s.hd)], s.c.show(y[j]), ref[j], d, bound[j])
				}
				w.note(d, bound[j], func() string { return fmt.Sprintf("positions %v, index %d", pos, j%s.hd) })
			}
		}
	})
	w.log(t, "multi-axis accuracy")
}

// pairOf returns the pair a rotated index belongs to.
func (s *suite[T]) pairOf(j int) int {
	for i := range s.pa {
		if s.pa[i] == j || s.pb[i] == j {
			return i
		}
	}
	return -1
}

// checkAxesRelative checks the relative-position identity per axis: moving
// the query's and the key's position on one axis by the same δ leaves the
// score (R_m q)·(R_n k) unchanged, up to the two scores' errors. Each score
// is within E = A·||q||·e_k + A·||k||·e_q + e_q·e_k of the exact A²·q·R_{n−m}k
// (e_v = sqrt(Σ_j B_j²) + 2·ρ·A·||v||, as checkRelative derives), plus the
// angle rounding A²·2^-53·(m+n)·θ_i·|q_i|·|k_i| per pair; the bound is the
// sum for both scores.
func checkAxesRelative[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rot := s.rotIdx(0)
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		axis := rapid.IntRange(0, s.k.Axes.N-1).Draw(rt, "axis")
		m, n := make([]int, s.k.Axes.N), make([]int, s.k.Axes.N)
		for a := range m {
			m[a] = rapid.IntRange(0, s.n/2-1).Draw(rt, "m")
			n[a] = rapid.IntRange(0, s.n/2-1).Draw(rt, "n")
		}
		delta := rapid.IntRange(1, s.n/2).Draw(rt, "delta")
		q := s.drawNormals(rt, "q", s.hd)
		k := s.drawNormals(rt, "k", s.hd)
		qf, kf := s.widen(q), s.widen(k)
		nq, _ := bigNorm(qf, rot).Float64()
		nk, _ := bigNorm(kf, rot).Float64()
		score := func(mp, np []int) (*big.Float, float64) {
			yq, yk := slices.Clone(q), slices.Clone(k)
			s.k.Axes.ApplySeq(s.tab, yq, toInt32(mp))
			s.k.Axes.ApplySeq(s.tab, yk, toInt32(np))
			err := func(v []float64, x []T, p []int) float64 {
				_, b := s.axesRef(x, p, false)
				var b2 float64
				for _, j := range rot {
					b2 += b[j] * b[j]
				}
				nv, _ := bigNorm(v, rot).Float64()
				return math.Sqrt(b2) + 2*rho*s.attn*nv
			}
			eq, ek := err(qf, q, mp), err(kf, k, np)
			a := s.attn
			e := a*nq*ek + a*nk*eq + eq*ek
			for i := range s.pa {
				qi := math.Hypot(qf[s.pa[i]], qf[s.pb[i]])
				ki := math.Hypot(kf[s.pa[i]], kf[s.pb[i]])
				ax := s.k.Axes.Axis[i]
				e += a * a * 0x1p-52 * float64(mp[ax]+np[ax]+abs(np[ax]-mp[ax])) * s.k.Freqs[i] * qi * ki
			}
			return bigDot(s.widen(yq), s.widen(yk), rot), e
		}
		l1, e1 := score(m, n)
		m2, n2 := slices.Clone(m), slices.Clone(n)
		m2[axis] += delta
		n2[axis] += delta
		l2, e2 := score(m2, n2)
		diff := absDiff(l1, l2)
		b := (e1 + e2) * (1 + 0x1p-40)
		if !(diff <= b) {
			f1, _ := l1.Float64()
			f2, _ := l2.Float64()
			rt.Fatalf("axis %d shifted by %d: score at %v, %v is %.17g, at %v, %v %.17g: difference %.3g > bound %.3g", axis, delta, m, n, f1, m2, n2, f2, diff, b)
		}
		w.note(diff, b, func() string { return fmt.Sprintf("axis %d, δ %d", axis, delta) })
	})
	w.log(t, "multi-axis relative position")
}

func toInt32(p []int) []int32 {
	q := make([]int32, len(p))
	for i, v := range p {
		q[i] = int32(v)
	}
	return q
}

// checkAxesBackends checks every backend against the last (pure Go) one bit
// for bit on ApplyAxes and ApplyInverseAxes, with mixed and equal positions
// and inputs that mix the special values.
func checkAxesBackends[T Elem](t tb, s *suite[T]) {
	t.Helper()
	bs := s.k.Backends
	if len(bs) == 0 {
		bs = []Backend{{Name: "default", Use: func() {}}}
	}
	defer bs[0].Use()
	sd := seed()
	rng := rand.New(rand.NewPCG(sd, 0x61786573))
	ref := bs[len(bs)-1]
	calls := 2000
	if testing.Short() {
		calls = 200
	}
	for c := range calls {
		tokens, heads := 1+rng.IntN(5), 1+rng.IntN(4)
		pos := s.axesPos(rng, tokens)
		x := make([]T, tokens*heads*s.hd)
		for i := range x {
			x[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
		}
		inverse := c%2 == 1
		run := func(b Backend) []T {
			b.Use()
			y := slices.Clone(x)
			if inverse {
				s.k.Axes.ApplyInverseSeq(s.tab, y, pos)
			} else {
				s.k.Axes.ApplySeq(s.tab, y, pos)
			}
			return y
		}
		want := run(ref)
		// Each token as if alone: what ApplyAxes carries from one token to
		// the next (the axes it has mixed) must not change a bit.
		n := heads * s.hd
		for j := range tokens {
			y := slices.Clone(x[j*n : (j+1)*n])
			p := pos[j*s.k.Axes.N : (j+1)*s.k.Axes.N]
			if inverse {
				s.k.Axes.ApplyInverseSeq(s.tab, y, p)
			} else {
				s.k.Axes.ApplySeq(s.tab, y, p)
			}
			if i := s.firstDiff(want[j*n:(j+1)*n], y); i >= 0 {
				t.Fatalf("seed %d: %s: ApplyAxes(inverse=%v) positions %v: token %d, index %d differs from ApplyAxes on that token alone (positions %v)", sd, ref.Name, inverse, pos, j, i, p)
			}
		}
		for _, b := range bs[:len(bs)-1] {
			if i := s.firstDiff(run(b), want); i >= 0 {
				t.Fatalf("seed %d: backend %s differs from %s: ApplyAxes(inverse=%v) positions %v, index %d", sd, b.Name, ref.Name, inverse, pos, i)
			}
		}
	}
	t.Logf("seed %d: %d multi-axis calls bit-identical across %d backends and to each token rotated alone", sd, calls, len(bs))
}

// axesCall is the multi-axis ApplySeq (ApplyInverseSeq with inverse) on x
// at pos, Axes.N positions per token: x changed in place, the positions
// only read.
func (s *suite[T]) axesCall(inverse bool, x []T, pos []int32) *call {
	name, f := "ApplySeq", s.k.Axes.ApplySeq
	if inverse {
		name, f = "ApplyInverseSeq", s.k.Axes.ApplyInverseSeq
	}
	xa, pa := newBuf("x", x, inPlace).describing(s.headIndex), newIndex("pos", pos)
	return &call{what: fmt.Sprintf("%s (%d axes) of %d values at %v", name, s.k.Axes.N, len(x), pos), args: []arg{xa, pa},
		run: func() { f(s.tab, xa.cur, pa.cur) }}
}

// axesEntries describes the multi-axis ApplySeq and ApplyInverseSeq to the
// drivers: guard calls of 1…3 tokens of 1…3 heads at axesPos positions,
// and the edge calls of axesEdges.
func (s *suite[T]) axesEntries() entryPoint {
	return entryPoint{
		name: "the multi-axis ApplySeq and ApplyInverseSeq",
		guard: func(r *rand.Rand) []*call {
			var cs []*call
			for tokens := 1; tokens <= 3; tokens++ {
				for heads := 1; heads <= 3; heads++ {
					pos := s.axesPos(r, tokens)
					for _, inverse := range []bool{false, true} {
						x := make([]T, tokens*heads*s.hd)
						for i := range x {
							x[i] = s.c.fromF64(r.Float64() + 0.5)
						}
						cs = append(cs, s.axesCall(inverse, x, pos))
					}
				}
			}
			return cs
		},
		edges: s.axesEdges,
		bench: func(r *rand.Rand) []benchGroup { return []benchGroup{s.axesBench(s.benchInput(r))} },
	}
}

// axesEdges: a len(pos) that is not a multiple of Axes, a length of x that
// does not split into whole heads per token, and a position outside the
// table panic with a message naming the method and the value, before x
// changes.
func (s *suite[T]) axesEdges() []edgeCall {
	ax := s.k.Axes.N
	good := make([]int32, 2*ax)
	x := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = s.c.fromF64(float64(i%5) + 1)
		}
		return x
	}
	badPos := slices.Clone(good)
	badPos[2*ax-1] = int32(s.n)
	neg := slices.Clone(good)
	neg[1] = -1
	var es []edgeCall
	for _, inverse := range []bool{false, true} {
		fn := map[bool]string{false: "ApplySeq", true: "ApplyInverseSeq"}[inverse]
		for _, c := range []struct {
			what  string
			x     []T
			pos   []int32
			words []string
		}{
			{"len(pos) not a multiple of Axes", x(2 * s.hd), good[:2*ax-1], []string{"len(pos)", fmt.Sprint(2*ax - 1)}},
			{"len(x) not whole heads per token", x(2*s.hd - 2), good, []string{"len(x)", fmt.Sprint(2*s.hd - 2)}},
			{"position past the table", x(2 * s.hd), badPos, []string{fmt.Sprintf("pos[%d]", 2*ax-1), fmt.Sprint(s.n)}},
			{"negative position", x(2 * s.hd), neg, []string{"pos[1]", "-1"}},
		} {
			es = append(es, bad(s.axesCall(inverse, c.x, c.pos), c.what, panicWant{fn: fn, words: c.words}))
		}
	}
	return es
}

// checkAxesPanics runs the multi-axis edge calls (checkEdges).
func checkAxesPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkEdges(t, s.backendsOrOnly(), s.axesEntries())
}

// dynamicSlack widens bound for a rotation at p by dynamic NTK frequencies:
// the package and DynamicFreqs may round the base's power differently (the
// exponent R/(R−2) rounded first, or not), so their θ_i may differ by a few
// ulps, 4·2^-53·θ_i, which turns pair i by at most p·4·2^-53·θ_i more and
// moves its outputs by at most A times that times |x_a| + |x_b|. It
// matters for f64 only.
func (s *suite[T]) dynamicSlack(bound []float64, x []T, p int, freqs []float64) {
	for h := 0; h < len(x); h += s.hd {
		for i := range s.pa {
			a, b := h+s.pa[i], h+s.pb[i]
			extra := s.attn * float64(p) * 4 * 0x1p-53 * freqs[i] * (math.Abs(s.c.toF64(x[a])) + math.Abs(s.c.toF64(x[b])))
			bound[a] += extra
			bound[b] += extra
		}
	}
}

// checkDynamic checks a dynamic NTK package's long tables: NewTable(n) for n
// past OrigCtx rotates by the dynamic frequencies for n (DynamicFreqs,
// Hugging Face's formula written apart), within the accuracy bound.
func checkDynamic[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if s.k.DynamicFactor == 0 {
		t.Logf("not a dynamic NTK package")
		return
	}
	L := s.k.OrigCtx
	for _, n := range []int{L + 1, L + L/3, 2 * L} {
		if n*s.rowBytes() > 64<<20 {
			continue
		}
		tab := s.k.NewTable(n)
		freqs := DynamicFreqs(s.k.Base, s.k.DynamicFactor, L, s.rd, n)
		rapid.Check(t, func(rt *rapid.T) {
			p := rapid.OneOf(rapid.SampledFrom([]int{0, 1, n - 1}), rapid.IntRange(0, n-1)).Draw(rt, "pos")
			x := s.drawNormals(rt, "x", s.hd)
			for _, inverse := range []bool{false, true} {
				slack := func(bound []float64) { s.dynamicSlack(bound, x, p, freqs) }
				if msg := s.offReference(tab, x, p, inverse, freqs, slack); msg != "" {
					rt.Fatalf("NewTable(%d) (dynamic, L = %d): %s", n, L, msg)
				}
			}
		})
		t.Logf("NewTable(%d): rotations follow the dynamic NTK frequencies for %d positions", n, n)
	}
}

// axesBench is the multi-axis benchmark group (Bench's list names it):
// ApplyAxes on a prefill of benchTokens image tokens (a 16-wide grid of
// patches: time fixed, height and width varying, so every token assembles
// its row, along an image row only the width's part anew) on every backend,
// beside ApplySeq on the same bytes (axes/seq) and, as axes/worst, on
// tokens whose every axis moves from one token to the next, so that every
// token's row is assembled whole.
func (s *suite[T]) axesBench(input func(int) []T) benchGroup {
	x0 := input(benchTokens * benchHeads * s.hd)
	pos := make([]int32, 0, benchTokens*s.k.Axes.N)
	for j := range benchTokens {
		grid := []int32{1, int32(j / 16), int32(j % 16)}
		if s.k.Axes.N == 2 {
			grid = grid[1:]
		}
		pos = append(pos, grid...)
	}
	worst := make([]int32, 0, benchTokens*s.k.Axes.N)
	for j := range benchTokens {
		for a := range s.k.Axes.N {
			worst = append(worst, int32(j+a))
		}
	}
	return benchGroup{name: "axes", main: s.axesCall(false, x0, pos), noStream: true, extra: []timed{
		{name: "worst", c: s.axesCall(false, x0, worst), perBackend: true},
		{name: "seq", c: s.entryCall(eApplySeq, x0, 0, upTo(benchTokens, benchTokens)), perBackend: true},
	}}
}

// checkAxesGuard runs the multi-axis guard calls (checkGuarded).
func checkAxesGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if !guardSupported {
		t.Logf("guard pages are only implemented on linux: multi-axis guard check not run")
		return
	}
	checkGuarded(t, s.backendsOrOnly(), 0x67756172, s.axesEntries())
}
