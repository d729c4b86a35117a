package verify

import (
	"flag"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// rho bounds, relative to A·(|x_a| + |x_b|), how far the float64 reference
// y_ref = A·R_p·x can be from the exact rotation by the angle
// φ = float64(p)·θ_i: math.Sincos is within 2^-52 absolute for |φ| < 2^29
// (measured against 200-bit mpmath: 1.5·2^-53 at worst over 20000 random
// angles p·θ_i with p < 2^24), A·cos and A·sin round once (2^-53), the two
// products and the sum round once each (2^-53 each): 5·2^-53 < 2^-50. It
// matters for f64 kernels only; the checks that compare with exact rotations
// add it.
const rho = 0x1p-50

// ---- inputs --------------------------------------------------------------

// expRange returns the binade range [emin, emax] of the accuracy inputs:
// magnitudes in [2^emin, 2^(emax+1)). Products with cos and sin (as small as
// about 2^-30 for these angles) stay far above the smallest normal of the
// compute type, so the relative bound holds; for f16 the top is lowered so
// that 2·A²·2^(emax+1) stays at or below 65504/2 (rotations grow a component
// by up to √2·A, forward then inverse by up to 2·A²).
func (s *suite[T]) expRange() (emin, emax int) {
	switch s.c.kind {
	case kF64:
		return -100, 100
	case kF16:
		a := max(1, s.attn)
		emax = int(math.Floor(math.Log2(65504/(4*a*a)))) - 1
		return -10, max(min(12, emax), -10)
	default:
		return -30, 30
	}
}

// normal maps random bits to a finite accuracy input: zero one time in 32,
// else ±m·2^e with m in [1, 2) and e uniform in expRange. r = 0 gives 1.
func (s *suite[T]) normal(r uint64) T {
	if r == 0 {
		return s.c.fromF64(1)
	}
	h := mix(r)
	sign := 1.0
	if h&1 == 1 {
		sign = -1
	}
	if (h>>1)%32 == 0 {
		return s.c.fromF64(0 * sign)
	}
	emin, emax := s.expRange()
	e := emin + int((h>>6)%uint64(emax-emin+1))
	m := 1 + float64(h>>12)*0x1p-52
	return s.c.fromF64(sign * math.Ldexp(m, e))
}

// drawNormals draws n accuracy inputs.
func (s *suite[T]) drawNormals(t *rapid.T, label string, n int) []T {
	return rapid.SliceOfN(rapid.Map(rapid.Uint64(), s.normal), n, n).Draw(t, label)
}

// drawSpecials draws n values that mix the special classes (format.special);
// with finite set, no infinities or NaNs.
func (s *suite[T]) drawSpecials(t *rapid.T, label string, n int, finite bool) []T {
	g := rapid.Map(rapid.Uint64(), func(r uint64) T { return s.c.fromBits(s.c.f.special(r, finite)) })
	return rapid.SliceOfN(g, n, n).Draw(t, label)
}

// posGen generates positions: the table's [0, Len()) with its edges, or the
// tableless [0, 2^24) with rotatePositions.
func (s *suite[T]) posGen(tableless bool) *rapid.Generator[int] {
	if tableless {
		return rapid.OneOf(rapid.SampledFrom(rotatePositions), rapid.IntRange(0, maxRotatePos))
	}
	return rapid.OneOf(rapid.SampledFrom([]int{0, 1, 17, s.n - 1}), rapid.IntRange(0, s.n-1))
}

func (s *suite[T]) widen(x []T) []float64 {
	f := make([]float64, len(x))
	for i, v := range x {
		f[i] = s.c.toF64(v)
	}
	return f
}

// ---- bounds --------------------------------------------------------------

// refBound returns the float64 reference of x at pos (A·R_p·x, or
// A·R_p^T·x for inverse) and the per-index accuracy bound
// B_j = 4·u·A·(|x_a| + |x_b|) + ulp_S(|y_ref_j|) (0 for indices >=
// RotaryDim, which must not change at all).
func (s *suite[T]) refBound(x []T, pos int, inverse bool) (ref, bound []float64) {
	return s.refBoundFreqs(x, pos, inverse, s.k.Freqs)
}

// refBoundFreqs is refBound with the frequencies given.
func (s *suite[T]) refBoundFreqs(x []T, pos int, inverse bool, freqs []float64) (ref, bound []float64) {
	xf := s.widen(x)
	ref = reference(s.hd, s.rd, s.k.Layout, freqs, s.attn, pos, inverse, xf, s.sincos())
	bound = make([]float64, len(x))
	k := 4 * s.c.u * s.attn
	for h := 0; h < len(x); h += s.hd {
		for i := range s.pa {
			a, b := h+s.pa[i], h+s.pb[i]
			base := k * (math.Abs(xf[a]) + math.Abs(xf[b]))
			bound[a] = base + s.c.storageULP(ref[a])
			bound[b] = base + s.c.storageULP(ref[b])
		}
	}
	return ref, bound
}

// rotIdx returns the rotated indices of head h of a vector.
func (s *suite[T]) rotIdx(h int) []int {
	idx := make([]int, 0, s.rd)
	for j := range s.hd {
		if s.partner[j] >= 0 {
			idx = append(idx, h*s.hd+j)
		}
	}
	return idx
}

// worst tracks the largest observed error as a fraction of its bound.
type worst struct {
	ratio float64
	where string
}

func (w *worst) note(d, b float64, where func() string) {
	if b > 0 && d/b > w.ratio {
		w.ratio, w.where = d/b, where()
	}
}

func (w *worst) log(t tb, what string) {
	t.Helper()
	if w.where == "" {
		t.Logf("%s: worst error 0 of the bound", what)
		return
	}
	t.Logf("%s: worst error %.3g of the bound (%s)", what, w.ratio, w.where)
}

// ---- 1. accuracy ---------------------------------------------------------

// checkAccuracy compares the forward and inverse entry points (the table's,
// or the tableless Rotate/RotateInverse) with the float64 reference:
// |y_j − y_ref_j| <= B_j for every rotated index, and unchanged bits beyond
// RotaryDim.
func checkAccuracy[T Elem](t tb, s *suite[T], tableless bool) {
	t.Helper()
	fwd, inv := pairEntries(tableless)
	posGen := s.posGen(tableless)
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		p := posGen.Draw(rt, "pos")
		x := s.drawNormals(rt, "x", heads*s.hd)
		for _, e := range []entry{fwd, inv} {
			y := s.out(e, x, p)
			ref, bound := s.refBound(x, p, e.inverse())
			for j := range x {
				jj := j % s.hd
				q := s.partner[jj]
				if q < 0 {
					if s.c.bits(y[j]) != s.c.bits(x[j]) {
						rt.Fatalf("%v at pos %d: index %d >= RotaryDim %d changed: %s -> %s",
							e, p, jj, s.rd, s.c.show(x[j]), s.c.show(y[j]))
					}
					continue
				}
				d := math.Abs(s.c.toF64(y[j]) - ref[j])
				if !(d <= bound[j]) {
					rt.Fatalf("%v at pos %d, head %d, index %d (partner %d): x = %s, partner x = %s: y = %s, reference %.17g: |error| %.3g > bound %.3g (%.3g× the bound)",
						e, p, j/s.hd, jj, q, s.c.show(x[j]), s.c.show(x[j-jj+q]), s.c.show(y[j]), ref[j], d, bound[j], d/bound[j])
				}
				w.note(d, bound[j], func() string { return fmt.Sprintf("%v at pos %d, index %d", e, p, jj) })
			}
		}
	})
	w.log(t, "accuracy")
}

