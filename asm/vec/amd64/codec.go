package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// loadAt reads w values of type e at m, widened exactly to the compute
// type. Nothing past them is read: AVX-512 tails are masked (masked-off
// lanes do not fault), AVX2 tails narrower registers and scalar moves.
func (t *Target) loadAt(e vec.Elem, m operand.Mem, w int) *value {
	c := t.c
	ce := e.Compute()
	d := t.regBytes(w * ce.Size)
	b := w * e.Size
	masked := t.l.masked && w < t.Lanes(ce)
	switch e {
	case vec.F32, vec.F64:
		mov, movz := c.VMOVUPS, c.VMOVUPS_Z
		if e == vec.F64 {
			mov, movz = c.VMOVUPD, c.VMOVUPD_Z
		}
		switch {
		case masked:
			movz(m, t.mask(w), d)
		case b >= 16:
			mov(m, d)
		case b == 8:
			c.VMOVSD(m, d)
		default:
			c.VMOVSS(m, d)
		}
	case vec.F16, vec.BF16:
		var src operand.Op = m // 8 or 4 halves: the m128 or m64 forms
		switch {
		case masked:
			z := c.ZMM()
			c.VMOVDQU16_Z(m, t.mask(w), z)
			src = z.AsY()
		case b < 8:
			src = t.small(m, b)
		}
		if e == vec.F16 {
			c.VCVTPH2PS(src, d)
		} else {
			c.VPMOVZXWD(src, d)
			c.VPSLLD(operand.U8(16), d, d)
		}
	case vec.E4M3:
		var src operand.Op = m
		switch {
		case masked:
			x := c.XMM()
			c.VMOVDQU8_Z(m, t.mask(w), x)
			src = x
		case t.l.masked || w == 8:
		case w == 4 || w == 2:
			src = t.small(m, w)
		default: // an odd count: small reads 2 or 4 bytes
			panic(fmt.Sprintf("amd64: e4m3 load of %d values", w))
		}
		c.VPMOVZXBD(src, d)
		d = t.e4m3Widen(d)
	default:
		panic("amd64: no load of " + e.Name)
	}
	return &value{r: d, w: w, e: ce}
}

// small loads 2 or 4 bytes at m into the low lanes of an XMM register.
func (t *Target) small(m operand.Mem, bytes int) reg.VecVirtual {
	x := t.c.XMM()
	if bytes == 4 {
		t.c.VMOVD(m, x)
	} else {
		g := t.c.GP32()
		t.c.MOVWLZX(m, g)
		t.c.VMOVD(g, x)
	}
	return x
}

// smallStore writes the low 2, 4 or 8 bytes of x at m.
func (t *Target) smallStore(x reg.VecVirtual, m operand.Mem, bytes int) {
	switch bytes {
	case 8:
		t.c.VMOVQ(x.AsX(), m)
	case 4:
		t.c.VMOVD(x.AsX(), m)
	case 2:
		t.c.VPEXTRW(operand.U8(0), x.AsX(), m)
	default: // an odd count of bytes
		panic(fmt.Sprintf("amd64: store of %d bytes", bytes))
	}
}

// storeAt narrows the w values of v to e with round-to-nearest-even and
// writes exactly them at m.
func (t *Target) storeAt(e vec.Elem, v *value, m operand.Mem, w int) {
	c := t.c
	r := t.materialize(v)
	b := w * e.Size
	masked := t.l.masked && w < t.Lanes(t.elem(v))
	switch e {
	case vec.F32, vec.F64:
		mov := c.VMOVUPS
		if e == vec.F64 {
			mov = c.VMOVUPD
		}
		switch {
		case masked:
			mov(r, t.mask(w), m)
		case b >= 16:
			mov(r, m)
		case b == 8:
			c.VMOVSD(r, m)
		default:
			c.VMOVSS(r, m)
		}
	case vec.F16:
		rne := operand.U8(0) // round to nearest even, not MXCSR's mode
		switch {
		case masked:
			c.VCVTPS2PH(rne, r, t.mask(w), m)
		case t.l.masked || b >= 8:
			c.VCVTPS2PH(rne, r, m)
		default:
			x := c.XMM()
			c.VCVTPS2PH(rne, r, x)
			t.smallStore(x, m, b)
		}
	case vec.BF16:
		u := t.bf16Round(r)
		switch {
		case masked:
			c.VPMOVDW(u, t.mask(w), m)
		case t.l.masked:
			c.VPMOVDW(u, m)
		case w == 8:
			hi := c.XMM()
			c.VEXTRACTI128(operand.U8(1), u, hi)
			p := c.XMM()
			c.VPACKUSDW(hi, u.AsX(), p)
			c.VMOVDQU(p, m)
		default:
			p := c.XMM()
			c.VPACKUSDW(u, u, p)
			t.smallStore(p, m, b)
		}
	case vec.E4M3:
		u := t.e4m3Narrow(r)
		switch {
		case masked:
			c.VPMOVDB(u, t.mask(w), m)
		case t.l.masked:
			c.VPMOVDB(u, m)
		default:
			// Pack dwords (each at most 0xff) to bytes: within each
			// 128-bit lane, then the upper lane's four after the lower's.
			p := t.same(u)
			c.VPACKUSDW(u, u, p)
			c.VPACKUSWB(p, p, p)
			x := p
			if u.Size() == 32 {
				hi := c.XMM()
				c.VEXTRACTI128(operand.U8(1), p, hi)
				x = c.XMM()
				c.VPUNPCKLDQ(hi, p.AsX(), x)
			}
			t.smallStore(x, m, w)
		}
	default:
		panic("amd64: no store of " + e.Name)
	}
}

