package purego

import (
	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// head is the current head of a loop.
type head struct{ t *Target }

// Pairs runs body for each pair: written out, or for a head of more than
// unrollMax rotary values in a loop over chunks of chunkPairs pairs.
func (h *head) Pairs(_ []vec.Arr, body func(vec.Block)) {
	s := h.t.f.Shape
	members := []int{0} // the first value of each member's run, from a pair's first member
	span, stride := chunkPairs, 2
	if s.NeoX {
		members, stride = []int{0, s.Half()}, 1
	} else {
		span = 2 * chunkPairs
	}
	h.run(s.Half(), 2*s.Half(), members, span, func(i int) []int {
		if s.NeoX {
			return []int{i, i + s.Half()}
		}
		return []int{stride * i, stride*i + 1}
	}, true, body)
}

// Values runs body for each value of [lo, hi).
func (h *head) Values(lo, hi int, _ []vec.Arr, body func(vec.Block)) {
	h.run(hi-lo, hi-lo, []int{lo}, 2*chunkPairs, func(i int) []int { return []int{lo + i} }, false, body)
}

// run emits body for the n units (pairs or values; values count them)
// whose values at must give: unrolled, or in a loop over chunks of span
// values of each member's run (regions from members).
func (h *head) run(n, values int, members []int, span int, at func(i int) []int, pairs bool, body func(vec.Block)) {
	t := h.t
	per := span // units a chunk: a value run's values, an interleaved chunk's pairs are half
	if pairs && len(members) == 1 {
		per = span / 2
	}
	chunks := n / per
	if values <= unrollMax || chunks < 2 {
		for i := range n {
			t.regs = 0
			body(&blk{t: t, at: at(i), pairs: pairs})
		}
		return
	}
	k := t.fresh("k")
	t.open()
	c := &chunk{k: k, span: span, members: members, views: map[chunkKey]string{}}
	for i := range per {
		t.regs = 0
		body(&blk{t: t, at: at(i), pairs: pairs, c: c})
	}
	t.emit(jen.For(jen.Id(k).Op(":=").Range().Lit(chunks)).Block(t.close()...))
	for i := chunks * per; i < n; i++ {
		t.regs = 0
		body(&blk{t: t, at: at(i), pairs: pairs})
	}
}

// chunk is an iteration of a chunk loop: value j of a member's run at
// base is value base + span·k + j of the head.
type chunk struct {
	k       string
	span    int
	members []int
	views   map[chunkKey]string
}

type chunkKey struct {
	p    *ptr
	base int
}

// blk is one pair (at: its two values) or one value of a head, relative to
// the chunk c when in a chunk loop.
type blk struct {
	t     *Target
	at    []int
	pairs bool
	c     *chunk
}

// elem is value j of a (j relative to the chunk's runs in a chunk loop).
func (k *blk) elem(a vec.Arr, j int) jen.Code {
	t := k.t
	view := t.viewOf(a)
	if k.c == nil {
		return jen.Id(view).Index(jen.Lit(a.Off + j))
	}
	base := k.c.members[0]
	for _, m := range k.c.members {
		if j >= m {
			base = m
		}
	}
	key := chunkKey{a.P.(*ptr), a.Off + base}
	v, ok := k.c.views[key]
	if !ok {
		v = t.fresh("c")
		k.c.views[key] = v
		from := jen.Lit(k.c.span).Op("*").Id(k.c.k)
		if key.base != 0 {
			from = jen.Lit(key.base).Op("+").Add(from)
		}
		t.cur.pre = append(t.cur.pre, jen.Id(v).Op(":=").Parens(jen.Op("*").Index(jen.Lit(k.c.span)).Id(a.Elem.Go)).Call(jen.Id(view).Index(from.Op(":"))))
	}
	return jen.Id(v).Index(jen.Lit(j - base))
}

// Load is the block's values of a, widened: read where they are used.
func (k *blk) Load(a vec.Arr) []vec.V {
	vs := make([]vec.V, len(k.at))
	for i, j := range k.at {
		vs[i] = &val{e: k.t.widen(a.Elem, k.elem(a, j))}
	}
	return vs
}

// Store assigns the block's values of a in one statement: every value it
// reads is read before any is written.
func (k *blk) Store(a vec.Arr, ys []vec.V) {
	lhs, rhs := make([]jen.Code, len(ys)), make([]jen.Code, len(ys))
	for i, j := range k.at {
		lhs[i], rhs[i] = k.elem(a, j), k.t.narrow(a.Elem, ys[i].(*val).e)
	}
	k.t.emit(jen.List(lhs...).Op("=").List(rhs...))
}

// Partners are the pair's members the other way round, in variables:
// each is read twice.
func (k *blk) Partners(xs []vec.V) []vec.V {
	m := k.t.materialize(xs)
	copy(xs, m)
	return []vec.V{m[1], m[0]}
}

// Table is C[a] for both members and S[b] for both, negated for a:
// S[a] = −S[b].
func (k *blk) Table(row vec.Arr) (c, s []vec.V, neg []bool) {
	a, b := k.at[0], k.at[1]
	cv := &val{e: k.elem(row, a), v: true}
	sv := &val{e: k.elem(row.At(k.t.f.Shape.RotaryDim), b), v: true}
	return []vec.V{cv, cv}, []vec.V{sv, sv}, []bool{true, false}
}
