package amd64

import (
	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The operations of the table fill (package vec's fill), which has more
// constants than registers: they are read from a table of 64-byte slots,
// one DATA symbol for every kernel of the build.Context, as memory
// operands of the arithmetic (AVX2 reads a slot's first 32 bytes).

// table is the constants of a build.Context's kernels.
type table struct {
	slots map[[8]uint64]int
	order [][8]uint64
}

const tableName = "vecconst"

// slot is the address of the slot holding s.
func (t *Target) slot(s [8]uint64) operand.Mem {
	i, ok := t.tab.slots[s]
	if !ok {
		i = len(t.tab.order)
		t.tab.slots[s] = i
		t.tab.order = append(t.tab.order, s)
	}
	return operand.Mem{Symbol: operand.NewStaticSymbol(tableName), Base: reg.StaticBase, Disp: 64 * i}
}

// emit adds the table's DATA to c, when it has any.
func (tab *table) emit(t *Target) {
	if len(tab.order) == 0 {
		return
	}
	t.c.StaticGlobal(tableName)
	t.c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i, s := range tab.order {
		for j, v := range s {
			t.c.AddDatum(64*i+8*j, operand.U64(v))
		}
	}
}

// Bits is v in every lane of e, from the table; zero is a register.
func (t *Target) Bits(e vec.Elem, v uint64) vec.V {
	w := t.Lanes(e)
	if v == 0 {
		z := t.regBytes(t.l.bytes)
		t.hoist(func() { t.xor(z, z, z) })
		return &value{r: z, w: w, e: e}
	}
	for n := e.Size; n < 8; n *= 2 {
		v |= v << (8 * n)
	}
	return &value{m: t.slot([8]uint64{v, v, v, v, v, v, v, v}), w: w, e: e}
}

// bitwise emits d = a op b on whole registers, op at AVX-512 (EVEX) and
// at AVX2 (VEX).
func (t *Target) bitwise(evex, vex func(...operand.Op), a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	if x.r == nil {
		x, y = y, x
	}
	if x.r == nil {
		t.materialize(x)
	}
	d := t.same(x.r)
	if t.l.masked {
		evex(y.op(), x.r, d)
	} else {
		vex(y.op(), x.r, d)
	}
	return &value{r: d, w: x.w, e: t.elem(x)}
}

func (t *Target) xor(a, b, d operand.Op) {
	if t.l.masked {
		t.c.VPXORQ(a, b, d)
	} else {
		t.c.VPXOR(a, b, d)
	}
}

func (t *Target) And(a, b vec.V) vec.V { return t.bitwise(t.c.VPANDQ, three(t.c.VPAND), a, b) }
func (t *Target) Xor(a, b vec.V) vec.V { return t.bitwise(t.c.VPXORQ, three(t.c.VPXOR), a, b) }

// IAdd and ISub are integer sums of 64-bit lanes.
func (t *Target) IAdd(a, b vec.V) vec.V { return t.bitwise(t.c.VPADDQ, t.c.VPADDQ, a, b) }

// three adapts an instruction of three operands.
func three(in func(a, b, d operand.Op)) func(...operand.Op) {
	return func(o ...operand.Op) { in(o[0], o[1], o[2]) }
}

func (t *Target) ISub(a, b vec.V) vec.V {
	x := a.(*value)
	t.materialize(x)
	d := t.same(x.r)
	t.c.VPSUBQ(b.(*value).op(), x.r, d)
	return &value{r: d, w: x.w, e: t.elem(x)}
}

// Shl shifts each 64-bit lane left by n.
func (t *Target) Shl(a vec.V, n int) vec.V {
	x := a.(*value)
	d := t.same(t.materialize(x))
	t.c.VPSLLQ(operand.U8(n), x.r, d)
	return &value{r: d, w: x.w, e: t.elem(x)}
}

// Narrow rounds float64 lanes to float32, into a register half as wide.
func (t *Target) Narrow(a vec.V, e vec.Elem) vec.V {
	x := a.(*value)
	r := t.materialize(x)
	if t.l.masked {
		d := t.c.YMM()
		t.c.VCVTPD2PS(r, d)
		return &value{r: d, w: x.w, e: e}
	}
	d := t.c.XMM()
	t.c.VCVTPD2PSY(r, d)
	return &value{r: d, w: x.w, e: e}
}

// Result stores v in the result name.
func (t *Target) Result(name string, v vec.Int) {
	g := t.c.GP64()
	t.c.MOVQ(v.(operand.U32), g)
	t.c.Store(g, t.c.Return(name))
}

// Block runs body for the pairs block of Lanes(e) pairs at the head's
// position.
func (t *Target) Block(h vec.Head, e vec.Elem, body func(vec.Block)) {
	body(&blk{h: h.(*head), b: block{0, t.Lanes(e)}, pairs: true})
}

// PerPair reads the block's values of a, one a pair.
func (t *Target) PerPair(b vec.Block, a vec.Arr) vec.V {
	k := b.(*blk)
	return t.loadAt(a.Elem, k.addr(a, k.b.j), k.b.w)
}

// SetTable writes c and s (float32, one a pair) as the block's C and S:
// neox C at both members' places, −s and s; interleaved c and s each
// spread to both lanes of their pair (VPERMPS), S[a]'s sign flipped.
func (t *Target) SetTable(b vec.Block, row vec.Arr, c, s vec.V) {
	k := b.(*blk)
	cv, sv := c.(*value), s.(*value)
	sign := func(pat uint64, v *value) *value {
		return t.Xor(v, &value{m: t.slot([8]uint64{pat, pat, pat, pat, pat, pat, pat, pat})}).(*value)
	}
	srow := row.At(t.f.Shape.RotaryDim)
	if t.f.Shape.NeoX {
		h := t.f.Shape.Half()
		// −s in a ZMM at AVX-512, whose VPXORQ has no YMM form without
		// AVX512VL: its upper lanes (zero after VCVTPD2PS) are not stored.
		neg := sign(0x8000000080000000, &value{r: t.sizedTo(sv.r, t.regBytes(t.l.bytes)), w: sv.w})
		t.c.VMOVUPS(cv.r, k.addr(row, k.b.j))
		t.c.VMOVUPS(cv.r, k.addr(row, k.b.j+h))
		t.c.VMOVUPS(t.sizedTo(neg.r, sv.r), k.addr(srow, k.b.j))
		t.c.VMOVUPS(sv.r, k.addr(srow, k.b.j+h))
		return
	}
	idx := &value{m: t.slot([8]uint64{0, 1 | 1<<32, 2 | 2<<32, 3 | 3<<32, 4 | 4<<32, 5 | 5<<32, 6 | 6<<32, 7 | 7<<32}), w: t.Lanes(vec.F32)}
	t.materialize(idx)
	dup := func(v reg.VecVirtual) *value {
		d := t.regBytes(t.l.bytes)
		t.c.VPERMPS(t.sizedTo(v, d), t.sizedTo(idx.r, d), d)
		return &value{r: d, w: 2 * cv.w}
	}
	t.c.VMOVUPS(dup(cv.r).r, k.addr(row, 2*k.b.j))
	t.c.VMOVUPS(sign(0x80000000, dup(sv.r)).r, k.addr(srow, 2*k.b.j))
}
