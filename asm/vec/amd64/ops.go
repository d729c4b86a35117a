package amd64

import (
	"math"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// materialize is v in a register: a memory operand loaded.
func (t *Target) materialize(v *value) reg.VecVirtual {
	if v.r == nil {
		*v = *t.loadAt(t.elem(v), v.m, v.w)
	}
	return v.r
}

// arith emits d = a op b at the width of the narrower operand; one of them
// may be a memory operand (the first avo operand).
func (t *Target) arith(ps, pd func(...operand.Op), a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	if x.r == nil && y.r == nil {
		t.materialize(y)
	}
	w, e := min(x.w, y.w), t.elem(x)
	in := func(v *value) operand.Op {
		if v.r == nil {
			return v.m
		}
		return t.sizedTo(v.r, t.regBytes(w*e.Size))
	}
	d := t.regBytes(w * e.Size)
	op := ps
	if e.Size == 8 {
		op = pd
	}
	if x.r == nil { // the memory operand first: commutative ops only
		op(in(x), in(y), d)
	} else {
		op(in(y), in(x), d)
	}
	return &value{r: d, w: w, e: e}
}

func (t *Target) Mul(a, b vec.V) vec.V { return t.arith(t.vmulps, t.vmulpd, a, b) }
func (t *Target) Add(a, b vec.V) vec.V { return t.arith(t.vaddps, t.vaddpd, a, b) }

func (t *Target) Sub(a, b vec.V) vec.V {
	t.materialize(a.(*value))
	return t.arith(t.vsubps, t.vsubpd, a, b)
}

func (t *Target) Div(a, b vec.V) vec.V {
	t.materialize(a.(*value))
	return t.arith(t.vdivps, t.vdivpd, a, b)
}

func (t *Target) vmulps(o ...operand.Op) { t.c.VMULPS(o[0], o[1], o[2]) }
func (t *Target) vmulpd(o ...operand.Op) { t.c.VMULPD(o[0], o[1], o[2]) }
func (t *Target) vaddps(o ...operand.Op) { t.c.VADDPS(o[0], o[1], o[2]) }
func (t *Target) vaddpd(o ...operand.Op) { t.c.VADDPD(o[0], o[1], o[2]) }
func (t *Target) vsubps(o ...operand.Op) { t.c.VSUBPS(o[0], o[1], o[2]) }
func (t *Target) vsubpd(o ...operand.Op) { t.c.VSUBPD(o[0], o[1], o[2]) }
func (t *Target) vdivps(o ...operand.Op) { t.c.VDIVPS(o[0], o[1], o[2]) }
func (t *Target) vdivpd(o ...operand.Op) { t.c.VDIVPD(o[0], o[1], o[2]) }

// swap is a with adjacent lanes exchanged: each value's partner.
func (t *Target) swap(a *value) *value {
	r := t.materialize(a)
	q := t.same(r)
	if t.f.C() == vec.F64 {
		t.c.VPERMILPD(operand.U8(0x55), r, q)
	} else {
		t.c.VPERMILPS(operand.U8(0xb1), r, q)
	}
	return &value{r: q, w: a.w}
}

// Const is v in every lane of the compute type.
func (t *Target) Const(v float64) vec.V {
	if t.f.C() == vec.F64 {
		return &value{r: t.constant(math.Float64bits(v), 8), w: t.lanes()}
	}
	return &value{r: t.constant(uint64(math.Float32bits(float32(v))), 4), w: t.lanes()}
}

// Broadcast is the argument name, of type e, in every lane.
func (t *Target) Broadcast(name string, e vec.Elem) vec.V {
	d := t.regBytes(t.l.bytes)
	t.hoist(func() {
		if e == vec.F64 {
			t.c.VBROADCASTSD(t.param(name), d)
		} else {
			t.c.VBROADCASTSS(t.param(name), d)
		}
	})
	return &value{r: d, w: t.Lanes(e), e: e}
}

// param is the address of the argument name.
func (t *Target) param(name string) operand.Mem {
	p, err := t.c.Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return p.Addr
}

// Scalar is the float64 argument name.
func (t *Target) Scalar(name string) vec.S {
	x := t.c.XMM()
	t.c.VMOVSD(t.param(name), x)
	return x
}
