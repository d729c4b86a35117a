package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"pgregory.net/rapid"
)

// Norm describes a package's QK-norm and its ApplyNormQK (docs/contract.md
// §10): for one normed vector x of n values (a head; with Scope "token" a
// token's heads one after another), s_k = Σ x_j² in float64 over j ≡ k
// (mod 8), ss = ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)), r =
// fl(1/sqrt(fl(ss/n) + Eps)) in float64 rounded once to the compute type,
// y_j = fl(fl(x_j·r)·w_j) (rms), fl(fl(x_j·r)·fl(1 + w_j)) (gemma) or
// fl(x_j·r) (l2), then the rotation of y; with After the rotation comes
// first and the norm takes the rotated vector, kept in the compute type.
type Norm[T Elem] struct {
	Kind  string  // "rms", "gemma" or "l2"
	Eps   float64 // ε (the package's NormEps)
	Scope string  // "head" or "token"
	After bool    // normalize the rotated vector
	// K is the bound the package documents against exact arithmetic, in
	// units of the compute type's u: K[0] for rotated values, K[1] for
	// values past RotaryDim (the scale of each is in checkNormHF). KGroups
	// (float64 compute) adds ⌈n/8⌉ to both for a vector of n values.
	K       [2]int
	KGroups bool
	// ApplyNormQK32 (float32 weights: f32, f16 and bf16 packages) or
	// ApplyNormQK64 (float64 weights: f64 packages) calls tab's
	// ApplyNormQK, converting the views to the package's Strides.
	ApplyNormQK32 func(tab Table[T], q []T, qs Strides, qw []float32, k []T, ks Strides, kw []float32, pos []int32)
	ApplyNormQK64 func(tab Table[T], q []T, qs Strides, qw []float64, k []T, ks Strides, kw []float64, pos []int32)
	// NormOnly32 or NormOnly64 (optional) is the package's norm without
	// the rotation, on the active backend: n heads of x, stride apart, as
	// one normed vector of the scope each. For f32 and f64, whose norm
	// keeps its values in their own type, ApplyNormQK must equal it
	// followed by ApplyQK (ApplyQK first, After), bit for bit; the
	// benchmarks' separate pass is it.
	NormOnly32 func(x []T, stride, n int, w []float32)
	NormOnly64 func(x []T, stride, n int, w []float64)
	// BatchApplyNormQK32 or BatchApplyNormQK64 calls a Batch's ApplyNormQK
	// (docs/contract.md §12), converting the views.
	BatchApplyNormQK32 func(b Batch[T], q []T, qs Strides, qw []float32, k []T, ks Strides, kw []float32)
	BatchApplyNormQK64 func(b Batch[T], q []T, qs Strides, qw []float64, k []T, ks Strides, kw []float64)
}

// normState checks k.Norm and reports whether there is one.
func (s *suite[T]) normState() (bool, error) {
	n := s.k.Norm
	if n == nil {
		return false, nil
	}
	switch {
	case n.Kind != "rms" && n.Kind != "gemma" && n.Kind != "l2":
		return false, fmt.Errorf("Norm.Kind %q: want rms, gemma or l2", n.Kind)
	case n.Scope != "head" && n.Scope != "token":
		return false, fmt.Errorf("Norm.Scope %q: want head or token", n.Scope)
	case !(n.Eps >= 0) || math.IsInf(n.Eps, 0):
		return false, fmt.Errorf("Norm.Eps %v: want finite and ≥ 0", n.Eps)
	case n.K[0] <= 0 || n.K[1] <= 0:
		return false, fmt.Errorf("Norm.K %v: want the package's bound", n.K)
	case s.c.kind == kF64 && (n.ApplyNormQK64 == nil || n.ApplyNormQK32 != nil):
		return false, fmt.Errorf("an f64 package's Norm sets ApplyNormQK64 (float64 weights), and only it")
	case s.c.kind != kF64 && (n.ApplyNormQK32 == nil || n.ApplyNormQK64 != nil):
		return false, fmt.Errorf("a %s package's Norm sets ApplyNormQK32 (float32 weights), and only it", s.k.DType)
	case s.k.Strided == nil || s.k.Strided.ApplyQK == nil:
		return false, fmt.Errorf("Norm needs Strided.ApplyQK (and the other strided entry points) too")
	}
	return true, nil
}

func (s *suite[T]) token() bool    { return s.k.Norm.Scope == "token" }
func (s *suite[T]) weighted() bool { return s.k.Norm.Kind != "l2" }

// applyNorm calls ApplyNormQK with weights held as float64 (each exactly a
// value of the package's weight type); nil stays nil.
func (s *suite[T]) applyNorm(q []T, qs Strides, qw []float64, k []T, ks Strides, kw []float64, pos []int32) {
	n := s.k.Norm
	if n.ApplyNormQK64 != nil {
		n.ApplyNormQK64(s.tab, q, qs, qw, k, ks, kw, pos)
		return
	}
	n.ApplyNormQK32(s.tab, q, qs, to32(qw), k, ks, to32(kw), pos)
}

func to32(w []float64) []float32 {
	if w == nil {
		return nil
	}
	out := make([]float32, len(w))
	for i, v := range w {
		out[i] = float32(v)
	}
	return out
}

// weightsLen returns the length of the weights of a view of heads heads.
func (s *suite[T]) weightsLen(heads int) int {
	switch {
	case !s.weighted():
		return 0
	case s.token():
		return heads * s.hd
	}
	return s.hd
}

// drawWeights returns n weights of the weight type: rms ±[1/8, 4) with
// some zeros and ones, gemma [−1, 1] (1 + w from 0 to 2), l2 nil.
func (s *suite[T]) drawWeights(r *rand.Rand, n int) []float64 {
	if !s.weighted() {
		return nil
	}
	w := make([]float64, n)
	for i := range w {
		var v float64
		switch u := r.IntN(16); {
		case u == 0:
			v = 0
		case u == 1:
			v = 1
		case s.k.Norm.Kind == "gemma":
			v = 2*r.Float64() - 1
		default:
			v = math.Ldexp(1+r.Float64(), r.IntN(5)-3)
			if r.IntN(4) == 0 {
				v = -v
			}
		}
		if s.c.kind != kF64 {
			v = float64(float32(v))
		}
		w[i] = v
	}
	return w
}

// ---- the canonical arithmetic, written apart from the generator -----------------

