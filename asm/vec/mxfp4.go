package vec

// The mxfp4 family: ggml's mxfp4 (32 values in 17 bytes: the E8M0
// exponent e, then byte j = q_j | q_{j+16}<<4, q indexing the E2M1 grid
// kvalues), exactly as verify/codec's MXFP4 gives its bytes, written once
// against Packer (packer.go), as the qn family (qn.go).

// kvaluesMXFP4 is ggml's kvalues_mxfp4: twice the E2M1 values, in E2M1
// code order.
var kvaluesMXFP4 = [16]int{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// mxfp4 is the cache conversions of mxfp4, block by block of 32 values
// over the first Count values of each head, as qn walks q4_0's
// (packedBlocks).
func mxfp4(t Target, f *Func) {
	bb := f.Cache.BlockBytes()
	packedBlocks(t, f, "mxfp4", func(p Packer, h Head, n int, src, dst Arr) {
		p.Blocks32(h, n, src, 32, dst, bb, func(s, d Arr) { quantizeMXFP4(t, p, s, d) })
	}, func(p Packer, s, d Arr) { dequantizeMXFP4(t, p, s, d) })
}

// e8m0Half is d = 2^(e−128), the float32 bits, for the byte e in every
// lane (ggml_e8m0_to_fp32_half): e < 2 ? 0x00200000<<e : (e−1)<<23.
func e8m0Half(p Packer, e V) V {
	k := p.U32
	sub := p.Shlv32(k(0x00200000), p.And(e, k(1)))
	return p.Select(p.Gt32(e, k(1)), p.Shl32(p.Sub32(e, k(1)), 23), sub)
}

// quantizeMXFP4 is one block: the 32 float32 at s into the 17 bytes at d.
//
// amax. As q4_0's key: w = the integer maximum of the magnitudes' bits,
// a NaN's made 0 (`amax < fabsf(x)` passes NaNs over).
//
// e = mxfp4Exponent(amax): 0 for amax = 0, 254 for +Inf, else
// max(0, floorLog2f(amax) − 2 + 127), floorLog2f (verify/codec/float.go)
// being E or n = E + 1, E = ⌊log2 amax⌋: n when n ≠ 0 and
// w' = 2²³ − mantissa ≤ log2RoundUp(n), else E.
//
// Subnormals need no normalizing. With f the exponent field of amax,
// E = f − 127 for f ≥ 1 and the formula is floorLog2f's exactly. For f = 0
// (amax < 2⁻¹²⁶) floorLog2f(amax) ≤ −126 + 0 (E ≤ −127, n ≤ −126), so e
// clamps to 0; taking E = −127 there gives a result ≤ −126, also 0. In
// general, with t = f + up (up the round-up, 0 or 1) the result is
// floorLog2f + 125 = t − 2, and e = t > 2 ? t − 2 : 0; for f ≤ 1 (E ≤ −126,
// n ≤ −125) t ≤ 2 and e = 0 whatever up is, which is why only n ≥ −124
// matters and any value of log2RoundUp below it will do.
//
// log2RoundUp(n) = ⌊2^k·ln 2⌋ (0 for n = 0, where w' ≥ 1 never meets it),
// k = ⌊log2|n|⌋, less one for a positive power of two. With
// b = n > 0 ? n − 1 : −n, k = ⌊log2 b⌋ for every n ≠ 0 (n = 2^q > 0:
// ⌊log2(2^q − 1)⌋ = q − 1; other n > 1: ⌊log2(n − 1)⌋ = ⌊log2 n⌋; n = 1:
// b = 0, k = −1, as log2RoundUp(1) = table[0] = 0), and b = 0 reads as
// k = −1, giving 0 (n = 0, 1). ⌊log2 b⌋ + 1 = ⌊log2(2b + 1)⌋ for every
// b ≥ 0, the exponent field of the float32 of 2b + 1 (exact, b ≤ 129)
// less 127: F = field(float32(2b+1)) = k + 128. And ⌊2^k·ln 2⌋ =
// ⌊L/2^(24−k)⌋ with L = ⌊2²⁴·ln 2⌋ = 11629079 (the floor of a floor
// divided by an integer), a shift by 24 − k = 152 − F ∈ [17, 25] for
// k = −1…7 (|n| ≤ 129 since f ≤ 254 here: n = f − 126). This gives
// 0, 0, 1, 2, 5, 11, 22, 44, 88, verify/codec's table.
//
// d = e8m0Half(e); q_j = bestIndexMXFP4(x_j, d): the first i of least
// fl(|fl(kvalues[i]·d) − x_j|) by strict <, from i = 0. The errors are
// non-negative or NaN (x_j NaN, or c_i = ±Inf = x_j), whose bits order as
// their values with NaNs above +Inf: err < best is the integer best > err
// while best is not a NaN, which holds unless x_j is a NaN (best starts
// at |x_j| and takes only smaller values); a NaN x_j gives 0 by a select.
// c_0 = c_8 = +0 (kvalues 0, d finite), so i = 8 never wins a strict <
// and is skipped, and err_0 = |x_j| exactly. No constant a candidate (a
// register each on amd64): the candidates are sums of d, the index a
// running count.
func quantizeMXFP4(t Target, p Packer, s, d Arr) {
	k := p.U32
	xs := p.LoadF32x32(s)
	n := len(xs)
	w := p.MaxAcross(magnitudeKeys(p, xs))
	f := p.Shr32(w, 23)
	// b = f > 126 ? f − 127 : 126 − f (n = f − 126)
	b := p.Select(p.Gt32(f, k(126)), p.Sub32(f, k(127)), p.Sub32(k(126), f))
	// F = field(float32(2b + 1)); R = L >> (152 − F)
	F := p.Shr32(p.AsU32(p.ToF32(p.Add32(p.Shl32(b, 1), k(1)))), 23)
	R := p.Shrv32(k(11629079), p.Sub32(k(152), F))
	// up = 2²³ − mantissa ≤ R; t = f + up
	wm := p.Sub32(k(1<<23), p.And(w, k(0x7fffff)))
	tt := p.Select(p.Gt32(wm, R), f, p.Add32(f, k(1)))
	// e = t > 2 ? t − 2 : 0; +Inf gives 254
	ee := p.Select(p.Gt32(tt, k(2)), p.Sub32(tt, k(2)), k(0))
	ee = p.Select(p.Eq32(w, k(f32Inf)), k(254), ee)
	dd := p.AsF32(e8m0Half(p, ee))
	// byte 0 = e (StoreU16 writes e and a zero byte 1, which the nibbles overwrite)
	p.StoreU16(d, ee)
	c := mxfp4Candidates(t, dd)
	qs := make([]V, n)
	for j, x := range xs {
		qs[j] = mxfp4Index(t, p, x, c)
	}
	p.StoreNibbles(d.At(1), qs)
}

// mxfp4Candidates are c_v = fl(v·d) for the magnitudes v of kvalues, as
// sums of d: v·d is exact where finite (d a power of two, v ≤ 12 of two
// significant bits), so fl(a·d + b·d) of exact (or overflowed, then also
// overflowing: all positive) a·d, b·d is the rounding of v·d, fl(v·d).
// (nvfp4's d, a UE4M3 value of at most 4 significant bits and at most 240,
// makes every v·d exact and finite, so the sums are exact there too.)
func mxfp4Candidates(t Target, dd V) map[int]V {
	c := map[int]V{1: dd}
	c[2] = t.Add(dd, dd)
	c[3] = t.Add(c[2], dd)
	c[4] = t.Add(c[2], c[2])
	c[6] = t.Add(c[3], c[3])
	c[8] = t.Add(c[4], c[4])
	c[12] = t.Add(c[6], c[6])
	return c
}

// mxfp4Index is bestIndexMXFP4(x, d) in every lane of the member x, c
// being mxfp4Candidates(d) (quantizeMXFP4 derives it). The negative
// candidates' errors are |fl(−c_v − x)| = |fl(c_v + x)|.
func mxfp4Index(t Target, p Packer, x V, c map[int]V) V {
	k := p.U32
	best := p.And(p.AsU32(x), k(f32Abs)) // err_0 = |0 − x_j|
	idx, cur, step := k(0), k(0), uint32(1)
	for i := 1; i < 16; i++ {
		v := kvaluesMXFP4[i]
		if v == 0 {
			step++ // i = 8: skipped, the count steps over it
			continue
		}
		cur = p.Add32(cur, k(step)) // i
		step = 1
		var diff V
		if v > 0 {
			diff = t.Sub(c[v], x)
		} else {
			diff = t.Add(c[-v], x)
		}
		err := p.And(p.AsU32(diff), k(f32Abs))
		less := p.Gt32(best, err)
		idx = p.Select(less, cur, idx)
		if i < 15 {
			best = p.Select(less, err, best)
		}
	}
	return p.Select(p.IsNaN(x), k(0), idx)
}

// dequantizeMXFP4 is one block: the 17 bytes at s into 32 float32 at d,
//
//	y_j = fl(kvalues[q_j]·2^(e−128))
//
// every byte e (0xFF reads 2¹²⁷). kvalues[q] from q: m = q & 7 is the E2M1
// code of the magnitude, whose float32 is m itself for m < 2 and, for
// m ≥ 2, (1 + (m&1)/2)·2^(m>>1), the bits (m>>1 + 127)<<23 | (m&1)<<22 =
// (m + 254)<<22; negative for q ≥ 9 (q = 8 is kvalues' +0).
func dequantizeMXFP4(t Target, p Packer, s, d Arr) {
	k := p.U32
	ee := p.And(p.LoadU16(s), k(0xff))
	dd := p.AsF32(e8m0Half(p, ee))
	qs := p.LoadNibbles(s.At(1))
	ys := make([]V, len(qs))
	for i, q := range qs {
		ys[i] = t.Mul(kvalueMXFP4(p, q), dd)
	}
	p.StoreF32x32(d, ys)
}

// kvalueMXFP4 is the float32 kvalues[q] of the indices q (dequantizeMXFP4
// derives it).
func kvalueMXFP4(p Packer, q V) V {
	k := p.U32
	m := p.And(q, k(7))
	mag := p.Select(p.Gt32(m, k(1)), p.Shl32(p.Add32(m, k(254)), 22), p.AsU32(p.ToF32(m)))
	sign := p.Select(p.Gt32(q, k(8)), k(f32Sign), k(0))
	return p.AsF32(p.Or(mag, sign))
}
