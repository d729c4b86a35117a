package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// q8_0 constants.
const (
	f32Sign  = 0x80000000
	f32One   = 0x3f800000
	f32Below = 0x3effffff // the largest float32 below 1/2
	f32127   = 0x42fe0000 // 127
	f32M127  = 0xc2fe0000 // −127
	f32Inf   = 0x7f800000
	q8Tiny   = 0x04800000 // 2⁻¹¹⁸: from it up d = amax/127 is a normal float32
)

// Quantize stores the blocks of the head at src into q8_0 blocks at dst:
// at AVX-512, when they are a whole number of groups of four, four at a
// time (quantizeGroups), else (and for a group that needs it) one at a
// time (quantizeBlocks).
func (h *head) Quantize(src, dst vec.Arr, blocks int) {
	t, c := h.t, h.t.c
	s, d := operand.Mem{Base: c.GP64()}, operand.Mem{Base: c.GP64()}
	c.LEAQ(t.mem(src, 0), s.Base)
	c.LEAQ(t.mem(dst, 0), d.Base)
	n := c.GP64()
	next := t.label("next")
	if t.l.masked && blocks%4 == 0 {
		t.quantizeGroups(s, d, n, blocks/4, next)
	} else {
		c.MOVQ(operand.U32(blocks), n)
		t.quantizeBlocks(s, d, n, next)
	}
	c.Label(next)
}

// quantizeBlocks quantizes n blocks (a count in a register) from s to d,
// one at a time, advancing both, then jumps to exit.
func (t *Target) quantizeBlocks(s, d operand.Mem, n reg.GPVirtual, exit string) {
	c := t.c
	top, nan, join := t.label("block"), t.label("nan"), t.label("join")
	c.Label(top)
	nr := 32 / t.lanes()
	x := make([]reg.VecVirtual, nr) // AVX-512: the block's values, kept for the rounding
	a := make([]reg.VecVirtual, nr)
	abs := t.constant(0x7fffffff, 4)
	for i := range nr {
		m := s.Offset(i * t.l.bytes)
		a[i] = t.reg(t.lanes())
		if t.l.masked {
			x[i] = t.reg(t.lanes())
			c.VMOVUPS(m, x[i])
			c.VPANDD(abs, x[i], a[i])
		} else {
			c.VPAND(m, abs, a[i]) // the rounding reads s again
		}
	}
	// A NaN anywhere: ggml's sequence of MAX, in scalar.
	if t.l.masked {
		k0, k1 := c.K(), c.K()
		c.VCMPPS(operand.U8(3), a[0], a[0], k0)
		c.VCMPPS(operand.U8(3), a[1], a[1], k1)
		c.KORTESTW(k0, k1)
	} else {
		u := t.reg(t.lanes())
		c.VCMPPS(operand.U8(3), a[0], a[0], u)
		for i := 1; i < nr; i++ {
			v := t.reg(t.lanes())
			c.VCMPPS(operand.U8(3), a[i], a[i], v)
			c.VORPS(v, u, u)
		}
		c.VPTEST(u, u)
	}
	c.JNE(operand.LabelRef(nan))
	// amax: the largest |x_j|, reduced to every lane of an XMM.
	m := t.reg(t.lanes())
	c.VMAXPS(a[1], a[0], m)
	for i := 2; i < nr; i++ {
		c.VMAXPS(a[i], m, m)
	}
	if t.l.masked {
		y := c.YMM()
		c.VEXTRACTF64X4(operand.U8(1), m, y)
		c.VMAXPS(y, m.AsY(), y)
		m = y
	}
	xm, v := c.XMM(), c.XMM()
	c.VEXTRACTF128(operand.U8(1), m, xm)
	c.VMAXPS(xm, m.AsX(), xm)
	c.VPERMILPS(operand.U8(0x4e), xm, v)
	c.VMAXPS(v, xm, xm)
	c.VPERMILPS(operand.U8(0xb1), xm, v)
	amax := c.XMM()
	c.VMAXPS(v, xm, amax)
	c.Label(join)
	// d = amax/127, id = d ≠ 0 ? 1/d : 0, d stored as f16.
	dd, id, z, eq := c.XMM(), c.XMM(), c.XMM(), c.XMM()
	c.VDIVSS(t.constant(f32127, 4).AsX(), amax, dd)
	c.VDIVSS(dd, t.constant(f32One, 4).AsX(), id)
	c.VXORPS(z, z, z)
	c.VCMPSS(operand.U8(0), z, dd, eq) // d == 0
	c.VANDNPS(id, eq, id)
	hf := c.XMM()
	c.VCVTPS2PH(operand.U8(0), dd, hf)
	t.smallStore(hf, d, 2)
	idv := t.reg(t.lanes())
	c.VBROADCASTSS(id, idv)
	if t.l.masked {
		for i := range nr {
			c.VPMOVDB(t.q8Round(x[i], idv), d.Offset(2+16*i))
		}
	} else {
		// Sixteen YMM registers: x is read again from memory, two results
		// packed at once.
		xs := func(i int) operand.Op { return s.Offset(i * t.l.bytes) }
		p01, p23, b := c.YMM(), c.YMM(), c.YMM()
		c.VPACKSSDW(t.q8Round(xs(1), idv), t.q8Round(xs(0), idv), p01)
		c.VPACKSSDW(t.q8Round(xs(3), idv), t.q8Round(xs(2), idv), p23)
		c.VPACKSSWB(p23, p01, b)
		hi, lo, up := c.XMM(), c.XMM(), c.XMM()
		c.VEXTRACTI128(operand.U8(1), b, hi)
		c.VPUNPCKLDQ(hi, b.AsX(), lo)
		c.VPUNPCKHDQ(hi, b.AsX(), up)
		c.VMOVDQU(lo, d.Offset(2))
		c.VMOVDQU(up, d.Offset(18))
	}
	c.ADDQ(operand.U32(128), s.Base)
	c.ADDQ(operand.U32(34), d.Base)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(top))
	c.JMP(operand.LabelRef(exit))

	// The block holds a NaN: amax = MAX(amax, |x_j|) for j = 0…31 from 0,
	// VMAXSS computing a > b ? a : b as ggml's MAX.
	c.Label(nan)
	c.VXORPS(amax, amax, amax)
	p, j := c.GP64(), c.GP64()
	c.MOVQ(s.Base, p)
	c.MOVQ(operand.U32(32), j)
	scan := t.label("scan")
	c.Label(scan)
	y := c.XMM()
	c.VMOVSS(operand.Mem{Base: p}, y)
	c.VANDPS(abs.AsX(), y, y)
	c.VMAXSS(y, amax, amax)
	c.ADDQ(operand.U32(4), p)
	c.DECQ(j)
	c.JNZ(operand.LabelRef(scan))
	c.JMP(operand.LabelRef(join))
}

