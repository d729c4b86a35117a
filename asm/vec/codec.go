package vec

import "math"

// Minifloat is a floating-point cache element narrower than float32: 1
// sign bit, Exp exponent bits of bias Bias, Man mantissa bits, subnormals.
// Finite is OCP's "fn" encoding (e4m3fn): no Inf, the all-ones exponent
// holding values, only the all-ones code S.1…1 a NaN; otherwise IEEE's
// (all-ones exponent: Inf, NaN). Sat narrows magnitudes beyond the largest
// finite value to it (OCP's saturating mode) instead of to Inf. KeepNaN
// narrows a NaN to a quiet NaN keeping the top Man bits of its payload;
// otherwise to the all-ones code S.1…1.
type Minifloat struct {
	Exp, Man, Bias int
	Finite, Sat    bool
	KeepNaN        bool
}

// Minifloats are the cache elements the family narrows and widens, with
// verify/codec's definitions: f16 (IEEE binary16, overflow to ±Inf), bf16,
// e4m3 (OCP e4m3fn, saturating at ±448) and e5m2 (OCP e5m2, saturating at
// ±57344).
var Minifloats = map[Elem]Minifloat{
	F16:  {Exp: 5, Man: 10, Bias: 15, KeepNaN: true},
	BF16: {Exp: 8, Man: 7, Bias: 127, KeepNaN: true},
	E4M3: {Exp: 4, Man: 3, Bias: 7, Finite: true, Sat: true},
	E5M2: {Exp: 5, Man: 2, Bias: 15, Sat: true},
}

// width is the bits of an element.
func (m Minifloat) width() int { return 1 + m.Exp + m.Man }

// shift is the float32 mantissa bits the element drops.
func (m Minifloat) shift() int { return 23 - m.Man }

// rebias is float32's exponent bias less the element's, at float32's
// exponent.
func (m Minifloat) rebias() uint32 { return uint32(127-m.Bias) << 23 }

// maxCode is the largest finite magnitude's code.
func (m Minifloat) maxCode() uint32 {
	if m.Finite {
		return (1<<m.Exp-1)<<m.Man | (1<<m.Man - 2)
	}
	return (1<<m.Exp-2)<<m.Man | (1<<m.Man - 1)
}

// infCode is the code of +Inf (IEEE encodings).
func (m Minifloat) infCode() uint32 { return (1<<m.Exp - 1) << m.Man }

// overflow is the float32 bits from which a magnitude narrows past the
// largest finite value: that value plus half its ulp (a tie there rounds
// up for an IEEE element, whose largest mantissa is odd; e4m3fn's is even
// and the tie rounds down to it, which saturating gives as well).
func (m Minifloat) overflow() uint32 {
	e, man := m.maxCode()>>m.Man, m.maxCode()&(1<<m.Man-1)
	return (e-uint32(m.Bias)+127)<<23 | man<<m.shift() + 1<<(m.shift()-1)
}

// minifloat is e's Minifloat; it panics for any other element.
func minifloat(e Elem) Minifloat {
	m, ok := Minifloats[e]
	if !ok {
		panic("vec: no minifloat codec for element " + e.Name + " (f16, bf16, e4m3, e5m2)")
	}
	return m
}

