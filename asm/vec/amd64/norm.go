package amd64

import (
	"math"

	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// acc is a norm's 8 float64 partial sums: one ZMM (AVX-512), or two YMMs,
// lanes 0–3 and 4–7 (AVX2).
type acc []reg.VecVirtual

func (t *Target) Acc() vec.V {
	if t.l.masked {
		a := acc{t.c.ZMM()}
		t.c.VPXORD(a[0], a[0], a[0])
		return a
	}
	a := acc{t.c.YMM(), t.c.YMM()}
	for _, r := range a {
		t.c.VXORPD(r, r, r)
	}
	return a
}

// group is a run of at most 8 values (AVX2: 4) that one load of the sum of
// squares takes, into accumulator acc: lanes k are values j ≡ k (mod 8).
type group struct{ j, w, acc int }

// groups are the sum's loads over a head: groups of 8 (AVX2: 4,
// alternating between the accumulators), the last shorter. Every head
// starts at lane 0, so a token norm needs HeadDim a multiple of 8.
func (t *Target) groups() []group {
	H, per := t.f.Shape.HeadDim, t.l.bytes/8
	var gs []group
	for j := 0; j < H; j += per {
		gs = append(gs, group{j, min(per, H-j), (j / per) % (8 / per)})
	}
	return gs
}

// SumSquares adds the squares of head a's values to the partial sums: a
// long head in a loop over chunks of 64 values.
func (h *head) SumSquares(sums vec.V, a vec.Arr) {
	t, c := h.t, h.t.c
	gs := t.groups()
	if t.f.Shape.HeadDim <= unrollMax || len(gs) < 16 {
		for _, g := range gs {
			t.square(sums.(acc), t.mem(a, g.j), a.Elem, g)
		}
		return
	}
	const chunk = 64
	times := t.f.Shape.HeadDim / chunk
	p := c.GP64()
	c.LEAQ(t.mem(a, 0), p)
	cnt := c.GP64()
	c.MOVQ(operand.U32(times), cnt)
	lbl := t.label("sum")
	c.Label(lbl)
	for _, g := range gs {
		if g.j < chunk {
			t.square(sums.(acc), operand.Mem{Base: p}.Offset(g.j*a.Elem.Size), a.Elem, g)
		}
	}
	c.ADDQ(operand.U32(chunk*a.Elem.Size), p)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(lbl))
	for _, g := range gs {
		if g.j >= times*chunk {
			t.square(sums.(acc), t.mem(a, g.j), a.Elem, g)
		}
	}
}

// SumGroup stores at sums[i] the reduced sum of squares of the i-th of the
// k heads w walks through. At AVX-512 the 8 heads' chains are interleaved,
// group by group, one load of each head in turn: a head's sum is one chain
// of dependent additions (its order is the contract's), and 8 side by side
// keep both vector ports busy. Their reductions then run as one tree over
// the 8 accumulators (reduceLanes) and store the 8 sums with one store,
// which ScaleLanes' load can take from the store buffer (8 scalar stores
// could not forward to it). Head i is at base_{i/4} + stride·(i%4), with
// base_1 = base_0 + 4·stride; a long head loops over chunks of 64 values,
// as SumSquares does. AVX2 takes its 4 heads one after another.
func (t *Target) SumGroup(k int, w vec.Walk, sums vec.Arr) {
	c := t.c
	if !t.l.masked || k != 8 {
		w.A = t.Copy(w.A) // For moves the copy
		t.For(k, []vec.Walk{w}, func(h vec.Head, i vec.Int) {
			a := t.Acc()
			h.SumSquares(a, w.A)
			c.VMOVSD(t.Reduce(a).(reg.VecVirtual), t.index(sums, i))
		})
		return
	}
	accs := make([]acc, k)
	for i := range accs {
		accs[i] = t.Acc().(acc)
	}
	size := w.A.Elem.Size
	step := t.bytesOf(w)
	bases := []reg.GPVirtual{t.lea(t.mem(w.A, 0))}
	var s, s3 reg.GPVirtual
	if r, ok := step.(reg.GPVirtual); ok {
		s, s3 = r, c.GP64()
		c.LEAQ(operand.Mem{Base: s, Index: s, Scale: 2}, s3)
		b := c.GP64()
		c.LEAQ(operand.Mem{Base: bases[0], Index: s, Scale: 4}, b)
		bases = append(bases, b)
	}
	at := func(i, off int) operand.Mem {
		if s == nil {
			return operand.Mem{Base: bases[0], Disp: i*int(step.(operand.U32)) + off}
		}
		m := operand.Mem{Base: bases[i/4], Disp: off}
		switch i % 4 {
		case 1:
			m.Index, m.Scale = s, 1
		case 2:
			m.Index, m.Scale = s, 2
		case 3:
			m.Index, m.Scale = s3, 1
		}
		return m
	}
	sumGroups := func(gs []group, from int) {
		for _, g := range gs {
			for i := range k {
				t.square(accs[i], at(i, (g.j-from)*size), w.A.Elem, g)
			}
		}
	}
	gs := t.groups()
	const chunk = 64
	if t.f.Shape.HeadDim <= unrollMax || len(gs) < 16 {
		sumGroups(gs, 0)
	} else {
		times := t.f.Shape.HeadDim / chunk
		cnt := c.GP64()
		c.MOVQ(operand.U32(times), cnt)
		lbl := t.label("sums")
		c.Label(lbl)
		var in, rest []group
		for _, g := range gs {
			switch {
			case g.j < chunk:
				in = append(in, g)
			case g.j >= times*chunk:
				rest = append(rest, g)
			}
		}
		sumGroups(in, 0)
		for _, b := range bases {
			c.ADDQ(operand.U32(chunk*size), b)
		}
		c.DECQ(cnt)
		c.JNZ(operand.LabelRef(lbl))
		sumGroups(rest, times*chunk)
	}
	c.VMOVUPD(t.reduceLanes(accs), t.mem(sums, 0))
}

