package arm64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// The codec operations (vec.Codec) on the 32-bit lanes of a register, 4S
// (a tail's unused lanes are computed too and never stored): the integer
// and bitwise instructions of Go's assembler, compares giving all-ones
// lanes, Select by BIT or BIF over the consumed b.

// mask is a register of all-ones/all-zeros lanes; inv: the lanes that hold
// are its zero lanes (IsNaN is FCMEQ's complement, which NEON has no
// single instruction for: Select swaps BIT for BIF instead).
type mask struct {
	r   vr
	inv bool
}

// U32 is the hoisted constant register.
func (t *Target) U32(v uint32) vec.V { return &value{r: t.k(v), w: 4, e: vec.F32} }

// AsU32 and AsF32 are no instruction: a register's bits are both.
func (t *Target) AsU32(a vec.V) vec.V { return a }
func (t *Target) AsF32(a vec.V) vec.V { return a }

// ints is d = a op b, Go's three-register form (op Vm, Vn, Vd: d = n op m).
func (t *Target) ints(op string, a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	d := &value{r: t.vreg(), w: min(x.w, y.w), e: vec.F32}
	arr := "S4"
	if op == "VAND" || op == "VORR" || op == "VEOR" {
		arr = "B16"
	}
	t.vop(op+" V%d."+arr+", V%d."+arr+", V%d."+arr, y.r, x.r, d.r)
	return d
}

func (t *Target) And(a, b vec.V) vec.V   { return t.ints("VAND", a, b) }
func (t *Target) Or(a, b vec.V) vec.V    { return t.ints("VORR", a, b) }
func (t *Target) Xor(a, b vec.V) vec.V   { return t.ints("VEOR", a, b) }
func (t *Target) Add32(a, b vec.V) vec.V { return t.ints("VADD", a, b) }
func (t *Target) Sub32(a, b vec.V) vec.V { return t.ints("VSUB", a, b) }

// AndNot is a AND (b XOR ones): Go's assembler has no BIC (vector); the
// families do not use it.
func (t *Target) AndNot(a, b vec.V) vec.V { return t.And(a, t.Xor(b, t.U32(0xffffffff))) }

func (t *Target) shift(op string, a vec.V, n int) vec.V {
	if n <= 0 || n >= 32 {
		panic(fmt.Sprintf("arm64: Shl32/Shr32 by %d: want 0 < n < 32", n))
	}
	x := a.(*value)
	d := &value{r: t.vreg(), w: x.w, e: vec.F32}
	t.vop(op+" $%d, V%d.S4, V%d.S4", n, x.r, d.r)
	return d
}

func (t *Target) Shl32(a vec.V, n int) vec.V { return t.shift("VSHL", a, n) }
func (t *Target) Shr32(a vec.V, n int) vec.V { return t.shift("VUSHR", a, n) }

// Gt32 is CMGT (signed), Eq32 CMEQ, IsNaN the complement of FCMEQ a, a.
func (t *Target) Gt32(a, b vec.V) vec.Mask {
	m := &mask{r: t.vreg()}
	t.e3(neon.CMGT, neon.A4S, m.r, a.(*value).r, b.(*value).r)
	return m
}

func (t *Target) Eq32(a, b vec.V) vec.Mask {
	m := &mask{r: t.vreg()}
	t.vop("VCMEQ V%d.S4, V%d.S4, V%d.S4", b.(*value).r, a.(*value).r, m.r)
	return m
}

func (t *Target) IsNaN(a vec.V) vec.Mask {
	m := &mask{r: t.vreg(), inv: true}
	r := a.(*value).r
	t.e3(neon.FCMEQ, neon.A4S, m.r, r, r)
	return m
}

// isConst reports whether r is one of the function's constant registers.
func (t *Target) isConst(r vr) bool {
	for _, c := range t.consts {
		if c == r {
			return true
		}
	}
	return t.localRegs[r]
}

