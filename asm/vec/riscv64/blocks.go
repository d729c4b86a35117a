package riscv64

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/asm/vec"
)

// Pairs runs body over the pairs [0, R/2), vl pairs a strip.
func (t *Target) Pairs(_ []vec.Arr, body func(vec.Block)) {
	if s := t.f.Shape; s.NeoX {
		t.strip(s.Half(), []int{0, s.Half()}, false, body)
	} else {
		t.strip(s.Half(), []int{0}, true, body)
	}
}

// Values runs body over the values [lo, hi), vl values a strip.
func (t *Target) Values(lo, hi int, _ []vec.Arr, body func(vec.Block)) {
	t.strip(hi-lo, []int{lo}, false, body)
}

// strip emits body in a loop over n pairs (values), at the compute type's
// LMUL: the members start at the values firsts (seg: one member, an
// interleaved pair's two values through segment accesses); the pointers
// the body uses are set ahead of the loop.
//
//	for n > 0 { vl = min(n, VLMAX); body; p += vl·step for each pointer; n -= vl }
func (t *Target) strip(n int, firsts []int, seg bool, body func(vec.Block)) {
	if n <= 0 {
		return
	}
	t.kcache = nil
	cnt, vl := t.x(), t.x()
	t.emit("MOV", n, cnt)
	mark := len(t.code)
	top := t.label()
	t.setvl(cnt, t.csew(), t.csew()/t.lmul, "TA", vl)
	b := &blk{t: t, firsts: firsts, seg: seg, ptrs: map[blkKey]*reg{}}
	body(b)
	by := map[int]*reg{1: vl} // vl·step, by step
	for _, k := range b.order {
		if by[k.step] == nil {
			by[k.step] = t.x()
			t.emit("SLLI", map[int]int{2: 1, 4: 2, 8: 3, 16: 4}[k.step], vl, by[k.step])
		}
		t.emit("ADD", by[k.step], b.ptrs[k], b.ptrs[k])
	}
	t.emit("SUB", vl, cnt, cnt)
	t.loop("BNEZ", top, cnt)
	t.code = append(t.code[:mark], append(b.inits, t.code[mark:]...)...)
}

// blk is one strip of a head's pairs or values.
type blk struct {
	t      *Target
	firsts []int
	seg    bool
	ptrs   map[blkKey]*reg
	order  []blkKey
	inits  []*ins
}

// blkKey is a strip's pointer: off bytes on from an array's pointer p,
// moving step bytes a lane.
type blkKey struct {
	p         *reg
	off, step int
}

// at is the strip's pointer to value j of a, per values a lane.
func (k *blk) at(a vec.Arr, j, per int) mem {
	key := blkKey{a.P.(*reg), (a.Off + j) * a.Elem.Size, per * a.Elem.Size}
	r, ok := k.ptrs[key]
	if !ok {
		r = k.t.x()
		k.ptrs[key], k.order, k.inits = r, append(k.order, key), append(k.inits, move(key.off, key.p, r))
	}
	return mem{r}
}

// Load reads the block's values of a, widened to the compute type.
func (k *blk) Load(a vec.Arr) []vec.V {
	t, sew := k.t, 8*a.Elem.Size
	var vs []vec.V
	if k.seg {
		n := t.vreg(sew).n
		pr := t.reg('V', 2*n)
		t.emit(fmt.Sprintf("VLSEG2E%dV", sew), k.at(a, 0, 2), pr)
		for i := range 2 {
			vs = append(vs, t.widen(a.Elem, &reg{class: 'V', n: n, in: pr, off: i * n, first: -1}))
		}
		return vs
	}
	for _, j := range k.firsts {
		v := t.vreg(sew)
		t.emit(fmt.Sprintf("VLE%dV", sew), k.at(a, j, 1), v)
		vs = append(vs, t.widen(a.Elem, v))
	}
	return vs
}

// Store writes ys, narrowed to a's type, at the block's values of a.
func (k *blk) Store(a vec.Arr, ys []vec.V) {
	t, sew := k.t, 8*a.Elem.Size
	ns := make([]*reg, len(ys))
	for i, y := range ys {
		ns[i] = t.narrow(a.Elem, y.(*reg))
	}
	if k.seg {
		t.emit(fmt.Sprintf("VSSEG2E%dV", sew), t.pair(ns), k.at(a, 0, 2))
		return
	}
	for i, j := range k.firsts {
		t.emit(fmt.Sprintf("VSE%dV", sew), ns[i], k.at(a, j, 1))
	}
}

// pair places ys in one group, ys[i] at its i-th half (a value placed
// elsewhere already is copied).
func (t *Target) pair(ys []*reg) *reg {
	n := ys[0].n
	pr := t.reg('V', 2*n)
	for i, y := range ys {
		if y.in != nil || i == 1 && y == ys[0] {
			c := t.reg('V', n)
			t.emit(fmt.Sprintf("VMV%dRV", n), y, c)
			y = c
		}
		y.in, y.off = pr, i*n
	}
	return pr
}

