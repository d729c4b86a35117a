package verify

import (
	"fmt"
	"math"
	"testing"
	"unsafe"
)

// ---- a reference QK-norm, and its mutants -----------------------------------------
//
// normRef gives a reference kernel (verify_test.go's refKernel, with the
// strided entry points of strided_test.go) an ApplyNormQK written apart
// from verify's own canonical arithmetic (canonUnit): it checks the
// arguments its own way, then normalizes each vector with refKernel's
// widening, rounding and narrowing and its table rows. A normMutation
// breaks it on purpose.

type normMutation struct {
	seqSum        bool    // one float64 accumulator in index order instead of 8 lanes
	f32Sum        bool    // the 8 partial sums kept in float32
	fma           bool    // the rotation's second product fused into the sum
	rF64          bool    // r kept in float64, not rounded to the compute type
	eps           float64 // this ε instead of the package's, when not 0
	perHead       bool    // a token-scope norm normalizes head by head
	afterAsBefore bool    // an after-rotation norm normalizes first
	oneTooMany    bool    // the element after each head gets its low bit flipped
	noWeightCheck bool    // weights of any length accepted
	oddBackend    bool    // on backend "odd", the last value of each vector one bit off
	strayRead     bool    // reads the weight after the last one
	onlyF64       bool    // the norm alone (NormOnly) keeps r in float64
}

type normRef[T Elem] struct {
	hd     int
	kind   string
	token  bool
	after  bool
	eps    float64
	m      normMutation
	active string
}

func withNorm[T Elem](k Kernel[T], kind, scope string, after bool, m normMutation) Kernel[T] {
	if k.Strided == nil {
		k = withStrided(k, strideMutation{})
	}
	r := &normRef[T]{hd: k.HeadDim, kind: kind, token: scope == "token", after: after, eps: 1e-6, m: m}
	for i, b := range k.Backends {
		use := b.Use
		k.Backends[i].Use = func() { use(); r.active = b.Name }
	}
	if len(k.Backends) > 0 {
		k.Backends[0].Use()
	}
	cr := 1
	if k.DType == "f64" {
		cr = 4
	}
	cy := map[string]int{"rms": 2, "gemma": 3, "l2": 1}[kind]
	pass := cr + cy + 1
	if after {
		pass += 6
	}
	n := &Norm[T]{Kind: kind, Eps: r.eps, Scope: scope, After: after, K: [2]int{pass + 4, pass}, KGroups: k.DType == "f64"}
	if k.DType == "f64" {
		n.ApplyNormQK64 = func(tab Table[T], q []T, qs Strides, qw []float64, kk []T, ks Strides, kw []float64, pos []int32) {
			r.apply(tab, q, qs, qw, kk, ks, kw, pos)
		}
	} else {
		n.ApplyNormQK32 = func(tab Table[T], q []T, qs Strides, qw []float32, kk []T, ks Strides, kw []float32, pos []int32) {
			r.apply(tab, q, qs, f64s(qw), kk, ks, f64s(kw), pos)
		}
	}
	only := func(tab Table[T], x []T, stride, heads int, w []float64) {
		kern := tab.(*refTable[T]).k
		saved := r.m
		r.m.rF64 = r.m.onlyF64
		defer func() { r.m = saved }()
		r.view(kern, x, Strides{heads, stride, 1}, 0, w, nil)
	}
	var tab Table[T]
	newTable := k.NewTable
	k.NewTable = func(n int) Table[T] { tab = newTable(n); return tab }
	if k.DType == "f64" {
		n.NormOnly64 = func(x []T, stride, heads int, w []float64) { only(tab, x, stride, heads, w) }
	} else {
		n.NormOnly32 = func(x []T, stride, heads int, w []float32) { only(tab, x, stride, heads, f64s(w)) }
	}
	k.Norm = n
	return k
}

func f64s(w []float32) []float64 {
	if w == nil {
		return nil
	}
	out := make([]float64, len(w))
	for i, v := range w {
		out[i] = float64(v)
	}
	return out
}

func (r *normRef[T]) fail(format string, a ...any) {
	panic("refrope.Table.ApplyNormQK: " + fmt.Sprintf(format, a...))
}