// reduceLanes is Reduce of the 8 accumulators a (one ZMM each) at once,
// their sums in lanes 0–7, each addition Reduce's with the same first
// operand:
//
//	halves:   (s0+s4, s1+s5, s2+s6, s3+s7) of heads (0,2), (4,6), (1,3), (5,7)
//	quarters: (u, v) = ((s0+s4)+(s2+s6), (s1+s5)+(s3+s7)) of heads 0,2,4,6 and 1,3,5,7
//	pairs:    u+v of heads 0…7, unpacked lane by lane
func (t *Target) reduceLanes(a []acc) reg.VecVirtual {
	c := t.c
	// join adds the blocks of x and y that lo picks to those hi picks, lo's
	// first (VSHUFF64X2 takes dst blocks 0–1 from x, 2–3 from y).
	join := func(x, y reg.VecVirtual, lo, hi uint8) reg.VecVirtual {
		l, h, d := c.ZMM(), c.ZMM(), c.ZMM()
		c.VSHUFF64X2(operand.U8(lo), y, x, l)
		c.VSHUFF64X2(operand.U8(hi), y, x, h)
		c.VADDPD(h, l, d)
		return d
	}
	half := func(i, j int) reg.VecVirtual { return join(a[i][0], a[j][0], 0x44, 0xEE) } // blocks (0,1) + (2,3)
	even := join(half(0, 2), half(4, 6), 0x88, 0xDD)                                    // blocks (0,2) + (1,3)
	odd := join(half(1, 3), half(5, 7), 0x88, 0xDD)
	u, v, d := c.ZMM(), c.ZMM(), c.ZMM()
	c.VUNPCKLPD(odd, even, u) // (u0, u1, u2, …, u7)
	c.VUNPCKHPD(odd, even, v)
	c.VADDPD(v, u, d)
	return d
}

// square widens group g at m (type e) to float64, squares it and adds it
// to its lanes. float32 values convert straight from memory. A float32's
// square is exact in float64, so AVX-512 adds it with VFMADD231PD: one
// rounding, the sum's, as the product then the sum give (docs/contract.md
// §10); AVX2 keeps the two (FMA3 measured no faster there, and would add
// cpu.X86.HasFMA to the level). A float64 square rounds: there they stay
// apart.
func (t *Target) square(sums acc, m operand.Mem, e vec.Elem, g group) {
	c := t.c
	a := sums[g.acc]
	if t.f.C() == vec.F64 {
		v := t.loadAt(e, m, g.w).r // float64 lanes line up with a
		var vv reg.Register = v
		if !t.l.masked && v.Size() == 16 {
			vv = v.AsY() // the VEX load zeroed the upper lanes
		}
		c.VMULPD(vv, vv, vv)
		c.VADDPD(vv, a, a)
		return
	}
	var d reg.VecVirtual
	switch {
	case e == vec.F32 && t.l.masked:
		d = c.ZMM()
		if g.w == 8 {
			c.VCVTPS2PD(m, d)
		} else {
			c.VCVTPS2PD_Z(m, t.mask(g.w), d) // masked-off lanes are not read
		}
	case e == vec.F32:
		d = c.YMM()
		if g.w == 4 {
			c.VCVTPS2PD(m, d)
		} else {
			c.VCVTPS2PD(m, d.AsX()) // two values; the VEX form zeroes the rest
		}
	case t.l.masked:
		d = c.ZMM()
		c.VCVTPS2PD(t.loadAt(e, m, g.w).r.AsY(), d)
	default:
		d = c.YMM()
		c.VCVTPS2PD(t.loadAt(e, m, g.w).r.AsX(), d)
	}
	if t.l.masked {
		c.VFMADD231PD(d, d, a) // exact square, one rounding: the sum's
		return
	}
	c.VMULPD(d, d, d) // exact: a float32's square fits a float64
	c.VADDPD(d, a, a)
}

// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)): the upper half of the
// sums added to the lower, then the upper quarter, then lane 1 to lane 0.
func (t *Target) Reduce(sums vec.V) vec.S {
	c, a := t.c, sums.(acc)
	y := c.YMM()
	if t.l.masked {
		c.VEXTRACTF64X4(operand.U8(1), a[0], y)
		c.VADDPD(y, a[0].AsY(), y) // (s0+s4, s1+s5, s2+s6, s3+s7)
	} else {
		c.VADDPD(a[1], a[0], y)
	}
	u := c.XMM()
	c.VEXTRACTF128(operand.U8(1), y, u)
	c.VADDPD(u, y.AsX(), u) // ((s0+s4)+(s2+s6), (s1+s5)+(s3+s7))
	hi := c.XMM()
	c.VUNPCKHPD(u, u, hi)
	ss := c.XMM()
	c.VADDSD(hi, u, ss)
	return ss
}

// Scale turns ss into r in every lane: ss/count, +ε, sqrt, 1/q in float64,
// rounded once to the compute type.
func (t *Target) Scale(ss vec.S, count vec.Int, eps vec.S) vec.V {
	c := t.c
	x := ss.(reg.VecVirtual)
	switch k := count.(type) {
	case operand.U32:
		if m, ok := exactInverse(int(k)); ok {
			c.VMULSD(t.constant(math.Float64bits(m), 8).AsX(), x, x)
		} else {
			c.VDIVSD(t.constant(math.Float64bits(float64(k)), 8).AsX(), x, x)
		}
	case reg.GPVirtual:
		n := c.XMM()
		c.VCVTSI2SDQ(k, n, n)
		c.VDIVSD(n, x, x)
	}
	c.VADDSD(eps.(reg.VecVirtual), x, x)
	c.VSQRTSD(x, x, x)
	one := c.XMM()
	c.VDIVSD(x, t.constant(math.Float64bits(1), 8).AsX(), one) // r = 1/q
	r := t.reg(t.lanes())
	if t.f.C() == vec.F64 {
		c.VBROADCASTSD(one, r)
	} else {
		c.VCVTSD2SS(one, one, one)
		c.VBROADCASTSS(one, r)
	}
	return &value{r: r, w: t.lanes()}
}

// exactInverse is 1/m when m is a power of two: then s·(1/m) is s/m, bit for
// bit (both are the real s/m rounded once, subnormal or not), and a
// multiplication costs a fraction of a division.
func exactInverse(m int) (float64, bool) {
	if m <= 0 || m&(m-1) != 0 {
		return 0, false
	}
	return 1 / float64(m), true
}

// ScaleLanes is Scale for the n sums at sums, lane by lane (the same
// correctly rounded float64 operations), each r stored at rs: the
// division, the square root and the reciprocal paid once for n heads.
func (t *Target) ScaleLanes(sums, rs vec.Arr, n int, count vec.Int, eps vec.S) {
	c := t.c
	v := t.regBytes(8 * n)
	if n == 8 {
		v = c.ZMM()
	}
	k := func(bits uint64) reg.VecVirtual { return t.sizedTo(t.constant(bits, 8), v) }
	c.VMOVUPD(t.mem(sums, 0), v)
	if m, ok := exactInverse(int(count.(operand.U32))); ok {
		c.VMULPD(k(math.Float64bits(m)), v, v)
	} else {
		c.VDIVPD(k(math.Float64bits(float64(count.(operand.U32)))), v, v)
	}
	e := t.same(v)
	c.VBROADCASTSD(eps.(reg.VecVirtual), e)
	c.VADDPD(e, v, v)
	c.VSQRTPD(v, v)
	one := t.same(v)
	c.VDIVPD(v, k(math.Float64bits(1)), one) // r = 1/q, lane by lane
	if t.f.C() == vec.F64 {
		c.VMOVUPD(one, t.mem(rs, 0))
		return
	}
	if n == 8 {
		r := c.YMM()
		c.VCVTPD2PS(one, r)
		c.VMOVUPS(r, t.mem(rs, 0))
		return
	}
	r := c.XMM()
	c.VCVTPD2PSY(one, r)
	c.VMOVUPS(r, t.mem(rs, 0))
}

// index is element i of a.
func (t *Target) index(a vec.Arr, i vec.Int) operand.Mem {
	m := t.mem(a, 0)
	m.Index, m.Scale = i.(reg.GPVirtual), uint8(a.Elem.Size)
	return m
}

func (t *Target) BroadcastAt(a vec.Arr, i vec.Int) vec.V {
	r := t.reg(t.lanes())
	if a.Elem == vec.F64 {
		t.c.VBROADCASTSD(t.index(a, i), r)
	} else {
		t.c.VBROADCASTSS(t.index(a, i), r)
	}
	return &value{r: r, w: t.lanes()}
}