// ---- 2. norm -------------------------------------------------------------

// checkNorm checks, per head, | ||y|| − ||ỹ|| | <= ||y − ỹ|| where ỹ is the
// exact rotation, ||ỹ||² = A²·||x_rot||² + ||x_tail||² (the tail is not
// scaled), so ||ỹ|| = A·||x|| when RotaryDim = HeadDim. Derivation:
//
//	||y − ỹ|| <= ||y − y_ref|| + ||y_ref − ỹ||
//	          <= sqrt(Σ_j B_j²) + sqrt(Σ_pairs 2·(ρ·A·(|x_a|+|x_b|))²)
//	          <= sqrt(Σ_j B_j²) + 2·ρ·A·||x_rot||
//
// using (|x_a| + |x_b|)² <= 2·(x_a² + x_b²). With B_j = 4uA(|x_a|+|x_b|)
// the first term is at most 8·u·A·||x_rot|| (plus the narrowing ulps for
// f16/bf16). Norms are computed in 256-bit arithmetic.
func checkNorm[T Elem](t tb, s *suite[T], tableless bool) {
	t.Helper()
	fwd, inv := pairEntries(tableless)
	posGen := s.posGen(tableless)
	a2 := newBig(s.attn)
	a2.Mul(a2, a2)
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		p := posGen.Draw(rt, "pos")
		x := s.drawNormals(rt, "x", heads*s.hd)
		xf := s.widen(x)
		for _, e := range []entry{fwd, inv} {
			y := s.out(e, x, p)
			yf := s.widen(y)
			_, bound := s.refBound(x, p, e.inverse())
			for h := range heads {
				rot, all := s.rotIdx(h), allIdx(h, s.hd)
				xr := bigNorm(xf, rot)
				want := bigDot(xf, xf, all)
				want.Sub(want, bigDot(xf, xf, rot))
				want.Add(want, new(big.Float).SetPrec(bigPrec).Mul(a2, bigDot(xf, xf, rot)))
				if want.Sign() > 0 {
					want.Sqrt(want)
				}
				got := bigNorm(yf, all)
				d := absDiff(got, want)
				var b2 float64
				for _, j := range rot {
					b2 += bound[j] * bound[j]
				}
				xrf, _ := xr.Float64()
				b := (math.Sqrt(b2) + 2*rho*s.attn*xrf) * (1 + 0x1p-40)
				if !(d <= b) {
					wf, _ := want.Float64()
					gf, _ := got.Float64()
					rt.Fatalf("%v at pos %d, head %d: ||y|| = %.17g, want %.17g (A = %g): difference %.3g > bound %.3g (%.3g× the bound)",
						e, p, h, gf, wf, s.attn, d, b, d/b)
				}
				w.note(d, b, func() string { return fmt.Sprintf("%v at pos %d", e, p) })
			}
		}
	})
	w.log(t, "norm")
}

func allIdx(h, hd int) []int {
	idx := make([]int, hd)
	for j := range idx {
		idx[j] = h*hd + j
	}
	return idx
}

// ---- 3. R_0 = I ------------------------------------------------------------

// checkIdentity checks that at position 0 with A = 1 every entry point on
// every backend returns every finite value (subnormals and the largest
// finite value included) unchanged. The table holds c = 1, s = 0, so
// y_a = fl(x_a·1) − fl(x_b·0) = x_a exactly. The comparison is ==, under
// which −0 equals +0: a −0 input can legitimately come back +0, because
// x_a − x_b·0 with x_a = −0 and x_b negative is (−0) − (−0) = +0 in
// round-to-nearest.
func checkIdentity[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if s.attn != 1 {
		t.Skipf("A = %g: R_0 scales by A, so it is not the identity", s.attn)
	}
	backends := s.k.Backends
	if len(backends) == 0 {
		backends = []Backend{{Name: "(only)", Use: func() {}}}
	} else {
		defer s.k.Backends[0].Use()
	}
	rapid.Check(t, func(rt *rapid.T) {
		heads := rapid.IntRange(1, 4).Draw(rt, "heads")
		x := s.drawSpecials(rt, "x", heads*s.hd, true)
		for _, b := range backends {
			b.Use()
			for _, e := range allEntries() {
				y := s.out(e, x, 0)
				for j := range x {
					if s.c.toF64(y[j]) != s.c.toF64(x[j]) {
						rt.Fatalf("backend %s: %v at pos 0 changed index %d of head %d: %s -> %s",
							b.Name, e, j%s.hd, j/s.hd, s.c.show(x[j]), s.c.show(y[j]))
					}
				}
			}
		}
	})
}

// ---- 4. inverse∘forward ----------------------------------------------------

