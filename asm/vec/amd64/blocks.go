package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// unrollMax is the longest run of values (a head's rotary values, counting
// neox partners, or a run of plain values) emitted fully unrolled. Longer
// runs loop over chunks of loopBlocks full-width blocks: avo's register
// allocation takes time quadratic in a function's length (HeadDim 4096
// fully unrolled: ~4 s for f32, ~20 s for neox with a bf16 "to" kernel),
// while a loop keeps every function as short as a head of a few hundred
// values. 256 keeps every head dimension in use (64…256) unrolled.
const unrollMax = 256

// loopBlocks is how many full-width blocks one iteration of a chunk loop
// handles: at AVX2 f32, 64 values of each head.
const loopBlocks = 8

// block is a run of w consecutive values from j: of a values run, or of
// pairs (interleaved: whole pairs, each partner by a lane swap; neox: the
// first members j…j+w−1, whose partners are R/2 further on).
type block struct{ j, w int }

// split cuts span values from start into blocks of at most a register:
// full-width blocks, then the tail as one masked block or as narrower
// registers, widest first.
func (t *Target) split(start, span int) []block {
	lanes := t.lanes()
	var bs []block
	for j := 0; j < span; {
		w := min(lanes, span-j)
		if !t.l.masked {
			for w = lanes; w > span-j; w /= 2 {
			}
		}
		bs = append(bs, block{start + j, w})
		j += w
	}
	return bs
}

// pairBlocks are the blocks of a head's pairs.
func (t *Target) pairBlocks() []block {
	s := t.f.Shape
	if s.NeoX {
		return t.split(0, s.Half())
	}
	return t.split(0, s.RotaryDim)
}

// head is the head, or the two heads, of one loop iteration.
type head struct {
	t      *Target
	n      int                  // heads: 1, or 2 (the second's pointers in second)
	second map[*ptr]operand.Mem // the second head's pointer of each walked array
	tab    map[int][2]*value    // the table values of the current block, shared by the heads
}

func (h *head) Pairs(arrs []vec.Arr, body func(vec.Block)) {
	h.run(h.t.pairBlocks(), arrs, h.t.f.Shape.NeoX, true, body)
}

func (h *head) Values(lo, hi int, arrs []vec.Arr, body func(vec.Block)) {
	h.run(h.t.split(lo, hi-lo), arrs, false, false, body)
}

// run emits body for each block of bs and each head, in a loop over
// chunks when the blocks span more than unrollMax values (twice, when each
// block also reaches its partners).
func (h *head) run(bs []block, arrs []vec.Arr, partners, pairs bool, body func(vec.Block)) {
	t, c := h.t, h.t.c
	each := func(b block) {
		h.tab = map[int][2]*value{}
		for o := range h.n {
			body(&blk{h: h, b: b, o: o, pairs: pairs})
		}
	}
	lanes := t.lanes()
	full := 0
	for full < len(bs) && bs[full].w == lanes {
		full++
	}
	values := 0
	if len(bs) > 0 {
		values = bs[len(bs)-1].j + bs[len(bs)-1].w - bs[0].j
	}
	if partners {
		values *= 2
	}
	times := full / loopBlocks
	if values <= unrollMax || times < 2 || t.pre != nil {
		for _, b := range bs {
			each(b)
		}
		return
	}
	// The chunk loop: every pointer the body uses moved to the chunk.
	start, step := bs[0].j, loopBlocks*lanes
	var moved []*ptr
	saved := map[*ptr]operand.Mem{}
	move := func(p *ptr, m operand.Mem, second bool) operand.Mem {
		if !second {
			moved = append(moved, p)
		}
		return operand.Mem{Base: t.lea(m)}
	}
	sizes := map[*ptr]int{}
	for _, a := range arrs {
		p := a.P.(*ptr)
		if _, ok := saved[p]; ok {
			continue
		}
		saved[p] = t.mem(vec.Arr{Elem: a.Elem, P: p}, 0)
		sizes[p] = a.Elem.Size
		t.cur[p] = move(p, saved[p].Offset(start*a.Elem.Size), false)
	}
	second := h.second
	if second != nil {
		h.second = map[*ptr]operand.Mem{}
		for _, p := range moved {
			if m, ok := second[p]; ok {
				h.second[p] = move(p, m.Offset(start*sizes[p]), true)
			}
		}
	}
	cnt := c.GP64()
	c.MOVQ(operand.U32(times), cnt)
	lbl := t.label("chunk")
	c.Label(lbl)
	c.Commentf("values %d…%d, %d at a time: indices from the current %d", start, start+times*step-1, step, step)
	for i := range loopBlocks {
		each(block{i * lanes, lanes})
	}
	for _, p := range moved {
		c.ADDQ(operand.U32(step*sizes[p]), t.cur[p].Base)
		if m, ok := h.second[p]; ok {
			c.ADDQ(operand.U32(step*sizes[p]), m.Base)
		}
	}
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(lbl))
	for _, p := range moved {
		delete(t.cur, p)
	}
	h.second = second
	for _, b := range bs[times*loopBlocks:] {
		each(b)
	}
}

// blk is one block of one head.
type blk struct {
	h     *head
	b     block
	o     int  // the head of the iteration: 0, or 1 (the second)
	pairs bool // a pairs block
}

