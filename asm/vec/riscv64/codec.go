package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// widen is the lanes v of e as float32 lanes, exactly: integer operations
// and a multiplication by a power of two.
func (t *Target) widen(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	t.vt(32)
	w, s, f, k := t.vreg(32), t.vreg(32), t.vreg(32), t.reg('M', 1)
	switch e {
	case vec.BF16: // the upper half of a float32
		t.emit("VZEXTVF2", v, w)
		t.emit("VSLLVI", 16, w, w)
		return w
	case vec.F16: // sign·((h & 0x7fff) << 13)·2¹¹², exponent 31 (Inf, NaN) made 255
		t.emit("VZEXTVF2", v, w)
		t.emit("VSLLVI", 16, w, s) // the sign at bit 31
		t.emit("VSLLVI", 17, w, w)
		t.emit("VSRLVI", 4, w, w)
		t.emit("VFMULVF", t.f32(0x77800000), w, f) // exact, subnormals too
		t.emit("VMSGTUVX", t.int(0x0f7fffff), w, k)
		t.emit("VORVX", t.int(0x7f800000), f, k, f)
	default: // e4m3: sign·((b & 0x7f) << 20)·2¹²⁰, S.1111.111 a quiet NaN
		t.emit("VZEXTVF4", v, w)
		t.emit("VSLLVI", 24, w, s)
		t.emit("VSLLVI", 25, w, w)
		t.emit("VSRLVI", 5, w, w)
		t.emit("VFMULVF", t.f32(0x7b800000), w, f)
		t.emit("VMSEQVX", t.int(0x07f00000), w, k)
		t.emit("VMERGEVXM", t.int(0x7fc00000), f, k, f)
	}
	t.emit("VFSGNJVV", s, f, f)
	return f
}

// format is how f16 and e4m3 round a float32 (f32to16, f32toe4m3): a
// magnitude from low, the smallest normal, up is (bits − bias) >> shift
// rounded to nearest even, at most top (f16: Inf; e4m3: 448); one below is
// the bits of the float sum |x| + magic (magic's ulp is the smallest
// subnormal) less magic's; a NaN is top | nan; the sign is x's bits >>
// signShift, masked by sign.
type format struct {
	bias, low, magic, top, nan, sign uint32
	shift, signShift                 int
}

var formats = map[vec.Elem]format{
	vec.F16:  {bias: 112 << 23, low: 0x38800000, magic: 0x3f000000, top: 0x7c00, nan: 0x200, sign: 0x8000, shift: 13, signShift: 16},
	vec.E4M3: {bias: 120 << 23, low: 0x3c800000, magic: 0x46800000, top: 0x7e, nan: 0x01, sign: 0x80, shift: 20, signShift: 24},
}

// narrow is the float32 lanes v as lanes of e, rounded to nearest even:
// every lane through both of format's paths, then chosen.
func (t *Target) narrow(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	if !t.vxrm { // the clips round to nearest even
		t.vxrm = true
		t.pre = append(t.pre, &ins{"CSRRWI", []any{1, "VXRM", "X0"}})
	}
	t.vt(32)
	k := t.reg('M', 1)
	if e == vec.BF16 { // (u + 0x7fff + (u>>16)&1) >> 16; a NaN: u>>16 | 0x40
		t.emit("VMFNEVV", v, v, k)
		t.vt(16)
		h := t.vreg(16)
		t.emit("VNCLIPUWI", 16, v, h)
		t.emit("VNSRLWI", 16, v, k, h)
		t.emit("VORVX", t.int(0x40), h, k, h)
		return h
	}
	fm := formats[e]
	a, m, s := t.vreg(32), t.vreg(32), t.vreg(32)
	t.emit("VFSGNJXVV", v, v, a) // |x|
	t.emit("VSUBVX", t.int(int(fm.bias)), a, m)
	t.emit("VMINUVX", t.int(int(fm.top<<fm.shift)), m, m)
	t.emit("VFADDVF", t.f32(fm.magic), a, s)
	t.emit("VSLLVI", fm.shift, s, s) // (bits − magic) << shift: magic << shift ≡ 0 (mod 2³²)
	t.emit("VMSLTUVX", t.int(int(fm.low)), a, k)
	t.emit("VMERGEVVM", s, m, k, m)
	k = t.reg('M', 1)
	t.emit("VMFNEVV", v, v, k)
	t.vt(16)
	h, g := t.vreg(16), t.vreg(16)
	t.emit("VNCLIPUWI", fm.shift, m, h)
	t.emit("VORVX", t.int(int(fm.nan)), h, k, h)
	t.emit("VNSRLWI", fm.signShift, v, g) // the sign at bit 15 (f16), 7 (e4m3)
	t.emit("VANDVX", t.int(int(fm.sign)), g, g)
	t.emit("VORVV", g, h, h)
	if e == vec.E4M3 {
		t.vt(8)
		b := t.vreg(8)
		t.emit("VNSRLWI", 0, h, b)
		return b
	}
	return h
}