// normR is r of docs/contract.md §10 for the compute-type values v: 8
// partial sums of squares in float64 in increasing index, the fixed
// combination, then ss/n, +ε, sqrt and 1/q in float64, rounded once to the
// compute type. float64(x*x) keeps a product from being fused into a sum.
func (s *suite[T]) normR(v []float64) float64 {
	var p [8]float64
	for j, x := range v {
		p[j%8] += float64(x * x)
	}
	ss := ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
	m := ss / float64(len(v))
	r := 1 / math.Sqrt(m+s.k.Norm.Eps)
	if s.c.kind != kF64 {
		r = float64(float32(r))
	}
	return r
}

// normY is the normed value of x (a compute-type value) with scale r and
// weight w, in the compute type.
func (s *suite[T]) normY(x, r, w float64) float64 {
	kind := s.k.Norm.Kind
	if s.c.kind == kF64 {
		switch kind {
		case "rms":
			return float64(float64(x*r) * w)
		case "gemma":
			g := float64(1 + w)
			return float64(float64(x*r) * g)
		}
		return float64(x * r)
	}
	x32, r32, w32 := float32(x), float32(r), float32(w)
	switch kind {
	case "rms":
		return float64(float32(float32(x32*r32) * w32))
	case "gemma":
		g := float32(1 + w32)
		return float64(float32(float32(x32*r32) * g))
	}
	return float64(float32(x32 * r32))
}

// rotC rotates the pair (a, b) forward by table values (c, sn) in the
// compute type (docs/contract.md §5), without narrowing.
func (s *suite[T]) rotC(a, b, c, sn float64) (ya, yb float64) {
	if s.c.kind == kF64 {
		return float64(a*c) - float64(b*sn), float64(b*c) + float64(a*sn)
	}
	a32, b32, c32, s32 := float32(a), float32(b), float32(c), float32(sn)
	return float64(float32(a32*c32) - float32(b32*s32)), float64(float32(b32*c32) + float32(a32*s32))
}

// narrowC rounds a compute-type value to T.
func (s *suite[T]) narrowC(v float64) T {
	if s.c.kind == kF64 {
		return T(v)
	}
	return s.c.fromF32(float32(v))
}

// rowCS returns the table values (c, s) of every pair at pos: for f32 and
// f64 read back exactly from Apply on a head whose pairs are all (1, 0),
// which returns (c, s); for f16 and bf16, whose outputs are narrowed,
// float32(A·cos φ) and float32(A·sin φ) from correctly rounded float64
// cos and sin (as the table computes them), checked against the narrowed
// probe.
func (s *suite[T]) rowCS(pos int) ([]cs, error) {
	x := make([]T, s.hd)
	one := s.c.fromF64(1)
	for i := range s.pa {
		x[s.pa[i]] = one
	}
	y := s.out(eApply, x, pos)
	out := make([]cs, s.hf)
	for i, th := range s.k.Freqs {
		a, b := s.pa[i], s.pb[i]
		if s.c.kind == kF32 || s.c.kind == kF64 {
			out[i] = cs{s.c.toF64(y[a]), s.c.toF64(y[b])}
			continue
		}
		sin, cos := exactSincos(float64(pos) * th)
		c32, s32 := float32(s.attn*cos), float32(s.attn*sin)
		if s.c.bits(s.c.fromF32(c32)) != s.c.bits(y[a]) || s.c.bits(s.c.fromF32(s32)) != s.c.bits(y[b]) {
			return nil, fmt.Errorf("pos %d, pair %d: Apply on (1, 0) gives (%s, %s), but the table values float32(A·cos φ) = %v, float32(A·sin φ) = %v narrow to (%s, %s)",
				pos, i, s.c.show(y[a]), s.c.show(y[b]), c32, s32, s.c.show(s.c.fromF32(c32)), s.c.show(s.c.fromF32(s32)))
		}
		out[i] = cs{float64(c32), float64(s32)}
	}
	return out, nil
}

// normUnit is one normed vector of an ApplyNormQK call: the heads (their
// first elements' indices in buf, q's buffer "a" or k's "b") of one token,
// normed together (token scope) or one head alone, and its weights.
type normUnit struct {
	tok   int // the token j
	pos   int
	buf   string // "a" (q's buffer, and k's when shared) or "b"
	view  string // "q" or "k"
	heads []int
	w     []float64 // HeadDim weights shared by the heads, or one per value (token scope); nil for l2
}

// normUnits splits a call on views qv (in buffer a) and kv (in a when
// shared, else b) into its normed vectors.
func (s *suite[T]) normUnits(qv, kv sview, shared bool, pos []int32, qw, kw []float64) []normUnit {
	var us []normUnit
	add := func(v sview, name, buf string, w []float64) {
		for j, p := range pos {
			var hs []int
			for h := range v.s.Heads {
				hs = append(hs, v.off+j*v.s.Token+h*v.s.Head)
			}
			if s.token() {
				us = append(us, normUnit{j, int(p), buf, name, hs, w})
				continue
			}
			for _, at := range hs {
				us = append(us, normUnit{j, int(p), buf, name, []int{at}, w})
			}
		}
	}
	add(qv, "q", "a", qw)
	kb := "b"
	if shared {
		kb = "a"
	}
	add(kv, "k", kb, kw)
	return us
}

// weight returns the weight of value j of the unit (counting across its
// heads).
func (u normUnit) weight(j, hd int) float64 {
	if u.w == nil {
		return 0
	}
	if len(u.w) == hd {
		return u.w[j%hd]
	}
	return u.w[j]
}

// canonUnit writes the canonical result of unit u, read from in, into out
// (its heads' HeadDim values each), with table values row.
func (s *suite[T]) canonUnit(in, out []T, u normUnit, row []cs) {
	hd := s.hd
	n := len(u.heads) * hd
	v := make([]float64, n)
	for hi, at := range u.heads {
		h := v[hi*hd : (hi+1)*hd]
		for j := range hd {
			h[j] = s.c.toF64(in[at+j])
		}
		if s.k.Norm.After {
			for i := range s.pa {
				a, b := s.pa[i], s.pb[i]
				h[a], h[b] = s.rotC(h[a], h[b], row[i].c, row[i].s)
			}
		}
	}
	r := s.normR(v)
	for j := range v {
		v[j] = s.normY(v[j], r, u.weight(j, hd))
	}
	for hi, at := range u.heads {
		h := v[hi*hd : (hi+1)*hd]
		if !s.k.Norm.After {
			for i := range s.pa {
				a, b := s.pa[i], s.pb[i]
				h[a], h[b] = s.rotC(h[a], h[b], row[i].c, row[i].s)
			}
		}
		for j := range hd {
			out[at+j] = s.narrowC(h[j])
		}
	}
}

