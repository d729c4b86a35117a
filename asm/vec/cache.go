package vec

// convert is the KV-cache conversions of f16, bf16, e4m3 and e5m2
// (docs/contract.md §11), value by value over the first Count values of
// each head:
//
//	store:  c_j = narrow(x_j)          e4m3, e5m2: narrow(fl(x_j/scale))
//	load:   x_j = widen(c_j)           e4m3, e5m2: fl(widen(c_j)·scale)
//
// narrow rounding to nearest even (f16, bf16: overflow to ±Inf; e4m3:
// saturating at ±448, e5m2 at ±57344, a NaN staying NaN), widen exact:
// the minifloat family (codec.go's Narrow and Widen), which the targets'
// Block.Load and Block.Store of these elements run.
func convert(t Target, f *Func) {
	store := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, f.Cache
	if !store {
		se, de = de, se
	}
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	var scale V
	if f.Cache == E4M3 || f.Cache == E5M2 {
		scale = t.Broadcast("scale", F32)
	}
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(h Head) {
		h.Values(0, f.Count(), []Arr{src, dst}, func(b Block) {
			y := b.Load(src)[0]
			switch {
			case scale != nil && store:
				y = t.Div(y, scale)
			case scale != nil:
				y = t.Mul(y, scale)
			}
			b.Store(dst, []V{y})
		})
	})
}

// q8 is the q8_0 cache conversions (docs/contract.md §11), exactly as
// ggml's quantize_row_q8_0_ref and dequantize_row_q8_0 (verify/codec's
// Q8_0), block by block of 32 values over the first Count values of each
// head:
//
//	amax = MAX(amax, |x_j|) for j = 0…31 from 0   (MAX(a, b) = a > b ? a : b)
//	d = amax/127,  id = d ≠ 0 ? 1/d : 0           (float32)
//	block = f16(d), then q_j = roundf(x_j·id)      (NaN → 0, clamped to ±127)
//	load:  x_j = fl(q_j·f32(d))
//
// written once against Quantizer: quantize and dequantize below (a
// QuantGrouper target quantizes k blocks together: group.go).
func q8(t Target, f *Func) {
	store := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, Q8
	if !store {
		se, de = de, se
	}
	q := t.(Quantizer) // every target lowers it
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(h Head) {
		switch {
		case store:
			quantizeHead(t, q, h, f.Count()/32, src, dst) // group.go
		default:
			q.Blocks32(h, f.Count()/32, src, 34, dst, 32, func(s, d Arr) { dequantize(t, q, s, d) })
		}
	})
}

// q8_0's constants, float32 bits.
const (
	f32Abs   = 0x7fffffff
	f32Sign  = 0x80000000
	f32Inf   = 0x7f800000
	f32Below = 0x3effffff // the largest float32 below 1/2
	q8Tiny   = 0x04800000 // 2⁻¹¹⁸: from it up d = amax/127 is a normal float32
)

// quantize is one q8_0 block: the 32 float32 at s into the 34 bytes at d.
//
// With w the largest of the magnitudes' bits (an integer maximum, which
// for +0…+Inf is the float maximum, a NaN's bits above +Inf's): when
// 2⁻¹¹⁸ ≤ w < +Inf (no NaN, no Inf, not all tiny or zero) amax is w, d is
// a normal float32, |x·id| ≤ 127·(1 + 3u) < 127.5, so no product is NaN
// or needs clamping (the common path). Otherwise ggml's sequence of MAX
// in full (rare): a NaN resets amax, so amax is the largest |x_j| after
// the last NaN (j ≥ L, L the 1-based position of the last NaN, 0 for
// none), or that NaN when it is x_31 (j ≥ min(L, 31)); NaN products are
// 0, and the products are clamped to ±127 before rounding.
//
// roundf(v) for |v| ≤ 127 is trunc(v + copysign(h, v)), h the largest
// float32 below 1/2 (v + h rounds up past the next integer exactly when
// v's fraction is at least 1/2).
func quantize(t Target, q Quantizer, s, d Arr) {
	k := q.U32
	xs := q.LoadF32x32(s)
	n := len(xs)
	as := make([]V, n)
	for i, x := range xs {
		as[i] = q.And(q.AsU32(x), k(f32Abs))
	}
	w := q.MaxAcross(as)
	// Rare: w − 2⁻¹¹⁸'s bits, unsigned, at least Inf's less 2⁻¹¹⁸'s (w
	// from +Inf up, or below 2⁻¹¹⁸: w = 0 too, which the rare path gives
	// the same bits); halved, the compare is signed.
	rare := q.Gt32(q.Shr32(q.Sub32(w, k(q8Tiny)), 1), k((f32Inf-q8Tiny)/2-1))
	round := func(x, v V) V { // trunc(v + copysign(h, x)): x and v share their sign
		return q.TruncI32(t.Add(v, q.AsF32(q.Or(q.And(q.AsU32(x), k(f32Sign)), k(f32Below)))))
	}
	scale := func(amax V) V { // d stored as f16; id
		dd := t.Div(amax, t.Const(127))
		q.StoreU16(d, Narrow(t, F16, dd))
		return dd
	}
	q.If(rare, func() {
		last := make([]V, n)
		for i := range as {
			last[i] = q.Select(q.Gt32(as[i], k(f32Inf)), q.Iota(i, n), k(0))
		}
		l := q.MaxAcross(last)
		l = q.Select(q.Gt32(l, k(31)), k(31), l)
		kept := make([]V, n)
		for i := range as {
			kept[i] = q.Select(q.Gt32(q.Iota(i, n), l), as[i], k(0))
		}
		dd := scale(q.AsF32(q.MaxAcross(kept)))
		id := q.Select(q.Eq32(q.AsU32(dd), k(0)), q.AsF32(k(0)), t.Div(t.Const(1), dd))
		qs := make([]V, n)
		for i, x := range xs {
			v := t.Mul(x, id)
			v = q.Select(q.IsNaN(v), q.AsF32(k(0)), v)
			v = q.MaxF(q.MinF(v, t.Const(127)), t.Const(-127))
			qs[i] = round(v, v)
		}
		q.StoreI8x32(d.At(2), qs)
	}, func() {
		dd := scale(q.AsF32(w))
		id := t.Div(t.Const(1), dd)
		qs := make([]V, n)
		for i, x := range xs {
			qs[i] = round(x, t.Mul(x, id))
		}
		q.StoreI8x32(d.At(2), qs)
	})
}

// dequantize is one q8_0 block: the 34 bytes at s into 32 float32 at d,
// x_j = fl(q_j·f32(d)).
func dequantize(t Target, q Quantizer, s, d Arr) {
	dd := Widen(t, F16, q.LoadU16(s))
	qs := q.LoadI8x32(s.At(2))
	ys := make([]V, len(qs))
	for i, v := range qs {
		ys[i] = t.Mul(q.ToF32(v), dd)
	}
	q.StoreF32x32(d, ys)
}