func (r *normRef[T]) apply(tab Table[T], q []T, qs Strides, qw []float64, k []T, ks Strides, kw []float64, pos []int32) {
	sr := &strideRef[T]{hd: r.hd}
	defer func() {
		if e := recover(); e != nil {
			if msg, ok := e.(string); ok { // the argument checks'
				panic("refrope.Table.ApplyNormQK: " + msg)
			}
			panic(e) // a memory fault keeps its address
		}
	}()
	sr.checkView("ApplyNormQK", "qs", qs, len(q), len(pos))
	sr.checkView("ApplyNormQK", "ks", ks, len(k), len(pos))
	if len(pos) > 0 && len(q) > 0 && len(k) > 0 {
		size := int(unsafe.Sizeof(q[0]))
		pq, pk := uintptr(unsafe.Pointer(&q[0])), uintptr(unsafe.Pointer(&k[0]))
		if pq < pk+uintptr(len(k)*size) && pk < pq+uintptr(len(q)*size) {
			d := (int(pk) - int(pq)) / size
			if !sr.apartOK(append(starts(qs, len(pos), 0), starts(ks, len(pos), d)...)) {
				r.fail("qs = %+v and ks = %+v: a q head overlaps a k head: want disjoint heads", qs, ks)
			}
		}
	}
	if !r.m.noWeightCheck {
		for _, w := range []struct {
			name  string
			n     int
			heads int
		}{{"qw", len(qw), qs.Heads}, {"kw", len(kw), ks.Heads}} {
			want := r.hd
			switch {
			case r.kind == "l2":
				want = 0
			case r.token:
				want = w.heads * r.hd
			}
			if w.n != want {
				r.fail("len(%s) = %d: want %d", w.name, w.n, want)
			}
		}
	}
	sr.checkPos("ApplyNormQK", tab, pos)
	t := tab.(*refTable[T])
	for j, p := range pos {
		row := t.row(int(p))
		r.view(t.k, q, qs, j, qw, row)
		r.view(t.k, k, ks, j, kw, row)
	}
}

// view normalizes and rotates token j's heads of view s of x (with a nil
// row: the norm alone, NormOnly).
func (r *normRef[T]) view(k *refKernel[T], x []T, s Strides, j int, w []float64, row []float64) {
	var units [][]int
	for h := range s.Heads {
		at := j*s.Token + h*s.Head
		if r.token && !r.m.perHead && h > 0 {
			units[0] = append(units[0], at)
		} else {
			units = append(units, []int{at})
		}
	}
	for ui, u := range units {
		v := make([]float64, 0, len(u)*r.hd)
		for _, at := range u {
			h := make([]float64, r.hd)
			for d := range h {
				h[d] = k.widen(x[at+d])
			}
			if r.after && !r.m.afterAsBefore && row != nil {
				r.rotate(k, h, row)
			}
			v = append(v, h...)
		}
		rs := r.scale(k, v)
		for i := range v {
			wi := 0.0
			if len(w) > 0 {
				wi = w[i%len(w)]
				if r.token && !r.m.perHead {
					wi = w[i]
				} else if r.token {
					wi = w[ui*r.hd+i]
				}
			}
			v[i] = r.normed(k, v[i], rs, wi)
		}
		if r.m.strayRead && len(w) > 0 {
			sink += byte(math.Float64bits(*(*float64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(w)), len(w)*8))))
		}
		for hi, at := range u {
			h := v[hi*r.hd : (hi+1)*r.hd]
			if (!r.after || r.m.afterAsBefore) && row != nil {
				r.rotate(k, h, row)
			}
			for d := range h {
				x[at+d] = k.narrow(h[d])
			}
			if r.m.oddBackend && r.active == "odd" && hi == len(u)-1 {
				x[at+r.hd-1] = k.fromBits(k.bits(x[at+r.hd-1]) ^ 1)
			}
			if r.m.oneTooMany && at+r.hd < len(x) {
				x[at+r.hd] = k.fromBits(k.bits(x[at+r.hd]) ^ 1)
			}
		}
	}
}

// rotate rotates the compute-type head h forward with row (C then S).
func (r *normRef[T]) rotate(k *refKernel[T], h, row []float64) {
	fused := k.fused
	k.fused = r.m.fma
	defer func() { k.fused = fused }()
	for i := range k.half {
		a, b := k.pair(i)
		ya := k.rot(h[a], h[b], row[a], row[k.rd+a], false)
		yb := k.rot(h[b], h[a], row[b], row[k.rd+b], false)
		h[a], h[b] = ya, yb
	}
}

// scale is r for the vector v.
func (r *normRef[T]) scale(k *refKernel[T], v []float64) float64 {
	var ss float64
	switch {
	case r.m.seqSum:
		for _, x := range v {
			ss += float64(x * x)
		}
	case r.m.f32Sum:
		var p [8]float32
		for j, x := range v {
			p[j%8] += float32(x * x)
		}
		ss = float64(((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7])))
	default:
		var p [8]float64
		for j, x := range v {
			p[j%8] += float64(x * x)
		}
		ss = ((p[0] + p[4]) + (p[2] + p[6])) + ((p[1] + p[5]) + (p[3] + p[7]))
	}
	eps := r.eps
	if r.m.eps != 0 {
		eps = r.m.eps
	}
	rs := 1 / math.Sqrt(ss/float64(len(v))+eps)
	if !r.m.rF64 {
		rs = k.round(rs)
	}
	return rs
}

