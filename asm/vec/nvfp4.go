package vec

import "math"

// The nvfp4 family: ggml's nvfp4 (GGML_TYPE_NVFP4: 64 values in 36 bytes,
// four UE4M3 scale bytes d_s, one per 16 values, then 32 bytes: sub-block
// s owns bytes 4+8s…4+8s+7, byte 4+8s+j = q_{16s+j} | q_{16s+j+8}<<4, q
// indexing kvaluesMXFP4), exactly as verify/codec's NVFP4 gives its bytes,
// written once against Packer (packer.go), as the mxfp4 family
// (mxfp4.go), whose grid, best index and dequantizing it shares.
//
// A block of 64 is two halves of 32, each a Packer block: half h holds
// sub-blocks 2h and 2h+1, their scale bytes 2h and 2h+1 and their nibbles
// the 16 bytes at 4+16h. Members stay in value order (member i of n holds
// values i·L…i·L+L−1, L = 32/n ≤ 16, so each member lies in one
// sub-block, i·L/16 of the half). StoreNibbles pairs q_j with q_{j+16}
// (j < 16) where nvfp4 pairs q_j with q_{j+8} within each 16, so the
// nibbles go through nvfp4Swap, the permutation exchanging the values
// 8…15 and 16…23 of a half (an involution), on the way out and on the
// way in: byte j of the half's 16 is q'_j | q'_{j+16}<<4 with q' the
// swapped q, which is q_j | q_{j+8}<<4 for j < 8 and q_{j+8} | q_{j+16}<<4
// for 8 ≤ j < 16, nvfp4's bytes.

// nvfp4 is the cache conversions of nvfp4, block by block of 64 values
// over the first Count values of each head (Count a multiple of 64).
func nvfp4(t Target, f *Func) {
	bb := f.Cache.BlockBytes()
	packedBlocks(t, f, "nvfp4", func(p Packer, h Head, n int, src, dst Arr) {
		p.Blocks32(h, n, src, 64, dst, bb, func(s, d Arr) { quantizeNVFP4(t, p, s, d) })
	}, func(p Packer, s, d Arr) { dequantizeNVFP4(t, p, s, d) })
}

// nvfp4Scratch is a block's scratch for nvfp4Swap, once made.
type nvfp4Scratch struct {
	a  Arr
	ok bool
}

// nvfp4Swap is the members qs of a half (32-bit lanes, any bits) with
// the values 8…15 and 16…23 exchanged. For L ≤ 8 lanes a member that is
// only a reordering of the members (AVX2, NEON, RVV at LMUL 1 and 2, pure
// Go); for L = 16 (AVX-512, RVV at LMUL 4) a
// round trip through 48 words of scratch (*scratch, made on first use):
// the half stored at word 8, then read back at words 8, 16 and 0 (value
// p of the half, p+8, p−8 at position p; words 0…7 and 40…47 are never
// written and never selected): member 0 is the first's lanes 0…7 and the
// second's 8…15 (values 0…7, 16…23), member 1 the third's lanes 0…7 and
// the first's 8…15 (values 8…15, 24…31).
func nvfp4Swap(t Target, p Packer, qs []V, scratch *nvfp4Scratch) []V {
	n := len(qs)
	L := 32 / n
	out := make([]V, n)
	if L <= 8 {
		for i := range qs {
			j := i
			switch pos := i * L; {
			case pos >= 8 && pos < 16:
				j = i + 8/L
			case pos >= 16 && pos < 24:
				j = i - 8/L
			}
			out[i] = qs[j]
		}
		return out
	}
	if !scratch.ok {
		scratch.a, scratch.ok = t.Local(48, F32), true
	}
	s := scratch.a
	if n != 2 {
		panic("vec: nvfp4: a block of one member")
	}
	fs := make([]V, n)
	for i, q := range qs {
		fs[i] = p.AsF32(q)
	}
	p.StoreF32x32(s.At(8), fs)
	a, b, c := p.LoadF32x32(s.At(8)), p.LoadF32x32(s.At(16)), p.LoadF32x32(s.At(0))
	// lanes 8…15 of a member: 1-based positions above 8 in member 0
	hi := p.Gt32(p.Iota(0, n), p.U32(8))
	out[0] = p.Select(hi, p.AsU32(b[0]), p.AsU32(a[0]))
	out[1] = p.Select(hi, p.AsU32(a[1]), p.AsU32(c[1]))
	return out
}

