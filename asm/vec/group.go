package vec

// Groups of q8_0 blocks: the q8 family's optional operations (highway's
// optional ops, as Native is the codecs' one-instruction conversions). A
// Quantizer target that also implements QuantGrouper quantizes a head's
// blocks k at a time in the common case (every block's maximum w with
// 2⁻¹¹⁸ ≤ w < +Inf, quantize's comment): the k maxima reduced together
// into one vector, the k scales d = amax/127 and their inverses 1/d
// computed there by one division each, narrowed to f16 once; the rare
// check is made once a group, and a group with any rare block goes
// through quantize block by block. Each lane of the group's arithmetic
// runs quantize's common path operation for operation, so the bits are
// quantize's for every input. The blocks left over (n not a multiple of
// k) go through quantize. The qn family (qn.go) groups the same way
// (quantizeQNGroup), with no rare path: every lane of its group
// arithmetic is quantizeQN's for every input.

// QuantGrouper is a Quantizer target that quantizes k = QuantGroup()
// blocks of 32 values together. A group vector holds a value of each of
// the k blocks: lane j (of every member-sized V) block j mod k's value, so
// the target's lanes are a multiple of k. The group's rare test is such a
// mask, whose lanes differ: a QuantGrouper's If must run then when any
// lane holds, as Quantizer.If says (amd64's KORTESTW and VPTEST do; NEON's
// If reads lane 0 alone today, which suffices for quantize's masks but
// not for a group's).
type QuantGrouper interface {
	Quantizer

	// QuantGroup is k, the blocks of a group (at least 2).
	QuantGroup() int
	// MaxGroup is the group vector whose block i value is the largest of
	// the uint32 lanes of block(i)'s members (a block, as MaxAcross takes
	// it). MaxGroup calls block once for each i < k, in order, where it
	// wants the members made (so that it can reduce a block before the
	// next is made: AVX2's 16 registers do not hold four blocks).
	MaxGroup(block func(i int) []V) V
	// Spread is block i's value of the group vector v (its lane i) in
	// every lane.
	Spread(v V, i int) V
	// StoreU16Lane writes the low 16 bits of lane i (block i's value,
	// i < k) of the group vector v at a (a byte array, a.Off bytes on).
	StoreU16Lane(a Arr, v V, i int)
}

// quantizeHead is q8's store of a head: the n blocks of 32 float32 at src
// into the n q8_0 blocks at dst. A QuantGrouper takes them k at a time
// (quantizeGroup, Blocks32 walking a group's k blocks as one step), the
// last n mod k one at a time; any other Quantizer block by block.
func quantizeHead(t Target, q Quantizer, h Head, n int, src, dst Arr) {
	one := func(s, d Arr) { quantize(t, q, s, d) }
	g, ok := q.(QuantGrouper)
	if !ok {
		q.Blocks32(h, n, src, 32, dst, 34, one)
		return
	}
	k := g.QuantGroup()
	m := n / k * k
	g.Blocks32(h, n/k, src, 32*k, dst, 34*k, func(s, d Arr) { quantizeGroup(t, g, h, k, s, d) })
	g.Blocks32(h, n-m, src.At(32*m), 32, dst.At(34*m), 34, one)
}

// quantizeGroup is k q8_0 blocks: the 32k float32 at s into the 34k bytes
// at d. The group's maxima w are quantize's, block by block (the largest
// of the magnitudes' bits); when any of them is rare (quantize's test, on
// every lane) the k blocks go through quantize one at a time; else each
// block is quantize's common path, with its d and 1/d from the group's.
func quantizeGroup(t Target, g QuantGrouper, h Head, k int, s, d Arr) {
	u := g.U32
	xs := make([][]V, k)
	w := g.MaxGroup(func(i int) []V {
		xs[i] = g.LoadF32x32(s.At(32 * i))
		as := make([]V, len(xs[i]))
		for j, x := range xs[i] {
			as[j] = g.And(g.AsU32(x), u(f32Abs))
		}
		return as
	})
	rare := g.Gt32(g.Shr32(g.Sub32(w, u(q8Tiny)), 1), u((f32Inf-q8Tiny)/2-1))
	g.If(rare, func() {
		g.Blocks32(h, k, s, 32, d, 34, func(s, d Arr) { quantize(t, g, s, d) })
	}, func() {
		dd := t.Div(g.AsF32(w), t.Const(127))
		hd := Narrow(t, F16, dd)
		for i := range k {
			g.StoreU16Lane(d.At(34*i), hd, i)
		}
		id := t.Div(t.Const(1), dd)
		for i, x := range xs {
			idi := g.Spread(id, i)
			qs := make([]V, len(x))
			for j, v := range x {
				// quantize's round(x, x·id): trunc(x·id + copysign(h, x))
				sh := g.AsF32(g.Or(g.And(g.AsU32(v), u(f32Sign)), u(f32Below)))
				qs[j] = g.TruncI32(t.Add(t.Mul(v, idi), sh))
			}
			g.StoreI8x32(d.At(34*i+2), qs)
		}
	})
}

