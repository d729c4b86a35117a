package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// codec is how one element type sits in memory: loads widen it exactly to
// the compute type, stores narrow to it with round-to-nearest-even. Every
// access touches exactly the run's bytes: AVX2 tails use narrower registers
// and scalar moves, AVX-512 tails masked moves (masked-off lanes neither read
// nor fault).
type codec struct {
	name   string // "f32", "f64", "f16", "bf16"
	goType string
	size   int // bytes per element
}

var codecs = map[string]codec{
	"f32":  {"f32", "float32", 4},
	"f64":  {"f64", "float64", 8},
	"f16":  {"f16", "uint16", 2},
	"bf16": {"bf16", "uint16", 2},
}

// compute is the codec of the table and the arithmetic for x.
func (x codec) compute() codec {
	if x.name == "f64" {
		return x
	}
	return codecs["f32"]
}

// bf16 narrowing constants: the lowest kept bit, the rounding bias and the
// quiet bit a NaN gets.
const (
	bf16One   = 1
	bf16Bias  = 0x7fff
	bf16Quiet = 0x40
)

// setup makes, before the loop, the constants x's stores need.
func (x codec) setup(e *emitter) {
	if x.name == "bf16" {
		e.constant(bf16One)
		e.constant(bf16Bias)
		e.constant(bf16Quiet)
	}
}

func (x codec) load(e *emitter, m operand.Mem, w int) reg.VecVirtual {
	c := e.c
	d := e.reg(w)
	b := w * x.size
	switch x.name {
	case "f32", "f64":
		mov, movz := c.VMOVUPS, c.VMOVUPS_Z
		if x.size == 8 {
			mov, movz = c.VMOVUPD, c.VMOVUPD_Z
		}
		switch {
		case e.l.masked && w < e.lanes:
			movz(m, e.mask(w), d)
		case b >= 16:
			mov(m, d)
		case b == 8:
			c.VMOVSD(m, d)
		default:
			c.VMOVSS(m, d)
		}
	case "f16":
		switch {
		case e.l.masked && w < e.lanes:
			t := c.ZMM()
			c.VMOVDQU16_Z(m, e.mask(w), t)
			c.VCVTPH2PS(t.AsY(), d)
		case b >= 8: // 8 or 4 halves: m128 or m64 forms
			c.VCVTPH2PS(m, d)
		default:
			c.VCVTPH2PS(e.small(m, b), d)
		}
	case "bf16":
		switch {
		case e.l.masked && w < e.lanes:
			t := c.ZMM()
			c.VMOVDQU16_Z(m, e.mask(w), t)
			c.VPMOVZXWD(t.AsY(), d)
		case b >= 8:
			c.VPMOVZXWD(m, d)
		default:
			c.VPMOVZXWD(e.small(m, b), d)
		}
		c.VPSLLD(operand.U8(16), d, d)
	}
	return d
}

// small loads 2 or 4 bytes at m into the low lanes of an XMM register.
func (e *emitter) small(m operand.Mem, bytes int) reg.VecVirtual {
	t := e.c.XMM()
	if bytes == 4 {
		e.c.VMOVD(m, t)
	} else {
		g := e.c.GP32()
		e.c.MOVWLZX(m, g)
		e.c.VMOVD(g, t)
	}
	return t
}

// smallStore writes the low 2, 4 or 8 bytes of t at m.
func (e *emitter) smallStore(t reg.VecVirtual, m operand.Mem, bytes int) {
	switch bytes {
	case 8:
		e.c.VMOVQ(t.AsX(), m)
	case 4:
		e.c.VMOVD(t.AsX(), m)
	default:
		e.c.VPEXTRW(operand.U8(0), t.AsX(), m)
	}
}