// checkInverse checks z = inverse(forward(x)) against A²·x per index (and
// x unchanged beyond RotaryDim); A = 1 makes it inverse∘forward = identity.
// Derivation, with ỹ, z̃ the exact rotations, e1 = y − A·R·x and
// e2 = z − A·R^T·y:
//
//	z − A²·x = A·R^T·e1 + e2
//	|(A·R^T·e1)_a| <= A·||e1 on pair i|| <= A·(sqrt(B1_a² + B1_b²) + √2·ρ·A·(|x_a|+|x_b|))
//	|e2_a|         <= B2_a + ρ·A·(|y_a|+|y_b|)
//
// where B1 is the accuracy bound of the forward call at x and B2 that of the
// inverse call at y. For A = 1 and f32: sqrt(B1_a² + B1_b²) =
// 4√2·u·(|x_a|+|x_b|), and |y_a|+|y_b| <= √2·||y on pair i|| ≈
// √2·||x on pair i|| <= √2·(|x_a|+|x_b|) makes B2_a <= 4√2·u·(|x_a|+|x_b|),
// so the bound is about 8√2·u ≈ 11.3u·(|x_a|+|x_b|). The float64 A²·x_a
// adds 2^-52·A²·|x_a|.
func checkInverse[T Elem](t tb, s *suite[T], tableless bool) {
	t.Helper()
	fwd, inv := pairEntries(tableless)
	posGen := s.posGen(tableless)
	a2 := s.attn * s.attn
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		p := posGen.Draw(rt, "pos")
		x := s.drawNormals(rt, "x", heads*s.hd)
		y := s.out(fwd, x, p)
		for j := range y {
			if !s.c.isFinite(y[j]) {
				rt.Fatalf("%v at pos %d: index %d of head %d is %s for finite input %s", fwd, p, j%s.hd, j/s.hd, s.c.show(y[j]), s.c.show(x[j]))
			}
		}
		z := s.out(inv, y, p)
		xf, yf := s.widen(x), s.widen(y)
		_, b1 := s.refBound(x, p, false)
		_, b2 := s.refBound(y, p, true)
		for j := range x {
			jj := j % s.hd
			q := s.partner[jj]
			if q < 0 {
				if s.c.bits(z[j]) != s.c.bits(x[j]) {
					rt.Fatalf("%v∘%v at pos %d changed index %d >= RotaryDim: %s -> %s", inv, fwd, p, jj, s.c.show(x[j]), s.c.show(z[j]))
				}
				continue
			}
			jq := j - jj + q
			sx := math.Abs(xf[j]) + math.Abs(xf[jq])
			sy := math.Abs(yf[j]) + math.Abs(yf[jq])
			b := s.attn*(math.Hypot(b1[j], b1[jq])+math.Sqrt2*rho*s.attn*sx) +
				b2[j] + rho*s.attn*sy + 0x1p-52*a2*math.Abs(xf[j])
			b *= 1 + 0x1p-40
			d := math.Abs(s.c.toF64(z[j]) - a2*xf[j])
			if !(d <= b) {
				rt.Fatalf("%v∘%v at pos %d, head %d, index %d: x = %s, y = %s, z = %s, want A²·x = %.17g: |error| %.3g > bound %.3g (%.3g× the bound)",
					inv, fwd, p, j/s.hd, jj, s.c.show(x[j]), s.c.show(y[j]), s.c.show(z[j]), a2*xf[j], d, b, d/b)
			}
			w.note(d, b, func() string { return fmt.Sprintf("pos %d, index %d", p, jj) })
		}
	})
	w.log(t, "inverse∘forward")
}

// ---- 5. relative position --------------------------------------------------

