package rt

import (
	"math"
	"math/bits"
)

// sincos and sincosDD compute the sines and cosines of the table rows: the
// same bits on every architecture (no fused multiply-add; docs/contract.md
// §4). rt's tests prove their accuracy; the generated packages run this
// code.

// sincosMax is the angle up to which sincos reduces with its own four-part
// constant: below it k = round(x·2/π) < 2³¹, so k times each 22-bit part of
// π/2 is exact. Angles p·θ_i with p < 2²⁴ stay below it for θ_i < 200.
const sincosMax = 0x1p31

// Cody–Waite split of π/2: sincosP1, P2 and P3 carry 22 significant bits
// each, sincosP4 the next 53; together they are π/2 to within 2⁻¹²².
const (
	sincosP1 = 0x1.921fbp+0
	sincosP2 = 0x1.5110bp-22
	sincosP3 = 0x1.1846980p-44
	sincosP4 = 0x1.3198a2e037073p-69
)

// sincos sets sin[i] and cos[i] to the sine and cosine of the angle
// φ_i = pos·freqs[i], the product rounded to float64 (ropegen's docs/contract.md §4), for every
// i < len(freqs). It is as accurate as math.Sincos (within 3 float64 ulps,
// and accurate next to multiples of π/2 too, where math.Sincos is not) but straight-line and branch-free
// below sincosMax (sincosDD beyond it), and it has no fused multiply-add
// on any architecture: every product is converted explicitly, so it returns
// the same bits everywhere. φ is reduced to r = φ − k·π/2, |r| <= π/4 (to
// within rounding), with the four-part constant (each step exact where the
// difference is small); sin r and cos r are math.Sincos's polynomials
// (Cephes) on [−π/4, π/4], evaluated by Estrin's scheme; the quadrant k mod 4
// swaps and negates them with integer operations instead of branches.
func sincos(sin, cos []float64, pos float64, freqs []float64) {
	sin, cos = sin[:len(freqs)], cos[:len(freqs)]
	for i, theta := range freqs {
		x := float64(pos * theta)
		if !(x < sincosMax) {
			sin[i], cos[i] = sincosDD(x)
			continue
		}
		const magic = 0x1.8p52 // adding it rounds to an integer, kept in the low bits
		kb := float64(x*(2/math.Pi)) + magic
		q := math.Float64bits(kb)
		k := kb - magic
		r := x - float64(k*sincosP1)
		r -= float64(k * sincosP2)
		r -= float64(k * sincosP3)
		r -= float64(k * sincosP4)
		z := float64(r * r)
		z2 := float64(z * z)
		z4 := float64(z2 * z2)
		s0 := float64(8.33333333332211858878e-3*z) - 1.66666666666666307295e-1
		s1 := float64(2.75573136213857245213e-6*z) - 1.98412698295895385996e-4
		s2 := float64(1.58962301576546568060e-10*z) - 2.50507477628578072866e-8
		s := r + float64(float64(r*z)*(s0+float64(z2*s1)+float64(z4*s2)))
		c0 := float64(-1.38888888888730564116e-3*z) + 4.16666666666665929218e-2
		c1 := float64(-2.75573141792967388112e-7*z) + 2.48015872888517045348e-5
		c2 := float64(-1.13585365213876817300e-11*z) + 2.08757008419747316778e-9
		c := (1 - float64(0.5*z)) + float64(z2*(c0+float64(z2*c1)+float64(z4*c2)))
		// Quadrant q: (sin, cos) = (s, c), (c, −s), (−s, −c), (−c, s).
		sb, cb := math.Float64bits(s), math.Float64bits(c)
		swap := (sb ^ cb) & -(q & 1)
		sb, cb = sb^swap, cb^swap
		sin[i] = math.Float64frombits(sb ^ (q&2)<<62)
		cos[i] = math.Float64frombits(cb ^ ((q+1)&2)<<62)
	}
}