// normed is the normed value of x, in the compute type.
func (r *normRef[T]) normed(k *refKernel[T], x, rs, w float64) float64 {
	y := k.round(x * rs)
	switch r.kind {
	case "rms":
		y = k.round(y * w)
	case "gemma":
		y = k.round(y * k.round(1+w))
	}
	return y
}

// ---- the norm checks pass the reference ---------------------------------------------

func TestRunReferenceNorm(t *testing.T) {
	for _, c := range []struct {
		name        string
		kind, scope string
		after       bool
		dtype       string
		hd, rd      int
		layout      string
	}{
		{name: "f32/rms/head/neox", kind: "rms", scope: "head", dtype: "f32", hd: 8, rd: 8, layout: "neox"},
		{name: "f32/gemma/token/interleaved/partial", kind: "gemma", scope: "token", dtype: "f32", hd: 8, rd: 6, layout: "interleaved"},
		{name: "f32/l2/head/after", kind: "l2", scope: "head", after: true, dtype: "f32", hd: 6, rd: 6, layout: "interleaved"},
		{name: "bf16/rms/head/after", kind: "rms", scope: "head", after: true, dtype: "bf16", hd: 10, rd: 8, layout: "neox"},
		{name: "f16/gemma/token", kind: "gemma", scope: "token", dtype: "f16", hd: 8, rd: 8, layout: "neox"},
		{name: "f64/rms/token/after", kind: "rms", scope: "token", after: true, dtype: "f64", hd: 8, rd: 4, layout: "interleaved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			switch c.dtype {
			case "f32":
				Run(t, withNorm(newRef[float32](c.dtype, c.hd, c.rd, c.layout, 1, mutation{}), c.kind, c.scope, c.after, normMutation{}))
			case "f64":
				Run(t, withNorm(newRef[float64](c.dtype, c.hd, c.rd, c.layout, 1, mutation{}), c.kind, c.scope, c.after, normMutation{}))
			default:
				Run(t, withNorm(newRef[uint16](c.dtype, c.hd, c.rd, c.layout, 1, mutation{}), c.kind, c.scope, c.after, normMutation{}))
			}
		})
	}
}

// ---- the norm checks fail broken kernels ---------------------------------------------