// checkRelative checks (A·R_m q)·(A·R_n k) = A·(q·(A·R_{n−m} k)) over the
// rotated indices, every rotation computed by the kernel (R_{n−m} with
// n < m through the inverse entry point at m − n, since R_{−d} = R_d^T).
// Derivation: write each kernel output as the exact rotation plus an error,
// y_q = ỹ_q + e_q, y_k = ỹ_k + e_k, z = z̃ + e_z, with ||ỹ_q|| = A·||q||,
// ||ỹ_k|| = A·||k||, and ||e_v|| <= E_v = sqrt(Σ_j B_j²) + 2ρA·||v|| (as in
// checkNorm). Then
//
//	|y_q·y_k − ỹ_q·ỹ_k| <= A·||q||·E_k + A·||k||·E_q + E_q·E_k
//	|A·(q·z) − A·(q·z̃)| <= A·||q||·E_z
//
// and ỹ_q·ỹ_k = A²·q·(R_m^T R_n k) equals A·(q·z̃) up to the rounding of the
// angles: φ = fl(p·θ_i) is off p·θ_i by at most 2^-53·p·θ_i, so the angle of
// R_m^T R_n and that of R_{n−m} differ by Δ_i <= 2^-53·(m + n + |n−m|)·θ_i
// and pair i's term by at most A²·Δ_i·||q_i||·||k_i||. With
// E ≈ 2·4·u·A·||v|| this is about 3·8u·A²·||q||·||k|| = 24u·A²·||q||·||k||
// (18u with the k = 3 the arithmetic itself needs); the Δ term matters only
// for f64 at large positions. Dot products are computed in 256-bit
// arithmetic.
func checkRelative[T Elem](t tb, s *suite[T], tableless bool) {
	t.Helper()
	fwd, inv := pairEntries(tableless)
	posGen := s.posGen(tableless)
	rot := s.rotIdx(0)
	vecErr := func(v []T, pos int, inverse bool) float64 {
		_, b := s.refBound(v, pos, inverse)
		var b2 float64
		for _, j := range rot {
			b2 += b[j] * b[j]
		}
		n, _ := bigNorm(s.widen(v), rot).Float64()
		return math.Sqrt(b2) + 2*rho*s.attn*n
	}
	var w worst
	rapid.Check(t, func(rt *rapid.T) {
		m := posGen.Draw(rt, "m")
		n := posGen.Draw(rt, "n")
		q := s.drawNormals(rt, "q", s.hd)
		k := s.drawNormals(rt, "k", s.hd)
		yq, yk := s.out(fwd, q, m), s.out(fwd, k, n)
		d := n - m
		ez := vecErr(k, abs(d), d < 0)
		var z []T
		if d >= 0 {
			z = s.out(fwd, k, d)
		} else {
			z = s.out(inv, k, -d)
		}
		qf, kf := s.widen(q), s.widen(k)
		lhs := bigDot(s.widen(yq), s.widen(yk), rot)
		rhs := bigDot(qf, s.widen(z), rot)
		rhs.Mul(rhs, newBig(s.attn))
		diff := absDiff(lhs, rhs)
		nq, _ := bigNorm(qf, rot).Float64()
		nk, _ := bigNorm(kf, rot).Float64()
		eq, ek := vecErr(q, m, false), vecErr(k, n, false)
		a := s.attn
		b := a*nq*ek + a*nk*eq + eq*ek + a*nq*ez
		span := float64(m + n + abs(d))
		for i := range s.pa {
			qi := math.Hypot(qf[s.pa[i]], qf[s.pb[i]])
			ki := math.Hypot(kf[s.pa[i]], kf[s.pb[i]])
			b += a * a * 0x1p-52 * span * s.k.Freqs[i] * qi * ki
		}
		b *= 1 + 0x1p-40
		if !(diff <= b) {
			lf, _ := lhs.Float64()
			rf, _ := rhs.Float64()
			rt.Fatalf("(R_%d q)·(R_%d k) = %.17g but A·q·(R_%d k) = %.17g (%v): difference %.3g > bound %.3g (%.3g× the bound; ||q|| = %.3g, ||k|| = %.3g)",
				m, n, lf, d, rf, fwd, diff, b, diff/b, nq, nk)
		}
		w.note(diff, b, func() string { return fmt.Sprintf("m = %d, n = %d", m, n) })
	})
	w.log(t, "relative position")
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// ---- 6. Apply = ApplySeq = Rotate ------------------------------------------

// checkConsistency checks bit for bit (NaN-ness only for NaNs) that
// ApplySeq with T tokens of n heads each (n = 1…9) equals Apply on each
// token at its position, which equals Rotate at that position; and the same
// for ApplyInverseSeq, ApplyInverse and RotateInverse. Inputs mix the special
// values.
func checkConsistency[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rapid.Check(t, func(rt *rapid.T) {
		perTok := rapid.IntRange(1, 9).Draw(rt, "heads per token")
		pos := rapid.SliceOfN(s.posGen(false), 1, 6).Draw(rt, "pos")
		seq := make([]int32, len(pos))
		for i, p := range pos {
			seq[i] = int32(p)
		}
		tok := perTok * s.hd
		x := s.drawSpecials(rt, "x", len(pos)*tok, false)
		for _, es := range [][3]entry{{eApplySeq, eApply, eRotate}, {eApplyInverseSeq, eApplyInverse, eRotateInverse}} {
			ys := slices.Clone(x)
			s.call(es[0], ys, 0, seq)
			for j, p := range pos {
				xt := x[j*tok : (j+1)*tok]
				want := ys[j*tok : (j+1)*tok]
				for _, e := range es[1:] {
					y := s.out(e, xt, p)
					if i := s.firstDiff(y, want); i >= 0 {
						rt.Fatalf("token %d at pos %d: %v gives %s at index %d of head %d, %v gives %s (input %s, partner %s)",
							j, p, e, s.c.show(y[i]), i%s.hd, i/s.hd, es[0], s.c.show(want[i]), s.c.show(xt[i]), s.partnerShow(xt, i))
					}
				}
			}
		}
	})
}

// firstDiff returns the first index where a and b differ (bits, or
// NaN-ness), or -1.
func (s *suite[T]) firstDiff(a, b []T) int {
	switch s.c.kind {
	case kF32:
		return diffBits(s, asBits[T, uint32](a), asBits[T, uint32](b))
	case kF64:
		return diffBits(s, asBits[T, uint64](a), asBits[T, uint64](b))
	default:
		return diffBits(s, asBits[T, uint16](a), asBits[T, uint16](b))
	}
}

// diffBits is firstDiff on the bit patterns: equal bits, or both NaN.
func diffBits[T Elem, U uint16 | uint32 | uint64](s *suite[T], a, b []U) int {
	for i := range a {
		if a[i] != b[i] && !(s.c.f.isNaN(uint64(a[i])) && s.c.f.isNaN(uint64(b[i]))) {
			return i
		}
	}
	return -1
}

// asBits reinterprets x as its bit patterns (U has T's size).
func asBits[T Elem, U uint16 | uint32 | uint64](x []T) []U {
	return unsafe.Slice((*U)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
}

func (s *suite[T]) partnerShow(x []T, i int) string {
	jj := i % s.hd
	if q := s.partner[jj]; q >= 0 {
		return s.c.show(x[i-jj+q])
	}
	return "none"
}

// checkBigTable checks Table.Apply = Rotate (and the inverses) bit for bit at
// high positions, with a second table as long as 16 MiB of rows allows (at
// most 131072 positions), and that both tables agree where they overlap.
func checkBigTable[T Elem](t tb, s *suite[T]) {
	t.Helper()
	rows := min(max((16<<20)/s.rowBytes(), tableRows+1), 131072) // past tableRows: posGen draws tableRows
	big := s.k.NewTable(rows)
	if big == nil || big.Len() < rows {
		t.Fatalf("NewTable(%d) returned a table of Len %v", rows, lenOf(big))
	}
	L := big.Len()
	freqs := s.tableFreqs(L)
	long := !slices.Equal(freqs, s.k.Freqs)
	t.Logf("table of %d positions (long or dynamic frequencies: %v)", L, long)
	posGen := rapid.OneOf(rapid.SampledFrom([]int{L - 1, min(131071, L-1), tableRows - 1, tableRows}), rapid.IntRange(0, L-1))
	rapid.Check(t, func(rt *rapid.T) {
		p := posGen.Draw(rt, "pos")
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		x := s.drawSpecials(rt, "x", heads*s.hd, false)
		if long {
			x = s.drawNormals(rt, "x", heads*s.hd)
		}
		for _, inverse := range []bool{false, true} {
			yb := slices.Clone(x)
			rot := eRotate
			if inverse {
				big.ApplyInverse(yb, p)
				rot = eRotateInverse
			} else {
				big.Apply(yb, p)
			}
			if long {
				// A long table follows the long factors, which Rotate does
				// not: check it against the float64 reference instead.
				ref, bound := s.refBoundFreqs(x, p, inverse, freqs)
				if s.k.DynamicFactor != 0 {
					s.dynamicSlack(bound, x, p, freqs)
				}
				for i := range yb {
					if d := math.Abs(s.c.toF64(yb[i]) - ref[i]); !(d <= bound[i]) && !math.IsNaN(ref[i]) {
						rt.Fatalf("pos %d: long Table(%d) inverse=%v index %d: %s, reference %g: error %g > bound %g",
							p, L, inverse, i%s.hd, s.c.show(yb[i]), ref[i], d, bound[i])
					}
				}
				continue
			}
			yr := s.out(rot, x, p)
			if i := s.firstDiff(yb, yr); i >= 0 {
				rt.Fatalf("pos %d: Table(%d) inverse=%v gives %s at index %d, %v gives %s (input %s, partner %s)",
					p, L, inverse, s.c.show(yb[i]), i%s.hd, rot, s.c.show(yr[i]), s.c.show(x[i]), s.partnerShow(x, i))
			}
			if p < s.n {
				e := eApply
				if inverse {
					e = eApplyInverse
				}
				ys := s.out(e, x, p)
				if i := s.firstDiff(yb, ys); i >= 0 {
					rt.Fatalf("pos %d: Table(%d) and Table(%d) differ at index %d: %s vs %s", p, L, s.n, i%s.hd, s.c.show(yb[i]), s.c.show(ys[i]))
				}
			}
		}
	})
}

func lenOf[T Elem](t Table[T]) any {
	if t == nil {
		return "(nil table)"
	}
	return t.Len()
}

// ---- canonical arithmetic (docs/contract.md §5) ---------------------------------------

// cs is one candidate pair of compute-type table values (c, s) = (A·cos φ,
// A·sin φ) for one rotation pair.
type cs struct{ c, s float64 }

// checkCanonical checks docs/contract.md §5 bit for bit, on inputs that mix the
// special values: every output pair must be exactly
// fl(fl(x_a·c) − fl(x_b·s)), fl(fl(x_b·c) + fl(x_a·s)) (inverse: s negated)
// in the compute type, narrowed with round-to-nearest-even for f16/bf16. A
// fused multiply-add, flushed subnormals, a reordered sum or a different
// narrowing all fail here even on a single backend.
//
// The table values c, s are read back from the kernel itself: for f32 and
// f64 a unit input (x_a, x_b) = (1, 0) returns exactly (c, s) and (0, 1)
// returns (−s, c). They must be within one ulp of A·cos φ and A·sin φ (§4
// promises half an ulp; the slack is math.Sincos's own error). For f16/bf16
// the probe only shows the narrowed values, so the candidates are
// float32(A·cos φ) and its two float32 neighbours (likewise for sin) whose
// narrowing matches the probe; some candidate pair must reproduce every
// output.
func checkCanonical[T Elem](t tb, s *suite[T], tableless bool) {
	t.Helper()
	fwd, inv := pairEntries(tableless)
	posGen := s.posGen(tableless)
	rapid.Check(t, func(rt *rapid.T) {
		p := posGen.Draw(rt, "pos")
		heads := rapid.IntRange(1, 3).Draw(rt, "heads")
		x := s.drawSpecials(rt, "x", heads*s.hd, false)
		cands := s.tableValues(rt, fwd, inv, p)
		for _, e := range []entry{fwd, inv} {
			y := s.out(e, x, p)
			for h := range heads {
				o := h * s.hd
				for i := range s.pa {
					a, b := o+s.pa[i], o+s.pb[i]
					kept := cands[i][:0:0]
					var wa, wb T
					for k, c := range cands[i] {
						ya, yb := s.c.canon(x[a], x[b], c.c, c.s, e.inverse())
						if k == 0 {
							wa, wb = ya, yb
						}
						if s.c.same(ya, y[a]) && s.c.same(yb, y[b]) {
							kept = append(kept, c)
						}
					}
					if len(kept) == 0 {
						rt.Fatalf("%v at pos %d, head %d, pair %d (indices %d, %d): x = (%s, %s), c = %v, s = %v: got (%s, %s), docs/contract.md §5 gives (%s, %s)",
							e, p, h, i, s.pa[i], s.pb[i], s.c.show(x[a]), s.c.show(x[b]), cands[i][0].c, cands[i][0].s,
							s.c.show(y[a]), s.c.show(y[b]), s.c.show(wa), s.c.show(wb))
					}
					cands[i] = kept
				}
				for j := range s.hd {
					if s.partner[j] < 0 && !s.c.same(y[o+j], x[o+j]) {
						rt.Fatalf("%v at pos %d: index %d >= RotaryDim changed: %s -> %s", e, p, j, s.c.show(x[o+j]), s.c.show(y[o+j]))
					}
				}
			}
		}
	})
}

// tableValues returns, per pair, the candidate table values (c, s) at pos.
func (s *suite[T]) tableValues(rt *rapid.T, fwd, inv entry, pos int) [][]cs {
	one := s.c.fromF64(1)
	probe := func(e entry, first bool) []T {
		x := make([]T, s.hd)
		for i := range s.pa {
			if first {
				x[s.pa[i]] = one
			} else {
				x[s.pb[i]] = one
			}
		}
		return s.out(e, x, pos)
	}
	pf1, pf2 := probe(fwd, true), probe(fwd, false)
	pi1, pi2 := probe(inv, true), probe(inv, false)
	out := make([][]cs, s.hf)
	for i, th := range s.k.Freqs {
		a, b := s.pa[i], s.pb[i]
		phi := float64(pos) * th
		sin, cos := math.Sincos(phi)
		c64, s64 := s.attn*cos, s.attn*sin
		// The four probes must describe one (c, s): forward (1,0) -> (c, s),
		// (0,1) -> (−s, c); inverse (1,0) -> (c, −s), (0,1) -> (s, c).
		v := func(x T) float64 { return s.c.toF64(x) }
		if !(v(pf1[a]) == v(pf2[b]) && v(pf1[a]) == v(pi1[a]) && v(pf1[a]) == v(pi2[b]) &&
			v(pf1[b]) == -v(pf2[a]) && v(pf1[b]) == -v(pi1[b]) && v(pf1[b]) == v(pi2[a])) {
			rt.Fatalf("pos %d, pair %d: unit probes disagree: %v(1,0) = (%v, %v), %v(0,1) = (%v, %v), %v(1,0) = (%v, %v), %v(0,1) = (%v, %v); want (c, s), (−s, c), (c, −s), (s, c)",
				pos, i, fwd, v(pf1[a]), v(pf1[b]), fwd, v(pf2[a]), v(pf2[b]), inv, v(pi1[a]), v(pi1[b]), inv, v(pi2[a]), v(pi2[b]))
		}
		var cc, sc []float64
		if s.c.kind == kF32 || s.c.kind == kF64 {
			c, sv := v(pf1[a]), v(pf1[b])
			ulp := func(w float64) float64 {
				if s.c.kind == kF64 {
					return 2 * (math.Nextafter(math.Abs(w), math.Inf(1)) - math.Abs(w))
				}
				f := float32(math.Abs(w))
				return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
			}
			if math.Abs(c-c64) > ulp(c64) || math.Abs(sv-s64) > ulp(s64) {
				rt.Fatalf("pos %d, pair %d: table values c = %v, s = %v are not within one ulp of A·cos φ = %v, A·sin φ = %v (φ = %v·%v)",
					pos, i, c, sv, c64, s64, pos, th)
			}
			cc, sc = withZeros(c), withZeros(sv)
		} else {
			cc = s.f32Cands(c64, pf1[a])
			sc = s.f32Cands(s64, pf1[b])
			if len(cc) == 0 || len(sc) == 0 {
				rt.Fatalf("pos %d, pair %d: unit probe gives (%s, %s); narrowing float32(A·cos φ) = %v, float32(A·sin φ) = %v (±1 float32 ulp) cannot give that",
					pos, i, s.c.show(pf1[a]), s.c.show(pf1[b]), float32(c64), float32(s64))
			}
		}
		for _, c := range cc {
			for _, sv := range sc {
				out[i] = append(out[i], cs{c, sv})
			}
		}
	}
	return out
}

// withZeros returns {v}, or {+0, −0} when v is a zero, whose sign the unit
// probes cannot show.
func withZeros(v float64) []float64 {
	if v == 0 {
		return []float64{0, math.Copysign(0, -1)}
	}
	return []float64{v}
}

// f32Cands returns float32(w) and its neighbours whose narrowing to T is
// probe.
func (s *suite[T]) f32Cands(w float64, probe T) []float64 {
	f := float32(w)
	var out []float64
	for _, c := range []float32{f, math.Nextafter32(f, float32(math.Inf(1))), math.Nextafter32(f, float32(math.Inf(-1)))} {
		if s.c.bits(s.c.fromF32(c)) == s.c.bits(probe) {
			out = append(out, withZeros(float64(c))...)
		}
	}
	return out
}

// ---- 7. backends -------------------------------------------------------------

// backendHeads returns how many head vectors checkBackends runs per backend:
// 10^6, capped so that heads·headDim stays at 2^27 values, divided by 100
// with -short.
func backendHeads(headDim int) int {
	n := min(1_000_000, (1<<27)/headDim)
	if testing.Short() {
		n /= 100
	}
	return max(n, 1)
}

// seed returns -rapid.seed (or RAPID_SEED) when set, else a random seed.
func seed() uint64 {
	if f := flag.Lookup("rapid.seed"); f != nil {
		if v, err := strconv.ParseUint(f.Value.String(), 10, 64); err == nil && v != 0 {
			return v
		}
	}
	return rand.Uint64()
}

// checkBackends checks every backend against the last one (the pure-Go
// reference) bit for bit, NaN payloads aside, on heads vectors per backend
// that mix the special values, cycling through all six entry points: 64
// heads per call (1…9 every fourth call) at random positions, and for the
// Seq entry points 1…9 heads per token at random positions per token.
func checkBackends[T Elem](t tb, s *suite[T], heads int) {
	t.Helper()
	bs := s.k.Backends
	if len(bs) < 2 {
		t.Logf("%d backend(s): nothing to compare", len(bs))
		return
	}
	defer bs[0].Use()
	sd := seed()
	t.Logf("seed %d (rerun with -rapid.seed=%d); %d heads per backend against %s", sd, sd, heads, bs[len(bs)-1].Name)
	ref := bs[len(bs)-1]
	rng := rand.New(rand.NewPCG(sd, 0x726f7065))
	// Inputs are drawn from a pool of 2^18 special-mix values (a fresh
	// pool per seed): drawing from it is several times cheaper than
	// format.special, and pairs of pool values still give 2^36 inputs.
	pool := make([]T, 1<<18)
	for i := range pool {
		pool[i] = s.c.fromBits(s.c.f.special(rng.Uint64(), false))
	}
	entries := allEntries()
	var x0, xs, xr []T
	var seq []int32
	// Each batch runs once on the reference and then on every other
	// backend, so the pure-Go reference runs once per batch however many
	// backends there are.
	done, calls := 0, 0
	for done < heads {
		e := entries[calls%len(entries)]
		calls++
		pos, nh, perTok := 0, 64, 0
		seq = seq[:0]
		switch {
		case e.seq():
			perTok = 1 + rng.IntN(9)
			for range max(1, 64/perTok) {
				seq = append(seq, int32(rng.IntN(s.n)))
			}
			nh = perTok * len(seq)
		case e.tableless():
			pos = rng.IntN(maxRotatePos + 1)
		default:
			pos = rng.IntN(s.n)
		}
		if !e.seq() && calls%4 == 0 {
			nh = 1 + rng.IntN(9)
		}
		n := nh * s.hd
		x0 = slices.Grow(x0[:0], n)[:n]
		for i := range x0 {
			x0[i] = pool[rng.Uint64()>>46]
		}
		xr = append(xr[:0], x0...)
		ref.Use()
		s.call(e, xr, pos, seq)
		for _, b := range bs[:len(bs)-1] {
			xs = append(xs[:0], x0...)
			b.Use()
			s.call(e, xs, pos, seq)
			if i := s.firstDiff(xs, xr); i >= 0 {
				p := pos
				if e.seq() {
					p = int(seq[i/(perTok*s.hd)])
				}
				t.Errorf("backend %s differs from %s: %v (%d heads) at pos %d, head %d, index %d: input %s (partner %s): %s gives %s, %s gives %s",
					b.Name, ref.Name, e, nh, p, i/s.hd, i%s.hd, s.c.show(x0[i]), s.partnerShow(x0, i),
					b.Name, s.c.show(xs[i]), ref.Name, s.c.show(xr[i]))
				return
			}
		}
		done += nh
	}
	for _, b := range bs[:len(bs)-1] {
		t.Logf("backend %s: %d heads in %d calls bit-identical to %s", b.Name, done, calls, ref.Name)
	}
}

// ---- 9. frequencies ----------------------------------------------------------

// checkFreqs checks, when Scaling is "none" (or empty), Freqs[i] against
// Base^(-2i/RotaryDim) computed independently (defaultFreq: 256-bit exp and
// log). The bound is what float64 evaluation can promise: the
// exponent e = −2i/R is itself rounded (relative error ≤ 2⁻⁵³), which moves
// Base^e by a relative |e·ln Base|·2⁻⁵³, and the power adds a few ulps, so
//
//	|θ_i − exact| ≤ (|e·ln Base| + 4)·2⁻⁵³·exact
//
// (≈ 1e-15 for Base 1e4; a float32 computation, as Hugging Face's, is off
// by ~1e-7).
func checkFreqs[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if s.k.Scaling != "none" && s.k.Scaling != "" {
		t.Skipf("Scaling %q: Freqs is the package's constant and is not recomputed", s.k.Scaling)
	}
	if !(s.k.Base > 1) || math.IsInf(s.k.Base, 0) {
		t.Fatalf("Base %v must be finite and greater than 1", s.k.Base)
	}
	var w worst
	for i, f := range s.k.Freqs {
		want := defaultFreq(s.k.Base, 2*i, s.rd)
		rel := math.Abs(f-want) / want
		bound := (float64(2*i)/float64(s.rd)*math.Log(s.k.Base) + 4) * 0x1p-53
		if !(rel <= bound) {
			t.Errorf("Freqs[%d] = %.17g, want Base^(-%d/%d) = %.17g: relative error %.3g > %.3g", i, f, 2*i, s.rd, want, rel, bound)
		}
		w.note(rel, bound, func() string { return fmt.Sprintf("Freqs[%d]", i) })
	}
	w.log(t, "freqs")
}

// ---- concurrency ---------------------------------------------------------------

// concurrentWorkers and concurrentIters size checkConcurrent: that many
// goroutines, each making that many calls, per backend.
const concurrentWorkers, concurrentIters = 16, 24

// concurrentMaxHeads is the most heads per token checkConcurrent uses:
// min(9, 8192/HeadDim), at least 1 (2 at HeadDim 4096), so that large heads
// keep the check under a second.
func concurrentMaxHeads(hd int) int { return min(9, max(1, 8192/hd)) }

// checkConcurrent checks that one Table used from concurrentWorkers
// goroutines at once, through every entry point (ApplySeq and
// ApplyInverseSeq with 1…3 tokens, Rotate and RotateInverse alongside) with
// 1…9 heads per token (see concurrentMaxHeads), gives the same bits as
// serial calls, on every backend in turn
// (the active backend is process-wide, so backends are not mixed within a
// round). Under -race it also catches writes to a shared table or other
// shared state from the Go code (the race detector does not see accesses
// made by assembly).
func checkConcurrent[T Elem](t tb, s *suite[T]) {
	t.Helper()
	type job struct {
		f      gform
		pos    int
		seq    []int32
		x      []T
		y      []T // serial result
		tokens int
	}
	backends := s.k.Backends
	if len(backends) == 0 {
		backends = []Backend{{Name: "(only)", Use: func() {}}}
	} else {
		defer backends[0].Use()
	}
	forms := s.forms()
	r := rand.New(rand.NewPCG(1, 2))
	calls := 0
	for _, b := range backends {
		b.Use()
		jobs := make([][]job, concurrentWorkers)
		for w := range jobs {
			for range concurrentIters {
				f := forms[r.IntN(len(forms))]
				j := job{f: f, tokens: 1}
				heads := 1 + r.IntN(concurrentMaxHeads(s.hd))
				if f.seq {
					j.tokens = 1 + r.IntN(3)
					for range j.tokens {
						j.seq = append(j.seq, int32(r.IntN(s.n)))
					}
				}
				if f.e.tableless() {
					j.pos = r.IntN(maxRotatePos + 1)
				} else {
					j.pos = r.IntN(s.n)
				}
				j.x = make([]T, heads*j.tokens*s.hd)
				for i := range j.x {
					j.x[i] = s.c.fromBits(s.c.f.special(r.Uint64(), false))
				}
				j.y = slices.Clone(j.x)
				s.invoke(f, j.y, j.pos, j.seq)
				jobs[w] = append(jobs[w], j)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		bad := make([]string, concurrentWorkers)
		for w := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				for _, j := range jobs[w] {
					y := slices.Clone(j.x)
					s.invoke(j.f, y, j.pos, j.seq)
					if s.firstDiff(y, j.y) >= 0 {
						where := fmt.Sprintf("pos %d", j.pos)
						if j.f.seq {
							where = fmt.Sprintf("pos %v", j.seq)
						}
						bad[w] = fmt.Sprintf("backend %s: %s (%d values) at %s gave different bits when called concurrently", b.Name, j.f.name, len(j.x), where)
						return
					}
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, msg := range bad {
			if msg != "" {
				t.Error(msg)
			}
		}
		calls += concurrentWorkers * concurrentIters
	}
	t.Logf("concurrent: %d calls from %d goroutines sharing one Table (%d backends, %d forms) gave the serial bits", calls, concurrentWorkers, len(backends), len(forms))
}

// ---- table rows per backend ------------------------------------------------

// checkRows checks that every backend computes the same table rows as the
// pure-Go reference: the table values, which a backend may compute with its
// own (vectorized) sincos, must be bit-identical too (docs/contract.md §5). It builds
// a table under each backend and applies it at every one of its positions,
// and runs Rotate at fixed positions: 0…1023, 2^k−1, 2^k and 2^k+1 up to
// 2^40 (past the angles a vectorized sincos takes), and 2^24−1. The probe
// holds, per pair, (1, 0) in the first head and (0, 1) in the second, so the
// outputs are the table values themselves (narrowed for f16/bf16 storage),
// and random values in the third.
func checkRows[T Elem](t tb, s *suite[T]) {
	t.Helper()
	bs := s.k.Backends
	if len(bs) < 2 {
		t.Logf("%d backend(s): nothing to compare", len(bs))
		return
	}
	defer bs[0].Use()
	rng := rand.New(rand.NewPCG(seed(), 0x726f7773))
	x0 := make([]T, 3*s.hd)
	one := s.c.fromF64(1)
	for i := range s.pa {
		x0[s.pa[i]] = one
		x0[s.hd+s.pb[i]] = one
	}
	for i := 2 * s.hd; i < len(x0); i++ {
		x0[i] = s.c.fromF64(rng.Float64()*2 - 1)
	}
	rows := min(s.n, tableRows)
	positions := make([]int, 0, 1024+3*40)
	for p := range 1024 {
		positions = append(positions, p)
	}
	for k := 10; k <= 40; k++ {
		positions = append(positions, 1<<k-1, 1<<k, 1<<k+1)
	}
	positions = append(positions, maxRotatePos)
	// outputs returns every probe output under backend b: the table's at
	// each of its positions, then Rotate's at each fixed one.
	outputs := func(b Backend) []T {
		b.Use()
		tab := s.k.NewTable(rows)
		var out []T
		for p := range rows {
			x := slices.Clone(x0)
			tab.Apply(x, p)
			out = append(out, x...)
		}
		for _, p := range positions {
			x := slices.Clone(x0)
			s.k.Rotate(x, p)
			out = append(out, x...)
		}
		return out
	}
	ref := bs[len(bs)-1]
	want := outputs(ref)
	n := rows * len(x0)
	for _, b := range bs[:len(bs)-1] {
		got := outputs(b)
		if i := s.firstDiff(got, want); i >= 0 {
			what := fmt.Sprintf("NewTable(%d) row %d", rows, i/len(x0))
			if i >= n {
				what = fmt.Sprintf("Rotate at pos %d", positions[(i-n)/len(x0)])
			}
			t.Fatalf("backend %s differs from %s: %s, head %d, index %d: %s gives %s, %s gives %s",
				b.Name, ref.Name, what, i%len(x0)/s.hd, i%s.hd, b.Name, s.c.show(got[i]), ref.Name, s.c.show(want[i]))
		}
		t.Logf("backend %s: %d table rows and Rotate at %d positions bit-identical to %s", b.Name, rows, len(positions), ref.Name)
	}
}

// ---- parallel sequences ---------------------------------------------------

// ParallelTable is the method set of a table with the Parallel forms of
// ApplySeq and ApplyInverseSeq; Run checks them when the table has them.
type ParallelTable[T Elem] interface {
	ApplySeqParallel(x []T, pos []int32, workers int)
	ApplyInverseSeqParallel(x []T, pos []int32, workers int)
}

// checkParallel checks that the Parallel forms give the bits of the serial
// ones with 0…4 workers, on sequences from none to past 2·ParallelMin
// bytes (so that they split in two, and with 4 workers in up to three in
// the longest), and that a bad position panics, naming the function,
// before x changes.
func checkParallel[T Elem](t tb, s *suite[T]) {
	t.Helper()
	pt, ok := s.tab.(ParallelTable[T])
	if !ok || s.k.ParallelMin <= 0 {
		if ok || s.k.ParallelMin > 0 {
			t.Fatalf("the table has Parallel forms: %v, but Kernel.ParallelMin = %d", ok, s.k.ParallelMin)
		}
		t.Logf("the table has no Parallel forms")
		return
	}
	rng := rand.New(rand.NewPCG(seed(), 0x706172))
	size := int(sizeOf[T]())
	type shape struct{ tokens, heads int }
	shapes := []shape{{0, 1}, {1, 1}, {7, 3}}
	if !testing.Short() {
		for i, tokens := range []int{33, 3, 257} {
			bytes := 2*s.k.ParallelMin + 4096
			if i == 2 {
				bytes = 3*s.k.ParallelMin + 4096
			}
			per := tokens * s.hd * size
			shapes = append(shapes, shape{tokens, (bytes + per - 1) / per})
		}
	}
	for _, sh := range shapes {
		x0 := make([]T, sh.tokens*sh.heads*s.hd)
		for i := range x0 {
			x0[i] = s.c.fromF64(rng.NormFloat64())
		}
		pos := make([]int32, sh.tokens)
		for i := range pos {
			pos[i] = int32(rng.IntN(s.n))
		}
		for _, inverse := range []bool{false, true} {
			want := slices.Clone(x0)
			name := "ApplySeqParallel"
			if inverse {
				name = "ApplyInverseSeqParallel"
				s.tab.ApplyInverseSeq(want, pos)
			} else {
				s.tab.ApplySeq(want, pos)
			}
			for workers := range 5 {
				got := slices.Clone(x0)
				if inverse {
					pt.ApplyInverseSeqParallel(got, pos, workers)
				} else {
					pt.ApplySeqParallel(got, pos, workers)
				}
				if i := s.firstDiff(got, want); i >= 0 {
					t.Fatalf("%s(x, pos, %d) with %d tokens × %d heads (%d bytes): value %d is %s, the serial form gives %s",
						name, workers, sh.tokens, sh.heads, len(x0)*size, i, s.c.show(got[i]), s.c.show(want[i]))
				}
			}
		}
		t.Logf("%d tokens × %d heads (%d bytes): both Parallel forms with 0…4 workers give the serial bits", sh.tokens, sh.heads, len(x0)*size)
	}
	xa := newBuf("x", s.specialsOf(2*s.hd, 3), inPlace)
	c := &call{what: "ApplySeqParallel(x, pos, 2)", args: []arg{xa}, run: func() { pt.ApplySeqParallel(xa.cur, []int32{0, int32(s.tab.Len())}, 2) }}
	if d := bad(c, s.posAt(1)+" = Len()", panicWant{fn: "ApplySeqParallel", words: []string{s.posAt(1)}}).check(); d != "" {
		t.Errorf("%s", d)
	}
}