// sincosDD returns sin x and cos x, each correctly rounded to float64 but
// in rare cases where the exact value lies within about 2⁻⁶⁴ (relative) of
// the midpoint between two float64s, and then still within 0.5+2⁻¹⁰ ulps
// (sincos_test.go measures both). That holds for every finite x: the
// reduction x = k·π/2 + r gives r in double-double to about 2⁻⁷⁰ relative
// even at the float64s nearest to a multiple of π/2 (|r| > 2⁻⁶¹). ±Inf and
// NaN give NaN (math.NaN's bits). It uses only +, −, ×, integer and bit
// operations, with every product converted explicitly so that no compiler
// fuses it into a multiply-add: it returns the same bits on every
// architecture.
//
// |x| < π/4 is its own r. Below 2³¹, k = round(x·2/π) and r = x − k·π/2
// with π/2 in six parts (Cody–Waite), k times each of the first five
// exact, summed in double-double. Beyond, sincosDDReduce finds k mod 4 and
// r from 1216 bits of 2/π in integer arithmetic (Payne–Hanek). Then with a = j/64 the
// nearest to |r| and b = |r| − a (|b| <= 1/128), sin|r| = sin a + cos a·b +
// sin a·(cos b − 1) + cos a·(sin b − b) and cos|r| = cos a − sin a·b +
// cos a·(cos b − 1) − sin a·(sin b − b): sin a and cos a from a table as a
// 26-bit head and a float64 tail, b split into two 26-bit halves so that
// the head times each half is exact, cos b − 1 and sin b − b by their
// Taylor series to b⁶ and b⁷ (the rest is below 2⁻⁷⁰ relative), the terms
// summed smallest first and rounded once. The quadrant and the signs are
// applied to the bits at the end.
func sincosDD(x float64) (sin, cos float64) {
	ax := math.Abs(x)
	rh, rl, q, neg := ax, 0.0, uint64(0), uint64(0)
	switch {
	case ax < math.Pi/4: // r = ax
	case ax < 0x1p31:
		// k < 2³¹: r = ax − k·(P1 + … + P6), k·P1…k·P5 exact, ax − k·P1
		// exact (Sterbenz), the rest summed with TwoSum: r to 2⁻¹³⁴.
		const magic = 0x1.8p52 // adding it rounds to an integer, kept in the low bits
		kb := float64(ax*(2/math.Pi)) + magic
		q = math.Float64bits(kb) & 3
		k := kb - magic
		h0 := ax - float64(k*sincosDDP1)
		w := float64(k * sincosDDP2)
		h1 := h0 - w
		d := h1 - h0
		e := (h0 - (h1 - d)) - (w + d)
		w = float64(k * sincosDDP3)
		h2 := h1 - w
		d = h2 - h1
		e += (h1 - (h2 - d)) - (w + d)
		w = float64(k * sincosDDP4)
		h3 := h2 - w
		d = h3 - h2
		e += (h2 - (h3 - d)) - (w + d)
		w = float64(k * sincosDDP5)
		h4 := h3 - w
		d = h4 - h3
		e += (h3 - (h4 - d)) - (w + d)
		e -= float64(k * sincosDDP6)
		rh = h4 + e
		rl = e - (rh - h4)
		sign := math.Float64bits(rh) & (1 << 63)
		rh, rl = math.Float64frombits(math.Float64bits(rh)^sign), math.Float64frombits(math.Float64bits(rl)^sign)
		neg = sign >> 63
	case ax <= math.MaxFloat64:
		rh, rl, q, neg = sincosDDReduce(ax)
	default:
		return math.NaN(), math.NaN()
	}
	j := int(float64(rh*64) + 0.5)
	t := &sincosDDTable[j]
	s1, s2, c1, c2 := t[0], t[1], t[2], t[3]
	sh, ch := s1+s2, c1+c2                // sin a and cos a rounded to float64
	bh := rh - float64(float64(j)*0x1p-6) // exact: Sterbenz for j >= 1
	bl := rl
	// Veltkamp's split: bh = b1 + b2, each of at most 26 bits, so that the
	// products with s1 and c1 (26 bits) are exact.
	g := float64(bh * 134217729)
	b1 := g - (g - bh)
	b2 := bh - b1
	// z = b², cm = cos b − 1, bzs = sin b − b.
	z := float64(bh*bh) + float64(2*float64(bh*bl))
	cm := float64(z * (float64(z*(float64(z*(-1.0/720))+1.0/24)) - 0.5))
	bzs := float64(float64(bh*z) * (float64(z*(1.0/120-float64(z*(1.0/5040)))) - 1.0/6))
	// sin|r| = s1 + c1·b1 (Fast2Sum: |s1| > 1/64 > |c1·b1| or s1 = 0),
	// then the terms of 2⁻²⁶ relative and less, smallest first.
	cb := float64(c1 * b1)
	u := s1 + cb
	ue := cb - (u - s1)
	s := u + ((((float64(float64(c2*bh)+float64(c1*bl)) + (s2 + float64(c1*b2))) + ue) + float64(ch*bzs)) + float64(sh*cm))
	// cos|r| = c1 − s1·b1 likewise (c1 > 0.7 > |s1·b1|).
	sb := float64(s1 * b1)
	v := c1 - sb
	ve := (c1 - v) - sb
	c := v + ((((-float64(float64(s2*bh)+float64(s1*bl)) + (c2 - float64(s1*b2))) + ve) - float64(sh*bzs)) + float64(ch*cm))
	// sin r = ±s (neg: r < 0), cos r = c; quadrant q: (sin, cos) = (s, c),
	// (c, −s), (−s, −c), (−c, s); sin(−x) = −sin x.
	sbits, cbits := math.Float64bits(s)^neg<<63, math.Float64bits(c)
	swap := (sbits ^ cbits) & -(q & 1)
	sbits, cbits = sbits^swap, cbits^swap
	sin = math.Float64frombits(sbits ^ (q&2)<<62 ^ math.Float64bits(x)&(1<<63))
	cos = math.Float64frombits(cbits ^ ((q+1)&2)<<62)
	return sin, cos
}

