package riscv64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/vec"
)

// The q8_0 family's blocks (vec.Quantizer), vector-length agnostic: a
// block of 32 values is 8/L members of 4·L lanes, each a group of L
// registers (L = t.lmul: 2 members of 16 lanes at LMUL 4, 4 of 8 at
// LMUL 2, 8 of 4 at LMUL 1), vl fixed at 4·L, which every VLEN from 128
// on holds. Func tries LMUL 4 first and falls back while the values do
// not fit: the family's rare path keeps the block, its magnitudes and a
// third set of members live, which one group of 32 lanes (LMUL 8) could
// not hold beside the mask in V0.

// members is the number of members of a block.
func (t *Target) members() int { return 8 / t.lmul }

// blockvl sets vl to a member's lanes, 32-bit.
func (t *Target) blockvl() { t.setvl(32/t.members(), 32, 32/t.lmul, "TA", "X0") }

// Blocks32 loops over the n blocks, src and dst walked by cursors of their
// own; the constants set in a block are its own (kcache).
func (t *Target) Blocks32(_ vec.Head, n int, src vec.Arr, ss int, dst vec.Arr, ds int, body func(s, d vec.Arr)) {
	if n <= 0 {
		return
	}
	s, d, cnt := t.addr(src), t.addr(dst), t.x()
	t.emit("MOV", n, cnt)
	top := t.label()
	t.kcache = nil
	t.blockvl()
	body(vec.Arr{Name: src.Name, Elem: src.Elem, P: s}, vec.Arr{Name: dst.Name, Elem: dst.Elem, P: d})
	t.emit("ADD", ss*src.Elem.Size, s, s)
	t.emit("ADD", ds*dst.Elem.Size, d, d)
	t.emit("ADD", -1, cnt, cnt)
	t.loop("BNEZ", top, cnt)
}

// at is a register holding a's address plus off bytes: a's own pointer
// when that is 0.
func (t *Target) at(a vec.Arr, off int) *reg {
	off += a.Off * a.Elem.Size
	if off == 0 {
		return a.P.(*reg)
	}
	p := t.x()
	t.emit("ADD", off, a.P.(*reg), p)
	return p
}

// load is a member of LoadF32x32 loaded where used (remat).
type load struct {
	a   vec.Arr
	off int
}

// LoadF32x32 is a VLE32 a member: here, or (remat) at each use.
func (t *Target) LoadF32x32(a vec.Arr) []vec.V {
	n := t.members()
	xs := make([]vec.V, n)
	t.vt(32)
	for i := range xs {
		v := t.vreg(32)
		xs[i] = v
		if t.remat {
			if t.loads == nil {
				t.loads = map[*reg]load{}
			}
			t.loads[v] = load{a, i * 128 / n}
			continue
		}
		t.emit("VLE32V", mem{t.at(a, i*128/n)}, v)
	}
	return xs
}

// StoreF32x32 is a VSE32 a member.
func (t *Target) StoreF32x32(a vec.Arr, xs []vec.V) {
	n := len(xs)
	for i, x := range xs {
		r := t.mat(x.(*reg))
		t.vt(32)
		t.emit("VSE32V", r, mem{t.at(a, i*128/n)})
	}
}

// LoadI8x32 is a VLE8 a member, sign-extended (VSEXT.VF4).
func (t *Target) LoadI8x32(a vec.Arr) []vec.V {
	n := t.members()
	bs := make([]*reg, n)
	t.vt(8)
	for i := range bs {
		bs[i] = t.vreg(8)
		t.emit("VLE8V", mem{t.at(a, i*32/n)}, bs[i])
	}
	t.vt(32)
	qs := make([]vec.V, n)
	for i, b := range bs {
		w := t.vreg(32)
		t.emit("VSEXTVF4", b, w)
		qs[i] = w
	}
	return qs
}

// StoreI8x32 narrows every member's lanes to their low bytes (VNSRL by 0,
// twice) and stores them, a VSE8 a member.
func (t *Target) StoreI8x32(a vec.Arr, qs []vec.V) {
	n := len(qs)
	hs := make([]*reg, n)
	t.vt(16)
	for i, q := range qs {
		r := t.mat(q.(*reg))
		t.vt(16)
		hs[i] = t.vreg(16)
		t.emit("VNSRLWI", 0, r, hs[i])
	}
	t.vt(8)
	for i, h := range hs {
		b := t.vreg(8)
		t.emit("VNSRLWI", 0, h, b)
		t.emit("VSE8V", b, mem{t.at(a, i*32/n)})
	}
}

// LoadU16 is the two bytes (a block may start at an odd address) joined
// in a general register and broadcast.
func (t *Target) LoadU16(a vec.Arr) vec.V {
	p, lo, hi := t.at(a, 0), t.x(), t.x()
	t.emit("MOVBU", mem{p}, lo)
	t.emit("MOVBU", memAt{p, 1}, hi)
	t.emit("SLLI", 8, hi, hi)
	t.emit("OR", hi, lo, lo)
	t.vt(32)
	v := t.vreg(32)
	t.emit("VMVVX", lo, v)
	return v
}

