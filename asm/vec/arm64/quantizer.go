package arm64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// The q8_0 family's blocks (vec.Quantizer): a block of 32 values is 8
// members of 4 lanes (4S), read and written by LD1/ST1 of four registers
// through an address register; the blocks of a head a counted loop.

// addr is a general register of the current scope holding a's address.
func (t *Target) addr(a vec.Arr) string {
	g := t.greg()
	t.op("ADD $%d, %s, %s", a.Off*a.Elem.Size, a.P.(*ptr).r, g)
	return g
}

// Blocks32 loops over the n blocks, src and dst walked by cursors of their
// own.
func (t *Target) Blocks32(h vec.Head, n int, src vec.Arr, ss int, dst vec.Arr, ds int, body func(s, d vec.Arr)) {
	if n <= 0 {
		return
	}
	t.scope(func() {
		s, d, cnt := t.addr(src), t.addr(dst), t.greg()
		t.op("MOVD $%d, %s", n, cnt)
		top := t.label("block")
		t.lab(top)
		t.pushLocal()
		t.scope(func() {
			body(vec.Arr{Name: src.Name, Elem: src.Elem, P: &ptr{s}}, vec.Arr{Name: dst.Name, Elem: dst.Elem, P: &ptr{d}})
		})
		t.popLocal()
		t.op("ADD $%d, %s", ss*src.Elem.Size, s)
		t.op("ADD $%d, %s", ds*dst.Elem.Size, d)
		t.op("SUBS $1, %s", cnt)
		t.br("BNE", top)
	})
}

// members are the 8 values of 4 float32 (or int32) lanes of a block.
func (t *Target) members(rs []vr) []vec.V {
	vs := make([]vec.V, len(rs))
	for i, r := range rs {
		vs[i] = &value{r: r, w: 4, e: vec.F32}
	}
	return vs
}

// LoadF32x32 is two LD1 of four registers.
func (t *Target) LoadF32x32(a vec.Arr) []vec.V {
	x := append(t.regs(4), t.regs(4)...)
	t.scope(func() {
		g := t.addr(a)
		t.vop("VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", g, x[0], x[1], x[2], x[3])
		t.vop("VLD1 (%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]", g, x[4], x[5], x[6], x[7])
	})
	return t.members(x)
}

// StoreF32x32 is two ST1 of four registers, xs copied into consecutive
// registers unless they are (dequantize's products are not).
func (t *Target) StoreF32x32(a vec.Arr, xs []vec.V) {
	t.scope(func() {
		g := t.addr(a)
		for i, x := range xs {
			op := "VST1.P [V%d.S4], 16(%s)"
			if i == len(xs)-1 {
				op = "VST1 [V%d.S4], (%s)"
			}
			t.vop(op, x.(*value).r, g)
		}
	})
}

// LoadI8x32 is LD1 of two registers of bytes, sign-extended by SXTL twice.
func (t *Target) LoadI8x32(a vec.Arr) []vec.V {
	b := t.regs(2)
	t.scope(func() {
		t.vop("VLD1 (%s), [V%d.B16, V%d.B16]", t.addr(a), b[0], b[1])
	})
	q := make([]vr, 8)
	for i, br := range b {
		h0, h1 := t.vreg(), t.vreg()
		t.e2(neon.SXTL, neon.A8H, h0, br)
		t.e2(neon.SXTL2, neon.A8H, h1, br)
		for k, hr := range []vr{h0, h1} {
			q[4*i+2*k], q[4*i+2*k+1] = t.vreg(), t.vreg()
			t.e2(neon.SXTL, neon.A4S, q[4*i+2*k], hr)
			t.e2(neon.SXTL2, neon.A4S, q[4*i+2*k+1], hr)
		}
	}
	return t.members(q)
}

// StoreI8x32 narrows the lanes' low bytes by XTN, XTN2 (32 to 16 bits,
// then 16 to 8) into two registers and stores them by one ST1.
func (t *Target) StoreI8x32(a vec.Arr, qs []vec.V) {
	hs, o := []vr{t.vreg(), t.vreg(), t.vreg(), t.vreg()}, t.regs(2)
	r := func(i int) vr { return qs[i].(*value).r }
	for i, hr := range hs {
		t.e2(neon.XTN, neon.A4S, hr, r(2*i))
		t.e2(neon.XTN2, neon.A4S, hr, r(2*i+1))
	}
	for i, or := range o {
		t.e2(neon.XTN, neon.A8H, or, hs[2*i])
		t.e2(neon.XTN2, neon.A8H, or, hs[2*i+1])
	}
	t.scope(func() {
		t.vop("VST1 [V%d.B16, V%d.B16], (%s)", o[0], o[1], t.addr(a))
	})
}