// sincosDDReduce returns, for finite ax >= π/4, |r| = rh + rl, q = k mod 4
// and neg = 1 if r < 0, where ax = k·π/2 + r with |r| <= π/4: see
// sincosDD. The fraction of ax·2/π is exact to 2⁻¹³⁷ (the bits of 2/π past
// the 192 used add less than m·2⁻¹⁹⁰), and rh + rl is r to about 2⁻¹⁰⁴
// relative; so r is exact to 2⁻⁷⁰ relative even next to the multiple of
// π/2 nearest to any float64 (|r| > 2⁻⁶¹: Muller's worst case).
func sincosDDReduce(ax float64) (rh, rl float64, q, neg uint64) {
	b := math.Float64bits(ax)
	e := int(b>>52) - 1023 // -1 <= e <= 1023
	m := b&(1<<52-1) | 1<<52
	// Bit i of sincosDDTwoOverPi (from the top of word 0) is the bit of
	// 2/π of weight 2^(63−i): x·2/π mod 4 needs those from 2^(53−e) on.
	i := uint(e + 10)
	w, sh := i>>6, i&63
	t := sincosDDTwoOverPi[w : w+4]
	w0 := t[0]<<sh | t[1]>>(64-sh)
	w1 := t[1]<<sh | t[2]>>(64-sh)
	w2 := t[2]<<sh | t[3]>>(64-sh)
	// m·(w0 w1 w2) mod 2¹⁹²: bit 190 has weight 1.
	h1, l1 := bits.Mul64(m, w1)
	h2, z2 := bits.Mul64(m, w2)
	z1, c := bits.Add64(l1, h2, 0)
	z0 := m*w0 + h1 + c
	q = z0 >> 62
	// Round to nearest: f >= 1/2 takes k+1 and r = (f − 1)·π/2.
	neg = z0 >> 61 & 1
	q = (q + neg) & 3
	mask := -neg
	z0, z1, z2 = (z0^mask)&(1<<62-1), z1^mask, z2^mask
	z2, c = bits.Add64(z2, neg, 0)
	z1, c = bits.Add64(z1, 0, c)
	z0 += c
	// |f| = (z0 z1 z2)·2⁻¹⁹⁰, normalized into hi, lo (hi's top bit set):
	// |f| = (hi·2⁶⁴ + lo)·2^(−62−n) to 2⁻¹⁹⁰, and hi>>11 has weight 2^(−51−n).
	scale := -51
	if z0 == 0 {
		z0, z1, z2 = z1, z2, 0
		scale -= 64
	}
	n := uint(bits.LeadingZeros64(z0))
	hi := z0<<n | z1>>(64-n)
	lo := z1<<n | z2>>(64-n)
	scale -= int(n)
	// |f|/2^scale = fh + fl: fh the top 53 bits, an integer, split into
	// 26 and 27 bits for Dekker's product with sincosDDPi2H + sincosDDPi2M.
	fh := float64(int64(hi >> 11))
	fhh := float64(float64(int64(hi>>38)) * 0x1p27)
	fhl := float64(int64(hi >> 11 & (1<<27 - 1)))
	fl := float64(float64(int64(hi&0x7ff<<42|lo>>22)) * 0x1p-53)
	p := float64(fh * sincosDDPi2)
	pe := float64(float64(float64(fhh*sincosDDPi2H)-p)+float64(fhh*sincosDDPi2M)+float64(fhl*sincosDDPi2H)) + float64(fhl*sincosDDPi2M)
	pt := pe + float64(fh*sincosDDPi2L) + float64(fl*sincosDDPi2)
	rh = p + pt
	rl = pt - (rh - p)
	u := math.Float64frombits(uint64(1023+scale) << 52)
	return float64(rh * u), float64(rl * u), q, neg
}