// Narrow is the minifloat family's narrowing: for the float32 lanes of x,
// the bits of e (f16, bf16, e4m3, e5m2) in 32-bit lanes, rounded to
// nearest even, exactly verify/codec's f32to16, f32tobf16, f32toe4m3 and
// f32toe5m2. With a the magnitude's bits (the sign set back at the end):
//
//	NaN      a > 0x7f800000:  KeepNaN: Inf | quiet bit | (a >> shift) & mantissa; else all ones
//	overflow a ≥ overflow():  Sat: the largest finite code, else Inf
//	normal   a ≥ 2^(1−Bias):  (a + (2^(shift−1) − 1) + (a>>shift & 1) − rebias) >> shift
//	below    bits(fl(a + 2^(23+1−Bias−Man))) − bits(2^(23+1−Bias−Man)) (the float32
//	         sum rounds a to the element's subnormal ulp, to nearest even)
//
// bf16 (float32's exponent range) has only the normal path, on the bits
// with their sign: it covers float32's subnormals, overflow carries into
// Inf, and a NaN is its top 16 bits with the quiet bit set. A target's Native
// hook replaces the whole when it has one for e.
func Narrow(t Target, e Elem, x V) V {
	m := minifloat(e)
	if n, ok := t.(Native); ok {
		if v, ok := n.NarrowNative(e, x); ok {
			return v
		}
	}
	c := t.(Codec)
	k := c.U32
	u := c.AsU32(x)
	sh := m.shift()
	if m.Exp == 8 {
		// float32's exponent range: the sign rides along (no rebias, no
		// clamp, overflow carrying into Inf), and a NaN is its top bits,
		// quieted.
		top := c.Shr32(u, sh)
		r := c.Shr32(c.Add32(c.Add32(u, c.And(top, k(1))), k(1<<(sh-1)-1)), sh)
		nan := c.Or(top, k(1<<(m.Man-1)))
		return c.Select(c.IsNaN(x), nan, r)
	}
	a := c.And(u, k(0x7fffffff))
	r := c.Add32(a, c.And(c.Shr32(a, sh), k(1)))
	r = c.Shr32(c.Add32(r, k(1<<(sh-1)-1-m.rebias())), sh)
	magic := uint32(127+23+1-m.Bias-m.Man) << 23
	s := c.Sub32(c.AsU32(t.Add(c.AsF32(a), c.AsF32(k(magic)))), k(magic))
	r = c.Select(c.Gt32(k(uint32(1-m.Bias+127)<<23), a), s, r)
	ov := m.infCode()
	if m.Sat {
		ov = m.maxCode()
	}
	r = c.Select(c.Gt32(a, k(m.overflow()-1)), k(ov), r)
	var nan V
	if m.KeepNaN {
		nan = c.Or(c.And(c.Shr32(a, sh), k(1<<m.Man-1)), k(m.infCode()|1<<(m.Man-1)))
	} else {
		nan = k(1<<(m.width()-1) - 1)
	}
	r = c.Select(c.Gt32(a, k(0x7f800000)), nan, r)
	return c.Or(r, c.Shr32(c.And(u, k(0x80000000)), 32-m.width()))
}

// Widen is the minifloat family's widening: the float32 lanes of the e
// bits in the 32-bit lanes of b (zero-extended codes), exactly verify/codec's
// f16to32, bf16to32, e4m3to32 and e5m2to32. With a the magnitude's code:
//
//	normal    (a << shift) + rebias
//	subnormal (a < 2^Man): fl(a · 2^(1−Bias−Man)), exact
//	IEEE a ≥ Inf's code: (a << shift) | 0x7f800000 (Inf, a NaN keeping its payload)
//	Finite a all ones: the quiet NaN 0x7fc00000
//
// and the sign set. bf16 is b << 16.
func Widen(t Target, e Elem, b V) V {
	m := minifloat(e)
	if n, ok := t.(Native); ok {
		if v, ok := n.WidenNative(e, b); ok {
			return v
		}
	}
	c := t.(Codec)
	k := c.U32
	if m.Exp == 8 {
		return c.AsF32(c.Shl32(b, 16))
	}
	w, sh := m.width(), m.shift()
	a := c.And(b, k(1<<(w-1)-1))
	s := c.Shl32(a, sh)
	r := c.Add32(s, k(m.rebias()))
	sub := c.AsU32(t.Mul(c.ToF32(a), c.AsF32(k(math.Float32bits(float32(math.Ldexp(1, 1-m.Bias-m.Man)))))))
	r = c.Select(c.Gt32(k(1<<m.Man), a), sub, r)
	if m.Finite {
		r = c.Select(c.Eq32(a, k(1<<(w-1)-1)), k(0x7fc00000), r)
	} else {
		r = c.Select(c.Gt32(a, k(m.infCode()-1)), c.Or(s, k(0x7f800000)), r)
	}
	return c.AsF32(c.Or(r, c.Shl32(c.And(b, k(1<<(w-1))), 32-w)))
}
