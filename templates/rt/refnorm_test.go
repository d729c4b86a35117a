package rt

import (
	"math"
	"sync"
	"unsafe"
)

// rt's tests install these pure Go QK-norm kernels (refkernels_test.go);
// generated packages get theirs from the vector layer's purego target.

// The pure Go QK-norm kernels: docs/contract.md §10 written out, for every
// shape and variant, in the compute type with float64 for r.

// normShape is what a pure Go norm kernel needs to know of its shape and
// variant.
type normShape struct {
	hd, rd       int
	neox         bool
	kind         int
	token, after bool
}

// genericNorms returns the pure Go norm kernels (norm and normOnly) of the
// shape (hd, rd, neox) for the variants vs.
func genericNorms(hd, rd int, neox bool, vs ...int) (norm, only [normVariants]normKernel) {
	for _, v := range vs {
		ns := &normShape{hd: hd, rd: rd, neox: neox, kind: v / 4, token: v%4/normToken == 1, after: v%2 == normAfter}
		norm[v] = func(x []elem, stride, n int, r *comp, w []comp, eps float64) {
			ns.heads(x, stride, n, r, w, eps, true)
		}
		only[v] = func(x []elem, stride, n int, r *comp, w []comp, eps float64) {
			ns.heads(x, stride, n, r, w, eps, false)
		}
	}
	return norm, only
}

// normSums are the 8 partial sums of squares of a normed vector: value j
// adds its square to s[j mod 8], in increasing j.
type normSums [8]float64

// add adds the squares of the values v to s: v holds values 0…len(v)−1 of
// the vector counted from a multiple of 8.
func (s *normSums) add(v []comp) {
	s0, s1, s2, s3, s4, s5, s6, s7 := s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]
	j := 0
	for ; j+8 <= len(v); j += 8 {
		g := (*[8]comp)(v[j:])
		// float64(a*a): exact for a float32 a; the conversion keeps a
		// float64 product from being fused into the sum.
		a0, a1, a2, a3 := float64(g[0]), float64(g[1]), float64(g[2]), float64(g[3])
		a4, a5, a6, a7 := float64(g[4]), float64(g[5]), float64(g[6]), float64(g[7])
		s0 += float64(a0 * a0)
		s1 += float64(a1 * a1)
		s2 += float64(a2 * a2)
		s3 += float64(a3 * a3)
		s4 += float64(a4 * a4)
		s5 += float64(a5 * a5)
		s6 += float64(a6 * a6)
		s7 += float64(a7 * a7)
	}
	*s = normSums{s0, s1, s2, s3, s4, s5, s6, s7}
	for k := 0; j < len(v); j, k = j+1, k+1 {
		a := float64(v[j])
		s[k] += float64(a * a)
	}
}

// scale returns r = 1/sqrt(ss/n + eps) for the n values summed in s, each
// float64 operation rounded, then rounded once to the compute type.
func (s *normSums) scale(n int, eps float64) comp {
	ss := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
	m := ss / float64(n)
	v := m + eps
	q := math.Sqrt(v)
	return comp(1 / q)
}

// weigh scales v by rs and weighs it by w (rms, gemma; l2 has none), in
// place, in the compute type.
func (ns *normShape) weigh(v []comp, rs comp, w []comp) {
	switch ns.kind {
	case normRMS:
		w = w[:len(v)]
		for j := range v {
			v[j] = comp(comp(v[j]*rs) * w[j])
		}
	case normGemma:
		w = w[:len(v)]
		for j := range v {
			g := comp(1 + w[j])
			v[j] = comp(comp(v[j]*rs) * g)
		}
	default:
		for j := range v {
			v[j] = comp(v[j] * rs)
		}
	}
}

// pair returns the indices of pair i.
func (ns *normShape) pair(i int) (a, b int) {
	if ns.neox {
		return i, i + ns.rd/2
	}
	return 2 * i, 2*i + 1
}

// rotate turns v forward by the row r, in place, in the compute type: the
// vector an after-rotation norm normalizes.
func (ns *normShape) rotate(v, r []comp) {
	for i := 0; i < ns.rd/2; i++ {
		a, b := ns.pair(i)
		c, s := r[a], r[ns.rd+b]
		xa, xb := v[a], v[b]
		v[a] = comp(xa*c) - comp(xb*s)
		v[b] = comp(xb*c) + comp(xa*s)
	}
}

// storeRotate turns v forward by the row r into h, narrowed once.
func (ns *normShape) storeRotate(h []elem, v, r []comp) {
	for i := 0; i < ns.rd/2; i++ {
		a, b := ns.pair(i)
		c, s := r[a], r[ns.rd+b]
		ya, yb := v[a], v[b]
		h[a] = narrow(comp(ya*c) - comp(yb*s))
		h[b] = narrow(comp(yb*c) + comp(ya*s))
	}
	for j := ns.rd; j < ns.hd; j++ {
		h[j] = narrow(v[j])
	}
}

// normPool holds the pure Go norm's head buffer: the longest head of the
// package's shapes.
var normPool = sync.Pool{New: func() any {
	m := 0
	for _, s := range shapeList {
		m = max(m, s.HeadDim)
	}
	v := make([]comp, m)
	return &v
}}

// heads normalizes n heads of x, head h at x[h·stride:], and (rotate)
// turns them by the row r: each head alone, or the n heads as one vector
// (token scope), head h weighted by w[h·HeadDim:].
func (ns *normShape) heads(x []elem, stride, n int, r *comp, w []comp, eps float64, rotate bool) {
	if n <= 0 {
		return
	}
	buf := normPool.Get().(*[]comp)
	defer normPool.Put(buf)
	v := (*buf)[:ns.hd]
	var row []comp
	if rotate {
		row = unsafe.Slice(r, 2*ns.rd)
	}
	head := func(h int) []elem { return x[h*stride:][:ns.hd] }
	load := func(h int) {
		for j, e := range head(h) {
			v[j] = widen(e)
		}
		if ns.after && rotate {
			ns.rotate(v, row)
		}
	}
	store := func(h int) {
		if !ns.after && rotate {
			ns.storeRotate(head(h), v, row)
			return
		}
		out := head(h)
		for j := range v {
			out[j] = narrow(v[j])
		}
	}
	if ns.token {
		var s normSums
		for h := range n {
			load(h)
			s.add(v)
		}
		rs := s.scale(n*ns.hd, eps)
		for h := range n {
			load(h)
			var wh []comp
			if ns.kind != normL2 {
				wh = w[h*ns.hd:]
			}
			ns.weigh(v, rs, wh)
			store(h)
		}
		return
	}
	for h := range n {
		load(h)
		var s normSums
		s.add(v)
		ns.weigh(v, s.scale(ns.hd, eps), w)
		store(h)
	}
}