// π/2 = sincosDDPi2 + sincosDDPi2L to 2⁻¹⁰⁷, each rounded to nearest, and
// sincosDDPi2 = sincosDDPi2H + sincosDDPi2M, 26 and 23 significant bits.
const (
	sincosDDPi2  = 0x1.921fb54442d18p+00
	sincosDDPi2L = 0x1.1a62633145c07p-54
	sincosDDPi2H = 0x1.921fb58p+00
	sincosDDPi2M = -0x1.dde974p-27
)

// π/2 = sincosDDP1 + … + sincosDDP6 to 2⁻¹⁶⁸: P1…P5 carry 22 significant
// bits each (so k·P1…k·P5 are exact for k < 2³¹), P6 53.
const (
	sincosDDP1 = 0x1.921fbp+00
	sincosDDP2 = 0x1.5110bp-22
	sincosDDP3 = 0x1.184698p-44
	sincosDDP4 = 0x1.3198ap-69
	sincosDDP5 = 0x1.701b8p-92
	sincosDDP6 = 0x1.cd129024e088ap-115
)

// sincosDDTwoOverPi holds the bits of 2/π after the binary point, 1216 of
// them, after one word of zeros (the integer part and the bits a reduction
// of x < 2⁵³ reads before it).
var sincosDDTwoOverPi = [20]uint64{
	0x0000000000000000, 0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041,
	0xfe5163abdebbc561, 0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e,
	0xe88235f52ebb4484, 0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b,
	0x1ff897ffde05980f, 0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d,
	0x7527bac7ebe5f17b, 0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab,
}