// ---- Hugging Face's formulas -----------------------------------------------------

// hfNorm applies the transformers norm of the package's kind to x (one head,
// or a token's heads: OLMo 2's whole projection).
func (s *suite[T]) hfNorm(x, w []float64) []float64 {
	eps := s.k.Norm.Eps
	switch s.k.Norm.Kind {
	case "gemma":
		return hfref.Gemma3RMSNorm(x, w, eps)
	case "l2":
		return hfref.Llama4TextL2Norm(x, eps)
	}
	if s.token() {
		return hfref.Olmo2RMSNorm(x, w, eps)
	}
	return hfref.Qwen3RMSNorm(x, w, eps)
}

// hfUnit returns the float64 reference of unit u read from in, through
// Hugging Face's norm and an exact rotation (verify's Matrix, exact cos and
// sin), and the scale m_j of each value's bound (Norm.K): before the
// rotation A·(|y*_a| + |y*_b|) for a rotated value of pair (a, b) and |y*_j|
// past RotaryDim, y* the normed vector; after it r*·|w'_j|·A·(|x_a| +
// |x_b|) and r*·|w'_j|·|x_j|, r* the scale of the rotated vector and w'_j
// the weight as applied (w, 1 + w, or 1).
func (s *suite[T]) hfUnit(in []T, u normUnit) (ref, m []float64) {
	hd := s.hd
	n := len(u.heads) * hd
	x := make([]float64, n)
	for hi, at := range u.heads {
		for j := range hd {
			x[hi*hd+j] = s.c.toF64(in[at+j])
		}
	}
	w := make([]float64, n)
	for j := range w {
		w[j] = u.weight(j, hd)
	}
	rot := func(v []float64) []float64 {
		out := make([]float64, 0, len(v))
		for h := 0; h < len(v); h += hd {
			out = append(out, reference(hd, s.rd, s.k.Layout, s.k.Freqs, s.attn, u.pos, false, v[h:h+hd], s.sincos())...)
		}
		return out
	}
	m = make([]float64, n)
	if !s.k.Norm.After {
		y := s.hfNorm(x, w)
		ref = rot(y)
		for h := 0; h < n; h += hd {
			for j := range hd {
				if q := s.partner[j]; q >= 0 {
					m[h+j] = s.attn * (math.Abs(y[h+j]) + math.Abs(y[h+q]))
				} else {
					m[h+j] = math.Abs(y[h+j])
				}
			}
		}
		return ref, m
	}
	z := rot(x)
	ref = s.hfNorm(z, w)
	r := hfref.NormScale(z, s.k.Norm.Eps)
	for h := 0; h < n; h += hd {
		for j := range hd {
			wp := 1.0
			switch s.k.Norm.Kind {
			case "rms":
				wp = math.Abs(w[h+j])
			case "gemma":
				wp = math.Abs(1 + w[h+j])
			}
			if q := s.partner[j]; q >= 0 {
				m[h+j] = r * wp * s.attn * (math.Abs(x[h+j]) + math.Abs(x[h+q]))
			} else {
				m[h+j] = r * wp * math.Abs(x[h+j])
			}
		}
	}
	return ref, m
}

// normK returns the bound's K for a rotated value and for one past
// RotaryDim of a vector of n values: the package's (Norm.K, with ⌈n/8⌉ for
// float64 compute), and for f64 packages the float64 reference's own error
// on top, which is not negligible there: its sum of n squares in index order
// (2n−1 roundings), the division, +ε, sqrt and 1/x, up to 3 roundings of the
// normed value, and the rotation's (counted in K already): 2n+6.
func (s *suite[T]) normK(n int) (rot, pass float64) {
	nk := s.k.Norm
	rot, pass = float64(nk.K[0]), float64(nk.K[1])
	if nk.KGroups {
		g := float64((n + 7) / 8)
		rot, pass = rot+g, pass+g
	}
	if s.c.kind == kF64 {
		ref := float64(2*n + 6)
		rot, pass = rot+ref, pass+ref
	}
	return rot, pass
}

// ---- the checks ------------------------------------------------------------------

// runNorm runs the QK-norm checks as subtests of t, or logs that k has no
// ApplyNormQK.
// RunNorm runs only the QK-norm checks of Run on k, and the Prep checks of
// its cache types with that norm: for a second model of a package's shape,
// with a norm or an ε of its own, whose other checks Run has done on the
// first.
func RunNorm[T Elem](t *testing.T, k Kernel[T]) {
	t.Helper()
	s := start(t, k)
	if len(k.Backends) > 0 {
		defer k.Backends[0].Use()
	}
	runNorm(t, s)
	if s.k.Norm != nil {
		t.Run("prep", func(t *testing.T) { runPrepForms(t, s) })
	}
}

func runNorm[T Elem](t *testing.T, s *suite[T]) {
	t.Helper()
	ok, err := s.normState()
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !ok {
		t.Log("Kernel has no QK-norm (ApplyNormQK): nothing to check")
		return
	}
	t.Run("hf", func(t *testing.T) { checkNormHF(t, s) })
	t.Run("canonical", func(t *testing.T) { checkNormCanonical(t, s) })
	t.Run("special", func(t *testing.T) { checkNormSpecial(t, s) })
	t.Run("strided", func(t *testing.T) { checkNormStrided(t, s, stridedCases()) })
	t.Run("guard", func(t *testing.T) { checkNormGuard(t, s) })
	t.Run("panics", func(t *testing.T) { checkNormPanics(t, s) })
	t.Run("separate", func(t *testing.T) { checkNormSeparate(t, s) })
}

// normOnly runs the package's norm without the rotation on n heads of x.
func (s *suite[T]) normOnly(x []T, stride, n int, w []float64) {
	if f := s.k.Norm.NormOnly64; f != nil {
		f(x, stride, n, w)
		return
	}
	s.k.Norm.NormOnly32(x, stride, n, to32(w))
}

// hasNormOnly reports whether k describes the norm alone.
func (s *suite[T]) hasNormOnly() bool {
	return s.k.Norm.NormOnly32 != nil || s.k.Norm.NormOnly64 != nil
}

