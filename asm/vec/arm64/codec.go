package arm64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// load reads w values of a from value j, widened to the compute type:
// loadBits, then the minifloat family's Widen (vec.Widen) for the cache
// elements.
func (t *Target) load(a vec.Arr, j, w int) *value {
	return t.widen(a.Elem, t.loadRaw(a, j, w))
}

// loadRaw reads w values of a from value j, exactly their bytes, into the
// low bytes of a register: a register, its low 8 or 4 bytes, or 2 or 1
// bytes through a general register.
func (t *Target) loadRaw(a vec.Arr, j, w int) *value {
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
	return v
}

// loadBits is loadRaw of 16-bit or 8-bit elements zero-extended into
// 32-bit lanes (UXTL).
func (t *Target) loadBits(a vec.Arr, j, w int) *value {
	v := t.loadRaw(a, j, w)
	t.extend(a.Elem, v.r)
	return v
}

// extend zero-extends the e elements in r's low lanes into 32-bit lanes.
func (t *Target) extend(e vec.Elem, r vr) {
	if e.Size == 1 {
		t.vop("VUXTL V%d.B8, V%d.H8", r, r)
	}
	t.vop("VUXTL V%d.H4, V%d.S4", r, r)
}

// store narrows v to a's type and writes its w values at value j of a.
func (t *Target) store(v *value, a vec.Arr, j, w int) {
	t.storeRaw(t.narrow(a.Elem, v), a, j, w, v.goArr())
}

// storeRaw writes the w values of a's type in r's low bytes at value j of
// a (arr: r's arrangement when they fill it).
func (t *Target) storeRaw(r vr, a vec.Arr, j, w int, arr string) {
	b := w * a.Elem.Size
	m := t.at(a, j, b, true)
	switch b {
	case 16:
		t.vop("VST1.P [V%d.%s], %s", r, arr, m)
	case 8:
		t.vop("FMOVD.P F%d, %s", r, m)
	case 4:
		t.vop("FMOVS.P F%d, %s", r, m)
	default:
		t.vop("VST1.P V%d.%s[0], %s", r, map[int]string{2: "H", 1: "B"}[b], m)
	}
}

// widen is the float32 values of the e codes packed in v's low lanes as
// loadRaw reads them (e a cache element): f16 by f16Widen, the others
// zero-extended into 32-bit lanes, then the minifloat family.
func (t *Target) widen(e vec.Elem, v *value) *value {
	switch {
	case e.Size > 2:
		return v
	case e == vec.F16:
		return &value{r: t.f16Widen(v.r), w: v.w, e: vec.F32}
	}
	t.extend(e, v.r)
	r := vec.Widen(t, e, &value{r: v.r, w: v.w, e: vec.F32}).(*value)
	return &value{r: r.r, w: v.w, e: vec.F32}
}

// f16Widen is the float32 values of the f16 codes in h's low 4 halves,
// exactly f16to32 (the family's Widen): FCVTL, whose NaN has the quiet bit
// set (a signaling NaN quieted), its low 23 bits then replaced in NaN
// lanes by the code's mantissa shifted up 13 (USHLL), payload as it is.
func (t *Target) f16Widen(h vr) vr {
	d, s, m := t.vreg(), t.vreg(), t.vreg()
	t.e2(neon.FCVTL, neon.A4S, d, h)
	t.vop("VUSHLL $13, V%d.H4, V%d.S4", h, s)
	t.e3(neon.FCMEQ, neon.A4S, m, d, d)                            // not NaN
	t.vop("VORR V%d.B16, V%d.B16, V%d.B16", t.k(0xff800000), m, m) // and sign, exponent
	t.vop("VBIF V%d.B16, V%d.B16, V%d.B16", m, s, d)               // the rest from s
	return d
}

// narrow is the register holding v narrowed to e in its low lanes (v's own
// for float32 and float64): for f16 FCVTN (the Native hook's instruction,
// its halves already packed), else the minifloat family's bits packed by
// XTN.
func (t *Target) narrow(e vec.Elem, v *value) vr {
	switch {
	case e.Size > 2:
		return v.r
	case e == vec.F16:
		d := t.vreg()
		t.e2(neon.FCVTN, neon.A4S, d, v.r)
		return d
	}
	return t.pack(e, vec.Narrow(t, e, v).(*value).r)
}

// pack is the low 16 or 8 bits of r's 32-bit lanes packed in the low lanes
// of a register (XTN, twice for bytes).
func (t *Target) pack(e vec.Elem, r vr) vr {
	d := t.vreg()
	t.e2(neon.XTN, neon.A4S, d, r)
	if e.Size == 1 {
		t.e2(neon.XTN, neon.A8H, d, d)
	}
	return d
}

// k is the 32-bit constant v in every lane of a register, made once; in a
// q8_0 block (t.local set) made in the block (an arm of its branch) from a
// general register holding v from the function's start, one no other
// line of the function uses (else a MOVW in place): a block's 8
// members, their magnitudes and the rare path's positions leave no room
// for a function's worth of constant V registers.
func (t *Target) k(v uint32) vr {
	if len(t.local) == 0 {
		return t.konst(uint64(v), "S4", "MOVW")
	}
	l := t.local[len(t.local)-1]
	if r, ok := l[v]; ok {
		return r
	}
	r := t.vreg()
	g, ok := t.gconsts[v]
	if !ok && len(t.gconsts) < maxGConsts {
		if g, ok = t.gregUnused(); ok {
			t.hoist(func() { t.op("MOVW $%#x, %s", v, g) })
			t.gconsts[v] = g
		}
	}
	if ok {
		t.vop("VDUP %s, V%d.S4", g, r)
	} else {
		t.scope(func() {
			g := t.greg()
			t.op("MOVW $%#x, %s", v, g)
			t.vop("VDUP %s, V%d.S4", g, r)
		})
	}
	l[v] = r
	t.localRegs[r] = true
	return r
}

// maxGConsts is how many general registers a function's q8_0 constants
// may keep.
const maxGConsts = 12

// pushLocal opens a level of block constants (a block, an arm of its
// branch) seeing the enclosing level's; popLocal closes it.
func (t *Target) pushLocal() {
	l := map[uint32]vr{}
	if n := len(t.local); n > 0 {
		for v, r := range t.local[n-1] {
			l[v] = r
		}
	}
	t.local = append(t.local, l)
}

func (t *Target) popLocal() { t.local = t.local[:len(t.local)-1] }

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
