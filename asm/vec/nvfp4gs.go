package vec

import "math"

// The nvfp4_gs family: NVIDIA's NVFP4 with its float32 tensor (global)
// scale g, exactly as verify/codec's NVFP4GS gives its bytes, written once
// against Packer (packer.go). A block of the format is 16 values in 9
// bytes: bytes 0…7 the E2M1 codes, byte j = c_{2j} | c_{2j+1}<<4, then
// byte 8 the block's e4m3fn scale S. The family works on a Packer block
// of 32 values, two of the format's blocks (18 bytes), so a head holds a
// multiple of 32 values; g is the kernels' scale argument.
//
// Per block of 16 (every float32 operation rounded, in this order):
//
//	amax = the largest |x_j|, NaNs passed over (magnitudeKeys, MaxAcross)
//	sf   = min(fl(g·fl(amax·fl32(1/6))), 448), S = e4m3(sf) (Narrow)
//	rg   = g ≠ 0 ? fl(1/g) : 0
//	p    = fl(e4m3to32(S)·rg) (Widen), o = p ≠ 0 ? fl(1/p) : 0
//	c_j  = f32toe2m1(fl(x_j·o)) (e2m1Code)
//	load: y_j = fl(e2m1to32(c_j)·fl(e4m3to32(S)/g))
//
// The nibbles. StoreNibbles writes 16 bytes, byte j = q_j | q_{j+16}<<4,
// where the format pairs adjacent codes and puts S between the two
// blocks. The codes c_0…c_31 (value order, as computed) are permuted to
// q_{16h+j} = c_{π(16h+j)}, π(16h+j) = 2σ(j) + h with σ(j) = j for j < 8,
// 15 for j = 8 and j−1 for 9 ≤ j ≤ 15, so byte j of StoreNibbles(d, q) is
// c_{2j} | c_{2j+1}<<4 for j < 8 (the first block's codes), c_{2j−2} |
// c_{2j−1}<<4 for 9 ≤ j ≤ 15 (the second block's bytes 0…6, at 9…15),
// and byte 8 is c_30 | c_31<<4, the second block's last byte. S_0 | S_1<<8
// is written at 16 first (StoreU16); after StoreNibbles bytes 8 and 16
// are exchanged (two LoadU16, two StoreU16), which puts c_30 | c_31<<4 at
// 16 and S_0 at 8, S_1 staying at 17. The load reads the same bytes back:
// S_0 at 8, c_30 and c_31 and S_1 at 16, LoadNibbles' lanes 8 and 24
// replaced by c_30 and c_31, then π undone.
//
// π is the deinterleave d_{16h+j} = c_{2j+h} (the index's five bits
// rotated: d_i = c_{rotl(i)}), four exchanges of two index bits ((0, 1),
// (1, 2), (2, 3), (3, 4) in turn, out_i = in_{τ(i)}), then σ within each
// half of 16 (nvgsMoves): lane moves. A step that moves whole members (one
// lane a member: pure Go, the lane evaluator; the exchanges of index bits
// at or above log2 L with L lanes a member: two of the four at NEON, one
// at AVX2) is a reordering of the members; any other a round trip through
// 96 words of scratch: the members stored at word 32,
// read back at 32+δ for each move's offset δ (|δ| ≤ 15) and selected
// lane by lane by the lane's position (Iota); words never written are
// never selected.

// nvfp4gs is the cache conversions of nvfp4_gs, block by block of 32
// values over the first Count values of each head (Count a multiple of
// 32), with the tensor scale g the argument scale.
func nvfp4gs(t Target, f *Func) {
	bb := f.Cache.BlockBytes()
	g := t.Broadcast("scale", F32) // hoisted, or the argument itself (pure Go, RVV's F register)
	packedBlocks(t, f, "nvfp4_gs", func(p Packer, h Head, n int, src, dst Arr) {
		p.Blocks32(h, n, src, 32, dst, bb, func(s, d Arr) { quantizeNVFP4GS(t, p, g, s, d) })
	}, func(p Packer, s, d Arr) { dequantizeNVFP4GS(t, p, g, s, d) })
}

