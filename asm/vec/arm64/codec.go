package arm64

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// load reads w values of a from value j, exactly their bytes, widened to
// the compute type: a register, its low 8 or 4 bytes, or 2 or 1 bytes
// through a general register.
func (t *Target) load(a vec.Arr, j, w int) *value {
	e := a.Elem
	v := t.newValue(w, e)
	b := w * e.Size
	m := t.at(a, j, b, false)
	switch b {
	case 16:
		t.vop("VLD1.P %s, [V%d.%s]", m, v.r, v.goArr())
	case 8:
		t.vop("FMOVD.P %s, F%d", m, v.r)
	case 4:
		t.vop("FMOVS.P %s, F%d", m, v.r)
	default:
		t.scope(func() {
			g := t.greg()
			t.op("MOV%sU.P %s, %s", map[int]string{2: "H", 1: "B"}[b], m, g)
			t.vop("FMOVS %s, F%d", g, v.r)
		})
	}
	t.widen(e, v.r)
	return v
}

// store narrows v to a's type and writes its w values at value j of a.
func (t *Target) store(v *value, a vec.Arr, j, w int) {
	r := t.narrow(a.Elem, v)
	b := w * a.Elem.Size
	m := t.at(a, j, b, true)
	switch b {
	case 16:
		t.vop("VST1.P [V%d.%s], %s", r, v.goArr(), m)
	case 8:
		t.vop("FMOVD.P F%d, %s", r, m)
	case 4:
		t.vop("FMOVS.P F%d, %s", r, m)
	default:
		t.vop("VST1.P V%d.%s[0], %s", r, map[int]string{2: "H", 1: "B"}[b], m)
	}
}

// widen turns the narrow values loaded into r's low lanes into float32
// (exactly): FCVTL, SHLL #16, or e4m3 through integer lanes.
func (t *Target) widen(e vec.Elem, r vr) {
	switch e {
	case vec.F16:
		t.e2(neon.FCVTL, neon.A4S, r, r)
	case vec.BF16:
		t.e2(neon.SHLL, neon.A4S, r, r)
	case vec.E4M3:
		t.vop("VUXTL V%d.B8, V%d.H8", r, r)
		t.vop("VUXTL V%d.H4, V%d.S4", r, r)
		t.e4m3Widen(r)
	}
}

// narrow is the register holding v narrowed to e in its low lanes (v's own
// for float32 and float64): FCVTN, bf16's rounding then SHRN #16, or
// e4m3's bits XTN'd twice.
func (t *Target) narrow(e vec.Elem, v *value) vr {
	switch e {
	case vec.F16:
		d := t.vreg()
		t.e2(neon.FCVTN, neon.A4S, d, v.r)
		return d
	case vec.BF16:
		return t.bf16Round(v.r)
	case vec.E4M3:
		d := t.e4m3Narrow(v.r)
		t.e2(neon.XTN, neon.A4S, d, d)
		t.e2(neon.XTN, neon.A8H, d, d)
		return d
	}
	return v.r
}

// k is the 32-bit constant v in every lane of a register, made once.
func (t *Target) k(v uint32) vr { return t.konst(uint64(v), "S4", "MOVW") }

// konst is a register holding bits in every lane (arr S4 or D2), made
// before the function's loops.
func (t *Target) konst(bits uint64, arr, mov string) vr {
	key := arr + fmt.Sprint(bits)
	if r, ok := t.consts[key]; ok {
		return r
	}
	r := t.vreg()
	t.hoist(func() {
		t.scope(func() { // the general register only carries the bits
			g := t.greg()
			t.op("%s $%#x, %s", mov, bits, g)
			t.vop("VDUP %s, V%d.%s", g, r, arr)
		})
	})
	t.consts[key] = r
	return r
}

// bf16Round is r's float32 lanes as bfloat16 in the low 4 halves of a
// register: (u + 0x7fff + (u>>16 & 1)) >> 16, a NaN's top half with the
// quiet bit set (f32tobf16 lane by lane).
func (t *Target) bf16Round(r vr) vr {
	u, m, q := t.vreg(), t.vreg(), t.vreg()
	t.vop("VCMTST V%d.S4, V%d.S4, V%d.S4", t.k(0x10000), r, u) // all ones where the kept lsb is set
	t.vop("VSUB V%d.S4, V%d.S4, V%d.S4", u, t.k(0x7fff), u)    // bias + lsb
	t.vop("VADD V%d.S4, V%d.S4, V%d.S4", r, u, u)
	t.e3(neon.FCMEQ, neon.A4S, m, r, r) // not NaN
	t.vop("VORR V%d.B16, V%d.B16, V%d.B16", t.k(0x400000), r, q)
	t.vop("VBIF V%d.B16, V%d.B16, V%d.B16", m, q, u) // NaN lanes: quieted
	t.enc(func(p []neon.Reg) (neon.Inst, error) { return neon.SHRN(neon.A4S, p[0], p[1], 16) }, u, u)
	return u
}