// separate runs the norm and the rotation of call c apart: the norm alone
// token by token (NormOnly), and ApplyQK, in the norm's order.
func (s *suite[T]) separate(q []T, hq int, qw []float64, k []T, hk int, kw []float64, pos []int32) {
	norm := func() {
		for j := range pos {
			s.normOnly(q[j*hq*s.hd:], s.hd, hq, qw)
			s.normOnly(k[j*hk*s.hd:], s.hd, hk, kw)
		}
	}
	if !s.k.Norm.After {
		norm()
	}
	s.k.Strided.ApplyQK(s.tab, q, Strides{hq, s.hd, hq * s.hd}, k, Strides{hk, s.hd, hk * s.hd}, pos)
	if s.k.Norm.After {
		norm()
	}
}

// checkNormSeparate checks, on every backend, that for f32 and f64 (whose
// normed values are their own type) ApplyNormQK gives the bits of the norm
// alone (NormOnly) then ApplyQK (for After, ApplyQK then the norm): the
// fused kernel's norm and rotation are the separate ones'. For f16 and bf16
// the separate pass rounds in between, which the fused one does not.
func checkNormSeparate[T Elem](t tb, s *suite[T]) {
	t.Helper()
	defer s.restore()
	if !s.hasNormOnly() {
		t.Log("Norm has no NormOnly: nothing to compare")
		return
	}
	if s.c.kind != kF32 && s.c.kind != kF64 {
		t.Logf("%s rounds between separate passes: the fused ApplyNormQK is checked against docs/contract.md §10 instead", s.k.DType)
		return
	}
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x736570))
	n := 0
	for _, b := range s.backendsOrOnly() {
		b.Use()
		for range max(10, stridedCases()) {
			c := drawNormCall(s, r, func(n int) []T { return s.normValues(r, n) })
			q, k := c.run(s)
			wq, wk := slices.Clone(c.q), slices.Clone(c.k)
			s.separate(wq, c.hq, c.qw, wk, c.hk, c.kw, c.pos)
			for _, p := range []struct {
				name      string
				got, want []T
			}{{"q", q, wq}, {"k", k, wk}} {
				if i := s.firstDiff(p.got, p.want); i >= 0 {
					t.Fatalf("backend %s: %s value %d: ApplyNormQK gives %s, the norm alone and ApplyQK %s (seed %d)", b.Name, p.name, i, s.c.show(p.got[i]), s.c.show(p.want[i]), sd)
				}
			}
			n++
		}
	}
	t.Logf("qk-norm separate: %d calls on %d backends: ApplyNormQK = the norm alone and ApplyQK, bit for bit (seed %d)", n, len(s.backendsOrOnly()), sd)
}

// normCall is an ApplyNormQK call on contiguous q (hq heads per token) and k
// (hk heads) buffers of tokens tokens.
type normCall[T Elem] struct {
	hq, hk int
	pos    []int32
	q, k   []T
	qw, kw []float64
}

// drawNormCall draws a call: 1–3 tokens, 1–12 q heads (one call in four
// 16–33, several groups of 8 heads), 1–9 k heads (the kernels take heads 8
// or 4 at a time, then one by one), values from val, weights, positions of
// the table.
func drawNormCall[T Elem](s *suite[T], r *rand.Rand, val func(n int) []T) normCall[T] {
	c := normCall[T]{hq: 1 + r.IntN(12), hk: 1 + r.IntN(9)}
	if r.IntN(4) == 0 {
		c.hq = 16 + r.IntN(18)
	}
	tokens := 1 + r.IntN(3)
	c.pos = make([]int32, tokens)
	for j := range c.pos {
		c.pos[j] = int32([]int{0, 1, s.n - 1, r.IntN(s.n)}[r.IntN(4)])
	}
	c.q, c.k = val(tokens*c.hq*s.hd), val(tokens*c.hk*s.hd)
	c.qw, c.kw = s.drawWeights(r, s.weightsLen(c.hq)), s.drawWeights(r, s.weightsLen(c.hk))
	return c
}

func (c *normCall[T]) views(hd int) (qv, kv sview) {
	return sview{s: Strides{c.hq, hd, c.hq * hd}, n: len(c.q)}, sview{s: Strides{c.hk, hd, c.hk * hd}, n: len(c.k)}
}

// run calls ApplyNormQK on copies of the call's buffers.
func (c *normCall[T]) run(s *suite[T]) (q, k []T) {
	q, k = slices.Clone(c.q), slices.Clone(c.k)
	qv, kv := c.views(s.hd)
	s.applyNorm(q, qv.s, c.qw, k, kv.s, c.kw, c.pos)
	return q, k
}

// checkNormHF compares ApplyNormQK on every backend with Hugging Face's
// norms (Qwen3RMSNorm; Olmo2RMSNorm over a token's heads; Gemma3RMSNorm;
// Llama4TextL2Norm) in float64 and an exact rotation, before or after the
// norm as the package does it: every value must lie within the package's
// bound K·u·m_j (plus an ulp of the storage type for f16 and bf16), m_j as
// hfUnit computes it. Inputs are finite accuracy values (expRange, zeros
// among them) and, one time in four, huge ones near the largest finite value
// (f64: 2^500), whose squares a float32 sum would overflow.
func checkNormHF[T Elem](t tb, s *suite[T]) {
	t.Helper()
	defer s.restore()
	var w worst
	huge := s.hugeValue()
	for _, b := range s.backendsOrOnly() {
		b.Use()
		rapid.Check(t, func(rt *rapid.T) {
			r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 1))
			isHuge := rapid.IntRange(0, 3).Draw(rt, "huge") == 0
			val := func(n int) []T {
				x := make([]T, n)
				for i := range x {
					if isHuge {
						x[i] = s.c.fromF64(huge * (0.5 + r.Float64()/2) * float64(1-2*r.IntN(2)))
					} else {
						x[i] = s.normal(r.Uint64())
					}
				}
				return x
			}
			c := drawNormCall(s, r, val)
			q, k := c.run(s)
			qv, kv := c.views(s.hd)
			for _, u := range s.normUnits(qv, kv, false, c.pos, c.qw, c.kw) {
				in, got := c.q, q
				if u.view == "k" {
					in, got = c.k, k
				}
				ref, m := s.hfUnit(in, u)
				kr, kp := s.normK(len(ref))
				for hi, at := range u.heads {
					for j := range s.hd {
						i := hi*s.hd + j
						kk := kp
						if s.partner[j] >= 0 {
							kk = kr
						}
						bound := kk*s.c.u*m[i] + s.c.storageULP(ref[i])
						g := s.c.toF64(got[at+j])
						d := math.Abs(g - ref[i])
						if !(d <= bound) {
							rt.Fatalf("backend %s: %s token %d (pos %d), element %d (index %d of a head): got %v, Hugging Face's %s norm %s the rotation gives %v: error %.3g > bound %.3g (K = %v, m = %.3g)",
								b.Name, u.view, u.tok, u.pos, at+j, j, g, s.k.Norm.Kind, beforeAfter(s.k.Norm.After), ref[i], d, bound, kk, m[i])
						}
						w.note(d, bound, func() string {
							return fmt.Sprintf("backend %s, %s index %d at pos %d", b.Name, u.view, j, u.pos)
						})
					}
				}
			}
		})
	}
	w.log(t, "qk-norm against Hugging Face's formulas")
}