// laneMove is one move of a lane permutation: the lanes at positions pos
// (0…31 in the block) where cond holds take the value at pos+delta. A
// later move of a list overrides an earlier one.
type laneMove struct {
	delta int
	cond  laneCond
}

// laneCond is a condition on a lane's position pos in the block, both as
// Go (holds) and as a mask (mask): bit a of pos set and bit a+1 clear
// (bitUp), the converse (bitDown), j = pos & 15 above 8 (jAbove8), j = 8
// (jIs8), j above 7 (jAbove7), j = 15 (jIs15).
type laneCond struct {
	kind int
	a    int
}

const (
	bitUp = iota
	bitDown
	jAbove8
	jIs8
	jAbove7
	jIs15
)

// holds reports whether cond holds at pos.
func (c laneCond) holds(pos int) bool {
	lo, hi, j := pos>>c.a&1, pos>>(c.a+1)&1, pos&15
	switch c.kind {
	case bitUp:
		return lo == 1 && hi == 0
	case bitDown:
		return lo == 0 && hi == 1
	case jAbove8:
		return j > 8
	case jIs8:
		return j == 8
	case jAbove7:
		return j > 7
	}
	return j == 15
}

// mask is cond's lanes for the positions pos. Bits are isolated by a pair
// of shifts and compared with 1 and 8 only: at AVX-512 every U32 constant
// of a kernel is a register for the whole kernel, and the store's others
// (the e4m3 conversions', e2m1Code's) leave few.
func (c laneCond) mask(p Packer, pos V) Mask {
	k := p.U32
	bit := func(b int) V { return p.Shr32(p.Shl32(pos, 31-b), 31) }
	j := p.Shr32(p.Shl32(pos, 28), 28)
	switch c.kind {
	case bitUp: // bit a − bit a+1 = 1
		return p.Eq32(p.Sub32(bit(c.a), bit(c.a+1)), k(1))
	case bitDown:
		return p.Eq32(p.Sub32(bit(c.a+1), bit(c.a)), k(1))
	case jAbove8:
		return p.Gt32(j, k(8))
	case jIs8:
		return p.Eq32(j, k(8))
	case jAbove7: // j+1 > 8
		return p.Gt32(p.Add32(j, k(1)), k(8))
	}
	return p.Eq32(p.Shr32(p.Add32(j, k(1)), 4), k(1)) // (j+1)>>4 = 1
}

// bitSwap is the exchange of index bits a and a+1: out_i = in_{τ(i)}, τ
// swapping the two bits of i (positions with bit a set and bit a+1
// clear read 2^a on, the converse 2^a back).
func bitSwap(a int) []laneMove {
	d := 1 << a
	return []laneMove{{d, laneCond{bitUp, a}}, {-d, laneCond{bitDown, a}}}
}

// nvgsSigma is σ's moves, out_{16h+j} = in_{16h+σ(j)}: 9 ≤ j ≤ 15 read
// one back, j = 8 reads 7 on (15); nvgsSigmaInv undoes them: 8 ≤ j ≤ 14
// read one on, j = 15 reads 7 back.
var (
	nvgsSigma    = []laneMove{{-1, laneCond{kind: jAbove8}}, {7, laneCond{kind: jIs8}}}
	nvgsSigmaInv = []laneMove{{1, laneCond{kind: jAbove7}}, {-7, laneCond{kind: jIs15}}}
)

// nvgsMoves is π as lane moves, in order (the package comment);
// nvgsUnmoves is π⁻¹.
var (
	nvgsMoves   = [][]laneMove{bitSwap(0), bitSwap(1), bitSwap(2), bitSwap(3), nvgsSigma}
	nvgsUnmoves = [][]laneMove{nvgsSigmaInv, bitSwap(3), bitSwap(2), bitSwap(1), bitSwap(0)}
)