// quantizeGroups quantizes groups groups of four blocks (128 values) from s
// to d at AVX-512, sharing the per-block work: the four maxima reduced
// together into the four 128-bit lanes of one register, one VDIVPS for the
// four d and one for the four 1/d, one VCVTPS2PH for the four f16 scales.
// This holds when every block's amax is 0 or between 2⁻¹¹⁸ and +Inf
// (exclusive), which a block without NaN or infinity and not all subnormal
// has: then d is a normal float32 (or 0), |x·id| ≤ 127·(1 + 3u) < 127.5,
// so no product is NaN or needs clamping, and roundf is
// trunc(x·id + copysign(h, x)). A group outside it goes through
// quantizeBlocks, ggml's sequence for every case. The integer maximum of
// the magnitudes' bits is the float maximum for them (+0 up to +Inf), and
// a NaN's bits exceed +Inf's.
func (t *Target) quantizeGroups(s, d operand.Mem, blocks reg.GPVirtual, groups int, exit string) {
	c := t.c
	g := c.GP64()
	c.MOVQ(operand.U32(groups), g)
	top, next, slow := t.label("group"), t.label("nextgroup"), t.label("slowgroup")
	c.Label(top)
	abs := t.constant(0x7fffffff, 4)
	x := make([]reg.VecVirtual, 8)
	for i := range x {
		x[i] = c.ZMM()
		c.VMOVUPS(s.Offset(64*i), x[i])
	}
	// m[b]: block b's magnitudes' bits, maxed into 16 lanes.
	var m [4]reg.VecVirtual
	for b := range m {
		a0, a1 := c.ZMM(), c.ZMM()
		c.VPANDD(abs, x[2*b], a0)
		c.VPANDD(abs, x[2*b+1], a1)
		m[b] = c.ZMM()
		c.VPMAXUD(a1, a0, m[b])
	}
	// Two blocks a register: 128-bit lanes 0, 1 block 2k's, 2, 3 block 2k+1's.
	var u [2]reg.VecVirtual
	for k := range u {
		lo, hi := c.ZMM(), c.ZMM()
		c.VSHUFI64X2(operand.U8(0x44), m[2*k+1], m[2*k], lo)
		c.VSHUFI64X2(operand.U8(0xee), m[2*k+1], m[2*k], hi)
		u[k] = c.ZMM()
		c.VPMAXUD(hi, lo, u[k])
	}
	// Lane k of w: block k's four partial maxima; then each lane reduced.
	lo, hi, w, v := c.ZMM(), c.ZMM(), c.ZMM(), c.ZMM()
	c.VSHUFI64X2(operand.U8(0x88), u[1], u[0], lo)
	c.VSHUFI64X2(operand.U8(0xdd), u[1], u[0], hi)
	c.VPMAXUD(hi, lo, w)
	c.VPSHUFD(operand.U8(0x4e), w, v)
	c.VPMAXUD(v, w, w)
	c.VPSHUFD(operand.U8(0xb1), w, v)
	c.VPMAXUD(v, w, w) // every dword of lane k: amax_k's bits
	// Outside the fast path: amax ≥ +Inf (or NaN), or 0 < amax < 2⁻¹¹⁸.
	big, tiny := c.K(), c.K()
	c.VPCMPUD(operand.U8(5), t.constant(f32Inf, 4), w, big) // w ≥ Inf
	w1 := c.ZMM()
	c.VPSUBD(t.constant(1, 4), w, w1)
	c.VPCMPUD(operand.U8(1), t.constant(q8Tiny-1, 4), w1, tiny) // w − 1 < 2⁻¹¹⁸'s bits − 1 (unsigned)
	c.KORTESTW(big, tiny)
	c.JNE(operand.LabelRef(slow))
	// d = amax/127, id = d ≠ 0 ? 1/d : 0, four of each.
	dd, id, z := c.ZMM(), c.ZMM(), c.ZMM()
	c.VDIVPS(t.constant(f32127, 4), w, dd)
	c.VDIVPS(dd, t.constant(f32One, 4), id)
	nz := c.K()
	c.VPXORD(z, z, z)
	c.VCMPPS(operand.U8(4), z, dd, nz) // d ≠ 0
	c.VMOVAPS_Z(id, nz, id)
	hf, hx := c.YMM(), c.XMM()
	c.VCVTPS2PH(operand.U8(0), dd, hf)           // half 4k: block k's d
	c.VEXTRACTI32X4(operand.U8(1), hf.AsZ(), hx) // EVEX: hf may be Y16…Y31
	c.VPEXTRW(operand.U8(0), hf.AsX(), d)
	c.VPEXTRW(operand.U8(4), hf.AsX(), d.Offset(34))
	c.VPEXTRW(operand.U8(0), hx, d.Offset(68))
	c.VPEXTRW(operand.U8(4), hx, d.Offset(102))
	for b := range 4 {
		idb := c.ZMM()
		c.VSHUFF32X4(operand.U8(uint8(0x55*b)), id, id, idb) // every lane: id_b
		for i := range 2 {
			xi, hs, y := x[2*b+i], c.ZMM(), c.ZMM()
			c.VPANDD(t.constant(f32Sign, 4), xi, hs)
			c.VPORD(t.constant(f32Below, 4), hs, hs)
			c.VMULPS(idb, xi, y)
			c.VADDPS(hs, y, y)
			c.VCVTTPS2DQ(y, y)
			c.VPMOVDB(y, d.Offset(34*b+2+16*i))
		}
	}
	c.ADDQ(operand.U32(512), s.Base)
	c.ADDQ(operand.U32(136), d.Base)
	c.Label(next)
	c.DECQ(g)
	c.JNZ(operand.LabelRef(top))
	c.JMP(operand.LabelRef(exit))

	c.Label(slow)
	c.MOVQ(operand.U32(4), blocks)
	t.quantizeBlocks(s, d, blocks, next)
}

