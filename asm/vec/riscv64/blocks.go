package riscv64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/vec"
)

// head is the current head of a loop.
type head struct{ t *Target }

// Pairs runs body over the pairs [0, R/2), vl pairs a strip.
func (h *head) Pairs(_ []vec.Arr, body func(vec.Block)) {
	h.t.strip(h.t.f.Shape.Half(), 0, true, body)
}

// Values runs body over the values [lo, hi), vl values a strip.
func (h *head) Values(lo, hi int, _ []vec.Arr, body func(vec.Block)) {
	h.t.strip(hi-lo, lo, false, body)
}

// strip emits body in a loop over n pairs (values) from value lo: each
// iteration sets vl to at most what is left, at the compute type's LMUL,
// and moves the pointers the body used on by vl.
//
//	for n > 0 { vl = min(n, VLMAX); body; p += vl·step for each pointer; n -= vl }
func (t *Target) strip(n, lo int, pairs bool, body func(vec.Block)) {
	if n <= 0 {
		return
	}
	cnt, vl := t.x(), t.x()
	t.emit("MOV", n, cnt)
	mark := len(t.code)
	top := t.label()
	t.setvl(cnt, t.csew(), t.csew()/t.lmul, "TA", vl)
	b := &blk{t: t, lo: lo, pairs: pairs, ptrs: map[blkKey]*reg{}}
	body(b)
	shifted := map[int]*reg{1: vl}
	for _, k := range b.order {
		if shifted[k.step] == nil {
			shifted[k.step] = t.x()
			t.emit("SLLI", map[int]int{2: 1, 4: 2, 8: 3, 16: 4}[k.step], vl, shifted[k.step])
		}
		t.emit("ADD", shifted[k.step], b.ptrs[k], b.ptrs[k])
	}
	t.emit("SUB", vl, cnt, cnt)
	t.loop("BNEZ", top, cnt)
	t.code = append(t.code[:mark], append(b.inits, t.code[mark:]...)...)
}

// blk is one strip of a head's pairs or values.
type blk struct {
	t     *Target
	lo    int
	pairs bool
	ptrs  map[blkKey]*reg
	order []blkKey
	inits []*ins // the pointers' starts, ahead of the loop
}

// blkKey is a strip's pointer: the byte at off of an array's pointer,
// moving step bytes a lane.
type blkKey struct {
	p         *ptr
	off, step int
}

// at is the strip's pointer to value j of a (from a's offset), k values a
// lane (2: an interleaved pair's).
func (k *blk) at(a vec.Arr, j, per int) *reg {
	key := blkKey{a.P.(*ptr), (a.Off + j) * a.Elem.Size, per * a.Elem.Size}
	r, ok := k.ptrs[key]
	if !ok {
		r = k.t.x()
		k.ptrs[key] = r
		k.order = append(k.order, key)
		k.inits = append(k.inits, move(key.off, key.p.r, r))
	}
	return r
}

// seg is whether the block's pairs are interleaved: two members through
// one segment access.
func (k *blk) seg() bool { return k.pairs && !k.t.f.Shape.NeoX }

// firsts are the first values of the block's members: a neox pair's two
// halves, or the values from lo.
func (k *blk) firsts() []int {
	if k.pairs {
		return []int{0, k.t.f.Shape.Half()}
	}
	return []int{k.lo}
}

// Load reads the block's values of a, widened to the compute type.
func (k *blk) Load(a vec.Arr) []vec.V {
	t, sew := k.t, 8*a.Elem.Size
	if k.seg() {
		pr := t.newReg('V', 2*t.vreg(sew).n)
		t.emit(fmt.Sprintf("VLSEG2E%dV", sew), mem{k.at(a, 0, 2)}, pr)
		var vs []vec.V
		for i := range 2 {
			m := &reg{class: 'V', n: pr.n / 2, in: pr, off: i * pr.n / 2, first: -1}
			vs = append(vs, t.widen(a.Elem, m))
		}
		return vs
	}
	var vs []vec.V
	for _, j := range k.firsts() {
		v := t.vreg(sew)
		t.emit(fmt.Sprintf("VLE%dV", sew), mem{k.at(a, j, 1)}, v)
		vs = append(vs, t.widen(a.Elem, v))
	}
	return vs
}