// permuteLanes is the members qs of a block (32-bit lanes, any bits)
// moved by each step of steps in turn. A step that moves whole members
// (every lane of a member reading the same offset, a multiple of the
// member's L lanes: always with one lane a member, and the exchanges of
// two index bits at or above log2 L) is a reordering of the members; any
// other is a round trip through *scratch, made on first use.
func permuteLanes(t Target, p Packer, qs []V, steps [][]laneMove, scratch *nvfp4Scratch) []V {
	n := len(qs)
	L := 32 / n
	src := func(moves []laneMove, pos int) int { // the position lane pos reads
		j := pos
		for _, m := range moves {
			if m.cond.holds(pos) {
				j = pos + m.delta
			}
		}
		return j
	}
	for _, moves := range steps {
		whole := true
		for pos := range 32 {
			d := src(moves, pos) - pos
			whole = whole && d%L == 0 && d == src(moves, pos-pos%L)-(pos-pos%L)
		}
		if whole {
			out := make([]V, n)
			for i := range qs {
				out[i] = qs[src(moves, i*L)/L]
			}
			qs = out
			continue
		}
		if !scratch.ok {
			scratch.a, scratch.ok = t.Local(96, F32), true
		}
		s, k := scratch.a, p.U32
		fs := make([]V, n)
		for i, q := range qs {
			fs[i] = p.AsF32(q)
		}
		p.StoreF32x32(s.At(32), fs)
		for _, m := range moves {
			ld := p.LoadF32x32(s.At(32 + m.delta))
			for i := range qs {
				mask := m.cond.mask(p, p.Sub32(p.Iota(i, n), k(1)))
				qs[i] = p.Select(mask, p.AsU32(ld[i]), qs[i])
			}
		}
	}
	return qs
}

// e2m1Code is f32toe2m1(v) (verify/codec) of the float32 lanes of v, the
// code in the low 4 bits of each lane. The scalar, with m = |v|:
//
//	NaN → 0; else s | c, s = 8 for v's sign bit set (−0 included) and
//	c = 0 (m ≤ 0.25), 1 (< 0.75), 2 (≤ 1.25), 3 (< 1.75), 4 (≤ 2.5),
//	    5 (< 3.5), 6 (≤ 5), 7 (above, +Inf included)
//
// which is m rounded to nearest even on the grid {0, ½, 1, 1½, 2, 3, 4,
// 6} (every threshold a midpoint: 0.25, 1.25, 2.5 and 5 tie to the even
// code below, 0.75, 1.75 and 3.5 to the even code above), saturating at
// 6: E2M1 as a minifloat (2 exponent bits of bias 1, 1 mantissa bit, no
// Inf or NaN codes). With m6 = min(m, 6) (the clamp loses nothing: every
// m above 5 gives 7, and 6 does) and a its bits:
//
// m6 < 1 (codes 0…2: the grid's step ½): fl(m6 + 2²²), whose ulp is ½,
// rounds m6 to a multiple of ½ to nearest even, and its bits less 2²²'s
// are that multiple, the code (0.25 → 0, 0.75 → 2).
//
// m6 ≥ 1 (a normal float32, exponent field 127…129): the code is e<<1 |
// m for the value 2^(e−1)·(1 + m/2), which is float32's exponent field
// less 126 and its top mantissa bit, rounded to nearest even on the
// mantissa bits below: (a + 2²¹ − 1 + (a>>22 & 1))>>22 − 252·… =
// (a + (a>>22 & 1) + 0x1FFFFF − 252<<22)>>22 (a carry into the exponent
// is the next code: 1.75 → 4; 6 is a = 0x40C00000, code 7, the largest;
// the constant wraps modulo 2³², the sum not: a ≥ 0x3F800000).
//
// A NaN (a > bits(+Inf), its m6 the target's) gives 0, its sign dropped.
func e2m1Code(t Target, p Packer, v V) V {
	k := p.U32
	u := p.AsU32(v)
	m6 := p.MinF(p.AsF32(p.And(u, k(f32Abs))), f32c(p, 6))
	a := p.AsU32(m6)
	sub := p.Sub32(p.AsU32(t.Add(m6, f32c(p, 0x1p22))), k(math.Float32bits(0x1p22)))
	nrm := p.Shr32(p.Add32(p.Add32(a, p.Shr32(p.Shl32(a, 9), 31)), k(0xc11fffff)), 22) // 0x1FFFFF − 252<<22 modulo 2³²
	c := p.Select(p.Gt32(k(math.Float32bits(1)), a), sub, nrm)
	c = p.Or(c, p.Shr32(p.And(u, k(f32Sign)), 28)) // s: the sign bit to bit 3
	nan := p.Gt32(p.And(u, k(f32Abs)), k(f32Inf))
	return p.Select(nan, k(0), c)
}

