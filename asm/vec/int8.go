package vec

import "math"

// The int8_per_token_head family: vLLM's int8 KV cache with a scale per
// token and KV head (verify/codec's Int8PerTokenHead), in ropegen's
// layout: a head of h values is one block of h+4 bytes, its float32 scale
// s (little endian, at any alignment: the strides count bytes) and then
// its h int8 codes. It is q8_0's shape with one block a head, so it is
// written against the same Quantizer operations (and Packer's 32-bit
// word), but the block is the head: h/32 pieces of 32 values, walked
// twice, since a head of up to 1024 values does not fit the registers:
//
//	pass 1: amax = max |x_j| over the head, NaNs passed over
//	        s = max(fl(amax/127), fl32(1e-6)),  inv = fl(1/s)
//	pass 2: v_j = fl(x_j·inv), NaN → 0
//	        q_j = trunc(fl(v_j + copysign(1/2, v_j)))
//	load:   y_j = fl(q_j·s)
//
// The head is one Blocks32 block of h values (h+4 bytes), its pieces
// unrolled (a constant h/32 of them), so pass 1's running maxima live in
// registers across them. A head that is not a multiple of 32 has no
// kernels (int8Head panics; ropegen refuses the type at such a head dim,
// and an -engine package leaves it out at such a shape). The store and storeShift kinds are the same kernel (Count is the
// head: one scale covers every value), as are load and loadShift.

// int8Floor is vLLM's lower bound on the scale, fl32(1e-6), as bits.
var int8Floor = math.Float32bits(1e-6)

// int8Half is 1/2 as float32 bits.
const int8Half = 0x3f000000

// int8Head is the kind's conversions, head by head.
func int8Head(t Target, f *Func) {
	h := f.Shape.HeadDim
	if h%32 != 0 {
		panic("vec: " + f.Name() + ": int8_per_token_head kernels take heads of a multiple of 32 values")
	}
	p, ok := t.(Packer)
	if !ok {
		panic("vec: " + f.Name() + ": the target does not lower Packer (the int8_per_token_head family's operations)")
	}
	store := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, Int8PerTokenHead
	if !store {
		se, de = de, se
	}
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(hd Head) {
		// One block, the head (Blocks32 sets up what a target's block
		// needs: RVV's vector length, pure Go's helper function).
		if store {
			p.Blocks32(hd, 1, src, h, dst, h+4, func(s, d Arr) { quantizeInt8Head(t, p, h/32, s, d) })
		} else {
			p.Blocks32(hd, 1, src, h+4, dst, h, func(s, d Arr) { dequantizeInt8Head(t, p, h/32, s, d) })
		}
	})
}

// quantizeInt8Head codes the n·32 float32 at s into the 4 + n·32 bytes
// at d: the scale, then the codes.
func quantizeInt8Head(t Target, p Packer, n int, s, d Arr) {
	k := p.U32
	// Pass 1. a_j = |x_j|'s bits, 0 for a NaN (bits above +Inf's), so the
	// lanes are float32 in [0, +Inf] and MaxF (no NaN passed) is their
	// maximum: acc_i = max over the pieces of member i's lanes, then amax
	// = MAX(acc), the largest bits being the largest magnitude.
	var acc []V
	for i := range n {
		xs := p.LoadF32x32(s.At(32 * i))
		for m, x := range xs {
			a := p.And(p.AsU32(x), k(f32Abs))
			a = p.AsF32(p.Select(p.Gt32(a, k(f32Inf)), k(0), a))
			if i == 0 {
				acc = append(acc, a)
			} else {
				acc[m] = p.MaxF(acc[m], a)
			}
		}
	}
	for m, a := range acc {
		acc[m] = p.AsU32(a)
	}
	amax := p.AsF32(p.MaxAcross(acc))
	// s = fl(amax/127); s < 1e-6 → 1e-6 (s is never NaN: amax is not; as
	// bits, 0 ≤ s ≤ +Inf compare as signed integers); inv = fl(1/s), 0
	// when s is +Inf (an Inf in the head).
	sc := t.Div(amax, t.Const(127))
	sc = p.AsF32(p.Select(p.Gt32(k(int8Floor), p.AsU32(sc)), k(int8Floor), p.AsU32(sc)))
	p.StoreU32(d, p.AsU32(sc))
	inv := t.Div(t.Const(1), sc)
	// Pass 2. v = fl(x·inv), a NaN (x NaN, or ±Inf·0) → 0; then
	// r = fl(v ± 1/2) by v's sign (+0 and −0 both give |r| = 1/2, which
	// truncates to 0 as the scalar's fl(0 + 0.5) does), q = trunc(r).
	// |v| ≤ 127(1 + 3u) (inv ≤ (127/amax)(1 + u)/(1 − u), a product
	// rounding once more; smaller still when the floor applies), so
	// |r| < 128: the scalar's clamp to [−128, 127] never changes r's
	// truncation, and TruncI32 sees only |r| < 128.
	for i := range n {
		xs := p.LoadF32x32(s.At(32 * i))
		qs := make([]V, len(xs))
		for m, x := range xs {
			v := t.Mul(x, inv)
			v = p.Select(p.IsNaN(v), p.AsF32(k(0)), v)
			half := p.AsF32(p.Or(p.And(p.AsU32(v), k(f32Sign)), k(int8Half)))
			qs[m] = p.TruncI32(t.Add(v, half))
		}
		p.StoreI8x32(d.At(4+32*i), qs)
	}
}

// dequantizeInt8Head decodes the 4 + n·32 bytes at s into n·32 float32
// at d: y_j = fl(q_j·s), for any bytes (s any float32: NaN, Inf, negative,
// as the product gives them).
func dequantizeInt8Head(t Target, p Packer, n int, s, d Arr) {
	sc := p.AsF32(p.LoadU32(s))
	for i := range n {
		qs := p.LoadI8x32(s.At(4 + 32*i))
		ys := make([]V, len(qs))
		for m, q := range qs {
			ys[m] = t.Mul(p.ToF32(q), sc)
		}
		p.StoreF32x32(d.At(32*i), ys)
	}
}
