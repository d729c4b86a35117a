package arm64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// The qn family's operations (vec.Packer) on a block's 8 members of 4
// lanes (Quantizer's): USHL for the variable shifts (a right shift is a
// left one by the negated count), ORR across, the nibbles narrowed by XTN
// and widened by UXTL.

// ushl is USHL Vd.4S, Vn.4S, Vm.4S (each lane of n shifted by the signed
// low byte of m's lane: left when positive, right logical when negative),
// which Go's assembler lacks: its word.
func ushl(p []neon.Reg) (neon.Inst, error) {
	d, n, m := p[0], p[1], p[2]
	for _, r := range p {
		if r < 0 || r > 31 {
			return neon.Inst{}, fmt.Errorf("arm64: ushl: register V%d out of range", r)
		}
	}
	return neon.Inst{Word: 0x6ea04400 | uint32(m)<<16 | uint32(n)<<5 | uint32(d),
		Asm: fmt.Sprintf("ushl v%d.4s, v%d.4s, v%d.4s", d, n, m)}, nil
}

// Shlv32 is USHL by b; Shrv32 USHL by −b.
func (t *Target) Shlv32(a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	d := &value{r: t.vreg(), w: min(x.w, y.w), e: vec.F32}
	t.enc(ushl, d.r, x.r, y.r)
	return d
}

func (t *Target) Shrv32(a, b vec.V) vec.V { return t.Shlv32(a, t.Sub32(t.U32(0), b)) }

// OrAcross is ORR of the members, then of the register with itself
// rotated by 8 and 4 bytes (EXT), as MaxAcross.
func (t *Target) OrAcross(xs []vec.V) vec.V {
	r := func(v vec.V) vr { return v.(*value).r }
	d := t.vreg()
	t.vop("VORR V%d.B16, V%d.B16, V%d.B16", r(xs[min(1, len(xs)-1)]), r(xs[0]), d)
	for _, x := range xs[min(2, len(xs)):] {
		t.vop("VORR V%d.B16, V%d.B16, V%d.B16", r(x), d, d)
	}
	for _, n := range []int{8, 4} {
		e := t.vreg()
		t.vop("VEXT $%d, V%d.B16, V%d.B16, V%d.B16", n, d, d, e)
		t.vop("VORR V%d.B16, V%d.B16, V%d.B16", e, d, d)
	}
	return &value{r: d, w: 4, e: vec.F32}
}

// StoreNibbles is v_i = q_i | q_{i+4}<<4 for the members i < 4 (values
// 0…15 and 16…31), narrowed by XTN, XTN2 to halfwords and again to bytes,
// and stored by one ST1.
func (t *Target) StoreNibbles(a vec.Arr, qs []vec.V) {
	vs := make([]vr, 4)
	for i := range vs {
		vs[i] = t.Or(qs[i], t.Shl32(qs[i+4], 4)).(*value).r
	}
	h0, h1, o := t.vreg(), t.vreg(), t.vreg()
	t.e2(neon.XTN, neon.A4S, h0, vs[0])
	t.e2(neon.XTN2, neon.A4S, h0, vs[1])
	t.e2(neon.XTN, neon.A4S, h1, vs[2])
	t.e2(neon.XTN2, neon.A4S, h1, vs[3])
	t.e2(neon.XTN, neon.A8H, o, h0)
	t.e2(neon.XTN2, neon.A8H, o, h1)
	t.scope(func() {
		t.vop("VST1 [V%d.B16], (%s)", o, t.addr(a))
	})
}

// LoadNibbles is LD1 of the 16 bytes, AND 15 and USHR 4 of the bytes (the
// values 0…15 and 16…31), each widened by UXTL, UXTL2 to halfwords and
// again to words.
func (t *Target) LoadNibbles(a vec.Arr) []vec.V {
	b := t.vreg()
	t.scope(func() {
		t.vop("VLD1 (%s), [V%d.B16]", t.addr(a), b)
	})
	lo, hi := t.vreg(), t.vreg()
	t.vop("VAND V%d.B16, V%d.B16, V%d.B16", t.k(0x0f0f0f0f), b, lo)
	t.vop("VUSHR $4, V%d.B16, V%d.B16", b, hi)
	q := make([]vr, 8)
	for i, br := range []vr{lo, hi} {
		h0, h1 := t.vreg(), t.vreg()
		t.vop("VUXTL V%d.B8, V%d.H8", br, h0)
		t.vop("VUXTL2 V%d.B16, V%d.H8", br, h1)
		for k, hr := range []vr{h0, h1} {
			q[4*i+2*k], q[4*i+2*k+1] = t.vreg(), t.vreg()
			t.vop("VUXTL V%d.H4, V%d.S4", hr, q[4*i+2*k])
			t.vop("VUXTL2 V%d.H8, V%d.S4", hr, q[4*i+2*k+1])
		}
	}
	return t.members(q)
}

// LoadU32 is MOVWU into a general register, duplicated into every lane.
func (t *Target) LoadU32(a vec.Arr) vec.V { return t.loadGP("MOVWU", a) }

// StoreU32 is lane 0 through a general register.
func (t *Target) StoreU32(a vec.Arr, v vec.V) { t.storeGP("MOVW", a, v) }

var _ vec.Packer = (*Target)(nil)

// AddInOrder (vec.Summer) is a scalar FADDS chain over the lanes in
// order from lane 0 of a (the sum a register of its own), lanes 1…3 of
// each member brought to lane 0 by VDUP; the sum in every lane by VDUP.
func (t *Target) AddInOrder(a vec.V, xs []vec.V) vec.V {
	s := t.vreg()
	acc := a.(*value).r
	for _, x := range xs {
		r := x.(*value).r
		for l := range 4 {
			e := r
			if l > 0 {
				e = t.vreg()
				t.vop("VDUP V%d.S[%d], V%d.S4", r, l, e)
			}
			t.vop("FADDS F%d, F%d, F%d", e, acc, s) // s = acc + x_j
			acc = s
		}
	}
	d := t.vreg()
	t.vop("VDUP V%d.S[0], V%d.S4", s, d)
	return &value{r: d, w: 4, e: vec.F32}
}