// addr is the address of value j of a in the block's head.
func (k *blk) addr(a vec.Arr, j int) operand.Mem {
	if k.o > 0 {
		if m, ok := k.h.second[a.P.(*ptr)]; ok {
			return m.Offset((a.Off + j) * a.Elem.Size)
		}
	}
	return k.h.t.mem(a, j)
}

// at are the first values of the block's members.
func (k *blk) at() []int {
	if k.pairs && k.h.t.f.Shape.NeoX {
		return []int{k.b.j, k.b.j + k.h.t.f.Shape.Half()}
	}
	return []int{k.b.j}
}

// Load reads a's values of the block; those of an array read once, in the
// compute type, as operands for the arithmetic to read from memory.
func (k *blk) Load(a vec.Arr) []vec.V {
	t := k.h.t
	var vs []vec.V
	for _, j := range k.at() {
		if a.Once && a.Elem == t.f.C() {
			vs = append(vs, t.operand(k.addr(a, j), k.b.w))
		} else {
			vs = append(vs, t.loadAt(a.Elem, k.addr(a, j), k.b.w))
		}
	}
	return vs
}

func (k *blk) Store(a vec.Arr, ys []vec.V) {
	for i, j := range k.at() {
		k.h.t.storeAt(a.Elem, ys[i].(*value), k.addr(a, j), k.b.w)
	}
}

// Partners: interleaved, the block with adjacent lanes swapped; neox, the
// other member.
func (k *blk) Partners(xs []vec.V) []vec.V {
	if len(xs) == 2 {
		return []vec.V{xs[1], xs[0]}
	}
	return []vec.V{k.h.t.swap(xs[0].(*value))}
}

// Table reads C and S of the block: preloaded registers; for two heads or
// two members (neox, which uses the first members' values for both,
// C[b] = C[a] and S[b] = −S[a]) registers loaded once per block; else
// operands straight from memory where a register-wide read stays in the
// row.
func (k *blk) Table(row vec.Arr) (c, s []vec.V, neg []bool) {
	t, h, b := k.h.t, k.h, k.b
	cs, ok := t.pre[b.j]
	if !ok {
		cs, ok = h.tab[b.j]
	}
	if !ok {
		crow, srow := row, row.At(t.f.Shape.RotaryDim)
		if h.n > 1 || t.f.Shape.NeoX {
			cs = [2]*value{t.loadAt(row.Elem, t.mem(crow, b.j), b.w), t.loadAt(row.Elem, t.mem(srow, b.j), b.w)}
			h.tab[b.j] = cs
		} else {
			cs = [2]*value{t.operand(t.mem(crow, b.j), b.w), t.operand(t.mem(srow, b.j), b.w)}
		}
	}
	if t.f.Shape.NeoX {
		return []vec.V{cs[0], cs[0]}, []vec.V{cs[1], cs[1]}, []bool{false, true}
	}
	return []vec.V{cs[0]}, []vec.V{cs[1]}, []bool{false}
}

// operand is the compute-type values at m for a block of w: the memory
// itself when a register-wide read stays in the block, else a load.
func (t *Target) operand(m operand.Mem, w int) *value {
	if t.full(w) {
		return &value{m: m, w: w}
	}
	return t.loadAt(t.f.C(), m, w)
}

// full reports whether a block of w values fills its register.
func (t *Target) full(w int) bool {
	if t.l.masked {
		return w == t.lanes()
	}
	b := w * t.f.C().Size
	return b == 32 || b == 16
}

// value is a vector of w values of e (the compute type when unset): a
// register, or (r nil) a register-wide memory operand.
type value struct {
	r reg.VecVirtual
	m operand.Mem
	w int
	e vec.Elem
}

// elem is v's type.
func (t *Target) elem(v *value) vec.Elem {
	if v.e == (vec.Elem{}) {
		return t.f.C()
	}
	return v.e
}

func (v *value) op() operand.Op {
	if v.r == nil {
		return v.m
	}
	return v.r
}

// reg is a fresh register for w compute values: a ZMM at AVX-512, else the
// narrowest that holds them.
func (t *Target) reg(w int) reg.VecVirtual { return t.regBytes(w * t.f.C().Size) }

// Lanes is how many values of e a register holds.
func (t *Target) Lanes(e vec.Elem) int { return t.l.bytes / e.Size }

func (t *Target) regBytes(b int) reg.VecVirtual {
	switch {
	case t.l.masked:
		return t.c.ZMM()
	case b > 16:
		return t.c.YMM()
	}
	return t.c.XMM()
}

// sizedTo is k, a register made at the widest width (a constant, a
// norm's r), at v's width: at AVX2 a narrower tail block is in an XMM or
// YMM register.
func (t *Target) sizedTo(k, v reg.VecVirtual) reg.VecVirtual {
	switch v.Size() {
	case 16:
		return k.AsX().(reg.VecVirtual)
	case 32:
		return k.AsY().(reg.VecVirtual)
	}
	return k.AsZ().(reg.VecVirtual)
}

// mask is the opmask selecting the low w lanes (AVX-512 tails), made once
// before the function's loops.
func (t *Target) mask(w int) reg.OpmaskVirtual {
	if !t.l.masked || w >= t.lanes() {
		return nil
	}
	k, ok := t.masks[w]
	if !ok {
		k = t.c.K()
		t.hoist(func() {
			g := t.c.GP32()
			t.c.MOVL(operand.U32(1<<w-1), g)
			t.c.KMOVW(g, k)
		})
		t.masks[w] = k
	}
	return k
}
