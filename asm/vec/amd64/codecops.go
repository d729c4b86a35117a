package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The codec operations (vec.Codec) on the 32-bit lanes of float32
// registers: VEX forms at AVX2 (masks are registers of all-ones lanes),
// EVEX forms at AVX-512 (masks are opmask registers).

// U32 is v in every lane: at AVX-512 a register made once before the
// loops (32 of them); at AVX2 (16) a slot of the constant table, read as
// an operand where it is used.
func (t *Target) U32(v uint32) vec.V {
	if t.l.masked {
		return &value{r: t.constant(uint64(v), 4), w: t.Lanes(vec.F32), e: vec.F32}
	}
	u := uint64(v) | uint64(v)<<32
	return &value{m: t.slot([8]uint64{u, u, u, u, u, u, u, u}), w: t.Lanes(vec.F32), e: vec.F32}
}

// AsU32 and AsF32 are no instruction: a register's bits are both.
func (t *Target) AsU32(a vec.V) vec.V { return a }
func (t *Target) AsF32(a vec.V) vec.V { return a }

// pair is a in a register and b as an operand (a memory operand stays
// one), at the narrower one's width, and a fresh register d of that width.
func (t *Target) pair(a, b vec.V) (x reg.VecVirtual, y operand.Op, d reg.VecVirtual, w int) {
	va, vb := a.(*value), b.(*value)
	ra := t.load(va)
	w = min(va.w, vb.w)
	d = t.regBytes(w * 4)
	y = vb.m
	if vb.r != nil {
		y = t.sizedTo(vb.r, d)
	}
	return t.sizedTo(ra, d), y, d, w
}

// load is v in a register: v's own, or a fresh one loaded from v's
// memory operand, v left as it is (a block's values read again where they
// are used, at AVX2, rather than kept in a register).
func (t *Target) load(v *value) reg.VecVirtual {
	if v.r != nil {
		return v.r
	}
	return t.loadAt(t.elem(v), v.m, v.w).r
}

// comm is a and b with a register first when either is one.
func comm(a, b vec.V) (vec.V, vec.V) {
	if a.(*value).r == nil {
		return b, a
	}
	return a, b
}

// int2 is d = op(a, b) (Intel's dst = src1 op src2 with src1 = a, avo's
// operands reversed), EVEX at AVX-512.
func (t *Target) int2(evex, vex func(...operand.Op), a, b vec.V) vec.V {
	x, y, d, w := t.pair(a, b)
	if t.l.masked {
		evex(y, x, d)
	} else {
		vex(y, x, d)
	}
	return &value{r: d, w: w, e: vec.F32}
}

func (t *Target) Or(a, b vec.V) vec.V {
	a, b = comm(a, b)
	return t.int2(t.c.VPORD, three(t.c.VPOR), a, b)
}

// AndNot is a &^ b: VPANDN computes ¬src1 & src2, src1 = b.
func (t *Target) AndNot(a, b vec.V) vec.V { return t.int2(t.c.VPANDND, three(t.c.VPANDN), b, a) }

func (t *Target) Add32(a, b vec.V) vec.V {
	a, b = comm(a, b)
	return t.int2(t.c.VPADDD, t.c.VPADDD, a, b)
}
func (t *Target) Sub32(a, b vec.V) vec.V { return t.int2(t.c.VPSUBD, t.c.VPSUBD, a, b) }

// shift is d = a shifted by the constant n.
func (t *Target) shift(op func(...operand.Op), a vec.V, n int) vec.V {
	x := a.(*value)
	r := t.load(x)
	d := t.same(r)
	op(operand.U8(n), r, d)
	return &value{r: d, w: x.w, e: vec.F32}
}

func (t *Target) Shl32(a vec.V, n int) vec.V { return t.shift(t.c.VPSLLD, a, n) }
func (t *Target) Shr32(a vec.V, n int) vec.V { return t.shift(t.c.VPSRLD, a, n) }

// mask is a compare's result: an opmask at AVX-512, else a register.
type lanes struct {
	k reg.Register
	w int
}

// cmp is m = src1 op src2 lane by lane.
func (t *Target) cmp(op func(...operand.Op), a, b vec.V) vec.Mask {
	x, y, d, w := t.pair(a, b)
	var m reg.Register = d
	if t.l.masked {
		m = t.c.K()
	}
	op(y, x, m)
	return &lanes{k: m, w: w}
}

func (t *Target) Gt32(a, b vec.V) vec.Mask { return t.cmp(t.c.VPCMPGTD, a, b) }
func (t *Target) Eq32(a, b vec.V) vec.Mask { return t.cmp(t.c.VPCMPEQD, a, b) }