func beforeAfter(after bool) string {
	if after {
		return "after"
	}
	return "before"
}

// hugeValue is a finite value whose square overflows float32 (for f64: one
// whose 4096 squares still sum below the float64 maximum).
func (s *suite[T]) hugeValue() float64 {
	switch s.c.kind {
	case kF16:
		return 60000
	case kF64:
		return 0x1p500
	}
	return 0x1p126
}

// normValues returns n values of one of several kinds: accuracy values,
// specials (format.special: zeros, subnormals, infinities, NaNs, extremes),
// accuracy values with a sprinkling of specials, tiny values (subnormals
// and the smallest normals), or huge ones.
func (s *suite[T]) normValues(r *rand.Rand, n int) []T {
	x := make([]T, n)
	mode := r.IntN(5)
	for i := range x {
		switch mode {
		case 0:
			x[i] = s.normal(r.Uint64())
		case 1:
			x[i] = s.c.fromBits(s.c.f.special(r.Uint64(), false))
		case 2:
			if r.IntN(16) == 0 {
				x[i] = s.c.fromBits(s.c.f.special(r.Uint64(), false))
			} else {
				x[i] = s.normal(r.Uint64())
			}
		case 3:
			x[i] = s.c.fromBits(s.c.f.compose(r.IntN(2) == 0, uint64(r.IntN(2)), r.Uint64()&s.c.f.mantMask()))
		default:
			x[i] = s.c.fromF64(s.hugeValue() * (0.5 + r.Float64()/2) * float64(1-2*r.IntN(2)))
		}
	}
	return x
}

// checkNormCanonical checks docs/contract.md §10 bit for bit on every
// backend (NaN payloads aside): the 8 partial sums in float64 in index
// order and their fixed combination, r rounded once, each value's
// roundings, the rotation with the table's values (rowCS), one narrowing.
// A float32 sum, a fused multiply-add, an r kept in float64, a wrong ε or
// scope all fail here, and so does a reordered sum in a float64 package.
// With float32 compute the order of the float64 sum is hidden by r's
// rounding to float32 but where ss's last bits (2⁻⁵⁰ of it) decide that
// rounding, which random vectors almost never reach: the float64
// packages, whose kernels take their lanes from the same code, are where
// the order shows. Values mix accuracy inputs with specials: zeros,
// subnormals, infinities, NaNs, huge values.
func checkNormCanonical[T Elem](t tb, s *suite[T]) {
	t.Helper()
	defer s.restore()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x6e6f726d))
	rows := map[int][]cs{}
	n := 0
	for _, b := range s.backendsOrOnly() {
		b.Use()
		for range max(10, stridedCases()) {
			c := drawNormCall(s, r, func(n int) []T { return s.normValues(r, n) })
			q, k := c.run(s)
			wq, wk := slices.Clone(c.q), slices.Clone(c.k)
			qv, kv := c.views(s.hd)
			for _, u := range s.normUnits(qv, kv, false, c.pos, c.qw, c.kw) {
				row, ok := rows[u.pos]
				if !ok {
					var err error
					if row, err = s.rowCS(u.pos); err != nil {
						t.Fatalf("%v", err)
					}
					rows[u.pos] = row
				}
				in, out := c.q, wq
				if u.view == "k" {
					in, out = c.k, wk
				}
				s.canonUnit(in, out, u, row)
				n++
			}
			for _, p := range []struct {
				name      string
				got, want []T
				in        []T
			}{{"q", q, wq, c.q}, {"k", k, wk, c.k}} {
				if i := s.firstDiff(p.got, p.want); i >= 0 {
					tok, h, j := i/(len(p.in)/len(c.pos)), (i%(len(p.in)/len(c.pos)))/s.hd, i%s.hd
					t.Fatalf("backend %s: %s token %d (pos %d), head %d, index %d: got %s, docs/contract.md §10 gives %s (input %s; the vector: %s) (seed %d; rerun with -rapid.seed=%d)",
						b.Name, p.name, tok, c.pos[tok], h, j, s.c.show(p.got[i]), s.c.show(p.want[i]), s.c.show(p.in[i]), s.c.showAll(p.in[i-j:i-j+s.hd]), sd, sd)
				}
			}
		}
	}
	t.Logf("qk-norm canonical: %d normed vectors on %d backends, every bit as docs/contract.md §10 (seed %d)", n, len(s.backendsOrOnly()), sd)
}

// checkNormSpecial checks what the canonical arithmetic promises at the
// edges, on every backend: a vector of zeros comes out zeros; huge values
// (squares beyond float32) come out finite; a NaN makes its whole normed
// vector NaN and nothing else; an infinity makes its vector's finite values
// zero (r = 1/sqrt(∞) = 0) with NaN only in the infinity's own pair.
func checkNormSpecial[T Elem](t tb, s *suite[T]) {
	t.Helper()
	defer s.restore()
	e := newNormEdge(s, rand.New(rand.NewPCG(seed(), 0x7370)))
	for _, b := range s.backendsOrOnly() {
		b.Use()
		for _, check := range []func() string{e.zeros, e.huge, func() string { return e.special("NaN") }, func() string { return e.special("Inf") }} {
			if d := check(); d != "" {
				t.Fatalf("backend %s: %s", b.Name, d)
			}
		}
	}
}

// normEdge is checkNormSpecial's call: 3 q and 2 k heads at one position,
// weights that keep finite values non-zero.
type normEdge[T Elem] struct {
	s      *suite[T]
	r      *rand.Rand
	qv, kv Strides
	qw, kw []float64
	pos    []int32
}

const normEdgeQ, normEdgeK = 3, 2

