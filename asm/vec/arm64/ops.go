package arm64

import (
	"math"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// arith emits d = a op b at the narrower operand's width.
func (t *Target) arith(op func(neon.Arrangement, neon.Reg, neon.Reg, neon.Reg) (neon.Inst, error), a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	d := t.newValue(min(x.w, y.w), x.e)
	t.e3(op, d.arr(), d.r, x.r, y.r)
	return d
}

func (t *Target) Mul(a, b vec.V) vec.V { return t.arith(neon.FMUL, a, b) }
func (t *Target) Add(a, b vec.V) vec.V { return t.arith(neon.FADD, a, b) }
func (t *Target) Sub(a, b vec.V) vec.V { return t.arith(neon.FSUB, a, b) }
func (t *Target) Div(a, b vec.V) vec.V { return t.arith(neon.FDIV, a, b) }

// Const is v in every lane of the compute type.
func (t *Target) Const(v float64) vec.V {
	if c := t.f.C(); c == vec.F64 {
		return &value{r: t.konst(math.Float64bits(v), "D2", "MOVD"), w: 2, e: c}
	}
	return &value{r: t.k(math.Float32bits(float32(v))), w: 4, e: vec.F32}
}

// Broadcast is the argument name, of type e, in every lane.
func (t *Target) Broadcast(name string, e vec.Elem) vec.V {
	v := &value{r: t.vreg(), w: lanes(e), e: e}
	t.hoist(func() {
		s, arr := "S", "S4"
		if e == vec.F64 {
			s, arr = "D", "D2"
		}
		t.vop("FMOV%s %s, F%d", s, t.arg(name), v.r)
		t.vop("VDUP V%d.%s[0], V%d.%s", v.r, s, v.r, arr)
	})
	return v
}

// Scalar is the float64 argument name.
func (t *Target) Scalar(name string) vec.S {
	r := t.vreg()
	t.vop("FMOVD %s, F%d", t.arg(name), r)
	return r
}

// Acc is a norm's 8 partial sums: four registers of two float64 lanes,
// s0 s1 | s2 s3 | s4 s5 | s6 s7.
func (t *Target) Acc() vec.V {
	a := make([]vr, 4)
	for i := range a {
		a[i] = t.vreg()
		t.vop("VEOR V%d.B16, V%d.B16, V%d.B16", a[i], a[i], a[i])
	}
	return a
}

// SumSquares adds the squares of a's values, widened to float64, into the
// lanes j mod 8: a register of values a load, a long head in a loop of 64
// values.
func (h *head) SumSquares(acc vec.V, a vec.Arr) {
	t, s := h.t, acc.([]vr)
	H, l := t.f.Shape.HeadDim, lanes(t.f.C())
	sq := func(j, w int) {
		t.scope(func() {
			v := t.load(a, j, w)
			parts := []vr{v.r}
			if v.e == vec.F32 { // float32 lanes: two of float64 each
				lo, hi := t.vreg(), t.vreg()
				t.e2(neon.FCVTL, neon.A2D, lo, v.r)
				t.e2(neon.FCVTL2, neon.A2D, hi, v.r)
				parts = []vr{lo, hi}[:(w+1)/2]
			}
			for i, p := range parts {
				acc := s[(j%8)/2+i]
				t.e3(neon.FMUL, neon.A2D, p, p, p) // exact for float32 values
				t.e3(neon.FADD, neon.A2D, acc, acc, p)
			}
		})
	}
	const chunk = 64
	j := 0
	if times := H / chunk; H > unrollMax && times >= 2 {
		t.scope(func() { // the count and the loop's cursors: free after it
			cnt := t.greg()
			t.op("MOVD $%d, %s", times, cnt)
			top := t.label("sum")
			t.lab(top)
			t.walkScope(len(t.lines) - 1)
			for j = 0; j < chunk; j += l {
				sq(j, l)
			}
			t.walks = t.walks[:len(t.walks)-1]
			t.op("SUBS $1, %s", cnt)
			t.br("BNE", top)
		})
		j = times * chunk
	}
	for ; j < H; j += l {
		sq(j, min(l, H-j))
	}
}

// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)): FADDP last.
func (t *Target) Reduce(acc vec.V) vec.S {
	s := acc.([]vr)
	t.e3(neon.FADD, neon.A2D, s[0], s[0], s[2]) // s0+s4, s1+s5
	t.e3(neon.FADD, neon.A2D, s[1], s[1], s[3]) // s2+s6, s3+s7
	t.e3(neon.FADD, neon.A2D, s[0], s[0], s[1])
	t.e2(neon.FADDP, neon.A2D, s[0], s[0])
	return s[0]
}

// Scale is r = fl(1/sqrt(ss/count + eps)) in every lane, in float64 but the
// last rounding.
func (t *Target) Scale(ss vec.S, count vec.Int, eps vec.S) vec.V {
	x, n := ss.(vr), t.vreg()
	t.scope(func() {
		g, ok := count.(string)
		if !ok {
			g = t.greg()
			t.op("MOVD $%d, %s", int(count.(imm)), g)
		}
		t.vop("SCVTFD %s, F%d", g, n)
	})
	t.vop("FDIVD F%d, F%d, F%d", n, x, x)
	t.vop("FADDD F%d, F%d, F%d", eps.(vr), x, x)
	t.vop("FSQRTD F%d, F%d", x, x)
	t.vop("FMOVD $(1.0), F%d", n)
	t.vop("FDIVD F%d, F%d, F%d", x, n, n) // 1/q
	v := &value{r: n, w: lanes(t.f.C()), e: t.f.C()}
	if v.e == vec.F64 {
		t.vop("VDUP V%d.D[0], V%d.D2", n, n)
		return v
	}
	t.vop("FCVTDS F%d, F%d", n, n)
	t.vop("VDUP V%d.S[0], V%d.S4", n, n)
	return v
}

// regs is n fresh registers, consecutive when a multi-register load or
// store names them.
func (t *Target) regs(n int) []vr {
	rs := make([]vr, n)
	for i := range rs {
		rs[i] = t.vreg()
	}
	t.group(rs...)
	return rs
}

// Quantize stores blocks q8_0 blocks of src at dst: amax by FMAX and FMAXV
// when the block holds no NaN, else ggml's MAX sequence in scalar (FCMP and
// FCSEL GT); d and 1/d in scalar float32, d as f16; q = FCVTZS(FRINTA(x·id))
// (roundf), NaN lanes zeroed, clamped to ±127.
func (h *head) Quantize(src, dst vec.Arr, blocks int) {
	t := h.t
	k127, km127, one, zero := t.k(0x42fe0000), t.k(0xc2fe0000), t.k(0x3f800000), t.k(0)
	t.scope(func() {
		s, d, cnt, p, g, j := t.greg(), t.greg(), t.greg(), t.greg(), t.greg(), t.greg()
		t.op("MOVD %s, %s", src.P.(*ptr).r, s)
		t.op("MOVD %s, %s", dst.P.(*ptr).r, d)
		t.op("MOVD $%d, %s", blocks, cnt)
		top, nan, join, scan, next := t.label("block"), t.label("nan"), t.label("join"), t.label("scan"), t.label("next")
		t.lab(top)
		t.op("MOVD %s, %s", s, p)
		x := append(t.regs(4), t.regs(4)...)
		t.vop("VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", s, x[0], x[1], x[2], x[3])
		t.vop("VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", s, x[4], x[5], x[6], x[7])
		a := make([]vr, 8)
		for i := range a {
			a[i] = t.vreg()
			t.e2(neon.FABS, neon.A4S, a[i], x[i])
		}
		for n := 4; n > 0; n /= 2 {
			for i := range n {
				t.e3(neon.FMAX, neon.A4S, a[i], a[i], a[i+n])
			}
		}
		amax, v, id := t.vreg(), t.vreg(), t.vreg()
		t.e2(neon.FMAXV, neon.A4S, amax, a[0])
		t.vop("FCMPS F%d, F%d", amax, amax)
		t.op("BVS %s // a NaN in the block", nan)
		t.lab(join)
		t.vop("FDIVS F%d, F%d, F%d // d = amax/127", k127, amax, v)
		t.vop("FDIVS F%d, F%d, F%d", v, one, id)
		t.vop("FCMPS $(0.0), F%d", v)
		t.vop("FCSELS EQ, F%d, F%d, F%d // id = d ≠ 0 ? 1/d : 0", zero, id, id)
		t.vop("FCVTSH F%d, F%d", v, v)
		t.vop("FMOVS F%d, %s", v, g)
		t.op("MOVH.P %s, 2(%s) // d as f16", g, d)
		t.vop("VDUP V%d.S[0], V%d.S4", id, id)
		for _, r := range x {
			m := t.vreg()
			t.e3(neon.FMUL, neon.A4S, r, r, id)
			t.e3(neon.FCMEQ, neon.A4S, m, r, r)
			t.vop("VAND V%d.B16, V%d.B16, V%d.B16", m, r, r) // NaN lanes zeroed
			t.e3(neon.FMIN, neon.A4S, r, r, k127)
			t.e3(neon.FMAX, neon.A4S, r, r, km127)
			t.e2(neon.FRINTA, neon.A4S, r, r)
			t.e2(neon.FCVTZS, neon.A4S, r, r)
		}
		hs, o := []vr{t.vreg(), t.vreg(), t.vreg(), t.vreg()}, t.regs(2)
		for i, hr := range hs {
			t.e2(neon.XTN, neon.A4S, hr, x[2*i])
			t.e2(neon.XTN2, neon.A4S, hr, x[2*i+1])
		}
		for i, or := range o {
			t.e2(neon.XTN, neon.A8H, or, hs[2*i])
			t.e2(neon.XTN2, neon.A8H, or, hs[2*i+1])
		}
		t.vop("VST1.P [V%d.B16, V%d.B16], 32(%s)", o[0], o[1], d)
		t.op("SUBS $1, %s", cnt)
		t.br("BNE", top)
		t.op("B %s", next)
		// A NaN: amax = MAX(amax, |x_j|) for j = 0…31 from 0.
		t.lab(nan)
		t.vop("VEOR V%d.B16, V%d.B16, V%d.B16", amax, amax, amax)
		t.op("MOVD $32, %s", j)
		t.lab(scan)
		t.vop("FMOVS.P 4(%s), F%d", p, v)
		t.vop("FABSS F%d, F%d", v, v)
		t.vop("FCMPS F%d, F%d", v, amax)
		t.vop("FCSELS GT, F%d, F%d, F%d // amax = amax > |x_j| ? amax : |x_j|", amax, v, amax)
		t.op("SUBS $1, %s", j)
		t.br("BNE", scan)
		t.br("B", join)
		t.lab(next)
	})
}

// Dequantize loads the blocks at src into float32 values at dst: q·d.
func (h *head) Dequantize(src, dst vec.Arr, blocks int) {
	t := h.t
	t.scope(func() {
		s, d, cnt, g := t.greg(), t.greg(), t.greg(), t.greg()
		t.op("MOVD %s, %s", src.P.(*ptr).r, s)
		t.op("MOVD %s, %s", dst.P.(*ptr).r, d)
		t.op("MOVD $%d, %s", blocks, cnt)
		top := t.label("block")
		t.lab(top)
		dv, b := t.vreg(), t.regs(2)
		t.op("MOVHU.P 2(%s), %s", s, g)
		t.vop("FMOVS %s, F%d", g, dv)
		t.vop("FCVTHS F%d, F%d", dv, dv)
		t.vop("VDUP V%d.S[0], V%d.S4", dv, dv)
		t.vop("VLD1.P 32(%s), [V%d.B16, V%d.B16]", s, b[0], b[1])
		q := append(t.regs(4), t.regs(4)...)
		for i, br := range b {
			h0, h1 := t.vreg(), t.vreg()
			t.e2(neon.SXTL, neon.A8H, h0, br)
			t.e2(neon.SXTL2, neon.A8H, h1, br)
			t.e2(neon.SXTL, neon.A4S, q[4*i], h0)
			t.e2(neon.SXTL2, neon.A4S, q[4*i+1], h0)
			t.e2(neon.SXTL, neon.A4S, q[4*i+2], h1)
			t.e2(neon.SXTL2, neon.A4S, q[4*i+3], h1)
		}
		for _, r := range q {
			t.e2(neon.SCVTF, neon.A4S, r, r)
			t.e3(neon.FMUL, neon.A4S, r, r, dv)
		}
		t.vop("VST1.P [V%d.S4, V%d.S4, V%d.S4, V%d.S4], 64(%s)", q[0], q[1], q[2], q[3], d)
		t.vop("VST1.P [V%d.S4, V%d.S4, V%d.S4, V%d.S4], 64(%s)", q[4], q[5], q[6], q[7], d)
		t.op("SUBS $1, %s", cnt)
		t.br("BNE", top)
	})
}