// e2m1Value is e2m1to32(c) (verify/codec) of the codes in the low 4 bits
// of the lanes of c (bits above them zero), as float32: with m = c & 7,
// the magnitudes {0, ½, 1, 1½, 2, 3, 4, 6}: for m ≥ 2 the float32 bits
// (m+252)<<22 (exponent field 126 + (m>>1), mantissa bit 22 = m & 1:
// 2→1, 3→1½, 4→2, 5→3, 6→4, 7→6), for m = 1 ½'s bits 0x3F000000, for
// m = 0 +0; bit 3 the sign (0x8 is −0).
func e2m1Value(p Packer, c V) V {
	k := p.U32
	half := p.Select(p.Gt32(p.And(c, k(7)), k(0)), k(0x3f000000), p.And(c, k(7))) // m ≤ 1: ½ or +0
	m := p.And(c, k(7))
	mag := p.Select(p.Gt32(m, k(1)), p.Shl32(p.Add32(m, k(252)), 22), half)
	return p.AsF32(p.Or(mag, p.Shl32(p.And(c, k(8)), 28)))
}

// nvgsScale is g in every lane of a vector, and 1 likewise: g may be a
// scalar register (RVV's F register, which only an operation's second
// operand takes), and so may a constant, so 1 is made a vector from one
// (Iota(0, n) − Iota(0, n), or'ed with 1's bits) and g is fl(1·g), g's
// value (a NaN g is never passed: the entry points check it).
func nvgsScale(t Target, p Packer, g V, n int) (gv, one V) {
	io := p.Iota(0, n)
	one = p.AsF32(p.Or(p.Sub32(io, p.Iota(0, n)), p.U32(math.Float32bits(1))))
	return t.Mul(one, g), one
}