func (x codec) store(e *emitter, v reg.VecVirtual, m operand.Mem, w int) {
	c := e.c
	b := w * x.size
	masked := e.l.masked && w < e.lanes
	switch x.name {
	case "f32", "f64":
		mov := c.VMOVUPS
		if x.size == 8 {
			mov = c.VMOVUPD
		}
		switch {
		case masked:
			mov(v, e.mask(w), m)
		case b >= 16:
			mov(v, m)
		case b == 8:
			c.VMOVSD(v, m)
		default:
			c.VMOVSS(v, m)
		}
	case "f16":
		rne := operand.U8(0) // round to nearest even, not MXCSR's mode
		switch {
		case masked:
			c.VCVTPS2PH(rne, v, e.mask(w), m)
		case e.l.masked || b >= 8:
			c.VCVTPS2PH(rne, v, m)
		default:
			t := c.XMM()
			c.VCVTPS2PH(rne, v, t)
			e.smallStore(t, m, b)
		}
	case "bf16":
		u := e.bf16Round(v)
		switch {
		case masked:
			c.VPMOVDW(u, e.mask(w), m)
		case e.l.masked:
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
			e.smallStore(p, m, b)
		}
	}
}

// bf16Round returns, in each 32-bit lane of v, the bfloat16 bits of v's
// float32 rounded to nearest even: (u + 0x7fff + (u>>16 & 1)) >> 16, or for
// a NaN its top half with the quiet bit set. It is f32tobf16 in the
// generated pure Go, lane by lane.
func (e *emitter) bf16Round(v reg.VecVirtual) reg.VecVirtual {
	c := e.c
	one, bias, quiet := e.kon(bf16One, v), e.kon(bf16Bias, v), e.kon(bf16Quiet, v)
	t := e.sameReg(v)
	c.VPSRLD(operand.U8(16), v, t)
	u := e.sameReg(v)
	var nan reg.Register
	if e.l.masked {
		nan = c.K()
	} else {
		nan = e.sameReg(v)
	}
	c.VCMPPS(operand.U8(3), v, v, nan) // unordered: NaN
	e.pand(one, t, u)
	c.VPADDD(v, u, u)
	c.VPADDD(bias, u, u)
	c.VPSRLD(operand.U8(16), u, u)
	if e.l.masked {
		c.VPORD(quiet, t, nan, u) // NaN lanes: top half, quieted
		return u
	}
	q := e.sameReg(v)
	c.VPOR(quiet, t, q)
	c.VBLENDVPS(nan, q, u, u)
	return u
}

// pand emits d = a & b: VPANDD at AVX-512 (VPAND has no ZMM form), VPAND at
// AVX2.
func (e *emitter) pand(a, b, d operand.Op) {
	if e.l.masked {
		e.c.VPANDD(a, b, d)
	} else {
		e.c.VPAND(a, b, d)
	}
}

// por emits d = a | b: VPORD at AVX-512, VPOR at AVX2.
func (e *emitter) por(a, b, d operand.Op) {
	if e.l.masked {
		e.c.VPORD(a, b, d)
	} else {
		e.c.VPOR(a, b, d)
	}
}

// sized returns r, a register made at the widest width (a constant, the
// e4m3 scale, a QK-norm's r), at the width of v: at AVX2 a narrower tail
// block is in an XMM or YMM register.
func (e *emitter) sized(r, v reg.VecVirtual) reg.VecVirtual {
	if e.l.masked || v.Size() == r.Size() {
		return r
	}
	if v.Size() == 16 {
		return r.AsX().(reg.VecVirtual)
	}
	return r.AsY().(reg.VecVirtual)
}

// kon returns the constant v at the width of r.
func (e *emitter) kon(v uint32, r reg.VecVirtual) reg.VecVirtual { return e.sized(e.constant(v), r) }

// sameReg returns a fresh register of v's width.
func (e *emitter) sameReg(v reg.VecVirtual) reg.VecVirtual {
	switch v.Size() {
	case 64:
		return e.c.ZMM()
	case 32:
		return e.c.YMM()
	}
	return e.c.XMM()
}
