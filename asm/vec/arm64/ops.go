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