// f32c is the float32 v in every lane, as the U32 constant of its bits:
// at AVX2 a memory operand where t.Const would keep a register for the
// whole kernel (the store's 16 YMM are all needed).
func f32c(p Packer, v float32) V { return p.AsF32(p.U32(math.Float32bits(v))) }

// ue4m3Code is f32toue4m3(a) (verify/codec) in every lane, a a float32
// ≥ +0, never a NaN (amax/6, amax a non-NaN magnitude, +Inf included),
// as the byte's value in a 32-bit lane. The scalar:
//
//	if !(a > 0) { return 0 }
//	a = min(a, 448); u = bits(a); e = field(u) − 120
//	if e ≤ 0 { return min(7, trunc(fl(fl(a·512) + 0.5))) }
//	if e ≥ 15 { return 0x7E }
//	m = (u>>20 & 7) + (u>>19 & 1)
//	if m > 7 { m, e = 0, e+1; if e ≥ 15 { return 0x7E } }
//	return e<<3 | m
//
// Here, with u = bits(a) < 2³¹ (a is not negative), e ≤ 0 (the exponent
// field f ≤ 120) is u < 0x3C800000 = bits(2⁻⁶), the mask small:
//
// small (a < 2⁻⁶, +0 included): the same float32 operations,
// fl(fl(a·512) + 0.5) ∈ [0.5, 8.5], truncated by TruncI32 to t ∈ [0, 8]
// and clamped to 7 as t − (t>>3) (8 gives 7, the rest stay: the
// scalar's m ≥ 7 ⇔ t ≥ 7); a = +0 gives trunc(0.5) = 0, the scalar's
// !(a > 0) case. The other lanes feed 2⁻⁶ instead (their result is not
// selected), keeping the operand in TruncI32's range.
//
// not small (f ≥ 121): u>>20 = f<<3 | (u>>20 & 7), so e<<3 + (u>>20 & 7)
// = (u>>20) − 960, and adding the rounding bit u>>19 & 1 gives
// ((u + 2¹⁹)>>20) − 960 (the bit carries into bit 20 exactly when set) =
// (u + 2¹⁹ − 960·2²⁰)>>20 = (u − 0x3BF80000)>>20, the subtraction not
// wrapping since u ≥ 121·2²³ > 0x3BF80000 (and u − 0x3BF80000 < 2³¹). The
// sum is the scalar's e<<3 | m, a mantissa carry m = 8 being the scalar's
// e+1, m = 0: e<<3 + 8 = (e+1)<<3. Every scalar path to 0x7E is a sum
// > 119: e ≥ 15 before rounding (f ≥ 135: a ≥ 256, which covers the clamp
// to 448 and +Inf) gives at least 15<<3, and the carry to e = 15 gives
// 15<<3 exactly; every other sum is e<<3 + m ≤ 14<<3 + 7 = 119, returned
// as it is. So the code is r > 119 ? 0x7E : r, r = (u − 0x3BF80000)>>20
// (a logical shift: in small lanes the difference may wrap, and r, unused
// there, is still below 2¹²).
//
// Few constants: at AVX-512 each is a register for the whole kernel.
func ue4m3Code(t Target, p Packer, a V) V {
	k := p.U32
	u := p.AsU32(a)
	r := p.Shr32(p.Sub32(u, k(0x3bf80000)), 20)
	big := p.Select(p.Gt32(r, k(119)), k(0x7e), r)
	// one mask live at a time (RVV's masks are all V0)
	small := p.Gt32(k(0x3c800000), u)
	us := p.Select(small, u, k(0x3c800000))
	tr := p.TruncI32(t.Add(t.Mul(p.AsF32(us), f32c(p, 512)), f32c(p, 0.5)))
	return p.Select(small, p.Sub32(tr, p.Shr32(tr, 3)), big)
}

// ue4m3Half is ue4m3to32(c) (verify/codec), the float32 bits, for the
// byte c (0…255) in every lane: 0x7F gives 0; otherwise b = c & 0x7F,
// exponent field e = b>>3 and mantissa m = b & 7, and the value is
// (1 + m/8)·2^(e−7)·½ = (1 + m/8)·2^(e−8) for e ≥ 1, whose float32 bits
// are (e + 119)<<23 | m<<20 = (b<<20) + (119<<23) (e + 119 ∈ [120, 134], a
// normal), and (m/8)·2⁻⁶·½ = m·2⁻¹⁰ for e = 0 (b = m): fl(float32(m)·2⁻¹⁰),
// exact (m ≤ 7, a power-of-two scaling to a normal), 0 for m = 0 (c =
// 0x00, 0x80). c = 0xFF (bit 7 ignored) reads 240.
func ue4m3Half(t Target, p Packer, c V) V {
	k := p.U32
	b := p.And(c, k(0x7f))
	nrm := p.Add32(p.Shl32(b, 20), k(119<<23))
	sub := p.AsU32(t.Mul(p.ToF32(b), f32c(p, 0x1p-10)))
	v := p.Select(p.Eq32(p.Shr32(b, 3), k(0)), sub, nrm)
	return p.Select(p.Eq32(c, k(0x7f)), k(0), v)
}

