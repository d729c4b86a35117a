package vec

// The qn family: ggml's q4_0, q4_1, q5_0 and q5_1 (docs/contract.md §11),
// exactly as verify/codec's Q4_0, Q4_1, Q5_0 and Q5_1 give their bytes,
// written once against Packer (packer.go) for the four formats: the
// sibling of the q8_0 family (cache.go).

// qnFormat is one format of the family.
type qnFormat struct {
	bits int  // 4 or 5: q_j in [0, 2^bits)
	min  bool // q4_1, q5_1: d = (max − min)/hi and m = min stored; else d = max/−2^(bits−1)
}

// qnFormats are the family's formats.
var qnFormats = map[Elem]qnFormat{
	Q4_0: {bits: 4}, Q4_1: {bits: 4, min: true},
	Q5_0: {bits: 5}, Q5_1: {bits: 5, min: true},
}

// hi is the largest quant, 15 or 31.
func (q qnFormat) hi() int { return 1<<q.bits - 1 }

// header is the bytes before the nibbles: d (f16), m (f16) for the min
// formats, qh (uint32) for the 5-bit ones.
func (q qnFormat) header() int {
	n := 2
	if q.min {
		n += 2
	}
	if q.bits == 5 {
		n += 4
	}
	return n
}

// qn is the cache conversions of q4_0, q4_1, q5_0 and q5_1, block by
// block of 32 values over the first Count values of each head (the blocks
// holding the rotary values for the shift kinds), as q8 walks q8_0's.
func qn(t Target, f *Func) {
	e := f.Cache
	packedBlocks(t, f, "qn", func(p Packer, h Head, n int, src, dst Arr) {
		quantizeQNHead(t, p, e, h, n, src, dst) // group.go
	}, func(p Packer, s, d Arr) { dequantizeQN(t, p, e, s, d) })
}

// packedBlocks is the walk of a Packer family (qn, mxfp4, iq4_nl, nvfp4):
// for each head, store quantizes its n blocks of float32 at src (32 values
// a block, nvfp4's 64) into the blocks at dst, or load dequantizes one
// block at s into its float32 at d, block by block; n covers the first Count values (the blocks holding the rotary
// values for the shift kinds).
func packedBlocks(t Target, f *Func, family string, store func(p Packer, h Head, n int, src, dst Arr), load func(p Packer, s, d Arr)) {
	e := f.Cache
	bb, vals := e.BlockBytes(), e.BlockValues() // vals: 32, nvfp4's 64
	storing := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, e
	if !storing {
		se, de = de, se
	}
	p, ok := t.(Packer)
	if !ok {
		panic("vec: " + f.Name() + ": the target does not lower Packer (the " + family + " family's operations)")
	}
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(h Head) {
		if storing {
			store(p, h, f.Count()/vals, src, dst)
		} else {
			p.Blocks32(h, f.Count()/vals, src, bb, dst, vals, func(s, d Arr) { load(p, s, d) })
		}
	})
}

// The family's constants, float32 bits.
const (
	f32Max    = 0x7f7fffff // FLT_MAX
	f32NegMax = 0xff7fffff // −FLT_MAX
)