// Store writes ys, narrowed to a's type, at the block's values of a: an
// interleaved pair's members from one register pair (pair).
func (k *blk) Store(a vec.Arr, ys []vec.V) {
	t, sew := k.t, 8*a.Elem.Size
	ns := make([]*reg, len(ys))
	for i, y := range ys {
		ns[i] = t.narrow(a.Elem, y.(*reg))
	}
	if k.seg() {
		t.emit(fmt.Sprintf("VSSEG2E%dV", sew), t.pair(ns), mem{k.at(a, 0, 2)})
		return
	}
	for i, j := range k.firsts() {
		t.emit(fmt.Sprintf("VSE%dV", sew), ns[i], mem{k.at(a, j, 1)})
	}
}

// pair places ys in one group, the first in its lower half: a value
// already placed elsewhere is copied.
func (t *Target) pair(ys []*reg) *reg {
	n := ys[0].n
	pr := t.newReg('V', 2*n)
	for i, y := range ys {
		if y.in != nil || i == 1 && y == ys[0] {
			c := t.newReg('V', n)
			t.emit(fmt.Sprintf("VMV%dRV", n), y, c)
			y = c
		}
		y.in, y.off = pr, i*n
	}
	return pr
}

// Partners are the other member.
func (k *blk) Partners(xs []vec.V) []vec.V { return []vec.V{xs[1], xs[0]} }

// Table reads C and S: neox, C[a] and S[a] for both members (C[b] = C[a],
// S[b] = −S[a]); interleaved, C[a] and S[b] in strided loads (S[a] = −S[b]).
func (k *blk) Table(row vec.Arr) (c, s []vec.V, neg []bool) {
	t, sew, R := k.t, k.t.csew(), k.t.f.Shape.RotaryDim
	if !k.seg() {
		cv, sv := t.vreg(sew), t.vreg(sew)
		t.emit(fmt.Sprintf("VLE%dV", sew), mem{k.at(row, 0, 1)}, cv)
		t.emit(fmt.Sprintf("VLE%dV", sew), mem{k.at(row, R, 1)}, sv)
		return []vec.V{cv, cv}, []vec.V{sv, sv}, []bool{false, true}
	}
	stride := t.int(2 * row.Elem.Size)
	cv, sv := t.vreg(sew), t.vreg(sew)
	t.emit(fmt.Sprintf("VLSE%dV", sew), mem{k.at(row, 0, 2)}, stride, cv)
	t.emit(fmt.Sprintf("VLSE%dV", sew), mem{k.at(row, R+1, 2)}, stride, sv)
	return []vec.V{cv, cv}, []vec.V{sv, sv}, []bool{true, false}
}

// SumSquares adds fl64(a_j²) to lane j mod 8 of acc, 8 values at a time in
// increasing j (vl = 8; the last values at a shorter vl, the lanes past it
// undisturbed): float32 values by VFWMACC, whose product is exact.
//
//	for j := 0; j < H; j += 8 { s[0:8] += widen(a[j:j+8])² }
func (h *head) SumSquares(acc vec.V, a vec.Arr) {
	t, H := h.t, h.t.f.Shape.HeadDim
	p := t.addr(a)
	chunk := func() {
		v := t.vreg(8 * a.Elem.Size)
		t.emit(fmt.Sprintf("VLE%dV", 8*a.Elem.Size), mem{p}, v)
		v = t.widen(a.Elem, v)
		if t.csew() == 64 {
			sq := t.newReg('V', 4)
			t.emit("VFMULVV", v, v, sq)
			t.emit("VFADDVV", sq, acc, acc)
		} else {
			t.emit("VFWMACCVV", v, v, acc)
		}
	}
	step := 8 * a.Elem.Size
	t.setvl(8, t.csew(), 16, "TU", nil)
	if full := H / 8; full > 1 {
		end := t.x()
		t.emit("ADD", full*step, p, end)
		top := t.label()
		chunk()
		t.emit("ADD", step, p, p)
		t.loop("BNE", top, p, end)
	} else if full == 1 {
		chunk()
		if H%8 > 0 {
			t.emit("ADD", step, p, p)
		}
	}
	if H%8 > 0 {
		t.setvl(H%8, t.csew(), 16, "TU", nil)
		chunk()
	}
}