// StoreU16 is lane 0's two low bytes, through a general register.
func (t *Target) StoreU16(a vec.Arr, v vec.V) {
	p, x := t.at(a, 0), t.x()
	t.vt(32)
	t.emit("VMVXS", t.group(v.(*reg)), x)
	t.emit("MOVB", x, mem{p})
	t.emit("SRLI", 8, x, x)
	t.emit("MOVB", x, memAt{p, 1})
}

// MaxAcross is VMAXU of the members, VREDMAXU of that, and its lane 0
// gathered into every lane (VRGATHER.VI).
func (t *Target) MaxAcross(xs []vec.V) vec.V {
	return t.across("VMAXUVV", "VREDMAXUVS", xs)
}

// across is op's reduction of the lanes of the members xs (op of two
// members, then red across one) in every lane.
func (t *Target) across(op, red string, vs []vec.V) vec.V {
	xs := make([]*reg, len(vs))
	for i, v := range vs {
		xs[i] = t.mat(v.(*reg))
	}
	t.vt(32)
	m := t.vreg(32)
	if len(xs) == 1 {
		t.emit(red, xs[0], xs[0], m)
	} else {
		t.emit(op, xs[1], xs[0], m)
		for _, x := range xs[2:] {
			t.emit(op, x, m, m)
		}
		t.emit(red, m, m, m)
	}
	d := t.vreg(32)
	t.emit("VRGATHERVI", 0, m, d)
	return d
}

// iota is the lanes s·VID + c (s = ±1), an Iota or a constant added to
// or taken from one, made where used (mat).
type iota struct{ s, c, arm int }

// Iota is VID plus the member's first position, made at its first use as
// a group (remat: at each), by mat; Select and Gt32 use it without a group
// of its own.
func (t *Target) Iota(i, n int) vec.V {
	if n != t.members() {
		panic(fmt.Sprintf("riscv64: Iota(%d, %d): a block at LMUL %d is %d members", i, n, t.lmul, t.members()))
	}
	return t.newIota(iota{1, i*32/n + 1, t.arm})
}

func (t *Target) newIota(io iota) *reg {
	v := t.vreg(32)
	if t.iotas == nil {
		t.iotas = map[*reg]iota{}
	}
	t.iotas[v] = io
	return v
}

// affine is a ± b, a new iota, when one of them is an iota and the other
// an X constant.
func (t *Target) affine(a, b vec.V, sub bool) (vec.V, bool) {
	x, y := a.(*reg), b.(*reg)
	sg := 1
	if sub {
		sg = -1
	}
	if io, ok := t.iotas[x]; ok && y.class == 'X' {
		return t.newIota(iota{io.s, io.c + sg*int(int32(t.bits(y))), t.arm}), true
	}
	if io, ok := t.iotas[y]; ok && x.class == 'X' {
		return t.newIota(iota{sg * io.s, int(int32(t.bits(x))) + sg*io.c, t.arm}), true
	}
	return nil, false
}

// mat is r, an iota's lanes made (VID, then VADD or VRSUB) or a member
// of LoadF32x32 loaded: in r at its first use, or (remat, or an iota of
// code around an arm of If) in a new group at each.
func (t *Target) mat(r *reg) *reg {
	io, isIota := t.iotas[r]
	ld, isLoad := t.loads[r]
	if !isIota && !isLoad {
		return r
	}
	d := r
	if t.remat || isIota && io.arm != t.arm { // not made where an arm of If skips it
		d = t.vreg(32)
	} else {
		delete(t.iotas, r)
	}
	if isLoad {
		p := t.at(ld.a, ld.off)
		t.vt(32)
		t.emit("VLE32V", mem{p}, d)
		return d
	}
	t.vt(32)
	t.emit("VIDV", d)
	op := "VADDVX"
	if io.s < 0 {
		op = "VRSUBVX"
	}
	t.emit(op, t.U32(uint32(io.c)), d, d)
	return d
}

// lane0 is lane 0 of the group r in a general register (VMV.X.S), once.
func (t *Target) lane0(r *reg) *reg {
	if x, ok := t.lanes[r]; ok {
		return x
	}
	r = t.mat(r)
	if t.lanes == nil {
		t.lanes = map[*reg]*reg{}
	}
	x := t.x()
	t.vt(32)
	t.emit("VMVXS", r, x)
	t.lanes[r] = x
	return x
}

// If branches on m (equal in every lane): VFIRST is −1 when no lane
// holds. Each arm starts from the vtype and the block's constants of the
// branch and ends at 32-bit lanes; the constants an arm sets are its own.
func (t *Target) If(m vec.Mask, then, els func()) {
	x := t.x()
	t.emit("VFIRSTM", m.(*reg), x)
	other, join := t.newLabel(), t.newLabel()
	t.emit("BLTZ", x, other.args[0])
	sew, kc := t.sew, t.kcache
	outer := t.arm
	arm := func(body func()) {
		t.arms++
		t.arm = t.arms
		t.sew, t.kcache = sew, map[string]*reg{}
		for k, v := range kc {
			t.kcache[k] = v
		}
		body()
		t.vt(32)
	}
	arm(then)
	t.emit("JMP", join.args[0])
	t.place(other)
	arm(els)
	t.place(join)
	t.kcache, t.arm = kc, outer
}

var _ vec.Quantizer = (*Target)(nil)