// same is a fresh register of r's width.
func (t *Target) same(r reg.VecVirtual) reg.VecVirtual {
	switch r.Size() {
	case 64:
		return t.c.ZMM()
	case 32:
		return t.c.YMM()
	}
	return t.c.XMM()
}

// kon is the 32-bit constant v in every lane, at the width of r.
func (t *Target) kon(v uint32, r reg.VecVirtual) reg.VecVirtual {
	return t.sizedTo(t.constant(uint64(v), 4), r)
}

// constant is a register holding v in every lane of size bytes, made once
// per function before its loops.
func (t *Target) constant(v uint64, size int) reg.VecVirtual {
	key := v<<8 | uint64(size)
	if r, ok := t.consts[key]; ok {
		return r
	}
	r := t.regBytes(t.l.bytes)
	t.hoist(func() {
		c := t.c
		if size == 8 {
			g := c.GP64()
			c.MOVQ(operand.U64(v), g)
			x := c.XMM()
			c.VMOVQ(g, x)
			c.VBROADCASTSD(x, r)
			return
		}
		g := c.GP32()
		c.MOVL(operand.U32(uint32(v)), g)
		if t.l.masked {
			c.VPBROADCASTD(g, r)
		} else {
			c.VMOVD(g, r.AsX())
			c.VPBROADCASTD(r.AsX(), r)
		}
	})
	t.consts[key] = r
	return r
}

// pand is d = a & b and por d = a | b: the EVEX forms at AVX-512 (VPAND
// has no ZMM form), the VEX forms at AVX2.
func (t *Target) pand(a, b, d operand.Op) {
	if t.l.masked {
		t.c.VPANDD(a, b, d)
	} else {
		t.c.VPAND(a, b, d)
	}
}

func (t *Target) por(a, b, d operand.Op) {
	if t.l.masked {
		t.c.VPORD(a, b, d)
	} else {
		t.c.VPOR(a, b, d)
	}
}

// bf16 narrowing constants: the lowest kept bit, the rounding bias and the
// quiet bit a NaN gets.
const (
	bf16One   = 1
	bf16Bias  = 0x7fff
	bf16Quiet = 0x40
)

// bf16Round is, in each 32-bit lane of v, the bfloat16 bits of v's float32
// rounded to nearest even, (u + 0x7fff + (u>>16 & 1)) >> 16, or for a NaN
// its top half with the quiet bit set: f32tobf16 lane by lane.
func (t *Target) bf16Round(v reg.VecVirtual) reg.VecVirtual {
	c := t.c
	one, bias, quiet := t.kon(bf16One, v), t.kon(bf16Bias, v), t.kon(bf16Quiet, v)
	s := t.same(v)
	c.VPSRLD(operand.U8(16), v, s)
	u := t.same(v)
	nan := t.laneMask(v)
	c.VCMPPS(operand.U8(3), v, v, nan) // unordered: NaN
	t.pand(one, s, u)
	c.VPADDD(v, u, u)
	c.VPADDD(bias, u, u)
	c.VPSRLD(operand.U8(16), u, u)
	if t.l.masked {
		c.VPORD(quiet, s, nan, u) // NaN lanes: top half, quieted
		return u
	}
	q := t.same(v)
	c.VPOR(quiet, s, q)
	c.VBLENDVPS(nan, q, u, u)
	return u
}

