package riscv64

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

// The codec operations (vec.Codec) on the 32-bit lanes of a strip's
// groups (e32 at the strip's LMUL): a constant is an X register, the
// operand of the .vx forms (an F register where the families use it as a
// float32); a compare makes the mask (V0), which Select merges by.
// No Native hook: RVV's f16 conversions need Zvfhmin, which the kernels
// do not require.

// U32 is v in an X register.
func (t *Target) U32(v uint32) vec.V { return t.kconst('X', v) }

// kconst is the constant bits in an X or F register: the function's
// (constant), or set here when t.local (a function whose constants would
// not all fit in the X registers): once a strip or q8_0 block (local 1:
// kcache, which each of them starts anew, no branch inside one skipping
// a constant it sets), or at each use (2).
func (t *Target) kconst(class byte, bits uint32) *reg {
	var r *reg
	switch {
	case t.local == 0 && class == 'X':
		r = t.int(int(bits))
	case t.local == 0:
		r = t.f32(bits)
	default:
		key := fmt.Sprintf("%c%x", class, bits)
		if c, ok := t.kcache[key]; ok {
			return c
		}
		if c, ok := t.kcache[fmt.Sprintf("X%x", bits)]; ok && class == 'F' {
			r = c
		} else {
			r = t.x()
			t.emit("MOV", int(bits), r)
		}
		if class == 'F' {
			f := t.fr()
			t.emit("FMVWX", r, f)
			r = f
		}
		if t.kcache == nil {
			t.kcache = map[string]*reg{}
		}
		if t.local == 1 {
			t.kcache[key] = r
		}
	}
	t.kbits[r] = bits
	return r
}

// AsU32 and AsF32 are no instruction on a group; a constant moves between
// the X and F registers holding its bits.
func (t *Target) AsU32(a vec.V) vec.V {
	r := t.mat(a.(*reg))
	if r.class == 'F' {
		return t.kconst('X', t.bits(r))
	}
	return r
}

func (t *Target) AsF32(a vec.V) vec.V {
	r := t.mat(a.(*reg))
	if r.class == 'X' {
		return t.kconst('F', t.bits(r))
	}
	return r
}

// bits is the constant register r's bits.
func (t *Target) bits(r *reg) uint32 {
	if b, ok := t.kbits[r]; ok {
		return b
	}
	for key, c := range t.consts {
		if c == r && key[0] == 'F' {
			b, err := strconv.ParseUint(key[strings.IndexByte(key, ':')+1:], 16, 64)
			if err == nil {
				return uint32(b)
			}
		}
	}
	panic("riscv64: a float scalar that is no float32 constant used as lanes of bits")
}

// group is r as a group of 32-bit lanes: itself, or an X constant
// broadcast (VMV.V.X).
func (t *Target) group(r *reg) *reg {
	if r.class == 'V' {
		return t.mat(r)
	}
	t.vt(32)
	g := t.vreg(32)
	if r.class == 'F' {
		r = t.AsU32(r).(*reg)
	}
	t.emit("VMVVX", r, g)
	return g
}

// ints is d = a op b: op.VV, op.VX with an X constant (either side when op
// commutes), rop.VX (VRSUB) for a constant a, else the constant broadcast.
func (t *Target) ints(op, rop string, commutes bool, a, b vec.V) vec.V {
	x, y := t.AsU32(a).(*reg), t.AsU32(b).(*reg)
	if x.class == 'X' && (commutes || rop != "") {
		if !commutes {
			op = rop
		}
		x, y = y, x
	}
	if x.class == 'X' {
		x = t.group(x)
	}
	t.vt(32)
	d := t.vreg(32)
	if y.class == 'X' {
		t.emit(op+"VX", y, x, d)
	} else {
		t.emit(op+"VV", y, x, d)
	}
	return d
}

