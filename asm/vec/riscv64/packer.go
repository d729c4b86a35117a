package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// The qn family's operations (vec.Packer) on the members of quantizer.go's
// blocks: the variable shifts VSLL.VV and VSRL.VV (.VX for a constant
// count), OrAcross as MaxAcross with VOR and VREDOR; a block's nibbles a
// byte member at a time, the low values' member i with the high values'
// member i + n/2 (the first and the second 16 of the block); the words
// through a general register a byte at a time (any alignment).

// Shlv32 and Shrv32 shift a's lanes by b's.
func (t *Target) Shlv32(a, b vec.V) vec.V { return t.shiftv("VSLL", a, b) }
func (t *Target) Shrv32(a, b vec.V) vec.V { return t.shiftv("VSRL", a, b) }

func (t *Target) shiftv(op string, a, b vec.V) vec.V {
	x, y := t.group(t.AsU32(a).(*reg)), t.AsU32(b).(*reg)
	t.vt(32)
	d := t.vreg(32)
	if y.class == 'X' {
		t.emit(op+"VX", y, x, d)
	} else {
		t.emit(op+"VV", y, x, d)
	}
	return d
}

// OrAcross is VOR of the members, VREDOR of that, gathered into every lane.
func (t *Target) OrAcross(xs []vec.V) vec.V { return t.across("VORVV", "VREDORVS", xs) }

// StoreNibbles writes q_j | q_{j+16}<<4: member i of the first half ORed
// with member i + n/2 shifted, narrowed to bytes (VNSRL by 0, twice),
// stored at byte i·32/n.
func (t *Target) StoreNibbles(a vec.Arr, qs []vec.V) {
	n := len(qs)
	if n < 2 || n%2 != 0 {
		panic("riscv64: StoreNibbles of a block of an odd number of members")
	}
	for i := range n / 2 {
		hi := t.Shl32(qs[i+n/2], 4)
		b := t.pack(vec.Q8, t.Or(qs[i], hi).(*reg))
		t.emit("VSE8V", b, mem{t.at(a, i*32/n)})
	}
}

// LoadNibbles reads the 16 bytes a member of bytes at a time, zero-extended
// (VZEXT.VF4): the low nibbles are member i, the high member i + n/2.
func (t *Target) LoadNibbles(a vec.Arr) []vec.V {
	n := t.members()
	qs := make([]vec.V, n)
	for i := range n / 2 {
		t.vt(8)
		b := t.vreg(8)
		t.emit("VLE8V", mem{t.at(a, i*32/n)}, b)
		w := t.extend(vec.Q8, b)
		lo, hi := t.vreg(32), t.vreg(32)
		t.emit("VANDVI", 15, w, lo)
		t.emit("VSRLVI", 4, w, hi)
		qs[i], qs[i+n/2] = lo, hi
	}
	return qs
}

// LoadU32 is the four bytes at a joined in a general register, broadcast.
func (t *Target) LoadU32(a vec.Arr) vec.V {
	p, w := t.at(a, 0), t.x()
	t.emit("MOVBU", mem{p}, w)
	for k := 1; k < 4; k++ {
		b := t.x()
		t.emit("MOVBU", memAt{p, k}, b)
		t.emit("SLLI", 8*k, b, b)
		t.emit("OR", b, w, w)
	}
	t.vt(32)
	v := t.vreg(32)
	t.emit("VMVVX", w, v)
	return v
}

// StoreU32 writes lane 0 of v a byte at a time.
func (t *Target) StoreU32(a vec.Arr, v vec.V) {
	p, x := t.at(a, 0), t.x()
	t.vt(32)
	t.emit("VMVXS", t.group(v.(*reg)), x)
	for k := range 4 {
		if k > 0 {
			t.emit("SRLI", 8, x, x)
		}
		t.emit("MOVB", x, memAt{p, k})
	}
}

var _ vec.Packer = (*Target)(nil)

// AddInOrder (vec.Summer) is VFREDOSUM.VS (the ordered sum: lane 0 of
// vs1 plus vs2's lanes in order) of each member in turn from a, its lane
// 0 gathered into every lane (VRGATHER.VI).
func (t *Target) AddInOrder(a vec.V, vs []vec.V) vec.V {
	xs := make([]*reg, len(vs))
	for i, v := range vs {
		xs[i] = t.mat(v.(*reg))
	}
	acc := t.group(a.(*reg)) // a constant (+0) broadcast
	t.vt(32)
	for _, x := range xs {
		m := t.vreg(32)
		t.emit("VFREDOSUMVS", acc, x, m)
		acc = m
	}
	d := t.vreg(32)
	t.emit("VRGATHERVI", 0, acc, d)
	return d
}