// Quantize stores blocks q8_0 blocks of src's float32 values at dst, a
// block an iteration: its 32 values in one group (e32 at LMUL 8, 32 lanes
// from VLEN 128 on).
func (t *Target) Quantize(src, dst vec.Arr, blocks int) {
	ps, pd, cnt := t.addr(src), t.addr(dst), t.x()
	t.emit("MOV", blocks, cnt)
	top := t.label()
	t.setvl(t.int(32), 32, 4, "TA", "X0")
	x, a, m, xm := t.vreg(32), t.vreg(32), t.reg('V', 1), t.x()
	t.emit("VLE32V", mem{ps}, x)
	t.emit("VFSGNJXVV", x, x, a)  // |x_j|
	t.emit("VREDMAXUVS", a, a, m) // the largest bits: +Inf's are below a NaN's
	t.emit("VMVXS", m, xm)
	// amax: that maximum without a NaN; else ggml's MAX in order from 0,
	// amax = amax > |x_j| ? amax : |x_j|.
	amax, fast, join, keep := t.fr(), t.newLabel(), t.newLabel(), t.newLabel()
	t.emit("BGEU", t.int(0x7f800000), xm, fast.args[0])
	p, j, y, lt := t.addr(vec.Arr{Elem: vec.F32, P: ps}), t.x(), t.fr(), t.x()
	t.emit("MOV", 32, j)
	t.emit("FMVWX", "X0", amax)
	scan := t.label()
	t.emit("MOVF", mem{p}, y)
	t.emit("FSGNJXS", y, y, y)
	t.emit("FLTS", amax, y, lt)
	t.emit("BNEZ", lt, keep.args[0])
	t.emit("MOVF", y, amax)
	t.place(keep)
	t.emit("ADD", 4, p, p)
	t.emit("ADD", -1, j, j)
	t.loop("BNEZ", scan, j)
	t.emit("JMP", join.args[0])
	t.place(fast)
	t.emit("FMVWX", xm, amax)
	// d = amax/127, id = d ≠ 0 ? 1/d : 0; d stored as f16 from a one-lane
	// vector, as two bytes (a block may start at an odd address).
	d, id, z, nz := t.fr(), t.fr(), t.x(), t.newLabel()
	t.place(join)
	t.emit("FDIVS", t.f32(0x42fe0000), amax, d)
	t.emit("FDIVS", d, t.f32(0x3f800000), id)
	t.emit("FEQS", t.f32(0), d, z)
	t.emit("BEQZ", z, nz.args[0])
	t.emit("FMVWX", "X0", id)
	t.place(nz)
	t.setvl(1, 32, 32, "TA", "X0")
	dv := t.vreg(32)
	t.emit("VFMVSF", d, dv)
	hd := t.narrow(vec.F16, dv)
	t.setvl(2, 8, 32, "TA", "X0")
	t.emit("VSE8V", hd, mem{pd})
	// q_j = roundf(x_j·id), converted with frm at RMM (nearest, ties away
	// from zero) and back to RNE at once (an assembly function is not
	// preempted; a signal handler restores frm); a NaN 0, saturated at
	// ±32767, ±127 and −128 by the conversions, then at −127.
	t.setvl(t.int(32), 32, 4, "TA", "X0")
	v, k, q, b, pq := t.vreg(32), t.reg('M', 1), t.vreg(16), t.vreg(8), t.x()
	t.emit("VFMULVF", id, x, v)
	t.emit("VMFNEVV", v, v, k)
	t.vt(16)
	t.emit("CSRRWI", 4, "FRM", "X0")
	t.emit("VFNCVTXFW", v, q)
	t.emit("CSRRWI", 0, "FRM", "X0")
	t.emit("VMERGEVIM", 0, q, k, q)
	t.vt(8)
	t.emit("VNCLIPWI", 0, q, b)
	t.emit("VMAXVX", t.int(-127), b, b)
	t.emit("ADD", 2, pd, pq)
	t.emit("VSE8V", b, mem{pq})
	t.emit("ADD", 128, ps, ps)
	t.emit("ADD", 34, pd, pd)
	t.emit("ADD", -1, cnt, cnt)
	t.loop("BNEZ", top, cnt)
}

// Dequantize loads the blocks at src into the float32 values at dst,
// x_j = fl(q_j·d), d read as two bytes and widened from f16 in a one-lane
// vector.
func (t *Target) Dequantize(src, dst vec.Arr, blocks int) {
	ps, pd, cnt := t.addr(src), t.addr(dst), t.x()
	t.emit("MOV", blocks, cnt)
	top := t.label()
	t.setvl(2, 8, 32, "TA", "X0")
	hd, d, pq := t.vreg(8), t.fr(), t.x()
	t.emit("VLE8V", mem{ps}, hd)
	t.setvl(1, 32, 32, "TA", "X0")
	t.emit("VFMVFS", t.widen(vec.F16, hd), d)
	t.setvl(t.int(32), 32, 4, "TA", "X0")
	b, w := t.vreg(8), t.vreg(32)
	t.emit("ADD", 2, ps, pq)
	t.emit("VLE8V", mem{pq}, b)
	t.emit("VSEXTVF4", b, w)
	t.emit("VFCVTFXV", w, w)
	t.emit("VFMULVF", d, w, w)
	t.emit("VSE32V", w, mem{pd})
	t.emit("ADD", 34, ps, ps)
	t.emit("ADD", 128, pd, pd)
	t.emit("ADD", -1, cnt, cnt)
	t.loop("BNEZ", top, cnt)
}
