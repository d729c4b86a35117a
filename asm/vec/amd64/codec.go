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
	case vec.F16: // F16C, the native hook's instruction, on memory
		c.VCVTPH2PS(t.halves(m, w), d)
	case vec.BF16, vec.E4M3, vec.E5M2: // the minifloat family (package vec)
		return t.materializeV(vec.Widen(t, e, t.loadBits(e, m, w)))
	default:
		panic("amd64: no load of " + e.Name)
	}
	return &value{r: d, w: w, e: ce}
}

// loadBits is the w elements of e at m zero-extended to 32-bit lanes.
func (t *Target) loadBits(e vec.Elem, m operand.Mem, w int) *value {
	d := t.reg(w)
	if e.Size == 2 {
		t.c.VPMOVZXWD(t.halves(m, w), d)
	} else {
		t.c.VPMOVZXBD(t.bytes(m, w), d)
	}
	return &value{r: d, w: w, e: vec.F32}
}

// materializeV is v, a family's result, in a register.
func (t *Target) materializeV(v vec.V) *value {
	x := v.(*value)
	t.materialize(x)
	return x
}

// halves is the w 16-bit elements at m as an operand of VPMOVZXWD or
// VCVTPH2PS: the memory itself (the m128 or m64 forms), a masked load
// at an AVX-512 tail, small loads below 8 bytes.
func (t *Target) halves(m operand.Mem, w int) operand.Op {
	c := t.c
	switch {
	case t.l.masked && w < t.Lanes(vec.F32):
		z := c.ZMM()
		c.VMOVDQU16_Z(m, t.mask(w), z)
		return z.AsY()
	case 2*w < 8:
		return t.small(m, 2*w)
	}
	return m
}

// bytes is the w 8-bit elements at m as an operand of VPMOVZXBD.
func (t *Target) bytes(m operand.Mem, w int) operand.Op {
	c := t.c
	switch {
	case t.l.masked && w < t.Lanes(vec.F32):
		x := c.XMM()
		c.VMOVDQU8_Z(m, t.mask(w), x)
		return x
	case t.l.masked || w == 8:
		return m
	case w == 4 || w == 2:
		return t.small(m, w)
	}
	panic(fmt.Sprintf("amd64: a load of %d bytes", w)) // an odd count: small reads 2 or 4
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
	case vec.BF16, vec.E4M3, vec.E5M2: // the minifloat family (package vec)
		u := t.materialize(vec.Narrow(t, e, &value{r: r, w: v.w, e: vec.F32}).(*value))
		t.storeBits(e.Size, u, m, w)
	default:
		panic("amd64: no store of " + e.Name)
	}
}

// storeBits writes the low size bytes (2 or 1) of the w 32-bit lanes of u
// at m: VPMOVDW, VPMOVDB at AVX-512 (masked at a tail); packs at AVX2
// (each lane < 2^(8·size), so the unsigned saturation keeps it).
func (t *Target) storeBits(size int, u reg.VecVirtual, m operand.Mem, w int) {
	c := t.c
	masked := t.l.masked && w < t.Lanes(vec.F32)
	if size == 2 {
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
			c.VPACKUSDW(u.AsX(), u.AsX(), p)
			t.smallStore(p, m, 2*w)
		}
		return
	}
	switch {
	case masked:
		c.VPMOVDB(u, t.mask(w), m)
	case t.l.masked:
		c.VPMOVDB(u, m)
	default:
		// Pack dwords to bytes: within each 128-bit lane, then the upper
		// lane's four after the lower's.
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