func (t *Target) And(a, b vec.V) vec.V { return t.ints("VAND", "", true, a, b) }
func (t *Target) Or(a, b vec.V) vec.V  { return t.ints("VOR", "", true, a, b) }
func (t *Target) Xor(a, b vec.V) vec.V { return t.ints("VXOR", "", true, a, b) }

// Add32 and Sub32 of an iota and a constant are an iota (mat).
func (t *Target) Add32(a, b vec.V) vec.V {
	if v, ok := t.affine(a, b, false); ok {
		return v
	}
	return t.ints("VADD", "", true, a, b)
}

func (t *Target) Sub32(a, b vec.V) vec.V {
	if v, ok := t.affine(a, b, true); ok {
		return v
	}
	return t.ints("VSUB", "VRSUB", false, a, b)
}

// AndNot is a AND (b XOR ones): the families do not use it (Zvbb's VANDN
// is not required).
func (t *Target) AndNot(a, b vec.V) vec.V { return t.And(a, t.Xor(b, t.U32(0xffffffff))) }

func (t *Target) shift(op string, a vec.V, n int) vec.V {
	if n <= 0 || n >= 32 {
		panic(fmt.Sprintf("riscv64: Shl32/Shr32 by %d: want 0 < n < 32", n))
	}
	x := t.group(a.(*reg))
	t.vt(32)
	d := t.vreg(32)
	t.emit(op, n, x, d)
	return d
}

func (t *Target) Shl32(a vec.V, n int) vec.V { return t.shift("VSLLVI", a, n) }
func (t *Target) Shr32(a vec.V, n int) vec.V { return t.shift("VSRLVI", a, n) }

// cmp is the mask of a op b (signed): op.VV b, a (vs2 op vs1: Go writes
// vs1 first), op.VX with a constant b, swapped (sop) with a constant a.
func (t *Target) cmp(op, sop string, a, b vec.V) vec.Mask {
	x, y := t.AsU32(a).(*reg), t.AsU32(b).(*reg)
	if x.class == 'X' && y.class != 'X' {
		x, y, op = y, x, sop
	}
	x = t.group(x)
	t.vt(32)
	m := t.reg('M', 1)
	if y.class == 'X' {
		t.emit(op+"VX", y, x, m)
	} else {
		t.emit(op+"VV", y, x, m)
	}
	return m
}

// Gt32 is a > b: VMSGT.VX, or VMSLT.VV b < a; for an Iota a and a
// group b (equal in every lane: q8_0's last NaN), VID > b − first.
func (t *Target) Gt32(a, b vec.V) vec.Mask {
	if io, ok := t.iotas[a.(*reg)]; ok && io.s == 1 && b.(*reg).class == 'V' {
		k := t.x()
		t.emit("ADD", -io.c, t.lane0(b.(*reg)), k)
		t.vt(32)
		v, m := t.vreg(32), t.reg('M', 1)
		t.emit("VIDV", v)
		t.emit("VMSGTVX", k, v, m)
		return m
	}
	x, y := t.AsU32(a).(*reg), t.AsU32(b).(*reg)
	switch {
	case y.class == 'X':
		return t.cmp("VMSGT", "VMSLT", x, y)
	case x.class == 'X': // b < a
		return t.cmp("VMSLT", "VMSGT", y, x)
	}
	return t.cmp("VMSLT", "", y, x)
}

func (t *Target) Eq32(a, b vec.V) vec.Mask { return t.cmp("VMSEQ", "VMSEQ", a, b) }

// IsNaN is VMFNE a, a.
func (t *Target) IsNaN(a vec.V) vec.Mask {
	x := t.group(a.(*reg))
	t.vt(32)
	m := t.reg('M', 1)
	t.emit("VMFNEVV", x, x, m)
	return m
}