func newNormEdge[T Elem](s *suite[T], r *rand.Rand) *normEdge[T] {
	hd := s.hd
	e := &normEdge[T]{s: s, r: r, qv: Strides{normEdgeQ, hd, normEdgeQ * hd}, kv: Strides{normEdgeK, hd, normEdgeK * hd}}
	e.qw, e.kw = s.drawWeights(r, s.weightsLen(normEdgeQ)), s.drawWeights(r, s.weightsLen(normEdgeK))
	for _, w := range [][]float64{e.qw, e.kw} {
		for i := range w {
			w[i] = max(0.5, math.Abs(w[i])) // no zero weights: finite values must stay non-zero
			if s.k.Norm.Kind == "gemma" {
				w[i] = 0.25
			}
		}
	}
	e.pos = []int32{int32(r.IntN(s.n))}
	return e
}

// base returns q and k of non-zero accuracy values.
func (e *normEdge[T]) base() (q, k []T) {
	s := e.s
	q, k = make([]T, normEdgeQ*s.hd), make([]T, normEdgeK*s.hd)
	for _, x := range [][]T{q, k} {
		for i := range x {
			x[i] = s.normal(e.r.Uint64() | 1)
		}
	}
	return q, k
}

func (e *normEdge[T]) apply(q, k []T) { e.s.applyNorm(q, e.qv, e.qw, k, e.kv, e.kw, e.pos) }

// zeros: a vector of zeros comes out zeros.
func (e *normEdge[T]) zeros() string {
	s := e.s
	q, k := make([]T, normEdgeQ*s.hd), make([]T, normEdgeK*s.hd)
	e.apply(q, k)
	for i, v := range append(slices.Clone(q), k...) {
		if s.c.toF64(v) != 0 {
			return fmt.Sprintf("a vector of zeros gives %s at index %d: want 0", s.c.show(v), i)
		}
	}
	return ""
}

// huge: q heads of ±hugeValue come out finite and not all zeros.
func (e *normEdge[T]) huge() string {
	s := e.s
	q, k := e.base()
	for i := range q {
		q[i] = s.c.fromF64(s.hugeValue() * float64(1-2*(i%2)))
	}
	e.apply(q, k)
	nonzero := false
	for i, v := range q {
		if !s.c.isFinite(v) {
			return fmt.Sprintf("q heads of ±%g (squares past float32) give %s at index %d: want finite", s.hugeValue(), s.c.show(v), i)
		}
		nonzero = nonzero || s.c.toF64(v) != 0
	}
	if !nonzero {
		return fmt.Sprintf("q heads of ±%g (squares past float32) come out all zeros: a float32 sum of squares overflows to ∞, and r = 0", s.hugeValue())
	}
	return ""
}

// special: a NaN or an infinity ("NaN", "Inf") in q's head 1, against a
// clean run.
func (e *normEdge[T]) special(special string) string {
	s, hd := e.s, e.s.hd
	q0, k0 := e.base()
	qc, kc := slices.Clone(q0), slices.Clone(k0)
	e.apply(qc, kc)
	q, k := slices.Clone(q0), slices.Clone(k0)
	at := hd + 1
	if special == "NaN" {
		q[at] = s.c.fromBits(s.c.f.compose(false, s.c.f.expMax(), 1))
	} else {
		q[at] = s.c.fromBits(s.c.f.compose(true, s.c.f.expMax(), 0))
	}
	e.apply(q, k)
	lo, hi := hd, 2*hd // the normed vector holding the special value
	if s.token() {
		lo, hi = 0, normEdgeQ*hd
	}
	for i, v := range q {
		inVec := i >= lo && i < hi
		switch {
		case !inVec && s.c.bits(v) != s.c.bits(qc[i]):
			return fmt.Sprintf("a %s in q's head 1 changed q index %d, outside its normed vector: %s, without it %s", special, i, s.c.show(v), s.c.show(qc[i]))
		case inVec && special == "NaN" && !s.c.isNaN(v):
			return fmt.Sprintf("a NaN in q's head 1 left index %d of its normed vector %s: want NaN (r is NaN)", i, s.c.show(v))
		case inVec && special == "Inf":
			j := i % hd
			own := i/hd == at/hd && (j == at%hd || s.partner[at%hd] == j && !s.k.Norm.After)
			if own && !s.c.isNaN(v) {
				return fmt.Sprintf("an infinity at q index %d left index %d %s: want NaN (∞·0)", at, i, s.c.show(v))
			}
			if !own && s.c.toF64(v) != 0 && !(s.k.Norm.After && s.c.isNaN(v)) {
				return fmt.Sprintf("an infinity at q index %d left index %d %s: want 0 (r = 1/sqrt(∞) = 0)", at, i, s.c.show(v))
			}
		}
	}
	if s.firstDiff(k, kc) >= 0 {
		return fmt.Sprintf("a %s in q changed k", special)
	}
	return ""
}

// ---- views, canaries, guard pages, panics ---------------------------------------

// fillNorm returns buffers for an ApplyQK-shaped call c: every element of
// every q and k head (all HeadDim values: the norm reads them all) holds a
// value from val, every other element a canary.
func (s *suite[T]) fillNorm(c *scall, salt uint64, val func() T) sbufs[T] {
	return s.fillStrided(c, salt, true, func() uint64 { return s.c.bits(val()) })
}

// wantNorm returns what ApplyNormQK must leave in in for call c, computed
// by canonUnit, and the mask of the elements it writes (every value of
// every head).
func (s *suite[T]) wantNorm(c *scall, in sbufs[T], qw, kw []float64, rows map[int][]cs) (want sbufs[T], wa, wb []bool, err error) {
	want = in.clone()
	wa = make([]bool, len(in.a))
	if !c.shared {
		wb = make([]bool, len(in.b))
	}
	for _, u := range s.normUnits(c.a, c.b, c.shared, c.pos, qw, kw) {
		row, ok := rows[u.pos]
		if !ok {
			if row, err = s.rowCS(u.pos); err != nil {
				return want, nil, nil, err
			}
			rows[u.pos] = row
		}
		src, dst, mask := in.a, want.a, wa
		if u.buf == "b" {
			src, dst, mask = in.b, want.b, wb
		}
		s.canonUnit(src, dst, u, row)
		for _, at := range u.heads {
			for d := range s.hd {
				mask[at+d] = true
			}
		}
	}
	return want, wa, wb, nil
}

// invokeNorm makes ApplyNormQK call c on the buffers b.
func (s *suite[T]) invokeNorm(c *scall, b sbufs[T], qw, kw []float64) {
	k := kbufOf(c, b)
	s.applyNorm(b.a[c.a.off:c.a.off+c.a.n], c.a.s, qw, k[c.b.off:c.b.off+c.b.n], c.b.s, kw, c.pos)
}