// quantizeQN is one block of e: the 32 float32 at s into the bytes at d.
//
// The scale (q4_0, q5_0): ggml's `if (amax < |x_j|) { amax = |x_j|; max =
// x_j }` from 0, 0, is the first x_j whose magnitude is the largest of the
// non-NaN magnitudes, or +0 when that is 0. Magnitudes' bits order as
// their values and a NaN's bits are above +Inf's, so w = the largest
// non-NaN magnitude's bits is an integer maximum with NaNs made 0; the
// first lane holding it is the largest 33−j among those lanes (another
// integer maximum), which carries that lane's sign in its low bit.
//
// The range (q4_1, q5_1): ggml's `if (x_j < min) min = x_j; if (x_j >
// max) max = x_j` from FLT_MAX, −FLT_MAX is, NaNs passed over, min(FLT_MAX,
// min x) and max(−FLT_MAX, max x) with the first of equal values kept,
// which for ±0 decides the sign. Each value y (NaN replaced by the start,
// then clamped to it) is made canonical, y + 0 (−0 becomes +0), and keyed
// for an unsigned maximum: bits ^ 0x80000000 for a positive value, ^bits
// for a negative one (the float order); the minimum is the maximum of the
// keys' complements. An extreme of 0 takes the sign of the first lane
// holding its key, as the scale's first lane is found: those lanes are the
// x_j = ±0 (a NaN lane holds ±FLT_MAX), so x_j's sign is the value's.
//
// Then, every format:
//
//	id = d ≠ 0 ? 1/d : 0
//	q_j = trunc(clamp(fl(v_j + off), 0, hi)), v_j = fl(x_j·id) or
//	      fl(fl(x_j − min)·id), a NaN v_j counted as 0
//
// (clamping before truncating is truncating then clamping, for every sum
// including ±Inf), with off 8.5 or 16.5 for the scale formats, 0.5 for the
// range ones.
func quantizeQN(t Target, p Packer, e Elem, s, d Arr) {
	fm := qnFormats[e]
	xs := p.LoadF32x32(s)
	// pick is the first lane whose key is the largest (MaxAcross), as the
	// bits of that maximum's lane sign: 0 or 0x80000000.
	pick := func(keys []V, signs []V) (top, sign V) {
		top = p.MaxAcross(keys)
		return top, p.Shl32(p.MaxAcross(qnCands(p, keys, signs, top)), 31)
	}
	var dd, lo V // d, and min for the range formats
	if !fm.min {
		keys, signs := qnScaleKeys(p, xs)
		w, sign := pick(keys, signs)
		dd = qnScale(t, p, fm, w, sign)
	} else {
		extreme := func(start uint32, hiSide bool) V {
			keys, signs := qnRangeKeys(t, p, xs, start, hiSide)
			top, sign := pick(keys, signs)
			return qnExtreme(p, top, sign, hiSide)
		}
		lo = extreme(f32Max, false)
		hi := extreme(f32NegMax, true)
		// d = fl(max − min)/15 (q4_1), /31 (q5_1)
		dd = t.Div(t.Sub(hi, lo), t.Const(float64(fm.hi())))
	}
	id := qnInverse(t, p, dd)
	p.StoreU16(d, Narrow(t, F16, dd))
	if fm.min {
		p.StoreU16(d.At(2), Narrow(t, F16, lo))
	}
	qnQuants(t, p, fm, xs, id, lo, d)
}

// qnScaleKeys are the scale formats' keys and signs of a block's members
// xs (quantizeQN's comment).
func qnScaleKeys(p Packer, xs []V) (keys, signs []V) {
	keys, signs = magnitudeKeys(p, xs), make([]V, len(xs))
	for i, x := range xs {
		signs[i] = p.AsU32(x)
	}
	return keys, signs
}

// magnitudeKeys are the members' magnitudes as unsigned keys, a NaN's 0:
// their integer maximum is the largest non-NaN magnitude (the qn scale
// formats' and mxfp4's amax).
func magnitudeKeys(p Packer, xs []V) []V {
	k := p.U32
	keys := make([]V, len(xs))
	for i, x := range xs {
		// key_i = isNaN(x_j) ? 0 : |x_j|'s bits
		a := p.And(p.AsU32(x), k(f32Abs))
		keys[i] = p.Select(p.Gt32(a, k(f32Inf)), k(0), a)
	}
	return keys
}

// qnRangeKeys are the range formats' keys and signs of a block's members
// xs for the extreme from start (the maximum when hiSide, else the
// minimum).
func qnRangeKeys(t Target, p Packer, xs []V, start uint32, hiSide bool) (keys, signs []V) {
	k := p.U32
	keys, signs = make([]V, len(xs)), make([]V, len(xs))
	for i, x := range xs {
		// y = isNaN(x_j) ? start : MAX(x_j, −FLT_MAX) or MIN(x_j, FLT_MAX)
		// (x is not consumed: the NaN lanes replaced in the clamp's result)
		var y V
		if hiSide {
			y = p.MaxF(x, p.AsF32(k(start)))
		} else {
			y = p.MinF(x, p.AsF32(k(start)))
		}
		y = p.Select(p.IsNaN(x), p.AsF32(k(start)), y)
		signs[i] = p.AsU32(x) // a lane of the extreme when it is ±0 is x_j = ±0
		// c = bits of y + 0 (−0 → +0); key = c ^ (c < 0 ? 0xffffffff : 0x80000000), ^key for the minimum
		c := p.AsU32(t.Add(y, p.AsF32(k(0))))
		flip := p.Or(p.Sub32(k(0), p.Shr32(c, 31)), k(f32Sign))
		if !hiSide {
			flip = p.Xor(flip, k(0xffffffff))
		}
		keys[i] = p.Xor(c, flip)
	}
	return keys, signs
}

// qnCands are pick's candidates: the lanes whose key is top (the largest)
// as (33−j)<<1 | sign bit, the others 0, so that their maximum is the
// first such lane with its sign in the low bit.
func qnCands(p Packer, keys, signs []V, top V) []V {
	k := p.U32
	n := len(keys)
	cand := make([]V, n)
	for i := range keys {
		// cand_i = key_i == top ? (33−j)<<1 | sign_i : 0 (33 − j larger for earlier lanes)
		first := p.Sub32(k(33), p.Iota(i, n))
		cand[i] = p.Select(p.Eq32(keys[i], top), p.Or(p.Shl32(first, 1), p.Shr32(signs[i], 31)), k(0))
	}
	return cand
}