// Select writes a into b's register where m holds (BIT; BIF for an
// inverted mask): b is consumed, or copied first when it is a constant.
func (t *Target) Select(m vec.Mask, a, b vec.V) vec.V {
	k, x, y := m.(*mask), a.(*value), b.(*value)
	d := y.r
	if t.isConst(d) {
		d = t.vreg()
		t.vop("VORR V%d.B16, V%d.B16, V%d.B16", y.r, y.r, d)
	}
	op := "VBIT"
	if k.inv {
		op = "VBIF"
	}
	t.vop(op+" V%d.B16, V%d.B16, V%d.B16", k.r, x.r, d)
	return &value{r: d, w: min(x.w, y.w), e: vec.F32}
}

func (t *Target) MinF(a, b vec.V) vec.V { return t.arith4(neon.FMIN, a, b) }
func (t *Target) MaxF(a, b vec.V) vec.V { return t.arith4(neon.FMAX, a, b) }

// arith4 is d = a op b over the 4S arrangement.
func (t *Target) arith4(op func(neon.Arrangement, neon.Reg, neon.Reg, neon.Reg) (neon.Inst, error), a, b vec.V) vec.V {
	x, y := a.(*value), b.(*value)
	d := &value{r: t.vreg(), w: min(x.w, y.w), e: vec.F32}
	t.e3(op, neon.A4S, d.r, x.r, y.r)
	return d
}

// ToF32 is SCVTF, TruncI32 FCVTZS (toward zero).
func (t *Target) ToF32(a vec.V) vec.V    { return t.conv(neon.SCVTF, a) }
func (t *Target) TruncI32(a vec.V) vec.V { return t.conv(neon.FCVTZS, a) }

func (t *Target) conv(op func(neon.Arrangement, neon.Reg, neon.Reg) (neon.Inst, error), a vec.V) vec.V {
	x := a.(*value)
	d := &value{r: t.vreg(), w: x.w, e: vec.F32}
	t.e2(op, neon.A4S, d.r, x.r)
	return d
}

// LoadBits reads the block's values of a zero-extended into 32-bit lanes.
func (t *Target) LoadBits(b vec.Block, a vec.Arr) vec.V {
	k := b.(*blk)
	js, inter := k.members()
	if inter || len(js) != 1 {
		panic("arm64: LoadBits of a pairs block: the codec families read values blocks")
	}
	return t.loadBits(a, js[0], k.b.w)
}

// StoreBits writes the low bits of v's lanes as the block's values of a.
func (t *Target) StoreBits(b vec.Block, a vec.Arr, v vec.V) {
	k := b.(*blk)
	js, inter := k.members()
	if inter || len(js) != 1 {
		panic("arm64: StoreBits of a pairs block: the codec families write values blocks")
	}
	t.storeRaw(t.pack(a.Elem, v.(*value).r), a, js[0], k.b.w, "S4")
}

// NarrowNative is FCVTN for f16 (IEEE nearest even, denormals kept with
// Go's FPCR.FZ clear, a NaN quieted keeping its payload's top 10 bits, as
// f32to16), zero-extended back to 32-bit lanes. bf16 has none: BFCVTN
// needs FEAT_BF16, which the kernels do not require.
func (t *Target) NarrowNative(e vec.Elem, x vec.V) (vec.V, bool) {
	if e != vec.F16 {
		return nil, false
	}
	v := x.(*value)
	d := &value{r: t.vreg(), w: v.w, e: vec.F32}
	t.e2(neon.FCVTN, neon.A4S, d.r, v.r)
	t.vop("VUXTL V%d.H4, V%d.S4", d.r, d.r)
	return d, true
}

// WidenNative is f16Widen of the codes packed by XTN: FCVTL alone quiets
// a signaling f16 NaN (FPConvertNaN sets the quiet bit), where f16to32 and
// the family keep its payload as it is; f16Widen restores it.
func (t *Target) WidenNative(e vec.Elem, c vec.V) (vec.V, bool) {
	if e != vec.F16 {
		return nil, false
	}
	v := c.(*value)
	h := t.vreg()
	t.e2(neon.XTN, neon.A4S, h, v.r)
	return &value{r: t.f16Widen(h), w: v.w, e: vec.F32}, true
}

var (
	_ vec.Codec  = (*Target)(nil)
	_ vec.Native = (*Target)(nil)
)