// normCalls returns the ApplyNormQK calls of the strided check: for every
// named layout (and random ones) as q, ApplyQK's set (qkCalls: k in a second
// buffer; fused QKV rows; k's view after q's and before it), and q and k
// heads interleaved in one buffer.
func (s *suite[T]) normCalls(r *rand.Rand, random int) []*scall {
	layouts := s.namedLayouts()
	named := len(layouts)
	for range random {
		layouts = append(layouts, s.randomLayout(r))
	}
	var calls []*scall
	for i, l := range layouts {
		pos := s.positions(r, l.tokens)
		lk := layouts[r.IntN(len(layouts))]
		if i < named {
			lk = layouts[(i+3)%named]
		}
		lk.tokens = l.tokens
		lk.s = s.fit(lk.s, l.tokens)
		calls = append(calls, s.qkCalls(l, lk, pos)...)
	}
	return append(calls, s.interleavedQK(s.positions(r, 3)))
}

// checkNormStrided checks ApplyNormQK on the views of checkStridedBits
// (namedLayouts and random ones, q and k in two buffers or in one) on
// every backend: each q and k head must come back as canonUnit computes it
// (whole heads: the norm writes the values past RotaryDim too), every other
// element (gaps, canaries before and after the slices) with its exact bits,
// and every backend with the last one's bits.
func checkNormStrided[T Elem](t tb, s *suite[T], random int) {
	t.Helper()
	bs := s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x6e736472))
	calls := s.normCalls(r, random)
	rows := map[int][]cs{} // the table values of each position, as rowCS reads them
	for ci, c := range calls {
		qw, kw := s.drawWeights(r, s.weightsLen(c.a.s.Heads)), s.drawWeights(r, s.weightsLen(c.b.s.Heads))
		mode := r.IntN(3)
		in := s.fillNorm(c, r.Uint64(), func() T {
			if mode == 0 || r.IntN(8) == 0 {
				return s.c.fromBits(s.c.f.special(r.Uint64(), mode != 0))
			}
			return s.normal(r.Uint64())
		})
		if msg := s.checkNormCall(c, in, qw, kw, bs, rows); msg != "" {
			t.Fatalf("%s (call %d, seed %d)", msg, ci, sd)
		}
	}
	t.Logf("qk-norm strided: %d ApplyNormQK calls on %d backends: every head as docs/contract.md §10, canaries intact, backends agree (seed %d)", len(calls), len(bs), sd)
}

// checkNormCall makes ApplyNormQK call c on a copy of in with weights qw
// and kw on every backend, the last first: each must leave every q and k
// head as canonUnit computes it and every other element with its bits, and
// give the last backend's bits. It returns "" or what failed.
func (s *suite[T]) checkNormCall(c *scall, in sbufs[T], qw, kw []float64, bs []Backend, rows map[int][]cs) string {
	want, wa, wb, err := s.wantNorm(c, in, qw, kw, rows)
	if err != nil {
		return err.Error()
	}
	var refGot sbufs[T]
	for i := len(bs) - 1; i >= 0; i-- {
		b := bs[i]
		b.Use()
		got := in.clone()
		if msg, panicked := catch(func() { s.invokeNorm(c, got, qw, kw) }); panicked {
			return fmt.Sprintf("backend %s: ApplyNormQK on %v panicked on a valid call: %s", b.Name, c, msg)
		}
		if d := s.diffNorm(c, got, want, in, wa, wb); d != "" {
			return fmt.Sprintf("backend %s: ApplyNormQK on %v: %s", b.Name, c, d)
		}
		if i == len(bs)-1 {
			refGot = got
		} else if d := s.firstDiffBufs(c, got, refGot); d != "" {
			return fmt.Sprintf("backend %s differs from %s: ApplyNormQK on %v: %s", b.Name, bs[len(bs)-1].Name, c, d)
		}
	}
	return ""
}

// diffNorm compares got with want: written elements (mask) must match
// (NaN payloads aside), every other element keep its bits.
func (s *suite[T]) diffNorm(c *scall, got, want, in sbufs[T], wa, wb []bool) string {
	views := c.bufViews()
	check := func(buf string, g, w, x []T, mask []bool) string {
		for i := range g {
			if mask[i] {
				if !s.c.same(g[i], w[i]) {
					return fmt.Sprintf("%s[%d], %s: %s, docs/contract.md §10 gives %s (input %s)", buf, i, s.describe(c, i, views[bufKey(buf)]), s.c.show(g[i]), s.c.show(w[i]), s.c.show(x[i]))
				}
			} else if s.c.bits(g[i]) != s.c.bits(w[i]) {
				return fmt.Sprintf("%s[%d], %s, which the call must leave alone, changed: %s -> %s", buf, i, s.describe(c, i, views[bufKey(buf)]), s.c.show(x[i]), s.c.show(g[i]))
			}
		}
		return ""
	}
	if d := check("q's buffer", got.a, want.a, in.a, wa); d != "" {
		return d
	}
	if !c.shared {
		return check("k's buffer", got.b, want.b, in.b, wb)
	}
	return ""
}

// normCallOf is ApplyNormQK on the views of the ApplyQK-shaped call c,
// over the buffers in (q's, and k's unless it shares q's) changed in place,
// with the weights qw and kw (values of the package's weight type, held as
// float64; nil passes nil) and the positions only read.
func (s *suite[T]) normCallOf(c *scall, in sbufs[T], qw, kw []float64) *call {
	nk := s.k.Norm
	views := c.bufViews()
	a := newBuf("q's buffer", in.a, inPlace).describing(func(i int) string { return s.describe(c, i, views["a"]) })
	b := newBuf("k's buffer", in.b, inPlace).describing(func(i int) string { return s.describe(c, i, views["b"]) })
	p := newIndex("pos", c.pos)
	sc := &call{what: "ApplyNormQK on " + c.String(), args: []arg{a, p}}
	if !c.shared {
		sc.args = append(sc.args, b)
	}
	var norm func(q, k []T, pos []int32)
	if nk.ApplyNormQK64 != nil {
		wq, wk := newIndex("q's weights", qw), newIndex("k's weights", kw)
		sc.args = append(sc.args, wq, wk)
		norm = func(q, k []T, pos []int32) { nk.ApplyNormQK64(s.tab, q, c.a.s, wq.cur, k, c.b.s, wk.cur, pos) }
	} else {
		wq, wk := newIndex("q's weights", to32(qw)), newIndex("k's weights", to32(kw))
		sc.args = append(sc.args, wq, wk)
		norm = func(q, k []T, pos []int32) { nk.ApplyNormQK32(s.tab, q, c.a.s, wq.cur, k, c.b.s, wk.cur, pos) }
	}
	sc.run = func() {
		kb := b.cur
		if c.shared {
			kb = a.cur
		}
		norm(a.cur[c.a.off:c.a.off+c.a.n], kb[c.b.off:c.b.off+c.b.n], p.cur)
	}
	return sc
}