// IsNaN is VCMPPS's unordered predicate of a with itself.
func (t *Target) IsNaN(a vec.V) vec.Mask {
	return t.cmp(func(o ...operand.Op) { t.c.VCMPPS(operand.U8(3), o[0], o[1], o[2]) }, a, a)
}

// Select is VPBLENDMD (opmask) or VPBLENDVB (register mask): a where m.
// VPBLENDMD's destination is its merge source, which avo sees as read: it
// writes over b's register (Codec lets it: b is consumed), or a copy of b
// when b is a constant kept for the whole function.
func (t *Target) Select(m vec.Mask, a, b vec.V) vec.V {
	k := m.(*lanes)
	if t.l.masked {
		vb := b.(*value)
		r := t.materialize(vb)
		d := r
		for _, c := range t.consts {
			if c == r {
				d = t.same(r)
				t.c.VMOVDQA32(r, d)
				break
			}
		}
		t.c.VPBLENDMD(a.(*value).op(), d, k.k, d)
		return &value{r: d, w: min(vb.w, a.(*value).w, k.w), e: vec.F32}
	}
	x, y, d, w := t.pair(b, a) // x = b in a register, y = a
	t.c.VPBLENDVB(t.sizedTo(k.k.(reg.VecVirtual), d), y, x, d)
	return &value{r: d, w: min(w, k.w), e: vec.F32}
}

func (t *Target) MinF(a, b vec.V) vec.V {
	a, b = comm(a, b)
	return t.int2(t.c.VMINPS, t.c.VMINPS, a, b)
}

func (t *Target) MaxF(a, b vec.V) vec.V {
	a, b = comm(a, b)
	return t.int2(t.c.VMAXPS, t.c.VMAXPS, a, b)
}

// unary is d = op(a).
func (t *Target) unary(op func(...operand.Op), a vec.V) vec.V {
	x := a.(*value)
	r := t.load(x)
	d := t.same(r)
	op(r, d)
	return &value{r: d, w: x.w, e: vec.F32}
}

func (t *Target) ToF32(a vec.V) vec.V    { return t.unary(t.c.VCVTDQ2PS, a) }
func (t *Target) TruncI32(a vec.V) vec.V { return t.unary(t.c.VCVTTPS2DQ, a) }

// NarrowNative is F16C's VCVTPS2PH (imm8 0: nearest even, whatever
// MXCSR says), zero-extended to 32-bit lanes: f32to16's bits for every
// float32, NaN payloads included (the top 10 bits kept, quieted), as
// TestKernels checks at both levels. The stores use VCVTPS2PH's memory
// form, the same instruction. bf16 has none: AVX512-BF16's VCVTNEPS2BF16
// flushes float32 denormals to zero and cannot give f32tobf16's bits.
func (t *Target) NarrowNative(e vec.Elem, x vec.V) (vec.V, bool) {
	if e != vec.F16 {
		return nil, false
	}
	v := x.(*value)
	r := t.materialize(v)
	var h reg.VecVirtual = t.c.XMM() // halves: half r's width
	if r.Size() == 64 {
		h = t.c.YMM()
	}
	t.c.VCVTPS2PH(operand.U8(0), r, h)
	d := t.same(r)
	t.c.VPMOVZXWD(h, d)
	return &value{r: d, w: v.w, e: vec.F32}, true
}

// WidenNative is F16C's VCVTPH2PS, exact (f16to32) for every code.
func (t *Target) WidenNative(e vec.Elem, c vec.V) (vec.V, bool) {
	if e != vec.F16 {
		return nil, false
	}
	v := c.(*value)
	r := t.materialize(v)
	p := t.same(r) // the 32-bit lanes' low halves packed
	if t.l.masked {
		t.c.VPMOVDW(r, p.AsY())
		t.c.VCVTPH2PS(p.AsY(), p)
	} else {
		t.c.VPACKUSDW(r, r, p)
		if r.Size() == 32 {
			t.c.VPERMQ(operand.U8(0xd8), p, p)
		}
		t.c.VCVTPH2PS(p.AsX(), p)
	}
	return &value{r: p, w: v.w, e: vec.F32}, true
}

// LoadBits is the block's elements of a zero-extended to 32-bit lanes.
func (t *Target) LoadBits(b vec.Block, a vec.Arr) vec.V {
	k := b.(*blk)
	return t.loadBits(a.Elem, k.addr(a, k.at()[0]), k.b.w)
}

// StoreBits writes the low bytes of v's lanes as the block's elements of a.
func (t *Target) StoreBits(b vec.Block, a vec.Arr, v vec.V) {
	k := b.(*blk)
	t.storeBits(a.Elem.Size, t.materialize(v.(*value)), k.addr(a, k.at()[0]), k.b.w)
}