// quantizeNVFP4GS is one Packer block: the 32 float32 at s into the two
// format blocks, 18 bytes, at d (the package comment's arithmetic and
// byte order). The clamp min(…, 448) is Narrow's saturation: e4m3fn
// narrows every float32 from 448 up to 448 (0x7E; its largest mantissa
// is even, so the tie at 464 rounds down to it too), the same code as
// 448 itself, so sf goes to Narrow unclamped. S_0 and S_1 wait in bytes
// 16 and 17 of the block while the codes are made (no register holds
// them), then the bytes are put in place.
func quantizeNVFP4GS(t Target, p Packer, g V, s, d Arr) {
	k := p.U32
	keys := magnitudeKeys(p, p.LoadF32x32(s))
	n := len(keys)
	if n < 2 || n%2 != 0 {
		panic("vec: nvfp4_gs: a block of an odd number of members")
	}
	gv, one := nvgsScale(t, p, g, n)
	// rg = g ≠ 0 ? fl(1/g) : 0
	rg := p.Select(p.Eq32(p.And(p.AsU32(gv), k(f32Abs)), k(0)), p.AsF32(k(0)), t.Div(one, gv))
	amax := [2]V{p.AsF32(p.MaxAcross(keys[:n/2])), p.AsF32(p.MaxAcross(keys[n/2:]))}
	var o [2]V
	var sc V // S_0
	for b := range 2 {
		// S = e4m3(fl(g·fl(amax·fl32(1/6)))), saturating at 448
		code := Narrow(t, E4M3, t.Mul(gv, t.Mul(amax[b], f32c(p, float32(1.0/6)))))
		// p = fl(e4m3(S)·rg); o = p ≠ 0 ? fl(1/p) : 0
		pp := t.Mul(Widen(t, E4M3, code), rg)
		o[b] = p.Select(p.Eq32(p.And(p.AsU32(pp), k(f32Abs)), k(0)), p.AsF32(k(0)), t.Div(one, pp))
		if b == 0 {
			sc = code
		} else {
			p.StoreU16(d.At(16), p.Or(sc, p.Shl32(code, 8))) // S_0 | S_1<<8, for now
		}
	}
	// c_j = f32toe2m1(fl(x_j·o)), the values read again (the registers:
	// the scales' constants are dead by now)
	xs := p.LoadF32x32(s)
	cs := make([]V, n)
	for i, x := range xs {
		cs[i] = e2m1Code(t, p, t.Mul(x, o[2*i/n]))
	}
	var scratch nvfp4Scratch
	p.StoreNibbles(d, permuteLanes(t, p, cs, nvgsMoves, &scratch))
	// byte 8 holds c_30 | c_31<<4, byte 16 S_0: exchanged (S_1 stays at 17)
	w8, w16 := p.LoadU16(d.At(8)), p.LoadU16(d.At(16))
	lo := func(w V) V { return p.Shr32(p.Shl32(w, 24), 24) } // w & 0xff
	hi := func(w V) V { return p.Shl32(p.Shr32(w, 8), 8) }   // w &^ 0xff
	p.StoreU16(d.At(16), p.Or(lo(w8), hi(w16)))
	p.StoreU16(d.At(8), p.Or(lo(w16), hi(w8)))
}

// dequantizeNVFP4GS is one Packer block: the 18 bytes at s into 32
// float32 at d, y_j = fl(e2m1to32(c_j)·fl(e4m3to32(S)/g)); every byte
// decodes (Widen's e4m3fn: 0x7F and 0xFF are NaN).
func dequantizeNVFP4GS(t Target, p Packer, g V, s, d Arr) {
	k := p.U32
	w8, w16 := p.LoadU16(s.At(8)), p.LoadU16(s.At(16)) // S_0 | (c_16 | c_17<<4)<<8; c_30 | c_31<<4 | S_1<<8
	qs := p.LoadNibbles(s)
	n := len(qs)
	gv, _ := nvgsScale(t, p, g, n)
	for i := range qs {
		// lanes 8 and 24 (S_0's nibbles) take c_30 and c_31
		pos := p.Sub32(p.Iota(i, n), k(1))
		lo := p.Select(p.Eq32(pos, k(8)), p.And(w16, k(15)), qs[i])
		qs[i] = p.Select(p.Eq32(pos, k(24)), p.And(p.Shr32(w16, 4), k(15)), lo)
	}
	var scratch nvfp4Scratch
	cs := permuteLanes(t, p, qs, nvgsUnmoves, &scratch)
	ys := make([]V, n)
	for b := range 2 {
		var code V
		if b == 0 {
			code = p.And(w8, k(0xff))
		} else {
			code = p.Shr32(w16, 8)
		}
		// fl(e4m3to32(S)/g)
		sb := t.Div(Widen(t, E4M3, code), gv)
		for i := b * n / 2; i < (b+1)*n/2; i++ {
			ys[i] = t.Mul(e2m1Value(p, cs[i]), sb)
		}
	}
	p.StoreF32x32(d, ys)
}