// sincosDDTable holds sin(j/64) and cos(j/64) for j = 0…50, each as the
// value rounded to 26 bits and the rest rounded to float64: {sin hi, sin
// lo, cos hi, cos lo}.
var sincosDDTable = [51][4]float64{
	{0x0p+00, 0x0p+00, 0x1p+00, 0x0p+00},
	{0x1.fffaaa8p-07, 0x1.77776a76aa4e3p-34, 0x1.fffp-01, 0x1.55549f4a28a28p-29},
	{0x1.ffeaabp-06, -0x1.11179173501bfp-34, 0x1.ffc0018p-01, -0x1.556c16a76a892p-28},
	{0x1.7fdc01p-05, 0x1.97dd454cc8417p-36, 0x1.ff70068p-01, 0x1.fefccf674c4aap-28},
	{0x1.ffaaafp-05, -0x1.12b1254b45b4dp-33, 0x1.ff00158p-01, -0x1.5b059659af8f1p-28},
	{0x1.3facb1p-04, 0x1.68baad4dbcdd6p-31, 0x1.fe7034p-01, 0x1.29ef6ee340bcdp-29},
	{0x1.7f701p-04, 0x1.92a8720d7e169p-31, 0x1.fdc06cp-01, -0x1.0328c96737ea5p-30},
	{0x1.bf1b788p-04, -0x1.4be37142dcf7cp-31, 0x1.fcf0c8p-01, 0x1.d33623d47af0ep-34},
	{0x1.feaaefp-04, -0x1.7911ca35f9658p-32, 0x1.fc0155p-01, 0x1.3eade9b6d1e6ap-28},
	{0x1.1f0d3d8p-03, -0x1.40c5456ef950ap-33, 0x1.faf2228p-01, -0x1.c3b42d0a95671p-29},
	{0x1.3eb313p-03, -0x1.d14c9a5705333p-30, 0x1.f9c3408p-01, 0x1.3e621438b6d61p-28},
	{0x1.5e44fdp-03, -0x1.7b64356f44306p-33, 0x1.f874c3p-01, -0x1.e1130a7194538p-29},
	{0x1.7dc103p-03, -0x1.14352ba952bc7p-33, 0x1.f706bep-01, -0x1.84c791698c80cp-31},
	{0x1.9d252dp-03, 0x1.9d86246710f6p-32, 0x1.f57949p-01, -0x1.804c3470e2f96p-28},
	{0x1.bc6f85p-03, -0x1.239e6698f96a5p-31, 0x1.f3cc7cp-01, 0x1.d9e8b6f6f2e29p-28},
	{0x1.db9e16p-03, -0x1.2968c132e20d7p-33, 0x1.f20073p-01, 0x1.0cc93e6e50106p-30},
	{0x1.faaeed8p-03, -0x1.867544a2bb10ap-30, 0x1.f0154ap-01, -0x1.0422bd161f0b3p-30},
	{0x1.0cd00dp-02, -0x1.0c9bca67ec283p-30, 0x1.ee0b1f8p-01, 0x1.e0788dfc805b9p-28},
	{0x1.1c37d68p-02, -0x1.9ca3c4d73f12p-29, 0x1.ebe215p-01, -0x1.1220b0817cf89p-30},
	{0x1.2b8ddc8p-02, -0x1.e0a5b06eaac76p-29, 0x1.e99a4cp-01, 0x1.d3e6c15bb369dp-28},
	{0x1.3ad1298p-02, -0x1.2c584ffefc2abp-31, 0x1.e733eap-01, 0x1.93d3fa6f5d32bp-33},
	{0x1.4a00c98p-02, 0x1.879e90304774dp-29, 0x1.e4af148p-01, 0x1.95224dd2e6bfap-28},
	{0x1.591bcap-02, -0x1.7429a341c5a2ap-32, 0x1.e20bf48p-01, 0x1.acd6c0f4cfa8ap-29},
	{0x1.6821388p-02, 0x1.1c6bfb44eedcp-29, 0x1.df4ab4p-01, -0x1.4278a278b62ap-29},
	{0x1.7710258p-02, -0x1.44def616ead73p-29, 0x1.dc6b7e8p-01, 0x1.ccac89052cd92p-28},
	{0x1.85e7a1p-02, 0x1.4134a4b1481d3p-29, 0x1.d96e83p-01, -0x1.1cac47004f215p-30},
	{0x1.94a6be8p-02, 0x1.f546c4a58c7bp-30, 0x1.d653f08p-01, -0x1.837f80bb11b22p-30},
	{0x1.a34c92p-02, -0x1.9d799b0d18872p-29, 0x1.d31bf9p-01, -0x1.3941fce19f22dp-28},
	{0x1.b1d8308p-02, -0x1.66f4f4b5c4859p-29, 0x1.cfc6cf8p-01, 0x1.2956cfb16b6aap-28},
	{0x1.c048b18p-02, -0x1.3afd737300cc5p-32, 0x1.cc54aap-01, 0x1.594b970a770b1p-28},
	{0x1.ce9d2ep-02, 0x1.ea528f6d0375fp-29, 0x1.c8c5bf8p-01, 0x1.9c35086acf468p-30},
	{0x1.dcd4c18p-02, -0x1.66b1b2de56724p-29, 0x1.c51a488p-01, 0x1.c58baef72225ep-28},
	{0x1.eaee878p-02, -0x1.da7d080bc4da2p-29, 0x1.c152808p-01, -0x1.a482b06248445p-29},
	{0x1.f8e99e8p-02, -0x1.2a86d1cc4d5eap-31, 0x1.bd6ea3p-01, 0x1.0294f52637799p-29},
	{0x1.0362938p-01, 0x1.c69954b49cca2p-29, 0x1.b96eefp-01, -0x1.4ef7e3eba5c34p-30},
	{0x1.0a4022p-01, -0x1.61efff5bd90e8p-29, 0x1.b553a4p-01, 0x1.0c104e0c7fbcap-29},
	{0x1.110d0c8p-01, -0x1.a4b1e244dcecdp-28, 0x1.b11d04p-01, 0x1.62a4c623baac4p-29},
	{0x1.17c8e6p-01, -0x1.a2249fd94351ep-30, 0x1.accb528p-01, -0x1.09621a9c1255dp-29},
	{0x1.1e7343p-01, 0x1.1b2ba6122a3fap-28, 0x1.a85ed4p-01, 0x1.b9f0168cdf032p-28},
	{0x1.250bb9p-01, 0x1.bc45dd9ea3d02p-28, 0x1.a3d7dp-01, 0x1.a95ee752e48a2p-28},
	{0x1.2b91de8p-01, 0x1.44210ec0b91c5p-28, 0x1.9f368fp-01, -0x1.37683da3a4019p-28},
	{0x1.32054bp-01, 0x1.48bc4f7dad082p-29, 0x1.9a7b5ap-01, 0x1.b5328a2e459fap-28},
	{0x1.3865978p-01, -0x1.d4ebea910fadbp-28, 0x1.95a67ep-01, 0x1.963f97a0812efp-34},
	{0x1.3eb25dp-01, 0x1.b66a9cf906a3cp-28, 0x1.90b8478p-01, 0x1.376bdb780a77bp-31},
	{0x1.44eb38p-01, 0x1.cf386ab04a4f8p-29, 0x1.8bb1058p-01, 0x1.2ee48030c7c08p-28},
	{0x1.4b0fc48p-01, -0x1.55489efef25fbp-29, 0x1.869109p-01, -0x1.442c9cecc7002p-28},
	{0x1.511fap-01, -0x1.4265722b81d0cp-28, 0x1.8158a3p-01, 0x1.916d5ce21746fp-29},
	{0x1.571a698p-01, -0x1.92a64cf1bde26p-29, 0x1.7c0828p-01, -0x1.ec356238e7adbp-30},
	{0x1.5cffc18p-01, -0x1.4070f29a4d324p-29, 0x1.769fec8p-01, -0x1.aadee11827d5dp-29},
	{0x1.62cf498p-01, 0x1.21ac7884899ebp-29, 0x1.712047p-01, -0x1.62261ebda4f5bp-31},
	{0x1.6888a5p-01, -0x1.ecb4d15adf4dep-29, 0x1.6b898f8p-01, 0x1.4f7dae915ac78p-28},
}
