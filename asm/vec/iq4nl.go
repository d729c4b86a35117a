package vec

import "math"

// The iq4_nl family: ggml's iq4_nl (32 values in 18 bytes: d (f16), then
// byte j = L_j | L_{j+16}<<4, L indexing the non-uniform grid kvalues),
// exactly as verify/codec's IQ4NL gives its bytes, written once against
// Packer (packer.go) and Summer (ops.go), as the mxfp4 family (mxfp4.go).

// kvaluesIQ4NL is ggml's kvalues_iq4nl.
var kvaluesIQ4NL = [16]int{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4nlEps is the bits of ggml's GROUP_MAX_EPS, fl32(1e-15).
var iq4nlEps = math.Float32bits(1e-15)

// iq4nl is the cache conversions of iq4_nl, block by block of 32 values
// over the first Count values of each head, as mxfp4 walks its blocks
// (packedBlocks).
func iq4nl(t Target, f *Func) {
	bb := f.Cache.BlockBytes()
	s, ok := t.(Summer)
	if !ok {
		panic("vec: " + f.Name() + ": the target does not lower Summer (the iq4_nl family's in-order sum)")
	}
	packedBlocks(t, f, "iq4_nl", func(p Packer, h Head, n int, src, dst Arr) {
		p.Blocks32(h, n, src, 32, dst, bb, func(a, d Arr) { quantizeIQ4NL(t, s, a, d) })
	}, func(p Packer, a, d Arr) { dequantizeIQ4NL(t, p, a, d) })
}

// iq4nlValue is kvaluesIQ4NL[L] as int32 lanes for the lanes L of l in
// [0, 15]: the bytes kvalues + 128 packed four to a word, word L>>2 chosen
// by selects on bits 3 and 2 of L (each the sign of L shifted up), its
// byte L&3 shifted down; shifts rather than masks, so that the only
// constants are the four words, 0 and 128 (AVX-512 holds every constant
// in a register).
func iq4nlValue(p Packer, l V) V {
	k := p.U32
	var w [4]uint32
	for i, v := range kvaluesIQ4NL {
		w[i/4] |= uint32(v+128) << (8 * (i % 4))
	}
	bit := func(b int) Mask { return p.Gt32(k(0), p.Shl32(l, 31-b)) }
	lo := p.Select(bit(2), k(w[1]), k(w[0]))
	up := p.Select(bit(2), k(w[3]), k(w[2]))
	word := p.Select(bit(3), up, lo)
	sh := p.Shr32(p.Shl32(l, 30), 27) // (L&3)·8
	b := p.Shr32(p.Shl32(p.Shrv32(word, sh), 24), 24)
	return p.Sub32(b, k(128))
}

// quantizeIQ4NL is one block: the 32 float32 at s into the 18 bytes at d.
//
// max. As q4_0's scale (quantizeQN): the first x_j of the largest
// non-NaN magnitude, w its bits, from magnitudeKeys and qnCands. A block
// with w < bits(1e-15) (every magnitude below it, zeros, NaNs) stores
// d = +0 and every L_j = 8, verify/codec's definition; it is computed as
// any block and replaced by selects.
//
// d0 = fl(max/−127), id = fl(1/d0), v_j = fl(id·x_j).
//
// L_j = best_index_int8(v_j). For the grid's neighbours a = kv[i−1],
// b = kv[i] and their midpoint m_i (a half-integer or integer),
// best_index's L ≥ i iff !(fl(v − a) < fl(b − v)) iff v ≥ m_i for every
// non-NaN v: exactly so where both differences are exact, which they are
// for v within the pair's interval near m_i (|m_i| ≥ (b − a)/2 for every
// pair, so v − a and b − v need no more bits than v); elsewhere the
// comparison is not close and rounding (monotone) cannot turn it; below
// kv[0] and above kv[15] it gives best_index's 0 and 15. (Checked for
// every float32 within 3·10⁶ steps of each m_i and kv[i] and every 7th
// float32 of magnitude below 300 against verify/codec's best_index, outside
// the package; TestIQ4NLFamily's blocks put id·x_j around every m_i.) So
// L is the number of m_i ≤ v, found bit by bit (m_i increase with i):
// v ≥ m_i is 2v ≥ 2m_i, the sign bit of fl(2v − 2m_i) clear (2v exact or
// an infinity of v's sign; 2m_i = kv[i−1] + kv[i] an integer, never 0, so
// a zero difference is +0), 2m_i from iq4nlValue rather than fifteen
// constants. A NaN v (its sign either) gives 15, as best_index's search
// falls through to 15.
//
// q_j = kvalues[L_j] (iq4nlValue), w_j = fl(x_j·x_j), t_j = fl(w_j·q_j),
// sumqx = Σ fl(t_j·x_j), sumq2 = Σ fl(t_j·q_j), each in order from +0
// (Summer's AddInOrder, a member at a time); d = sumq2 > 0 ? fl(sumqx/sumq2) : 0 (sumq2 > 0:
// its bits, as int32, in (0, +Inf's]), stored as f16.
func quantizeIQ4NL(t Target, p Summer, s, d Arr) {
	k := p.U32
	xs := p.LoadF32x32(s)
	n := len(xs)
	keys, signs := qnScaleKeys(p, xs)
	w := p.MaxAcross(keys)
	sign := p.Shl32(p.MaxAcross(qnCands(p, keys, signs, w)), 31)
	tiny := func() Mask { return p.Gt32(k(iq4nlEps), w) }
	// max = copysign(amax, x_first) (amax = 0 is tiny)
	mx := p.AsF32(p.Or(w, sign))
	id := t.Div(p.AsF32(k(math.Float32bits(1))), t.Div(mx, p.AsF32(k(math.Float32bits(-127)))))
	ls := make([]V, n)
	sumqx, sumq2 := p.AsF32(k(0)), p.AsF32(k(0))
	for i, x := range xs {
		v := t.Mul(id, x)
		// L = the largest i ≤ 15 with v ≥ m_i (0 if none), its bits from
		// the top: cand = L | step is taken unless fl(2v − 2m_cand) is
		// negative and no NaN (its bits, as int32, below −FLT_MAX's
		// complement −0x7fffff: a NaN of either sign is above), so a NaN
		// v takes every step: 15. 2m_cand = kv[cand−1] + kv[cand].
		v2 := t.Add(v, v)
		l := k(0)
		for _, step := range []uint32{8, 4, 2, 1} {
			cand := p.Or(l, k(step))
			c := p.ToF32(p.Add32(iq4nlValue(p, p.Sub32(cand, k(1))), iq4nlValue(p, cand)))
			below := p.Gt32(k(0xff800001), p.AsU32(t.Sub(v2, c)))
			l = p.Select(below, l, cand)
		}
		q := p.ToF32(iq4nlValue(p, l))
		ww := t.Mul(x, x)
		tq := t.Mul(ww, q)
		sumqx = p.AddInOrder(sumqx, []V{t.Mul(tq, x)})
		sumq2 = p.AddInOrder(sumq2, []V{t.Mul(tq, q)})
		ls[i] = l
	}
	for i, l := range ls {
		ls[i] = p.Select(tiny(), k(8), l)
	}
	b := p.AsU32(sumq2)
	dd := p.Select(p.Gt32(b, k(0)), p.AsU32(t.Div(sumqx, sumq2)), k(0))
	dd = p.Select(p.Gt32(b, k(f32Inf)), k(0), dd)
	dd = p.Select(tiny(), k(0), dd)
	p.StoreU16(d, Narrow(t, F16, p.AsF32(dd)))
	p.StoreNibbles(d.At(2), ls)
}

// dequantizeIQ4NL is one block: the 18 bytes at s into 32 float32 at d,
//
//	y_j = fl(f16(d)·kvalues[L_j])
func dequantizeIQ4NL(t Target, p Packer, s, d Arr) {
	dd := Widen(t, F16, p.LoadU16(s))
	ls := p.LoadNibbles(s.At(2))
	ys := make([]V, len(ls))
	for i, l := range ls {
		ys[i] = t.Mul(dd, p.ToF32(iq4nlValue(p, l)))
	}
	p.StoreF32x32(d, ys)
}
