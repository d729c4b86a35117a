package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// The Hadamard family's operations (vec.Shuffler) in RVV: a member is a
// register group of a block's member (vl = 32/members lanes, as the
// blocks of 32 set it: 4·LMUL, which every VLEN ≥ 128 holds); the lane
// swaps are VRGATHER by vid ^ s (its result in a group of its own, as
// the allocator keeps every non-elementwise result); a lane bit's mask is
// vid & s ≠ 0.

func (t *Target) Width() int { return 32 / t.members() }

// Chunk is one block of 32 values.
func (t *Target) Chunk() int { return 32 }

// LoadF32 sets vl to a member's lanes and loads the k values at a, a
// VLE32 a member.
func (t *Target) LoadF32(a vec.Arr, k int) []vec.V {
	t.blockvl()
	w := t.Width()
	xs := make([]vec.V, k/w)
	for i := range xs {
		v := t.vreg(32)
		t.emit("VLE32V", mem{t.at(a, 4*w*i)}, v)
		xs[i] = v
	}
	return xs
}

// StoreF32 is a VSE32 a member.
func (t *Target) StoreF32(a vec.Arr, xs []vec.V) {
	w := t.Width()
	for i, x := range xs {
		r := t.mat(x.(*reg))
		t.vt(32)
		t.emit("VSE32V", r, mem{t.at(a, 4*w*i)})
	}
}

// vid is the lanes' indices.
func (t *Target) vid() *reg {
	t.vt(32)
	v := t.vreg(32)
	t.emit("VIDV", v)
	return v
}

// SwapLanes is VRGATHER.VV by vid ^ s.
func (t *Target) SwapLanes(x vec.V, s int) vec.V {
	r := t.mat(x.(*reg))
	idx := t.vid()
	t.emit("VXORVX", t.U32(uint32(s)), idx, idx) // s may be 16 (LMUL 8), past VXOR.VI's immediates
	d := t.vreg(32)
	t.emit("VRGATHERVV", idx, r, d)
	return d
}

// LaneBit is VMSNE.VI of vid & s and 0.
func (t *Target) LaneBit(s int) vec.Mask {
	idx := t.vid()
	t.emit("VANDVX", t.U32(uint32(s)), idx, idx)
	m := t.reg('M', 1)
	t.emit("VMSNEVI", 0, idx, m)
	return m
}

// Var is x: a register group.
func (t *Target) Var(x vec.V) vec.V { return x }
