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
// k) go through quantize.

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