// qnScale is the scale formats' d from the largest key w and its first
// lane's sign.
func qnScale(t Target, p Packer, fm qnFormat, w, sign V) V {
	k := p.U32
	// max = amax == 0 ? +0 : copysign(amax, x_first)
	mx := p.Select(p.Eq32(w, k(0)), k(0), p.Or(w, sign))
	// d = max/−8 (q4_0), max/−16 (q5_0)
	return t.Div(p.AsF32(mx), t.Const(-float64(int(1)<<(fm.bits-1))))
}

// qnExtreme is the range formats' extreme from the largest key top and
// its first lane's sign.
func qnExtreme(p Packer, top, sign V, hiSide bool) V {
	k := p.U32
	if !hiSide {
		top = p.Xor(top, k(0xffffffff))
	}
	// bits = key ^ (key's top bit ? 0x80000000 : 0xffffffff); a zero is the first zero lane's ±0
	un := p.Or(p.Sub32(p.Shr32(top, 31), k(1)), k(f32Sign))
	bits := p.Xor(top, un)
	return p.AsF32(p.Select(p.Eq32(bits, k(0)), sign, bits))
}

// qnInverse is id = d ≠ 0 ? 1/d : 0.
func qnInverse(t Target, p Packer, dd V) V {
	k := p.U32
	return p.Select(p.Eq32(p.And(p.AsU32(dd), k(f32Abs)), k(0)), p.AsF32(k(0)), t.Div(t.Const(1), dd))
}

// qnQuants is a block's quants from its members xs, id and (the range
// formats) min lo: qh (the 5-bit formats) and the nibbles stored at d
// (the block; d and m are the caller's).
func qnQuants(t Target, p Packer, fm qnFormat, xs []V, id, lo V, d Arr) {
	k := p.U32
	n := len(xs)
	off := 0.5
	if !fm.min {
		off += float64(int(1) << (fm.bits - 1))
	}
	qs := make([]V, n)
	for i, x := range xs {
		if fm.min {
			x = t.Sub(x, lo) // fl(x_j − min)
		}
		// v = fl(x_j·id); NaN → 0
		v := t.Mul(x, id)
		v = p.Select(p.IsNaN(v), p.AsF32(k(0)), v)
		// q_j = trunc(min(max(fl(v + off), 0), hi))
		v = t.Add(v, t.Const(off))
		v = p.MaxF(p.MinF(v, t.Const(float64(fm.hi()))), p.AsF32(k(0)))
		qs[i] = p.TruncI32(v)
	}
	if fm.bits == 5 {
		// qh = OR of (q_j >> 4) << j; the nibbles are q_j & 15
		hs := make([]V, n)
		for i, q := range qs {
			hs[i] = p.Shlv32(p.Shr32(q, 4), p.Sub32(p.Iota(i, n), k(1)))
			qs[i] = p.And(q, k(15))
		}
		p.StoreU32(d.At(fm.header()-4), p.OrAcross(hs))
	}
	p.StoreNibbles(d.At(fm.header()), qs)
}

// dequantizeQN is one block of e: the bytes at s into 32 float32 at d,
//
//	q4_0, q5_0:  y_j = fl((q_j − 8 or 16)·f16(d))
//	q4_1, q5_1:  y_j = fl(fl(q_j·f16(d)) + f16(m))
//
// q_j the nibble j, for the 5-bit formats with bit 4 from bit j of qh.
func dequantizeQN(t Target, p Packer, e Elem, s, d Arr) {
	fm := qnFormats[e]
	k := p.U32
	dd := Widen(t, F16, p.LoadU16(s))
	var m V
	if fm.min {
		m = Widen(t, F16, p.LoadU16(s.At(2)))
	}
	qs := p.LoadNibbles(s.At(fm.header()))
	n := len(qs)
	var qh V
	if fm.bits == 5 {
		qh = p.LoadU32(s.At(fm.header() - 4))
	}
	ys := make([]V, n)
	for i, q := range qs {
		if fm.bits == 5 {
			// q_j |= (qh >> j & 1) << 4
			q = p.Or(q, p.Shl32(p.And(p.Shrv32(qh, p.Sub32(p.Iota(i, n), k(1))), k(1)), 4))
		}
		if fm.min {
			ys[i] = t.Add(t.Mul(p.ToF32(q), dd), m)
		} else {
			ys[i] = t.Mul(p.ToF32(p.Sub32(q, k(uint32(1)<<(fm.bits-1)))), dd)
		}
	}
	p.StoreF32x32(d, ys)
}