// normEntries describes ApplyNormQK to the drivers: its guard calls are the
// strided guard check's ApplyQK calls (each layout as q with one
// contiguous k head per token, and fused q and k rows) with weights, on
// accuracy values; its edge calls normEdges.
func (s *suite[T]) normEntries() entryPoint {
	return entryPoint{
		name: "ApplyNormQK",
		guard: func(r *rand.Rand) []*call {
			var cs []*call
			for _, c := range s.guardCalls(r) {
				if c.op != opQK {
					continue
				}
				qw, kw := s.drawWeights(r, s.weightsLen(c.a.s.Heads)), s.drawWeights(r, s.weightsLen(c.b.s.Heads))
				in := s.fillNorm(c, r.Uint64(), func() T { return s.normal(r.Uint64()) })
				cs = append(cs, s.normCallOf(c, in, qw, kw))
			}
			return cs
		},
		edges: s.normEdges,
		bench: func(r *rand.Rand) []benchGroup { return s.normBench(s.benchInput(r)) },
	}
}

// checkNormGuard runs ApplyNormQK's guard calls (checkGuarded): q, k,
// their weights and the positions each flush against a guard page.
func checkNormGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkGuarded(t, s.backendsOrOnly(), 0x6e677264, s.normEntries())
}

// normEdges are ApplyNormQK's argument checks: weights of the wrong length
// (one short, one long, none, for q and for k; any weights at all for l2),
// and, as for ApplyQK, a bad view field, q's heads overlapping k's in one
// buffer, a position outside the table. Each must panic naming
// Table.ApplyNormQK, the argument and its value, saying what was expected,
// before any buffer changes; the valid edge cases (no positions, exact
// weights on a fused row) must not panic.
func (s *suite[T]) normEdges() []edgeCall {
	hd, L := s.hd, s.n
	ws := func(n int) []float64 {
		if n < 0 {
			return nil
		}
		return make([]float64, n)
	}
	good := Strides{2, hd, 2 * hd}
	wq, wk := s.weightsLen(2), s.weightsLen(2)
	type ncase struct {
		fields []string
		values []int
		what   string
		qs, ks Strides
		qw, kw []float64
		pos    []int32
		shared int // k at this offset in q's buffer, when > 0
	}
	var cases []ncase
	if s.weighted() {
		cases = append(cases,
			ncase{[]string{"qw"}, []int{wq - 1}, "len(qw) one short", good, good, ws(wq - 1), ws(wk), ps(0, 1), 0},
			ncase{[]string{"qw"}, []int{wq + 1}, "len(qw) one long", good, good, ws(wq + 1), ws(wk), ps(0, 1), 0},
			ncase{[]string{"kw"}, []int{wk - 1}, "len(kw) one short", good, good, ws(wq), ws(wk - 1), ps(0, 1), 0},
			ncase{[]string{"kw"}, []int{0}, "kw nil", good, good, ws(wq), nil, ps(0, 1), 0},
			ncase{[]string{"qw"}, []int{0}, "qw nil with no positions", good, good, nil, ws(wk), nil, 0},
		)
		if s.token() {
			cases = append(cases, ncase{[]string{"kw"}, []int{hd}, "kw of HeadDim for ks.Heads = 2 (token scope)", good, good, ws(wq), ws(hd), ps(3), 0})
		}
	} else {
		cases = append(cases,
			ncase{[]string{"qw"}, []int{hd}, "qw of HeadDim values (l2 has no weights)", good, good, ws(hd), nil, ps(0, 1), 0},
			ncase{[]string{"kw"}, []int{1}, "kw of 1 value (l2 has no weights)", good, good, nil, ws(1), ps(0), 0},
		)
	}
	qn, kn := ws(wq), ws(wk)
	cases = append(cases,
		ncase{[]string{"qs.Heads"}, []int{0}, "qs.Heads = 0", Strides{0, hd, 2 * hd}, good, qn, kn, ps(0, 1), 0},
		ncase{[]string{"ks.Head"}, []int{-1}, "ks.Head = -1", good, Strides{2, -1, 2 * hd}, qn, kn, ps(0, 1), 0},
		ncase{[]string{s.posAt(1)}, []int{L}, "pos[1] = Len()", good, good, qn, kn, ps(0, L), 0},
		ncase{[]string{s.posAt(0)}, []int{-1}, "pos[0] = -1", good, good, qn, kn, ps(-1), 0},
		ncase{[]string{"qs", "ks"}, []int{hd}, "k on q's second head in one buffer", good, good, qn, kn, ps(0), hd},
	)
	var es []edgeCall
	for i, c := range cases {
		sc := two(c.qs, c.ks, 2*hd*max(len(c.pos), 1), 2*hd*max(len(c.pos), 1), c.pos)
		if c.shared > 0 {
			sc = shared(c.qs, c.ks, 4*hd, 0, c.shared, c.pos)
		}
		nc := s.normCallOf(sc, s.edgeBufs(sc, uint64(i)<<32), c.qw, c.kw)
		es = append(es, bad(nc, c.what, panicWant{fn: "Table.ApplyNormQK", fields: c.fields, values: c.values, expect: true}))
	}
	none := two(Strides{1, 1, 1}, Strides{1, 1, 1}, 0, 0, nil)
	fused := shared(Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, 2*hd, ps(0, L-1))
	return append(es,
		valid(s.normCallOf(none, sbufs[T]{}, ws(s.weightsLen(1)), ws(s.weightsLen(1))), "no positions and no buffers are valid", true),
		valid(s.normCallOf(fused, s.edgeBufs(fused, 99), ws(s.weightsLen(2)), ws(s.weightsLen(1))), "a fused row with exact weights is valid", false))
}

// checkNormPanics runs ApplyNormQK's edge calls (checkEdges).
func checkNormPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkEdges(t, s.backendsOrOnly(), s.normEntries())
}