// quantizeQNHead is the qn family's store of a head: the n blocks of 32
// float32 at src into the n blocks of e at dst. A target that is both a
// QuantGrouper and a Packer takes them k at a time (quantizeQNGroup), the
// last n mod k one at a time (quantizeQN); any other Packer block by
// block.
func quantizeQNHead(t Target, p Packer, e Elem, h Head, n int, src, dst Arr) {
	bb := e.BlockBytes()
	one := func(s, d Arr) { quantizeQN(t, p, e, s, d) }
	g, ok := p.(QuantGrouper)
	if !ok {
		p.Blocks32(h, n, src, 32, dst, bb, one)
		return
	}
	k := g.QuantGroup()
	m := n / k * k
	p.Blocks32(h, n/k, src, 32*k, dst, bb*k, func(s, d Arr) { quantizeQNGroup(t, p, g, e, k, s, d) })
	p.Blocks32(h, n-m, src.At(32*m), 32, dst.At(bb*m), bb, one)
}

// quantizeQNGroup is k blocks of e: the 32k float32 at s into the k
// blocks at d. Each block's lane of the group's arithmetic is
// quantizeQN's, operation for operation, so the bits are quantizeQN's for
// every input and there is no rare path: the keys' maxima (MaxGroup, for
// the k blocks together), the candidates' maxima of pick (MaxGroup again,
// each block's candidates made against its own maximum, Spread), the
// scale or the extremes, d and id (one division each for the group), the
// f16 narrowing of d and m (once), a group vector each; then each block's
// quants with its id and min Spread.
func quantizeQNGroup(t Target, p Packer, g QuantGrouper, e Elem, k int, s, d Arr) {
	fm := qnFormats[e]
	bb := e.BlockBytes()
	// cache: k blocks' members fit in 8 registers (AVX-512's 4·2 ZMM).
	// Then each pick's keys are made once for the group, and the scale
	// formats' members loaded once (the range formats' loaded again for
	// each use: their members and keys together do not allocate). Else
	// (AVX2's 4·4 YMM) the members are loaded again and the keys made
	// again for each pass; the range formats, with two extremes' keys to
	// remake, then go block by block (quantizeQN: grouped, they measured
	// a few percent slower at AVX2).
	xs := make([][]V, k)
	xs[0] = p.LoadF32x32(s)
	cache := k*len(xs[0]) <= 8
	if !cache && fm.min {
		for i := range k {
			quantizeQN(t, p, e, s.At(32*i), d.At(bb*i))
		}
		return
	}
	load := func(i int) []V {
		if !cache || fm.min {
			return p.LoadF32x32(s.At(32 * i))
		}
		if xs[i] == nil {
			xs[i] = p.LoadF32x32(s.At(32 * i))
		}
		return xs[i]
	}
	// pick is pick of quantizeQN for the k blocks, keys(i) block i's keys
	// and signs: the group vectors of the largest keys and their first
	// lanes' signs.
	pick := func(keys func(i int) (keys, signs []V)) (top, sign V) {
		memo := make([][]V, k) // the keys when cached; the signs are the members' bits
		get := func(i int) ([]V, []V) {
			if !cache {
				return keys(i)
			}
			if memo[i] == nil {
				memo[i], _ = keys(i)
			}
			ss := make([]V, len(xs[0]))
			for j, x := range load(i) {
				ss[j] = p.AsU32(x)
			}
			return memo[i], ss
		}
		top = g.MaxGroup(func(i int) []V {
			ks, _ := get(i)
			return ks
		})
		c := g.MaxGroup(func(i int) []V {
			ks, ss := get(i)
			return qnCands(p, ks, ss, g.Spread(top, i))
		})
		return top, p.Shl32(c, 31)
	}
	var dd, lo V // the group's d, and min for the range formats
	if !fm.min {
		w, sign := pick(func(i int) ([]V, []V) { return qnScaleKeys(p, load(i)) })
		dd = qnScale(t, p, fm, w, sign)
	} else {
		extreme := func(start uint32, hiSide bool) V {
			top, sign := pick(func(i int) ([]V, []V) { return qnRangeKeys(t, p, load(i), start, hiSide) })
			return qnExtreme(p, top, sign, hiSide)
		}
		lo = extreme(f32Max, false)
		hi := extreme(f32NegMax, true)
		dd = t.Div(t.Sub(hi, lo), t.Const(float64(fm.hi())))
	}
	id := qnInverse(t, p, dd)
	hd := Narrow(t, F16, dd)
	for i := range k {
		g.StoreU16Lane(d.At(bb*i), hd, i)
	}
	if fm.min {
		hm := Narrow(t, F16, lo)
		for i := range k {
			g.StoreU16Lane(d.At(bb*i+2), hm, i)
		}
	}
	for i := range k {
		var li V
		if fm.min {
			li = g.Spread(lo, i)
		}
		qnQuants(t, p, fm, load(i), g.Spread(id, i), li, d.At(bb*i))
	}
}