// e4m3Narrow is, in each 32-bit lane, the e4m3fn bits of r's float32
// (f32toe4m3 lane by lane): the magnitude clamped at 448's bits, 20
// mantissa bits rounded to nearest even, or below 2⁻⁶ the sum with 2¹⁴ (ulp
// 2⁻⁹) as a float; NaN S.1111.111.
func (t *Target) e4m3Narrow(r vr) vr {
	a, sign, m, n, s, sub, nan := t.vreg(), t.vreg(), t.vreg(), t.vreg(), t.vreg(), t.vreg(), t.vreg()
	t.vop("VAND V%d.B16, V%d.B16, V%d.B16", t.k(0x7fffffff), r, a)
	t.vop("VEOR V%d.B16, V%d.B16, V%d.B16", a, r, sign)
	t.vop("VUSHR $24, V%d.S4, V%d.S4", sign, sign) // 0x80 or 0
	t.vop("VUMIN V%d.S4, V%d.S4, V%d.S4", t.k(math.Float32bits(448)), a, m)
	t.vop("VUSHR $20, V%d.S4, V%d.S4", m, n)
	t.vop("VAND V%d.B16, V%d.B16, V%d.B16", t.k(1), n, n)
	t.vop("VADD V%d.S4, V%d.S4, V%d.S4", m, n, n)
	t.vop("VADD V%d.S4, V%d.S4, V%d.S4", t.k(0x7ffff), n, n)
	t.vop("VUSHR $20, V%d.S4, V%d.S4", n, n)
	t.vop("VSUB V%d.S4, V%d.S4, V%d.S4", t.k(120<<3), n, n) // the exponent biases' difference
	magic := t.k(math.Float32bits(0x1p14))
	t.e3(neon.FADD, neon.A4S, s, m, magic)
	t.vop("VSUB V%d.S4, V%d.S4, V%d.S4", magic, s, s)
	t.e3(neon.CMGT, neon.A4S, sub, t.k(math.Float32bits(0x1p-6)), a) // 2⁻⁶ > a
	t.e3(neon.CMGT, neon.A4S, nan, a, t.k(0x7f800000))               // a > Inf
	t.vop("VBIT V%d.B16, V%d.B16, V%d.B16", sub, s, n)
	t.vop("VBIT V%d.B16, V%d.B16, V%d.B16", nan, t.k(0x7f), n)
	t.vop("VORR V%d.B16, V%d.B16, V%d.B16", sign, n, n)
	return n
}

// e4m3Widen turns the e4m3fn bytes in r's 32-bit lanes into their float32
// values (e4m3to32 lane by lane).
func (t *Target) e4m3Widen(r vr) {
	a, sign, n, s, sub, nan := t.vreg(), t.vreg(), t.vreg(), t.vreg(), t.vreg(), t.vreg()
	t.vop("VAND V%d.B16, V%d.B16, V%d.B16", t.k(0x7f), r, a)
	t.vop("VAND V%d.B16, V%d.B16, V%d.B16", t.k(0x80), r, sign)
	t.vop("VSHL $24, V%d.S4, V%d.S4", sign, sign)
	t.vop("VSHL $20, V%d.S4, V%d.S4", a, n)
	t.vop("VADD V%d.S4, V%d.S4, V%d.S4", t.k(120<<23), n, n) // (e+120)<<23 | m<<20
	t.e2(neon.SCVTF, neon.A4S, s, a)
	t.e3(neon.FMUL, neon.A4S, s, s, t.k(math.Float32bits(0x1p-9))) // m·2⁻⁹ (a < 8 where used)
	t.e3(neon.CMGT, neon.A4S, sub, t.k(8), a)
	t.vop("VCMEQ V%d.S4, V%d.S4, V%d.S4", t.k(0x7f), a, nan)
	t.vop("VBIT V%d.B16, V%d.B16, V%d.B16", sub, s, n)
	t.vop("VBIT V%d.B16, V%d.B16, V%d.B16", nan, t.k(0x7fc00000), n)
	t.vop("VORR V%d.B16, V%d.B16, V%d.B16", sign, n, r)
}
