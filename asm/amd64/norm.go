package amd64

import (
	"fmt"
	"math"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// Norm is one of a shape's QK-norms (docs/contract.md §10): for each,
// Generate also emits a "norm" kernel per level,
//
//	func applyNormRMSHeadAVX512S(x []T, stride, n int, r *C, w []C, eps float64)
//
// which normalizes and rotates the n heads of x, stride values apart, with
// table row r: each head alone with the HeadDim weights w (Token: the n
// heads as one vector, head h with w[h·HeadDim:]; l2: w unused). For one
// normed vector of m values it computes, in this order, the 8 partial sums
// s_k = Σ x_j² over j ≡ k (mod 8) in float64 in increasing j (lane k of the
// accumulator), ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)) (the upper half of
// the accumulator added to the lower, then the upper quarter to the lower,
// then lane 1 to lane 0), ss/m, +ε, sqrt and 1/q in float64, r rounded once
// to the compute type (ε = eps, an argument); then y_j = fl(fl(x_j·r)·w_j) (gemma: fl(1 + w_j);
// l2: fl(x_j·r)) and the rotation of y, every product rounded, no FMA.
// With After the head is rotated first into a scratch head on the stack
// (compute type), and the norm reads it there: the heads of a group (see
// groupHeads) each into a scratch head of its own, which the second pass
// reads again; with Token into one scratch head, the head rotated again for
// the second pass. f16 and bf16 widen exactly and narrow once, at the store.
type Norm struct {
	Kind  string // "rms", "gemma" or "l2"
	Token bool   // the n heads are one normed vector
	After bool   // normalize the rotated head
}

// Tag is the norm's part of its kernels' names: "RMSHead", "L2HeadAfter", ….
func (n Norm) Tag() string {
	t := map[string]string{"rms": "RMS", "gemma": "Gemma", "l2": "L2"}[n.Kind]
	if n.Token {
		t += "Token"
	} else {
		t += "Head"
	}
	if n.After {
		t += "After"
	}
	return t
}

// normName is the norm kernel of k's name at level l ("normonly": the norm
// alone).
func normName(l level, k Kernel, kind string) string {
	if kind == "normonly" {
		return "applyNormOnly" + k.norm.Tag() + l.suffix + k.Suffix
	}
	return "applyNorm" + k.norm.Tag() + l.suffix + k.Suffix
}

// emitNormFunc declares and emits the norm kernel of k at level l: kind
// "norm", or "normonly", the same norm without the rotation (r unused): the
// separate norm pass benchmarks and tests compare the fused one with.
func emitNormFunc(c *build.Context, l level, k Kernel, kind string) Func {
	x := codecs[k.DType]
	tab := x.compute()
	name := normName(l, k, kind)
	only := kind == "normonly"
	c.Function(name)
	if !k.norm.After || only {
		c.Attributes(attr.NOSPLIT)
	}
	c.SignatureExpr(fmt.Sprintf("func(x []%s, stride, n int, r *%s, w []%s, eps float64)", x.goType, tab.goType, tab.goType))
	what := "normalizes each of the n heads of x, stride values apart, with weights w"
	if k.norm.Token {
		what = "normalizes the n heads of x, stride values apart, as one vector, head h with weights w[h·HeadDim:]"
	}
	if k.norm.Kind == "l2" {
		what = strings.Replace(strings.Replace(what, ", head h with weights w[h·HeadDim:]", "", 1), " with weights w", "", 1)
	}
	order := "and rotates it forward with table row r"
	switch {
	case only:
		order = "and does not rotate it (r is unused): the norm alone"
	case k.norm.After:
		order = "after rotating it forward with table row r"
	}
	c.Doc(fmt.Sprintf("%s %s (QK-norm %s, ε = eps) %s, using %s.", name, what, k.norm.Kind, order, strings.ToUpper(l.name)))
	c.Pragma("noescape")
	emitNorm(c, l, k, only)
	return Func{Name: name, Kind: kind, Level: l.name, Shape: k.Suffix, Variant: k.norm.Tag()}
}

// normEmitter is the state of one norm kernel.
type normEmitter struct {
	*emitter
	nb      *Norm
	rv      reg.VecVirtual // r in every lane
	one     reg.VecVirtual // 1 in every lane (gemma)
	scratch operand.Mem    // the current head's rotation (After)
	only    bool           // the norm alone, no rotation
	label   int
}

// newLabel returns a fresh label with prefix p.
func (ne *normEmitter) newLabel(p string) string {
	ne.label++
	return fmt.Sprintf("%s%d", p, ne.label)
}

// emitNorm emits the body of the norm kernel (only: without the rotation).
func emitNorm(c *build.Context, l level, k Kernel, only bool) {
	in := codecs[k.DType]
	e := &emitter{c: c, l: l, k: k, kind: "fwd", in: in, out: in, tab: in.compute(),
		masks: map[int]reg.OpmaskVirtual{}, consts: map[uint32]reg.VecVirtual{}}
	e.lanes = l.bytes / e.tab.size
	ne := &normEmitter{emitter: e, nb: k.norm, only: only}
	H := k.HeadDim

	n := c.GP64()
	c.Load(c.Param("n"), n)
	c.CMPQ(n, operand.Imm(0))
	c.JLE(operand.LabelRef("done"))
	xbase := c.Load(c.Param("x").Base(), c.GP64()).(reg.GPVirtual)
	step := c.Load(c.Param("stride"), c.GP64()).(reg.GPVirtual)
	e.toBytes(step, in.size)
	e.r = operand.Mem{Base: c.Load(c.Param("r"), c.GP64())}
	var wbase reg.GPVirtual
	if ne.weighted() {
		wbase = c.Load(c.Param("w").Base(), c.GP64()).(reg.GPVirtual)
	}
	rotated := ne.nb.After && !only
	if rotated {
		heads := 1
		if !ne.nb.Token {
			heads = ne.groupHeads() // a scratch head for each head of a group
		}
		ne.scratch = c.AllocLocal(heads * H * e.tab.size)
	}

	// Masks and constants before any loop.
	for _, w := range ne.widths() {
		e.mask(w)
	}
	e.out.setup(e)
	if ne.nb.Kind == "gemma" {
		ne.one = ne.broadcast(1)
	}

	xp := c.GP64()
	c.MOVQ(xbase, xp)
	e.src = operand.Mem{Base: xp}
	e.dst = e.src
	acc := ne.accumulators()
	if !ne.nb.Token {
		wp := ne.weights(wbase)
		G := ne.groupHeads()
		ssm := c.AllocLocal(8 * G)
		rsm := c.AllocLocal(e.tab.size * G)
		start, g := c.GP64(), c.GP64()
		// After: sumHead rotates head g into scratch head g, at sp, and
		// outHead reads it there.
		scratch := ne.scratch
		firstScratch, nextScratch := func() {}, func() {}
		if rotated {
			sp := c.GP64()
			ne.scratch = operand.Mem{Base: sp}
			firstScratch = func() { c.LEAQ(scratch, sp) }
			nextScratch = func() { c.ADDQ(operand.U32(H*e.tab.size), sp) }
		}
		c.Label("group")
		c.CMPQ(n, operand.U8(G))
		c.JB(operand.LabelRef("head"))
		c.Commentf("%d heads: their sums of squares, then their r together, then the heads", G)
		c.MOVQ(xp, start)
		c.XORQ(g, g)
		firstScratch()
		c.Label("groupsum")
		ne.zero(acc)
		ne.sumHead(acc)
		c.VMOVSD(ne.reduce(acc), operand.Mem{Base: ssm.Base, Disp: ssm.Disp, Index: g, Scale: 8})
		c.ADDQ(step, xp)
		nextScratch()
		c.INCQ(g)
		c.CMPQ(g, operand.U8(G))
		c.JB(operand.LabelRef("groupsum"))
		ne.scaleGroup(ssm, rsm, G)
		c.MOVQ(start, xp)
		c.XORQ(g, g)
		firstScratch()
		c.Label("groupout")
		ne.rv = ne.reg(ne.lanes)
		rm := operand.Mem{Base: rsm.Base, Disp: rsm.Disp, Index: g, Scale: uint8(e.tab.size)}
		if e.tab.size == 4 {
			c.VBROADCASTSS(rm, ne.rv)
		} else {
			c.VBROADCASTSD(rm, ne.rv)
		}
		ne.outHead(wp)
		c.ADDQ(step, xp)
		nextScratch()
		c.INCQ(g)
		c.CMPQ(g, operand.U8(G))
		c.JB(operand.LabelRef("groupout"))
		c.SUBQ(operand.U8(G), n)
		c.JMP(operand.LabelRef("group"))
		ne.scratch = scratch // the heads left: one at a time, in the first scratch head
		c.Label("head")
		c.TESTQ(n, n)
		c.JZ(operand.LabelRef("done"))
		ne.zero(acc)
		ne.sumHead(acc)
		ne.scale(acc, operand.U32(H))
		ne.outHead(wp)
		c.ADDQ(step, xp)
		c.DECQ(n)
		c.JMP(operand.LabelRef("head"))
	} else {
		cnt := c.GP64()
		c.MOVQ(n, cnt)
		ne.zero(acc)
		c.Label("sum")
		ne.sumHead(acc)
		c.ADDQ(step, xp)
		c.DECQ(cnt)
		c.JNZ(operand.LabelRef("sum"))
		total := c.GP64()
		c.IMUL3Q(operand.U32(H), n, total)
		ne.scale(acc, total)
		c.MOVQ(xbase, xp)
		c.MOVQ(n, cnt)
		wp := ne.weights(wbase)
		c.Label("out")
		ne.outHead(wp)
		c.ADDQ(step, xp)
		if wp.Base != nil {
			c.ADDQ(operand.U32(H*e.tab.size), wp.Base)
		}
		c.DECQ(cnt)
		c.JNZ(operand.LabelRef("out"))
	}
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

func (ne *normEmitter) weighted() bool { return ne.nb.Kind != "l2" }

// weights returns the weights' address: a pointer of its own for a token
// norm, which walks it head by head.
func (ne *normEmitter) weights(wbase reg.GPVirtual) operand.Mem {
	if !ne.weighted() {
		return operand.Mem{}
	}
	if !ne.nb.Token {
		return operand.Mem{Base: wbase}
	}
	p := ne.c.GP64()
	ne.c.MOVQ(wbase, p)
	return operand.Mem{Base: p}
}

// widths returns every block width the kernel loads or stores with, for
// the masks.
func (ne *normEmitter) widths() []int {
	k := ne.k
	var ws []int
	add := func(bs []block) {
		for _, b := range bs {
			ws = append(ws, b.w)
		}
	}
	span := k.RotaryDim
	if k.NeoX {
		span /= 2
	}
	add(split(0, span, ne.lanes, ne.l.masked))
	add(split(k.RotaryDim, k.HeadDim-k.RotaryDim, ne.lanes, ne.l.masked))
	add(split(0, k.HeadDim, ne.lanes, ne.l.masked))
	for _, g := range ne.groups() {
		ws = append(ws, g.w)
	}
	return ws
}

// broadcast returns a register of the compute type with v in every lane.
func (ne *normEmitter) broadcast(v float64) reg.VecVirtual {
	c := ne.c
	if ne.tab.size == 4 {
		return ne.constant(math.Float32bits(float32(v)))
	}
	g := c.GP64()
	c.MOVQ(operand.U64(math.Float64bits(v)), g)
	x := c.XMM()
	c.VMOVQ(g, x)
	d := ne.reg(ne.lanes)
	c.VBROADCASTSD(x, d)
	return d
}

// accumulators returns the registers of the 8 partial sums: one ZMM of 8
// float64 lanes (AVX-512), or two YMMs, lanes 0–3 and 4–7 (AVX2).
func (ne *normEmitter) accumulators() []reg.VecVirtual {
	if ne.l.masked {
		return []reg.VecVirtual{ne.c.ZMM()}
	}
	return []reg.VecVirtual{ne.c.YMM(), ne.c.YMM()}
}

func (ne *normEmitter) zero(acc []reg.VecVirtual) {
	for _, a := range acc {
		if ne.l.masked {
			ne.c.VPXORD(a, a, a)
		} else {
			ne.c.VXORPD(a, a, a)
		}
	}
}

// group is a run of at most 8 values of a head (AVX2: at most 4) that the
// sum of squares loads at once, into lanes k of accumulator acc.
type group struct {
	j, w int // first value, values
	acc  int // accumulator index
}

// groups returns the sum's loads over one head: groups of 8 values (AVX2:
// 4, alternating between the two accumulators), the last one shorter. Every
// head starts at lane 0: a token norm needs HeadDim a multiple of 8.
func (ne *normEmitter) groups() []group {
	H := ne.k.HeadDim
	var gs []group
	if ne.l.masked {
		for j := 0; j < H; j += 8 {
			gs = append(gs, group{j, min(8, H-j), 0})
		}
		return gs
	}
	for j := 0; j < H; j += 4 {
		gs = append(gs, group{j, min(4, H-j), (j / 4) % 2})
	}
	return gs
}

// sumHead adds the squares of the current head to acc: read from x, or
// (After) rotated into the scratch head first and read from there.
func (ne *normEmitter) sumHead(acc []reg.VecVirtual) {
	src, cd := ne.src, ne.in
	if ne.nb.After && !ne.only {
		ne.rotateToScratch()
		src, cd = ne.scratch, ne.tab
	}
	gs := ne.groups()
	per := 8 // values a loop iteration's groups cover, as a multiple of 8
	if ne.k.HeadDim <= unrollMax || len(gs) < 16 {
		for _, g := range gs {
			ne.square(acc, src, cd, g)
		}
		return
	}
	// A long head: loop over chunks of 8 groups' worth of 8 values.
	c := ne.c
	chunk := 8 * per
	times := ne.k.HeadDim / chunk
	p := c.GP64()
	c.LEAQ(src, p)
	cnt := c.GP64()
	c.MOVQ(operand.U32(times), cnt)
	lbl := ne.newLabel("sumchunk")
	c.Label(lbl)
	for _, g := range gs {
		if g.j >= chunk {
			break
		}
		ne.square(acc, operand.Mem{Base: p}, cd, g)
	}
	c.ADDQ(operand.U32(chunk*cd.size), p)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(lbl))
	for _, g := range gs {
		if g.j >= times*chunk {
			ne.square(acc, src, cd, g)
		}
	}
}

// square loads group g of the head at src (codec cd), widens it to
// float64, squares it and adds it to its accumulator lanes. float32 values
// convert straight from memory. A float32's square is exact in float64, so
// AVX-512 adds it with a fused multiply-add, VFMADD231PD: one rounding, of
// the sum, as the product then the sum give (docs/contract.md §10). A
// float64 value's square rounds: there the product and the sum stay apart.
func (ne *normEmitter) square(acc []reg.VecVirtual, src operand.Mem, cd codec, g group) {
	c := ne.c
	a := acc[g.acc]
	if ne.tab.size == 8 {
		// float64 values: the lanes already line up with acc.
		v := cd.load(ne.emitter, src.Offset(g.j*cd.size), g.w)
		var vv reg.Register = v
		if !ne.l.masked && v.Size() == 16 {
			vv = v.AsY() // the VEX load zeroed the upper lanes
		}
		c.VMULPD(vv, vv, vv)
		c.VADDPD(vv, a, a)
		return
	}
	m := src.Offset(g.j * cd.size)
	var d reg.VecVirtual
	switch {
	case cd.name == "f32" && ne.l.masked:
		d = c.ZMM()
		if g.w == 8 {
			c.VCVTPS2PD(m, d)
		} else {
			c.VCVTPS2PD_Z(m, ne.mask(g.w), d) // masked-off lanes are not read
		}
	case cd.name == "f32":
		d = c.YMM()
		if g.w == 4 {
			c.VCVTPS2PD(m, d)
		} else {
			c.VCVTPS2PD(m, d.AsX()) // two values; the VEX form zeroes the rest
		}
	case ne.l.masked:
		v := cd.load(ne.emitter, m, g.w)
		d = c.ZMM()
		c.VCVTPS2PD(v.AsY(), d)
	default:
		v := cd.load(ne.emitter, m, g.w)
		d = c.YMM()
		c.VCVTPS2PD(v.AsX(), d)
	}
	if ne.l.masked {
		c.VFMADD231PD(d, d, a) // exact square, one rounding: the sum's
		return
	}
	c.VMULPD(d, d, d) // exact: a float32's square fits a float64
	c.VADDPD(d, a, a)
}

// reduce returns the sum of squares in lane 0 of an XMM register: the
// partial sums combined as ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)) (the
// upper half of the accumulator added to the lower, then the upper quarter
// to the lower, then lane 1 to lane 0).
func (ne *normEmitter) reduce(acc []reg.VecVirtual) reg.VecVirtual {
	c := ne.c
	t := c.YMM()
	if ne.l.masked {
		c.VEXTRACTF64X4(operand.U8(1), acc[0], t)
		c.VADDPD(t, acc[0].AsY(), t) // (s0+s4, s1+s5, s2+s6, s3+s7)
	} else {
		c.VADDPD(acc[1], acc[0], t)
	}
	u := c.XMM()
	c.VEXTRACTF128(operand.U8(1), t, u)
	c.VADDPD(u, t.AsX(), u) // ((s0+s4)+(s2+s6), (s1+s5)+(s3+s7))
	hi := c.XMM()
	c.VUNPCKHPD(u, u, hi)
	ss := c.XMM()
	c.VADDSD(hi, u, ss)
	return ss
}

// scale turns the partial sums into r, broadcast into ne.rv: reduce, then
// the division by the count (an immediate, or a register for a token norm,
// n·HeadDim), +ε, sqrt, 1/q in float64, rounded once to the compute type.
func (ne *normEmitter) scale(acc []reg.VecVirtual, count operand.Op) {
	c := ne.c
	ss := ne.reduce(acc)
	g := c.GP64()
	c.MOVQ(count, g)
	cnt := c.XMM()
	c.VCVTSI2SDQ(g, cnt, cnt)
	c.VDIVSD(cnt, ss, ss)
	eps := c.XMM()
	c.VMOVSD(ne.epsAddr(), eps)
	c.VADDSD(eps, ss, ss)
	c.VSQRTSD(ss, ss, ss)
	one := c.XMM()
	c.MOVQ(operand.U64(math.Float64bits(1)), g)
	c.VMOVQ(g, one)
	c.VDIVSD(ss, one, one) // r = 1/q
	ne.rv = ne.reg(ne.lanes)
	if ne.tab.size == 4 {
		r32 := c.XMM()
		c.VCVTSD2SS(one, one, r32)
		c.VBROADCASTSS(r32, ne.rv)
	} else {
		c.VBROADCASTSD(one, ne.rv)
	}
}

// epsAddr is the address of the eps argument.
func (ne *normEmitter) epsAddr() operand.Mem {
	p, err := ne.c.Param("eps").Resolve()
	if err != nil {
		panic(err) // every norm kernel has the argument
	}
	return p.Addr
}

// groupHeads is how many heads a head-scope kernel takes through each pass
// at once: their sums of squares run side by side, and their r's are
// computed together, lane by lane (the same correctly rounded float64
// operations as one at a time), so that the division, the square root and
// the second division, whose latency a head would otherwise wait for, are
// paid once a group.
func (ne *normEmitter) groupHeads() int {
	if ne.l.masked {
		return 8
	}
	return 4
}

// scaleGroup computes the r of the G heads whose sums of squares are at ss
// (float64 slots) and stores them, in the compute type, at rs.
func (ne *normEmitter) scaleGroup(ssm, rsm operand.Mem, G int) {
	c := ne.c
	v := c.YMM()
	var vv reg.VecVirtual = v
	if G == 8 {
		vv = c.ZMM()
	}
	c.VMOVUPD(ssm, vv)
	g := c.GP64()
	b := func(bits uint64) reg.VecVirtual {
		x := c.XMM()
		c.MOVQ(operand.U64(bits), g)
		c.VMOVQ(g, x)
		d := ne.sameReg(vv)
		c.VBROADCASTSD(x, d)
		return d
	}
	c.VDIVPD(b(math.Float64bits(float64(ne.k.HeadDim))), vv, vv)
	eps := ne.sameReg(vv)
	c.VBROADCASTSD(ne.epsAddr(), eps)
	c.VADDPD(eps, vv, vv)
	c.VSQRTPD(vv, vv)
	one := b(math.Float64bits(1))
	c.VDIVPD(vv, one, one) // r = 1/q, lane by lane
	if ne.tab.size == 4 {
		if G == 8 {
			r := c.YMM()
			c.VCVTPD2PS(one, r)
			c.VMOVUPS(r, rsm)
		} else {
			r := c.XMM()
			c.VCVTPD2PSY(one, r)
			c.VMOVUPS(r, rsm)
		}
		return
	}
	c.VMOVUPD(one, rsm)
}

// normed returns a, w values, scaled by r and weighted by the weights at
// wm: fl(fl(a·r)·w), fl(fl(a·r)·fl(1 + w)) or fl(a·r).
func (ne *normEmitter) normed(a reg.VecVirtual, wm operand.Mem, w int) reg.VecVirtual {
	c := ne.c
	mul, add := c.VMULPS, c.VADDPS
	if ne.tab.size == 8 {
		mul, add = c.VMULPD, c.VADDPD
	}
	mul(ne.sized(ne.rv, a), a, a)
	switch ne.nb.Kind {
	case "rms":
		mul(ne.operand(nil, wm, w), a, a)
	case "gemma":
		g := ne.reg(w)
		add(ne.operand(nil, wm, w), ne.sized(ne.one, g), g)
		mul(g, a, a)
	}
	return a
}

// rotation returns the rotated block b of values held in lo (and, neox, hi:
// the pair partners RotaryDim/2 further on), with the row's values: y =
// fl(fl(x·C) + fl(q·S)), q the partner, as the rotation kernels do.
func (ne *normEmitter) rotation(b block, lo, hi reg.VecVirtual) (ylo, yhi reg.VecVirtual) {
	if !ne.k.NeoX {
		cop := ne.operand(nil, ne.cOff(b.j), b.w)
		sop := ne.operand(nil, ne.sOff(b.j), b.w)
		q := ne.swap(lo, b.w)
		return ne.sum(ne.mul(lo, cop, b.w), ne.mul(q, sop, b.w), false), nil
	}
	cj, sj := ne.tload(ne.cOff(b.j), b.w), ne.tload(ne.sOff(b.j), b.w)
	ylo = ne.sum(ne.mul(lo, cj, b.w), ne.mul(hi, sj, b.w), false)
	yhi = ne.sum(ne.mul(hi, cj, b.w), ne.mul(lo, sj, b.w), true)
	return ylo, yhi
}

// rotationBlocks returns the head's rotation blocks: runs of the first
// members' indices (neox: their partners are RotaryDim/2 further on).
func (ne *normEmitter) rotationBlocks() []block {
	span := ne.k.RotaryDim
	if ne.k.NeoX {
		span /= 2
	}
	return split(0, span, ne.lanes, ne.l.masked)
}

// rotateToScratch rotates the current head of x into the scratch head, in
// the compute type, the values past RotaryDim widened as they are.
func (ne *normEmitter) rotateToScratch() {
	k := ne.k
	half := k.RotaryDim / 2
	tmp := func(j int) operand.Mem { return ne.scratch.Offset(j * ne.tab.size) }
	ne.c.Comment("rotate the head into the scratch head")
	ne.blocks(ne.rotationBlocks(), true, func(b block, x, r, _, s operand.Mem) {
		lo := ne.load(x.Offset(b.j*ne.in.size), b.w)
		if !k.NeoX {
			y, _ := ne.rotationAt(b, r, lo, nil)
			ne.tab.store(ne.emitter, y, s.Offset(b.j*ne.tab.size), b.w)
			return
		}
		hi := ne.load(x.Offset((b.j+half)*ne.in.size), b.w)
		ylo, yhi := ne.rotationAt(b, r, lo, hi)
		ne.tab.store(ne.emitter, ylo, s.Offset(b.j*ne.tab.size), b.w)
		ne.tab.store(ne.emitter, yhi, s.Offset((b.j+half)*ne.tab.size), b.w)
	})
	for _, b := range split(k.RotaryDim, k.HeadDim-k.RotaryDim, ne.lanes, ne.l.masked) {
		v := ne.load(ne.src.Offset(b.j*ne.in.size), b.w)
		ne.tab.store(ne.emitter, v, tmp(b.j), b.w)
	}
}

// rotationAt is rotation with the row at r (a moving pointer in a loop).
func (ne *normEmitter) rotationAt(b block, r operand.Mem, lo, hi reg.VecVirtual) (ylo, yhi reg.VecVirtual) {
	saved := ne.r
	ne.r = r
	defer func() { ne.r = saved }()
	return ne.rotation(b, lo, hi)
}

// outHead writes the current head: before the rotation, its values scaled,
// weighted and rotated; after it, the scratch head's scaled and weighted,
// each narrowed once. wp is the head's weights.
func (ne *normEmitter) outHead(wp operand.Mem) {
	k := ne.k
	half := k.RotaryDim / 2
	c := ne.c
	if ne.only {
		c.Comment("scale and weigh the head")
		ne.blocks(split(0, k.HeadDim, ne.lanes, ne.l.masked), false, func(b block, x, _, w, _ operand.Mem) {
			v := ne.normed(ne.load(x.Offset(b.j*ne.in.size), b.w), w.Offset(b.j*ne.tab.size), b.w)
			ne.store(v, x.Offset(b.j*ne.in.size), b.w)
		}, wp)
		return
	}
	if ne.nb.After {
		if ne.nb.Token { // the scratch head holds the last head's rotation
			ne.rotateToScratch()
		}
		c.Comment("scale and weigh the rotated head")
		ne.blocks(split(0, k.HeadDim, ne.lanes, ne.l.masked), false, func(b block, x, _, w, s operand.Mem) {
			v := ne.tab.load(ne.emitter, s.Offset(b.j*ne.tab.size), b.w)
			v = ne.normed(v, w.Offset(b.j*ne.tab.size), b.w)
			ne.store(v, x.Offset(b.j*ne.in.size), b.w)
		}, wp)
		return
	}
	c.Comment("scale, weigh and rotate the head")
	ne.blocks(ne.rotationBlocks(), true, func(b block, x, r, w, _ operand.Mem) {
		lo := ne.normed(ne.load(x.Offset(b.j*ne.in.size), b.w), w.Offset(b.j*ne.tab.size), b.w)
		if !k.NeoX {
			y, _ := ne.rotationAt(b, r, lo, nil)
			ne.store(y, x.Offset(b.j*ne.in.size), b.w)
			return
		}
		hi := ne.normed(ne.load(x.Offset((b.j+half)*ne.in.size), b.w), w.Offset((b.j+half)*ne.tab.size), b.w)
		ylo, yhi := ne.rotationAt(b, r, lo, hi)
		ne.store(ylo, x.Offset(b.j*ne.in.size), b.w)
		ne.store(yhi, x.Offset((b.j+half)*ne.in.size), b.w)
	}, wp)
	for _, b := range split(k.RotaryDim, k.HeadDim-k.RotaryDim, ne.lanes, ne.l.masked) {
		v := ne.normed(ne.load(ne.src.Offset(b.j*ne.in.size), b.w), wp.Offset(b.j*ne.tab.size), b.w)
		ne.store(v, ne.src.Offset(b.j*ne.in.size), b.w)
	}
}

// blocks emits body for the blocks bs, consecutive runs of a head, with the
// addresses of the head (x), the row (r), the weights (w, from wp, when
// given) and the scratch head (s). Where bs spans more than unrollMax values
// (neox: counting the partners) the leading full-width blocks run in a loop
// of loopBlocks at a time, every address moved to the chunk, the rest
// unrolled after it, as emitter.loop does for the rotation kernels.
func (ne *normEmitter) blocks(bs []block, rotary bool, body func(b block, x, r, w, s operand.Mem), wp ...operand.Mem) {
	c := ne.c
	var w operand.Mem
	if len(wp) > 0 {
		w = wp[0]
	}
	values := 0
	if len(bs) > 0 {
		values = bs[len(bs)-1].j + bs[len(bs)-1].w - bs[0].j
	}
	if rotary && ne.k.NeoX {
		values *= 2
	}
	full := 0
	for full < len(bs) && bs[full].w == ne.lanes {
		full++
	}
	times := full / loopBlocks
	if values <= unrollMax || times < 2 {
		for _, b := range bs {
			body(b, ne.src, ne.r, w, ne.scratch)
		}
		return
	}
	move := func(m operand.Mem) operand.Mem {
		if m.Base == nil {
			return m
		}
		p := c.GP64()
		c.LEAQ(m, p)
		return operand.Mem{Base: p}
	}
	start := bs[0].j
	x, r, wm, s := move(ne.src.Offset(start*ne.in.size)), move(ne.r.Offset(start*ne.tab.size)), move(w.Offset(start*ne.tab.size)), ne.scratch
	if s.Base != nil {
		s = move(s.Offset(start * ne.tab.size))
	}
	cnt := c.GP64()
	c.MOVQ(operand.U32(times), cnt)
	lbl := ne.newLabel("chunk")
	c.Label(lbl)
	for i := range loopBlocks {
		body(block{i * ne.lanes, ne.lanes}, x, r, wm, s)
	}
	stepVals := loopBlocks * ne.lanes
	c.ADDQ(operand.U32(stepVals*ne.in.size), x.Base)
	c.ADDQ(operand.U32(stepVals*ne.tab.size), r.Base)
	if wm.Base != nil {
		c.ADDQ(operand.U32(stepVals*ne.tab.size), wm.Base)
	}
	if s.Base != nil {
		c.ADDQ(operand.U32(stepVals*ne.tab.size), s.Base)
	}
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(lbl))
	for _, b := range bs[times*loopBlocks:] {
		body(b, ne.src, ne.r, w, ne.scratch)
	}
}