// e4m3 constants, as 32-bit lanes.
const (
	e4m3Abs    = 0x7fffffff
	e4m3Inf    = 0x7f800000 // magnitudes above it are NaN
	e4m3Max    = 0x43e00000 // 448
	e4m3Normal = 0x3c800000 // 2⁻⁶, the smallest normal
	e4m3Round  = 0xc407ffff // 0x7ffff − 120<<23 (mod 2³²): half the 20 dropped bits, less one, less the biases' difference
	e4m3Magic  = 0x46800000 // 2¹⁴, whose float32 ulp is 2⁻⁹
	e4m3NaN    = 0x7f
	quietNaN   = 0x7fc00000
	e4m3Sub    = 0x3b000000 // 2⁻⁹
	e4m3Bias   = 120 << 23  // float32's exponent bias less e4m3's, at the exponent
)

// e4m3Narrow is, in each 32-bit lane of v, the e4m3fn bits of v's float32:
// f32toe4m3 lane by lane.
func (t *Target) e4m3Narrow(v reg.VecVirtual) reg.VecVirtual {
	c := t.c
	a, sign := t.same(v), t.same(v)
	t.pand(t.kon(e4m3Abs, v), v, a)
	if t.l.masked {
		c.VPSRLD(operand.U8(24), v, sign) // the sign at bit 7, masked below
	} else {
		c.VPXOR(a, v, sign)
		c.VPSRLD(operand.U8(24), sign, sign) // 0x80 or 0
	}
	// Normal: (a + 0x7ffff + (a>>20 & 1) − 120<<23) >> 20, a clamped at
	// 448 (120<<23 is a multiple of 2²⁰ and a is at least 2⁻⁶'s bits,
	// 121<<23, so subtracting it first is subtracting 120<<3 after).
	m, n := t.same(v), t.same(v)
	c.VPMINUD(t.kon(e4m3Max, v), a, m)
	c.VPSRLD(operand.U8(20), m, n)
	t.pand(t.kon(1, v), n, n)
	c.VPADDD(m, n, n)
	c.VPADDD(t.kon(e4m3Round, v), n, n)
	c.VPSRLD(operand.U8(20), n, n)
	// Below 2⁻⁶: bits(a + 2¹⁴) − bits(2¹⁴).
	s := t.same(v)
	c.VADDPS(t.kon(e4m3Magic, v), m, s)
	c.VPSUBD(t.kon(e4m3Magic, v), s, s)
	sub, nan := t.laneMask(v), t.laneMask(v)
	c.VPCMPGTD(a, t.kon(e4m3Normal, v), sub) // 2⁻⁶ > a
	c.VPCMPGTD(t.kon(e4m3Inf, v), a, nan)    // a > Inf: NaN
	t.blend(sub, s, n)
	t.blend(nan, t.kon(e4m3NaN, v), n)
	if t.l.masked {
		c.VPTERNLOGD(operand.U8(0xf8), t.kon(0x80, v), sign, n) // n | (sign & 0x80)
	} else {
		c.VPOR(sign, n, n)
	}
	return n
}

// e4m3Widen is the float32 values of the e4m3fn bytes in the 32-bit lanes
// of b: e4m3to32 lane by lane.
func (t *Target) e4m3Widen(b reg.VecVirtual) reg.VecVirtual {
	c := t.c
	a, sign, n, s := t.same(b), t.same(b), t.same(b), t.same(b)
	t.pand(t.kon(0x7f, b), b, a)
	t.pand(t.kon(0x80, b), b, sign)
	c.VPSLLD(operand.U8(24), sign, sign)
	c.VPSLLD(operand.U8(20), a, n)
	c.VPADDD(t.kon(e4m3Bias, b), n, n) // (e+120)<<23 | m<<20
	c.VCVTDQ2PS(a, s)
	c.VMULPS(t.kon(e4m3Sub, b), s, s) // m·2⁻⁹ (a < 8 where it is used)
	sub, nan := t.laneMask(b), t.laneMask(b)
	c.VPCMPGTD(a, t.kon(8, b), sub)
	c.VPCMPEQD(t.kon(0x7f, b), a, nan)
	t.blend(sub, s, n)
	t.blend(nan, t.kon(quietNaN, b), n)
	t.por(sign, n, n)
	return n
}

// laneMask is a fresh lane mask for v's lanes: an opmask at AVX-512, a
// register of v's width at AVX2.
func (t *Target) laneMask(v reg.VecVirtual) reg.Register {
	if t.l.masked {
		return t.c.K()
	}
	return t.same(v)
}

// blend sets the lanes of d that m selects to s's.
func (t *Target) blend(m reg.Register, s operand.Op, d reg.VecVirtual) {
	if t.l.masked {
		t.c.VPBLENDMD(s, d, m, d)
	} else {
		t.c.VPBLENDVB(m, s, d, d)
	}
}