func TestNormMutants(t *testing.T) {
	quietRapid(t)
	mut := func(kind, scope string, after bool, m normMutation, backends ...string) *suite[float32] {
		return mustSuite(t, withNorm(newRef[float32]("f32", 16, 12, "neox", 1, mutation{}, backends...), kind, scope, after, m))
	}
	canonical := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormCanonical(t, s) } }
	hf := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormHF(t, s) } }
	special := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormSpecial(t, s) } }
	strided := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormStrided(t, s, 10) } }
	panics := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormPanics(t, s) } }

	// The order of the sum shows in float64 results; a float32 r hides it
	// but where ss's last bits decide r's rounding (see checkNormCanonical).
	seq := mustSuite(t, withNorm(newRef[float64]("f64", 16, 12, "neox", 1, mutation{}), "rms", "head", false, normMutation{seqSum: true}))
	expectFail(t, "seq-sum/f64/canonical", "docs/contract.md §10 gives", func(t tb) { checkNormCanonical(t, seq) })
	expectFail(t, "f32-sum/canonical", "docs/contract.md §10 gives", canonical(mut("rms", "head", false, normMutation{f32Sum: true})))
	expectFail(t, "f32-sum/special", "a float32 sum of squares", special(mut("rms", "head", false, normMutation{f32Sum: true})))
	expectFail(t, "f32-sum/hf", "Hugging Face's rms norm", hf(mut("rms", "head", false, normMutation{f32Sum: true})))
	expectFail(t, "fma/canonical", "docs/contract.md §10 gives", canonical(mut("gemma", "head", false, normMutation{fma: true})))
	expectFail(t, "r-float64/canonical", "docs/contract.md §10 gives", canonical(mut("l2", "head", true, normMutation{rF64: true})))
	expectFail(t, "eps/canonical", "docs/contract.md §10 gives", canonical(mut("rms", "head", false, normMutation{eps: 1e-5})))
	expectFail(t, "per-head/canonical", "docs/contract.md §10 gives", canonical(mut("rms", "token", false, normMutation{perHead: true})))
	expectFail(t, "per-head/hf", "Hugging Face's rms norm", hf(mut("rms", "token", false, normMutation{perHead: true})))
	// (l2 commutes with the rotation, up to rounding: rms's weights do not.)
	expectFail(t, "after-as-before/hf", "Hugging Face's rms norm after", hf(mut("rms", "head", true, normMutation{afterAsBefore: true})))
	expectFail(t, "after-as-before/canonical", "docs/contract.md §10 gives", canonical(mut("l2", "head", true, normMutation{afterAsBefore: true})))
	expectFail(t, "one-too-many/strided", "backend", strided(mut("rms", "head", false, normMutation{oneTooMany: true})))
	expectFail(t, "odd-backend/strided", "backend odd", strided(mut("gemma", "token", false, normMutation{oddBackend: true}, "odd", "generic")))
	expectFail(t, "odd-backend/canonical", "backend odd", canonical(mut("rms", "head", true, normMutation{oddBackend: true}, "odd", "generic")))
	separate := func(s *suite[float32]) func(tb) { return func(t tb) { checkNormSeparate(t, s) } }
	expectFail(t, "only-f64/separate", "the norm alone and ApplyQK", separate(mut("rms", "head", false, normMutation{onlyF64: true})))
	expectFail(t, "only-f64/after/separate", "the norm alone and ApplyQK", separate(mut("gemma", "token", true, normMutation{onlyF64: true})))
	expectFail(t, "no-weight-check/panics", "did not panic", panics(mut("rms", "head", false, normMutation{noWeightCheck: true})))
	expectFail(t, "no-weight-check/token/panics", "with len(qw) one short panicked", panics(mut("gemma", "token", false, normMutation{noWeightCheck: true})))

	for _, kind := range []string{"rms", "gemma", "l2"} {
		for _, scope := range []string{"head", "token"} {
			for _, after := range []bool{false, true} {
				s := mut(kind, scope, after, normMutation{}, "odd", "generic")
				name := fmt.Sprintf("correct %s/%s/after=%v", kind, scope, after)
				expectPass(t, name+"/canonical", canonical(s))
				expectPass(t, name+"/hf", hf(s))
				expectPass(t, name+"/special", special(s))
				expectPass(t, name+"/strided", strided(s))
				expectPass(t, name+"/panics", panics(s))
				expectPass(t, name+"/separate", separate(s))
			}
		}
	}
}

// TestNormGuardCatches: a norm that reads the weight after the last one
// faults on a guard page.
func TestNormGuardCatches(t *testing.T) {
	if !guardSupported {
		t.Skip("SKIPPED: no guard pages on this OS")
	}
	quietRapid(t)
	// The stray read is of a float64 past the weights: for f64 weights
	// exactly the next one.
	bad := mustSuite(t, withNorm(newRef[float64]("f64", 8, 8, "neox", 1, mutation{}), "rms", "head", false, normMutation{strayRead: true}))
	expectFail(t, "stray-read", "memory fault", func(t tb) { checkNormGuard(t, bad) })
	good := mustSuite(t, withNorm(newRef[float64]("f64", 8, 8, "neox", 1, mutation{}), "rms", "head", false, normMutation{}))
	expectPass(t, "correct", func(t tb) { checkNormGuard(t, good) })
}

// A Norm that does not fit the package is refused.
func TestNormState(t *testing.T) {
	k := withNorm(newRef[float32]("f32", 8, 8, "neox", 1, mutation{}), "rms", "head", false, normMutation{})
	for _, c := range []struct {
		name string
		edit func(n *Norm[float32])
	}{
		{"kind", func(n *Norm[float32]) { n.Kind = "layer" }},
		{"scope", func(n *Norm[float32]) { n.Scope = "" }},
		{"eps", func(n *Norm[float32]) { n.Eps = math.NaN() }},
		{"K", func(n *Norm[float32]) { n.K = [2]int{} }},
		{"64-bit call on f32", func(n *Norm[float32]) {
			n.ApplyNormQK64 = func(Table[float32], []float32, Strides, []float64, []float32, Strides, []float64, []int32) {}
		}},
		{"no call", func(n *Norm[float32]) { n.ApplyNormQK32 = nil }},
	} {
		kk := k
		n := *k.Norm
		c.edit(&n)
		kk.Norm = &n
		if _, err := mustSuite(t, kk).normState(); err == nil {
			t.Errorf("%s: a bad Norm was accepted", c.name)
		}
	}
	if ok, err := mustSuite(t, k).normState(); !ok || err != nil {
		t.Errorf("a good Norm: %v, %v", ok, err)
	}
}