// LoadU16 is MOVHU into a general register, duplicated into every lane.
func (t *Target) LoadU16(a vec.Arr) vec.V { return t.loadGP("MOVHU", a) }

// StoreU16 is lane 0's low half through a general register.
func (t *Target) StoreU16(a vec.Arr, v vec.V) { t.storeGP("MOVH", a, v) }

// loadGP is the load ld (MOVHU, MOVWU) at a into a general register,
// duplicated into every lane.
func (t *Target) loadGP(ld string, a vec.Arr) vec.V {
	v := &value{r: t.vreg(), w: 4, e: vec.F32}
	t.scope(func() {
		g := t.greg()
		t.op("%s %d(%s), %s", ld, a.Off*a.Elem.Size, a.P.(*ptr).r, g)
		t.vop("VDUP %s, V%d.S4", g, v.r)
	})
	return v
}

// storeGP is lane 0 of v through a general register, stored by st (MOVH,
// MOVW) at a.
func (t *Target) storeGP(st string, a vec.Arr, v vec.V) {
	t.scope(func() {
		g := t.greg()
		t.vop("FMOVS F%d, %s", v.(*value).r, g)
		t.op("%s %s, %d(%s)", st, g, a.Off*a.Elem.Size, a.P.(*ptr).r)
	})
}

// MaxAcross is UMAX of the members, then of the register with itself
// rotated by 8 and 4 bytes (EXT): the largest lane in every lane.
func (t *Target) MaxAcross(xs []vec.V) vec.V {
	r := func(v vec.V) vr { return v.(*value).r }
	d := t.vreg()
	if len(xs) == 1 {
		t.vop("VORR V%d.B16, V%d.B16, V%d.B16", r(xs[0]), r(xs[0]), d)
	} else {
		t.vop("VUMAX V%d.S4, V%d.S4, V%d.S4", r(xs[1]), r(xs[0]), d)
	}
	for _, x := range xs[min(2, len(xs)):] {
		t.vop("VUMAX V%d.S4, V%d.S4, V%d.S4", r(x), d, d)
	}
	for _, n := range []int{8, 4} {
		e := t.vreg()
		t.vop("VEXT $%d, V%d.B16, V%d.B16, V%d.B16", n, d, d, e)
		t.vop("VUMAX V%d.S4, V%d.S4, V%d.S4", e, d, d)
	}
	return &value{r: d, w: 4, e: vec.F32}
}

// Iota is the lanes 4i+1 … 4i+4, made where used (the rare path's): two
// 64-bit halves through a general register.
func (t *Target) Iota(i, n int) vec.V {
	if n != 8 {
		panic(fmt.Sprintf("arm64: Iota(%d, %d): a NEON block is 8 members of 4 lanes, want n = 8", i, n))
	}
	v := &value{r: t.vreg(), w: 4, e: vec.F32}
	t.scope(func() {
		g := t.greg()
		for h := range 2 {
			j := uint64(4*i + 2*h + 1)
			t.op("MOVD $%#x, %s", (j+1)<<32|j, g)
			t.vop("VMOV %s, V%d.D[%d]", g, v.r, h)
		}
	})
	return v
}

// If branches on lane 0 of m (equal in every lane): CBZW to els.
func (t *Target) If(m vec.Mask, then, els func()) {
	k := m.(*mask)
	other, join := t.label("else"), t.label("join")
	t.scope(func() {
		g := t.greg()
		t.vop("FMOVS F%d, %s", k.r, g)
		op := "CBZW"
		if k.inv {
			op = "CBNZW"
		}
		t.br(op+" "+g+",", other)
	})
	arm := func(body func()) {
		t.pushLocal()
		t.scope(body)
		t.popLocal()
	}
	arm(then)
	t.br("B", join)
	t.lab(other)
	arm(els)
	t.lab(join)
}

var _ vec.Quantizer = (*Target)(nil)
