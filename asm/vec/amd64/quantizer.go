package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The q8_0 family's blocks of 32 values (vec.Quantizer): 2 ZMM members at
// AVX-512, 4 YMM at AVX2, a loop over a head's blocks.

// Blocks32 loops over the n blocks, src and dst walked by pointer
// registers of their own; one block (a head of one q8_0 group) is body
// at src and dst, no loop.
func (t *Target) Blocks32(_ vec.Head, n int, src vec.Arr, ss int, dst vec.Arr, ds int, body func(s, d vec.Arr)) {
	switch n {
	case 0:
		return
	case 1:
		body(src, dst)
		return
	}
	c := t.c
	s, d := c.GP64(), c.GP64()
	c.LEAQ(t.mem(src, 0), s)
	c.LEAQ(t.mem(dst, 0), d)
	cnt := c.GP64()
	c.MOVQ(operand.U32(n), cnt)
	top := t.label("block")
	c.Label(top)
	body(vec.Arr{Name: src.Name, Elem: src.Elem, P: &ptr{operand.Mem{Base: s}}},
		vec.Arr{Name: dst.Name, Elem: dst.Elem, P: &ptr{operand.Mem{Base: d}}})
	c.ADDQ(operand.U32(ss*src.Elem.Size), s)
	c.ADDQ(operand.U32(ds*dst.Elem.Size), d)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(top))
}

// members is how many registers a block of 32 float32 takes.
func (t *Target) members() int { return 32 / t.Lanes(vec.F32) }

// LoadF32x32: registers at AVX-512; at AVX2 (16 registers) memory
// operands, read where they are used.
func (t *Target) LoadF32x32(a vec.Arr) []vec.V {
	xs := make([]vec.V, t.members())
	for i := range xs {
		if !t.l.masked {
			xs[i] = &value{m: t.mem(a, 0).Offset(i * t.l.bytes), w: t.lanes()}
			continue
		}
		r := t.reg(t.lanes())
		t.c.VMOVUPS(t.mem(a, 0).Offset(i*t.l.bytes), r)
		xs[i] = &value{r: r, w: t.lanes(), e: vec.F32}
	}
	return xs
}

func (t *Target) StoreF32x32(a vec.Arr, xs []vec.V) {
	for i, x := range xs {
		t.c.VMOVUPS(t.materialize(x.(*value)), t.mem(a, 0).Offset(i*t.l.bytes))
	}
}

// LoadI8x32 is VPMOVSXBD of each member's bytes.
func (t *Target) LoadI8x32(a vec.Arr) []vec.V {
	per := t.lanes()
	qs := make([]vec.V, t.members())
	for i := range qs {
		r := t.reg(per)
		t.c.VPMOVSXBD(t.mem(a, 0).Offset(i*per), r)
		qs[i] = &value{r: r, w: per, e: vec.F32}
	}
	return qs
}

// StoreI8x32 is VPMOVDB at AVX-512; at AVX2 the four members packed with
// signed saturation (each lane is in range) and the 128-bit lanes' dwords
// put in order.
func (t *Target) StoreI8x32(a vec.Arr, qs []vec.V) {
	c := t.c
	m := t.mem(a, 0)
	r := make([]reg.VecVirtual, len(qs))
	for i, q := range qs {
		r[i] = t.materialize(q.(*value))
	}
	if t.l.masked {
		for i := range r {
			c.VPMOVDB(r[i], m.Offset(16*i))
		}
		return
	}
	p01, p23, b := c.YMM(), c.YMM(), c.YMM()
	c.VPACKSSDW(r[1], r[0], p01)
	c.VPACKSSDW(r[3], r[2], p23)
	c.VPACKSSWB(p23, p01, b)
	hi, lo, up := c.XMM(), c.XMM(), c.XMM()
	c.VEXTRACTI128(operand.U8(1), b, hi)
	c.VPUNPCKLDQ(hi, b.AsX(), lo)
	c.VPUNPCKHDQ(hi, b.AsX(), up)
	c.VMOVDQU(lo, m)
	c.VMOVDQU(up, m.Offset(16))
}

// LoadU16 is the 16 bits at a zero-extended and broadcast.
func (t *Target) LoadU16(a vec.Arr) vec.V {
	x := t.small(t.mem(a, 0), 2)
	d := t.reg(t.lanes())
	t.c.VPBROADCASTD(x, d)
	return &value{r: d, w: t.lanes(), e: vec.F32}
}

// StoreU16 is VPEXTRW of lane 0.
func (t *Target) StoreU16(a vec.Arr, v vec.V) {
	r := t.materialize(v.(*value))
	t.c.VPEXTRW(operand.U8(0), r.AsX(), t.mem(a, 0))
}

// MaxAcross is VPMAXUD of the members, then of the register with its
// halves, quarters, … swapped, until every lane holds the maximum.
func (t *Target) MaxAcross(xs []vec.V) vec.V { return t.across(xs, t.c.VPMAXUD) }

// across reduces the members xs by op (operands a, b, d: d = op(a, b) lane by lane,
// associative and commutative), then the register with its halves,
// quarters, … swapped, until every lane holds the reduction of all.
func (t *Target) across(xs []vec.V, op func(ops ...operand.Op)) vec.V {
	c := t.c
	m := t.materialize(xs[0].(*value))
	for _, x := range xs[1:] {
		d := t.same(m)
		op(t.materialize(x.(*value)), m, d)
		m = d
	}
	step := func(shuf func(r, s reg.VecVirtual)) {
		s, d := t.same(m), t.same(m)
		shuf(m, s)
		op(s, m, d)
		m = d
	}
	if t.l.masked {
		step(func(r, s reg.VecVirtual) { c.VSHUFI64X2(operand.U8(0x4e), r, r, s) })
		step(func(r, s reg.VecVirtual) { c.VSHUFI64X2(operand.U8(0xb1), r, r, s) })
	} else {
		step(func(r, s reg.VecVirtual) { c.VPERM2I128(operand.U8(0x01), r, r, s) })
	}
	step(func(r, s reg.VecVirtual) { c.VPSHUFD(operand.U8(0x4e), r, s) })
	step(func(r, s reg.VecVirtual) { c.VPSHUFD(operand.U8(0xb1), r, s) })
	return &value{r: m, w: t.lanes(), e: vec.F32}
}

// Iota is member i's positions 1…32, a constant of the table.
func (t *Target) Iota(i, n int) vec.V {
	per := 32 / n
	var s [8]uint64
	for l := 0; l < per; l += 2 {
		s[l/2] = uint64(i*per+l+1) | uint64(i*per+l+2)<<32
	}
	return &value{m: t.slot(s), w: per, e: vec.F32}
}

// If tests m (KORTESTW, VPTEST) and jumps over then to els.
func (t *Target) If(m vec.Mask, then, els func()) {
	c := t.c
	k := m.(*lanes)
	if t.l.masked {
		c.KORTESTW(k.k, k.k)
	} else {
		c.VPTEST(k.k, k.k)
	}
	other, end := t.label("else"), t.label("endif")
	c.JZ(operand.LabelRef(other))
	then()
	c.JMP(operand.LabelRef(end))
	c.Label(other)
	els()
	c.Label(end)
}