// q8Round is the int32 lanes of roundf(x·id), NaN lanes 0, clamped to
// ±127: q8Round lane by lane. Once clamped, v is rounded half away from
// zero as trunc(v + copysign(h, v)), h the largest float32 below 1/2: for
// every float32 |v| ≤ 127 that is roundf(v), in four instructions instead
// of a truncation, a fraction, a compare and a masked add.
func (t *Target) q8Round(x operand.Op, id reg.VecVirtual) reg.VecVirtual {
	c := t.c
	v, h := t.same(id), t.same(id)
	c.VMULPS(x, id, v)
	if t.l.masked {
		ord := c.K()
		c.VCMPPS(operand.U8(7), v, v, ord)           // not NaN
		c.VMINPS_Z(t.constant(f32127, 4), v, ord, v) // NaN lanes zeroed
	} else {
		ord := t.same(v)
		c.VCMPPS(operand.U8(7), v, v, ord)
		c.VANDPS(ord, v, v)
		c.VMINPS(t.constant(f32127, 4), v, v)
	}
	c.VMAXPS(t.constant(f32M127, 4), v, v)
	t.pand(t.constant(f32Sign, 4), v, h)
	t.por(t.constant(f32Below, 4), h, h)
	c.VADDPS(h, v, v)
	c.VCVTTPS2DQ(v, v) // toward zero
	return v
}

// Dequantize loads the blocks at src into the float32 values at dst:
// q·d, d widened from f16.
func (h *head) Dequantize(src, dst vec.Arr, blocks int) {
	t, c := h.t, h.t.c
	s, d := operand.Mem{Base: c.GP64()}, operand.Mem{Base: c.GP64()}
	c.LEAQ(t.mem(src, 0), s.Base)
	c.LEAQ(t.mem(dst, 0), d.Base)
	n := c.GP64()
	c.MOVQ(operand.U32(blocks), n)
	top := t.label("block")
	c.Label(top)
	x := t.small(s, 2)
	c.VCVTPH2PS(x, x)
	dv := t.reg(t.lanes())
	c.VBROADCASTSS(x, dv)
	per := t.lanes() // int8 values a register
	for i := range 32 / per {
		v := t.reg(t.lanes())
		c.VPMOVSXBD(s.Offset(2+i*per), v)
		c.VCVTDQ2PS(v, v)
		c.VMULPS(dv, v, v)
		c.VMOVUPS(v, d.Offset(i*t.l.bytes))
	}
	c.ADDQ(operand.U32(34), s.Base)
	c.ADDQ(operand.U32(128), d.Base)
	c.DECQ(n)
	c.JNZ(operand.LabelRef(top))
}
