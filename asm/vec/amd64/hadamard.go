package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The Hadamard family's operations (vec.Shuffler): a member is a register
// of float32 (16 lanes at AVX-512, 8 at AVX2); the lane swaps are
// VPERMILPS within 128-bit lanes and VSHUFF32X4 (AVX-512) or VPERM2F128
// (AVX2) across them; a lane bit's mask is an opmask (AVX-512) or a
// register of all-ones lanes (AVX2, for VPBLENDVB), made where it is used.

func (t *Target) Width() int { return t.lanes() }

// Chunk is 8 registers: 128 values at AVX-512, 64 at AVX2, with room for
// a stage's temporaries (AVX2 has 16 registers).
func (t *Target) Chunk() int { return 8 * t.lanes() }

// LoadF32 loads the k values at a into registers.
func (t *Target) LoadF32(a vec.Arr, k int) []vec.V {
	w := t.lanes()
	xs := make([]vec.V, k/w)
	for i := range xs {
		r := t.reg(w)
		t.c.VMOVUPS(t.mem(a, i*w), r)
		xs[i] = &value{r: r, w: w, e: vec.F32}
	}
	return xs
}

func (t *Target) StoreF32(a vec.Arr, xs []vec.V) {
	w := t.lanes()
	for i, x := range xs {
		t.c.VMOVUPS(t.materialize(x.(*value)), t.mem(a, i*w))
	}
}

// SwapLanes: s = 1, 2 VPERMILPS (0xB1, 0x4E); s = 4 VSHUFF32X4 0xB1 or
// VPERM2F128 1; s = 8 VSHUFF32X4 0x4E.
func (t *Target) SwapLanes(x vec.V, s int) vec.V {
	v := x.(*value)
	r := t.materialize(v)
	q := t.same(r)
	switch {
	case s == 1:
		t.c.VPERMILPS(operand.U8(0xb1), r, q)
	case s == 2:
		t.c.VPERMILPS(operand.U8(0x4e), r, q)
	case s == 4 && t.l.masked:
		t.c.VSHUFF32X4(operand.U8(0xb1), r, r, q)
	case s == 4:
		t.c.VPERM2F128(operand.U8(1), r, r, q)
	case s == 8 && t.l.masked:
		t.c.VSHUFF32X4(operand.U8(0x4e), r, r, q)
	default:
		panic("amd64: SwapLanes: no swap by this distance")
	}
	return &value{r: q, w: v.w, e: vec.F32}
}

// LaneBit is the lanes i with i&s ≠ 0: an opmask, or a register of
// all-ones lanes read from the table.
func (t *Target) LaneBit(s int) vec.Mask {
	w := t.lanes()
	if t.l.masked {
		bits := uint32(0)
		for i := range w {
			if i&s != 0 {
				bits |= 1 << i
			}
		}
		g, k := t.c.GP32(), t.c.K()
		t.c.MOVL(operand.U32(bits), g)
		t.c.KMOVW(g, k)
		return &lanes{k: k, w: w}
	}
	var sl [8]uint64
	for i := range w {
		if i&s != 0 {
			sl[i/2] |= uint64(0xffffffff) << (32 * (i % 2))
		}
	}
	r := t.reg(w)
	t.c.VMOVDQU(t.slot(sl), r)
	return &lanes{k: reg.VecVirtual(r), w: w}
}

// Var is x: a register, or a memory operand read where it is used.
func (t *Target) Var(x vec.V) vec.V { return x }