// Select is VMERGE: a (a group or an X constant) where m holds, else b,
// written over b (consumed: a group of its own, or its constant's
// broadcast); an Iota a is VID and the member's first position added
// under m.
func (t *Target) Select(m vec.Mask, a, b vec.V) vec.V {
	if io, ok := t.iotas[a.(*reg)]; ok && io.s == 1 {
		d := t.group(t.AsU32(b).(*reg))
		t.vt(32)
		t.emit("VIDV", m, d)
		t.emit("VADDVX", t.U32(uint32(io.c)), d, m, d)
		return d
	}
	x, y := t.AsU32(a).(*reg), t.AsU32(b).(*reg)
	k := y.class == 'X'
	y = t.group(y)
	t.vt(32)
	d := t.vreg(32)
	if k || y.in == nil {
		d = y
	}
	if x.class == 'X' {
		t.emit("VMERGEVXM", x, y, m, d)
	} else {
		t.emit("VMERGEVVM", x, y, m, d)
	}
	return d
}

// MinF and MaxF are VFMIN, VFMAX.
func (t *Target) MinF(a, b vec.V) vec.V { return t.fop("VFMIN", a, b) }
func (t *Target) MaxF(a, b vec.V) vec.V { return t.fop("VFMAX", a, b) }

func (t *Target) fop(op string, a, b vec.V) vec.V {
	x, y := t.AsF32(a).(*reg), t.AsF32(b).(*reg)
	if x.class == 'F' {
		x, y = y, x
	}
	if x.class == 'F' {
		x = t.group(x)
	}
	t.vt(32)
	d := t.vreg(32)
	if y.class == 'F' {
		t.emit(op+"VF", y, x, d)
	} else {
		t.emit(op+"VV", y, x, d)
	}
	return d
}

// ToF32 is VFCVT.F.X, TruncI32 VFCVT.RTZ.X.F.
func (t *Target) ToF32(a vec.V) vec.V    { return t.conv("VFCVTFXV", a) }
func (t *Target) TruncI32(a vec.V) vec.V { return t.conv("VFCVTRTZXFV", a) }

func (t *Target) conv(op string, a vec.V) vec.V {
	x := t.group(a.(*reg))
	t.vt(32)
	d := t.vreg(32)
	t.emit(op, x, d)
	return d
}

// LoadBits reads the block's values of a zero-extended into 32-bit lanes.
func (t *Target) LoadBits(b vec.Block, a vec.Arr) vec.V {
	k := b.(*blk)
	if k.seg || len(k.firsts) != 1 {
		panic("riscv64: LoadBits of a pairs block: the codec families read values blocks")
	}
	sew := 8 * a.Elem.Size
	v := t.vreg(sew)
	t.vt(sew)
	t.emit(fmt.Sprintf("VLE%dV", sew), k.at(a, k.firsts[0], 1), v)
	return t.extend(a.Elem, v)
}

// StoreBits writes the low bits of v's lanes as the block's values of a.
func (t *Target) StoreBits(b vec.Block, a vec.Arr, v vec.V) {
	k := b.(*blk)
	if k.seg || len(k.firsts) != 1 {
		panic("riscv64: StoreBits of a pairs block: the codec families write values blocks")
	}
	t.emit(fmt.Sprintf("VSE%dV", 8*a.Elem.Size), t.pack(a.Elem, v.(*reg)), k.at(a, k.firsts[0], 1))
}

// extend zero-extends the e lanes of v into 32-bit lanes (VZEXT.VF2, VF4).
func (t *Target) extend(e vec.Elem, v *reg) *reg {
	t.vt(32)
	w := t.vreg(32)
	t.emit(map[int]string{2: "VZEXTVF2", 1: "VZEXTVF4"}[e.Size], v, w)
	return w
}

// pack is the low 16 or 8 bits of v's 32-bit lanes as lanes of e (VNSRL
// by 0, twice for bytes).
func (t *Target) pack(e vec.Elem, v *reg) *reg {
	t.vt(16)
	h := t.vreg(16)
	t.emit("VNSRLWI", 0, v, h)
	if e.Size == 2 {
		return h
	}
	t.vt(8)
	b := t.vreg(8)
	t.emit("VNSRLWI", 0, h, b)
	return b
}

var _ vec.Codec = (*Target)(nil)