// quantizeNVFP4 is one block: the 64 float32 at s into the 36 bytes at d.
// Per sub-block s of 16:
//
//	amax_s = the largest |x| of the sub-block (NaNs passed over)
//	d_s    = f32toue4m3(fl(amax_s/6)), D_s = ue4m3to32(d_s)
//	q      = bestIndexMXFP4(x, D_s)
//
// amax_s as mxfp4's (magnitudeKeys: the integer maximum of the magnitudes'
// bits, a NaN's made 0), MaxAcross of the sub-block's members alone. fl(amax_s/6) is Div;
// d_s is ue4m3Code, D_s ue4m3Half. q is mxfp4Index with the candidates
// of D_s (mxfp4Candidates: D_s has at most 4 significant bits and is at
// most 240, so v·D_s, v ≤ 12 of 2 significant bits, is exact and finite
// and so are the sums; D_s = 0 makes every error |x| and q = 0, as
// bestIndexMXFP4's strict <).
//
// Two passes, for the registers: the scales of the four sub-blocks
// (d_s stored, D_s kept in 16 bytes of scratch), then the indices, the
// members read again, D_s read back (LoadU32), so neither the scales'
// constants nor their keys are live while a sub-block's candidates are
// (NEON's 32 registers, AVX-512's constants).
// StoreU16 writes d_s and a zero byte after it, which the next scale (or,
// after d_3, the first nibbles) overwrites.
func quantizeNVFP4(t Target, p Packer, s, d Arr) {
	dd := t.Local(16, Q8)
	n := 0
	for h := range 2 {
		keys := magnitudeKeys(p, p.LoadF32x32(s.At(32*h)))
		n = len(keys)
		if n < 2 || n%2 != 0 {
			panic("vec: nvfp4: a block of an odd number of members")
		}
		for sb := range 2 {
			ks := keys[sb*n/2 : (sb+1)*n/2]
			code := ue4m3Code(t, p, t.Div(p.AsF32(p.MaxAcross(ks)), f32c(p, 6)))
			p.StoreU16(d.At(2*h+sb), code)
			p.StoreU32(dd.At(4*(2*h+sb)), ue4m3Half(t, p, code))
		}
	}
	var scratch nvfp4Scratch
	for h := range 2 {
		qs := make([]V, n)
		xs := p.LoadF32x32(s.At(32 * h))
		for sb := range 2 {
			c := mxfp4Candidates(t, p.AsF32(p.LoadU32(dd.At(4*(2*h+sb)))))
			for i := sb * n / 2; i < (sb+1)*n/2; i++ {
				qs[i] = mxfp4Index(t, p, xs[i], c)
			}
		}
		p.StoreNibbles(d.At(4+16*h), nvfp4Swap(t, p, qs, &scratch))
	}
}

// dequantizeNVFP4 is one block: the 36 bytes at s into 64 float32 at d,
//
//	y = fl(kvaluesMXFP4[q]·D_s), D_s = ue4m3to32(d_s)
//
// every byte decoding (ue4m3Half, kvalueMXFP4).
func dequantizeNVFP4(t Target, p Packer, s, d Arr) {
	k := p.U32
	var scratch nvfp4Scratch
	for h := range 2 {
		w := p.LoadU16(s.At(2 * h)) // d_{2h} | d_{2h+1}<<8
		ds := [2]V{p.AsF32(ue4m3Half(t, p, p.And(w, k(0xff)))), p.AsF32(ue4m3Half(t, p, p.Shr32(w, 8)))}
		qs := nvfp4Swap(t, p, p.LoadNibbles(s.At(4+16*h)), &scratch)
		n := len(qs)
		ys := make([]V, n)
		for i, q := range qs {
			ys[i] = t.Mul(kvalueMXFP4(p, q), ds[2*i/n])
		}
		p.StoreF32x32(d.At(32*h), ys)
	}
}
