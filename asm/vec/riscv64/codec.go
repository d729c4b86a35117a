package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// widen is the lanes v of e as float32 lanes, exactly: zero-extended to
// 32-bit lanes, then the minifloat family (vec.Widen).
func (t *Target) widen(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	return vec.Widen(t, e, t.extend(e, v)).(*reg)
}

// narrow is the float32 lanes v as lanes of e, rounded to nearest even:
// the minifloat family (vec.Narrow), its bits packed to e's width.
func (t *Target) narrow(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	return t.pack(e, t.group(vec.Narrow(t, e, v).(*reg)))
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
