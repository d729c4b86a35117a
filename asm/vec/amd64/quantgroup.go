package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The q8_0 family's groups (vec.QuantGrouper) at both levels: four blocks
// a group, a group vector holding blocks 0…3 in the dwords 0…3 of every
// 128-bit lane, so that a block's value is one VPSHUFD away and the four
// f16 scales are the low XMM's words 0, 2, 4, 6. (The hand-written
// AVX-512 kernel this replaces grouped four blocks the same way.)

// QuantGroup is four blocks: one block a dword of a 128-bit lane.
func (t *Target) QuantGroup() int { return 4 }

// MaxGroup is VPMAXUD of each block's members (a block reduced before the
// next is made), a transpose of the four
// blocks' dwords within each 128-bit lane reducing them as it goes
// (VPUNPCKL/HDQ, then L/HQDQ, each pair maxed), then VPMAXUD of the
// register with its 128-bit lanes swapped (VSHUFI64X2, VPERM2I128) until
// every 128-bit lane holds the four maxima.
func (t *Target) MaxGroup(block func(i int) []vec.V) vec.V {
	c := t.c
	m := make([]reg.VecVirtual, t.QuantGroup())
	for i := range m {
		xs := block(i)
		m[i] = t.materialize(xs[0].(*value))
		for _, x := range xs[1:] {
			d := t.same(m[i])
			c.VPMAXUD(t.materialize(x.(*value)), m[i], d)
			m[i] = d
		}
	}
	// pair is max(lo(a, b), hi(a, b)): Intel's unpack of src1 = a, src2 = b.
	pair := func(lo, hi func(...operand.Op), a, b reg.VecVirtual) reg.VecVirtual {
		l, h, d := t.same(a), t.same(a), t.same(a)
		lo(b, a, l)
		hi(b, a, h)
		c.VPMAXUD(h, l, d)
		return d
	}
	p01 := pair(c.VPUNPCKLDQ, c.VPUNPCKHDQ, m[0], m[1]) // dwords: 0 1 0 1
	p23 := pair(c.VPUNPCKLDQ, c.VPUNPCKHDQ, m[2], m[3]) // 2 3 2 3
	w := pair(c.VPUNPCKLQDQ, c.VPUNPCKHQDQ, p01, p23)   // 0 1 2 3
	step := func(shuf func(r, s reg.VecVirtual)) {
		s, d := t.same(w), t.same(w)
		shuf(w, s)
		c.VPMAXUD(s, w, d)
		w = d
	}
	if t.l.masked {
		step(func(r, s reg.VecVirtual) { c.VSHUFI64X2(operand.U8(0x4e), r, r, s) })
		step(func(r, s reg.VecVirtual) { c.VSHUFI64X2(operand.U8(0xb1), r, r, s) })
	} else {
		step(func(r, s reg.VecVirtual) { c.VPERM2I128(operand.U8(0x01), r, r, s) })
	}
	return &value{r: w, w: t.lanes(), e: vec.F32}
}

// Spread is VPSHUFD of dword i into every dword of each 128-bit lane.
func (t *Target) Spread(v vec.V, i int) vec.V {
	x := v.(*value)
	r := t.materialize(x)
	d := t.same(r)
	t.c.VPSHUFD(operand.U8(0x55*i), r, d)
	return &value{r: d, w: x.w, e: vec.F32}
}

// StoreU16Lane is VPEXTRW of word 2i (dword i's low half) of the low XMM.
func (t *Target) StoreU16Lane(a vec.Arr, v vec.V, i int) {
	r := t.materialize(v.(*value))
	t.c.VPEXTRW(operand.U8(2*i), r.AsX(), t.mem(a, 0))
}