// Partners are the other member.
func (k *blk) Partners(xs []vec.V) []vec.V { return []vec.V{xs[1], xs[0]} }

// Table reads C and S for the members. Neox: C[a] and S[a] for both
// (C[b] = C[a], S[b] = −S[a]), y_a = x_a·C[a] + x_b·S[a], y_b = x_b·C[a] −
// x_a·S[a]; interleaved: C[a] and S[b] in strided loads (S[a] = −S[b]),
// y_a = x_a·C[a] − x_b·S[b], y_b = x_b·C[a] + x_a·S[b] (forward).
func (k *blk) Table(row vec.Arr) (c, s []vec.V, neg []bool) {
	t, sew, R := k.t, k.t.csew(), k.t.f.Shape.RotaryDim
	cv, sv := t.vreg(sew), t.vreg(sew)
	if !k.seg {
		t.emit(fmt.Sprintf("VLE%dV", sew), k.at(row, 0, 1), cv)
		t.emit(fmt.Sprintf("VLE%dV", sew), k.at(row, R, 1), sv)
		return []vec.V{cv, cv}, []vec.V{sv, sv}, []bool{false, true}
	}
	stride := t.int(2 * row.Elem.Size)
	t.emit(fmt.Sprintf("VLSE%dV", sew), k.at(row, 0, 2), stride, cv)
	t.emit(fmt.Sprintf("VLSE%dV", sew), k.at(row, R+1, 2), stride, sv)
	return []vec.V{cv, cv}, []vec.V{sv, sv}, []bool{true, false}
}

// Acc is 8 float64 lanes of zeros: vl = 8 at LMUL 4, 8 lanes at any VLEN.
func (t *Target) Acc() vec.V {
	t.setvl(8, 64, 16, "TA", "X0")
	a := t.reg('V', 4)
	t.emit("VMVVI", 0, a)
	return a
}

// SumSquares adds fl64(a_j²) to lane j mod 8 of acc, 8 values at a time in
// increasing j, the last at a shorter vl (the lanes past it kept): float32
// values by VFWMACC, the exact product and one rounding, the sum's.
//
//	for j := 0; j < H; j += 8 { s[0:8] += widen(a[j:j+8])² }
func (t *Target) SumSquares(acc vec.V, a vec.Arr) {
	H, size := t.f.Shape.HeadDim, a.Elem.Size
	p := t.addr(a)
	chunk := func() {
		v := t.vreg(8 * size)
		t.emit(fmt.Sprintf("VLE%dV", 8*size), mem{p}, v)
		if v = t.widen(a.Elem, v); t.csew() == 32 {
			t.emit("VFWMACCVV", v, v, acc)
			return
		}
		sq := t.reg('V', 4)
		t.emit("VFMULVV", v, v, sq)
		t.emit("VFADDVV", sq, acc, acc)
	}
	t.setvl(8, t.csew(), 16, "TU", "X0")
	if H >= 16 {
		end := t.x()
		t.emit("ADD", H/8*8*size, p, end)
		top := t.label()
		chunk()
		t.emit("ADD", 8*size, p, p)
		t.loop("BNE", top, p, end)
	} else if H >= 8 {
		chunk()
		t.emit("ADD", 8*size, p, p)
	}
	if H%8 > 0 {
		t.setvl(H%8, t.csew(), 16, "TU", "X0")
		chunk()
	}
}

// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)): the upper half of the
// sums slid onto the lower and added, then the upper quarter, then lane 1.
func (t *Target) Reduce(acc vec.V) vec.S {
	t.setvl(8, 64, 16, "TA", "X0")
	s := acc.(*reg)
	for _, k := range []int{4, 2, 1} {
		u, v := t.reg('V', 4), t.reg('V', 4)
		t.emit("VSLIDEDOWNVI", k, s, u)
		t.emit("VFADDVV", u, s, v)
		s = v
	}
	r := t.fr()
	t.emit("VFMVFS", s, r)
	return r
}

// Scale is r = fl(1/sqrt(ss/count + eps)), each float64 step rounded, r
// rounded once to the compute type.
func (t *Target) Scale(ss vec.S, count vec.Int, eps vec.S) vec.V {
	n, q, r := t.fr(), t.fr(), t.fr()
	if k, ok := count.(int); ok {
		n = t.constant('F', 8, math.Float64bits(float64(k)))
	} else {
		t.emit("FCVTDL", count, n)
	}
	t.emit("FDIVD", n, ss, q)
	t.emit("FADDD", eps, q, q)
	t.emit("FSQRTD", q, q)
	t.emit("FDIVD", q, t.constant('F', 8, math.Float64bits(1)), r)
	if t.csew() == 32 {
		t.emit("FCVTSD", r, r)
	}
	return r
}
