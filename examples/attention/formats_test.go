package attention

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ropegen/ropegen/generated/rope128"
	"github.com/ropegen/ropegen/verify/codec"
	"github.com/x448/float16"
)

// The cost of each cache format to attention: TestCacheFormatScores stores
// the rotated keys of a decoding context in every cache type the
// repository ships and compares the attention scores computed from the
// keys read back with those computed from the float32 keys.
//
// The keys are stored and read back with verify/codec, the scalar reference
// of every cache format, whose bits every backend of every generated
// package reproduces (verify's cache checks, run by each package's tests);
// so the numbers are those of any package's ApplyStore and Load.
//
// The error measured is that of a score s_j = q·k_j/√HeadDim, q the
// rotated query, k_j the rotated key of cached token j, against the same
// score with the float32 key: Δ_j = |q·(k̃_j − k_j)|/√HeadDim, k̃_j the key
// read back. Its bound, per score, is
//
//	Δ_j ≤ (Σ_i |q_i|·δ(k_j,i) + HeadDim·2⁻⁵²·Σ_i |q_i|·(|k_j,i| + |k̃_j,i|))/√HeadDim · (1 + 2⁻⁴⁰),
//
// δ(x) the largest error the format's definition allows for the value x
// (formatErr); the second sum covers the float64 evaluation of the two
// scores (products of float32 values are exact in float64, HeadDim
// additions of relative error 2⁻⁵³ each), the factor the rounding of the
// bound itself. The test asserts every score within its bound, an f32
// score exactly the float32 one, and that the bound is not vacuous (for
// the other formats, the largest Δ at least a fifth of the largest bound:
// the error of rounding to nearest spreads over the values it may take),
// and logs (go test -v) a markdown table: per format the bytes a value
// takes, the largest and root-mean-square Δ, the largest bound, and the
// largest change of an attention output value (the softmax of the scores
// times the float32 values).

// cacheFormatNames are the cache types the repository ships, as -out-dtype
// spells them.
var cacheFormatNames = []string{"f32", "f16", "bf16", "e4m3", "q8_0", "e5m2", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4", "int8_per_token_head", "nvfp4_gs"}

// formatErr returns δ for every value of keys (rows of HeadDim values) in
// format f with tensor scale s: the largest distance between a value x and
// what f stores for it and reads back, from f's definition.
//
//   - f16, bf16: round to nearest, half the spacing of the binade of |x|
//     (|x| is far from overflow here).
//   - e4m3, e5m2 with scale s: the byte is the nearest code of y = fl(x/s)
//     and the value read back fl(code·s). With |y − x/s| ≤ 2⁻²⁴·|x/s| and
//     |y| ≤ the largest finite code (s = amax/max), the code is within half
//     the code spacing at |y|'s binade, h(|y|), of y; with the two float32
//     roundings, δ = s·h(|y|)·(1 + 2⁻²⁴) plus 2⁻²⁴·|x| plus
//     2⁻²⁴·(|x| + s·h(|y|)).
//   - q8_0, per block of 32: d = fl(amax/127), id = fl(1/d), q =
//     round(fl(x·id)), d stored as d₁₆ = f16(d), read back fl(q·d₁₆). Then
//     |fl(x·id) − x/d| ≤ 127·2⁻²² = η, |q − x/d| ≤ ½ + η, and
//     |q·d₁₆ − x| ≤ d·(½ + η) + 127·|d₁₆ − d|, plus 127·d₁₆·2⁻²⁴ for the
//     product's rounding.
//   - q4_0, q5_0 (L = 8, 16), per block of 32: d = fl(max/−L), max the
//     block's first value of largest magnitude, id = fl(1/d), v = fl(x·id),
//     q = min(2L−1, trunc(fl(v + L + ½))), read back fl((q−L)·d₁₆). With
//     |x/d| ≤ L, |v − x/d| ≤ L·2⁻²² and the sum's rounding at most
//     (2L+1)·2⁻²⁴ (η, their sum), q − L is x/d rounded, |q − L − x/d| ≤
//     ½ + η, except where the clamp may act (x/d ≥ L − ½ − η: the value
//     of sign opposite to max), where it is at most 1 + η. Then
//     |(q−L)·d₁₆ − x| ≤ |d|·(½ + η or 1 + η) + L·|d₁₆ − d| + L·|d₁₆|·2⁻²⁴.
//   - q4_1, q5_1 (L = 15, 31), per block: d = fl(fl(max − min)/L), id =
//     fl(1/d), v = fl(fl(x − min)·id), q = min(L, trunc(fl(v + ½))), m₁₆ =
//     f16(min), read back fl(fl(q·d₁₆) + m₁₆). (x − min)/d ≤ L(1 + 2⁻²²),
//     so the clamp never acts and |q − (x−min)/d| ≤ ½ + η, η = L·2⁻²² +
//     (L+1)·2⁻²⁴; then |q·d₁₆ + m₁₆ − x| ≤ d·(½ + η) + L·|d₁₆ − d| +
//     |m₁₆ − min|, plus 2⁻²⁴·(2L·d₁₆ + |m₁₆|) for the two roundings.
//   - mxfp4, per block of 32: e = max(0, ⌊log2f(amax)⌋ − 2 + 127), d =
//     2^(e−128), q the first index of least fl(|fl(k_q·d) − x|) over
//     k = 0, ±1, ±2, ±3, ±4, ±6, ±8, ±12 (twice E2M1), read back fl(k_q·d).
//     d is a power of two and k small, so k·d is exact, and so is
//     |k·d − x| for the grid points next to x (Sterbenz: neighbours from d
//     on are within a factor of 2 of each other; between 0 and d the
//     error against 0 is |x|, and for |x| < d/2 the one against ±d is
//     fl(d − |x|) ≥ d/2 > |x|); a farther point is at least d farther, so
//     q is a nearest point. ⌊log2f(amax)⌋ is
//     ⌊log2 amax⌋ or, where log2f rounds up below a power of two, one
//     more, so amax < 16d. Then x is within half a grid step of k_q·d:
//     d/2 below 2d (the grid's subnormal part, 0 and ±1), and in the
//     binade [2^j·d, 2^(j+1)·d) (j = 1, 2, 3) half the step 2^(j−1)·d,
//     at most |x|/4; from 12d on x is clamped to 12d, less than |x|/4 away
//     since |x| < 16d. So δ = max(|x|/4, d/2), E2M1's half relative step
//     with its absolute floor.
//   - iq4_nl, per block of 32: d₀ = fl(max/−127), max the block's first
//     value of largest magnitude, id = fl(1/d₀), L the index of a grid
//     point k_L of kvalues_iq4nl next to t = fl(id·x) (the nearer, a tie
//     going up; 15, k = 113, from 113 on, as t ≤ 127(1 + 2⁻²²)), then d
//     the least-squares scale of those indices, stored as f16 d₁₆ (read
//     here from the block: the bound holds for any d₁₆), read back
//     fl(d₁₆·k_L). |t − x/d₀| ≤ 127·2⁻²² = η, so |k_L − x/d₀| ≤ g(t) + η,
//     g(t) half the grid's gap around t (from 113 on, t − 113), and
//     |d₁₆·k_L − x| ≤ |d₀|·(g(t) + η) + 127·|d₁₆ − d₀|, plus
//     127·|d₁₆|·2⁻²⁴ for the product's rounding. (For t within η of a
//     midpoint the other neighbour may be taken, at most g(t) + η away.)
//   - nvfp4, per block of 64, per sub-block of 16: S = ue4m3(fl(amax/6)),
//     its 3 mantissa bits rounded half up, D = S/2 (read here from the
//     block; a normal S below 448 is asserted, the range the bound is
//     derived for), q the first index of least fl(|fl(k_q·D) − x|) over
//     twice E2M1 as mxfp4's, read back fl(k_q·D). S ≥ (amax/6)(1 − 2⁻⁴), so
//     |x|/D ≤ 12/(1 − 2⁻⁴) < 12.8; k·D is exact (S has 4 significant bits,
//     k at most 4), the distances are exact or rounded by at most
//     2⁻²⁴·12.8·D, so q is a nearest point but for a near-tie of that
//     size; then as mxfp4 (a value past 12D at most 0.8D ≤ |x|/4 away), δ =
//     max(|x|/4, D/2)·(1 + 2⁻²⁰).
//   - int8_per_token_head, per head of HeadDim: s = max(fl(amax/127),
//     fl32(1e-6)), inv = fl(1/s), v = fl(x·inv), q = trunc(fl(v ± ½)) (±
//     by v's sign), read back fl(q·s). s ≥ (amax/127)(1 − 2⁻²⁴), so
//     |x/s| < 127(1 + 2⁻²³) and |v − x/s| ≤ 127·2⁻²² = η (two roundings);
//     the sum v ± ½ (below 128) rounds by at most 2⁻¹⁷, which may carry it
//     across an integer, so |q − v| ≤ ½ + 2⁻¹⁷; then |q·s − x| is at most
//     s·(½ + η + 2⁻¹⁷), plus 127·s·2⁻²⁴ for the product's rounding.
//   - nvfp4_gs with tensor scale g (NVIDIA's recipe here, g =
//     448·6/amax over the stored keys), per block of 16: S =
//     e4m3(fl(g·fl(amax_b·fl32(1/6)))), D = fl(e4m3(S)/g) (S read here
//     from the block; a normal S is asserted, the range the bound is
//     derived for), o = fl(1/fl(e4m3(S)·fl(1/g))), c the E2M1 code of v =
//     fl(x·o) (nearest even on 0, ½, 1, 1½, 2, 3, 4, 6, saturating at 6),
//     read back fl(e2m1(c)·D). o is 1/D within 3·2⁻²⁴ and v is x/D within
//     5·2⁻²⁴ relative; the recipe keeps g·amax_b/6 ≤ 448(1 + 2⁻²²), so S ≥
//     (g·amax_b/6)(1 − 2⁻⁴) (e4m3's round to nearest on 3 mantissa bits)
//     and |v| ≤ 6.4. The code is within half the grid's gap of v: ¼ below
//     2, ½ from 2 to 4 (≤ |v|/4), 1 from 4 to 6 (≤ |v|/4), v − 6 ≤ 0.4 ≤
//     |v|/4 past 6; v's error moves it by at most 6.4·5·2⁻²⁴, and the
//     product's rounding adds 6·D·2⁻²⁴. So δ = max(|x|/4, D/4)·(1 + 2⁻¹⁶),
//     E2M1's half relative step with its absolute floor D/4.
func formatErr(name string, keys []float32, s float32) []float64 {
	d := make([]float64, len(keys))
	switch name {
	case "f32":
	case "f16", "bf16":
		man := map[string]int{"f16": 10, "bf16": 7}[name]
		minExp := map[string]int{"f16": -14, "bf16": -126}[name]
		for i, x := range keys {
			e := max(math.Ilogb(math.Abs(float64(x))), minExp)
			if x == 0 {
				e = minExp
			}
			d[i] = math.Ldexp(1, e-man-1)
		}
	case "e4m3", "e5m2":
		man := map[string]int{"e4m3": 3, "e5m2": 2}[name]
		minExp := map[string]int{"e4m3": -6, "e5m2": -14}[name]
		for i, x := range keys {
			y := math.Abs(float64(x)/float64(s)) * (1 + 0x1p-24)
			e := minExp
			if y != 0 {
				e = max(math.Ilogb(y), minExp)
			}
			h := float64(s) * math.Ldexp(1, e-man-1)
			ax := math.Abs(float64(x))
			d[i] = h*(1+0x1p-24) + 0x1p-24*ax + 0x1p-24*(ax+h)
		}
	case "q8_0":
		for b := 0; b < len(keys); b += 32 {
			var amax float32
			for _, x := range keys[b : b+32] {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			dd := amax / 127
			d16 := float64(float16.Fromfloat32(dd).Float32())
			eta := 127 * 0x1p-22
			e := float64(dd)*(0.5+eta) + 127*math.Abs(d16-float64(dd)) + 127*d16*0x1p-24
			for i := b; i < b+32; i++ {
				d[i] = e
			}
		}
	case "q4_0", "q5_0":
		L := map[string]float64{"q4_0": 8, "q5_0": 16}[name]
		eta := L*0x1p-22 + (2*L+1)*0x1p-24
		for b := 0; b < len(keys); b += 32 {
			var amax, mx float32
			for _, x := range keys[b : b+32] {
				if a := float32(math.Abs(float64(x))); a > amax {
					amax, mx = a, x
				}
			}
			dd := float64(mx / float32(-L))
			d16 := float64(float16.Fromfloat32(float32(dd)).Float32())
			rest := L*math.Abs(d16-dd) + L*math.Abs(d16)*0x1p-24
			for i := b; i < b+32; i++ {
				step := 0.5 + eta
				if dd != 0 && float64(keys[i])/dd >= L-0.5-eta {
					step = 1 + eta
				}
				d[i] = math.Abs(dd)*step + rest
			}
		}
	case "q4_1", "q5_1":
		L := map[string]float64{"q4_1": 15, "q5_1": 31}[name]
		eta := L*0x1p-22 + (L+1)*0x1p-24
		for b := 0; b < len(keys); b += 32 {
			lo, hi := keys[b], keys[b]
			for _, x := range keys[b : b+32] {
				lo, hi = min(lo, x), max(hi, x)
			}
			dd := float64((hi - lo) / float32(L))
			d16 := float64(float16.Fromfloat32(float32(dd)).Float32())
			m16 := float64(float16.Fromfloat32(lo).Float32())
			e := dd*(0.5+eta) + L*math.Abs(d16-dd) + math.Abs(m16-float64(lo)) + 0x1p-24*(2*L*d16+math.Abs(m16))
			for i := b; i < b+32; i++ {
				d[i] = e
			}
		}
	case "mxfp4":
		for b := 0; b < len(keys); b += 32 {
			var amax float32
			for _, x := range keys[b : b+32] {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			var dd float64
			if amax > 0 {
				_, exp := math.Frexp(float64(amax)) // ⌊log2 amax⌋ = exp − 1
				k := exp - 1
				if float32(math.Log2(float64(amax))) >= float32(k+1) { // log2f rounds up to the next integer
					k++
				}
				dd = math.Ldexp(1, max(0, k-2+127)-128)
			} else {
				dd = 0x1p-128
			}
			for i := b; i < b+32; i++ {
				d[i] = max(math.Abs(float64(keys[i]))/4, dd/2)
			}
		}
	case "iq4_nl":
		grid := []float64{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
		enc := make([]byte, 18)
		for b := 0; b < len(keys); b += 32 {
			var amax, mx float32
			for _, x := range keys[b : b+32] {
				if a := float32(math.Abs(float64(x))); a > amax {
					amax, mx = a, x
				}
			}
			d0 := float64(mx / -127)
			id := 1 / float32(d0)
			codec.IQ4NL.Encode(enc, keys[b:b+32], 1)
			d16 := float64(float16.Frombits(uint16(enc[0]) | uint16(enc[1])<<8).Float32())
			eta := 127 * 0x1p-22
			for i := b; i < b+32; i++ {
				t := float64(id * keys[i])
				g := math.Max(t-113, 0)
				for k := 0; k+1 < len(grid); k++ {
					if t >= grid[k] && t <= grid[k+1] {
						g = (grid[k+1] - grid[k]) / 2
					}
				}
				d[i] = math.Abs(d0)*(g+eta) + 127*math.Abs(d16-d0) + 127*math.Abs(d16)*0x1p-24
			}
		}
	case "nvfp4":
		enc := make([]byte, 36)
		for b := 0; b < len(keys); b += 64 {
			codec.NVFP4.Encode(enc, keys[b:b+64], 1)
			for sb := range 4 {
				e, m := int(enc[sb]>>3&0xf), float64(enc[sb]&7)
				if e == 0 || enc[sb] >= 0x7e {
					panic(fmt.Sprintf("formatErr: nvfp4 scale byte %#02x of values %d…: the bound is derived for a normal UE4M3 scale below 448", enc[sb], b+16*sb))
				}
				dd := math.Ldexp(1+m/8, e-7) / 2
				for i := b + 16*sb; i < b+16*sb+16; i++ {
					d[i] = max(math.Abs(float64(keys[i]))/4, dd/2) * (1 + 0x1p-20)
				}
			}
		}
	case "int8_per_token_head":
		for b := 0; b < len(keys); b += HeadDim {
			var amax float32
			for _, x := range keys[b : b+HeadDim] {
				amax = max(amax, float32(math.Abs(float64(x))))
			}
			s := float64(max(amax/127, float32(1e-6)))
			e := s*(0.5+127*0x1p-22+0x1p-17) + 127*s*0x1p-24
			for i := b; i < b+HeadDim; i++ {
				d[i] = e
			}
		}
	case "nvfp4_gs":
		enc := make([]byte, 9)
		for b := 0; b < len(keys); b += 16 {
			codec.NVFP4GS.Encode(enc, keys[b:b+16], s)
			if enc[8]>>3&0xf == 0 || enc[8]&0x7f == 0x7f {
				panic(fmt.Sprintf("formatErr: nvfp4_gs scale byte %#02x of values %d…: the bound is derived for a normal e4m3 scale", enc[8], b))
			}
			e, m := int(enc[8]>>3&0xf), float64(enc[8]&7)
			dd := float64(float32(math.Ldexp(1+m/8, e-7)) / s) // fl(e4m3(S)/g)
			for i := b; i < b+16; i++ {
				d[i] = max(math.Abs(float64(keys[i]))/4, dd/4) * (1 + 0x1p-16)
			}
		}
	default:
		panic("formatErr: no bound for " + name)
	}
	return d
}

// TestCacheFormatScores measures, for every cache type, the error of the
// attention scores of a decoding step whose keys come back from that cache
// type (see the comment above formatErr's test for the bound).
func TestCacheFormatScores(t *testing.T) {
	const heads, tokens, queries = 4, 512, 16
	r := rand.New(rand.NewPCG(31, 5))
	// Keys, queries and values as the package's other tests draw them
	// (randVec: standard deviation 1, one value in 32 eight times larger,
	// as activations have); keys at positions 0…tokens−1, queries at the
	// last positions of the context, as decoding steps make them.
	keys := make([]float32, tokens*heads*HeadDim)
	for j := range tokens {
		k := randVec(r, heads*HeadDim, 1)
		rope128.Rotate(k, j)
		copy(keys[j*heads*HeadDim:], k)
	}
	qs := make([][]float32, queries)
	for n := range qs {
		qs[n] = randVec(r, heads*HeadDim, 1)
		rope128.Rotate(qs[n], tokens-queries+n)
	}
	vals := randVec(r, tokens*heads*HeadDim, 1)
	var amax float64
	for _, x := range keys {
		amax = max(amax, math.Abs(float64(x)))
	}
	c := 1 / math.Sqrt(HeadDim)
	ref := attendAll(qs, keys, vals, heads, tokens, c)
	var sq float64
	for _, q := range qs {
		for j := range tokens {
			for h := range heads {
				x := c * dotF32(q[h*HeadDim:][:HeadDim], keys[(j*heads+h)*HeadDim:][:HeadDim])
				sq += x * x
			}
		}
	}
	t.Logf("%d scores, root mean square %.3g; key amax %.3g", queries*tokens*heads, math.Sqrt(sq/float64(queries*tokens*heads)), amax)
	t.Logf("| format | bytes per value | score error max | score error rms | bound max | output error max |")
	t.Logf("|---|---|---|---|---|---|")

	for _, name := range cacheFormatNames {
		formatScores(t, name, false, qs, keys, vals, ref, heads, tokens)
	}
	for _, name := range cacheFormatNames[1:] {
		formatScores(t, name, true, qs, keys, vals, ref, heads, tokens)
	}
}

// formatScores stores keys in the cache type name, with the Hadamard
// option or not, reads them back and checks and logs the scores of the
// queries qs against them, as TestCacheFormatScores says; ref is the
// attention output with the float32 keys. With the option every head of
// the keys and queries is multiplied by H (verify/codec's Hadamard, whose
// bits every backend's is) before the keys are stored and the scores
// taken, as a Hadamard-rotated cache and Prep do. Exactly, (Hq)·(Hk) =
// q·k; the computed Ĥq and Ĥk are each within ε = γ₉·‖·‖₂ + 2⁻¹⁵⁰ of
// the exact ones per value (docs/contract.md §15, blocks of 128, k = 7),
// so the bound gains ε_k·Σ|Ĥq_i| + ε_q·Σ|Ĥk_i| + HeadDim·ε_q·ε_k
// (Ĥq·Ĥk − Hq·Hk = Ĥq·b + a·Ĥk − a·b for the errors a, b), and δ is the
// format's for the rotated key.
func formatScores(t *testing.T, name string, hadamard bool, qs [][]float32, keys, vals []float32, ref []float64, heads, tokens int) {
	c := 1 / math.Sqrt(HeadDim)
	label := name
	stored, rq := keys, qs
	if hadamard {
		label += " + Hadamard"
		stored = rotatedHeads(keys)
		rq = make([][]float32, len(qs))
		for n, q := range qs {
			rq[n] = rotatedHeads(q)
		}
	}
	var amax float64
	for _, x := range stored {
		amax = max(amax, math.Abs(float64(x)))
	}
	f, ok := codec.Lookup(name)
	if !ok {
		t.Fatalf("verify/codec has no format %q", name)
	}
	// The per-tensor scale of e4m3 and e5m2: amax over the stored keys
	// over the largest finite code, as vLLM calibrates a KV cache scale.
	var s float32 = 1
	switch name {
	case "e4m3":
		s = float32(amax / 448)
	case "e5m2":
		s = float32(amax / 57344)
	case "nvfp4_gs": // NVIDIA's global scale: the tensor's amax onto 448·6
		s = float32(448 * 6 / amax)
	}
	enc := make([]byte, f.Size(len(stored)))
	back := make([]float32, len(stored))
	if f.Scale == codec.TokenHeadScale { // a scale computed per head, kept beside it
		for b := 0; b < len(stored); b += HeadDim {
			hs := f.Encode(enc[b:b+HeadDim], stored[b:b+HeadDim], 0)
			f.Decode(back[b:b+HeadDim], enc[b:b+HeadDim], hs)
		}
	} else {
		f.Encode(enc, stored, s)
		f.Decode(back, enc, s)
	}
	delta := formatErr(name, stored, s)
	const gamma = 9 * 0x1p-24 / (1 - 9*0x1p-24) // γ₉: blocks of 2⁷
	norm := func(x []float32) float64 {
		var n float64
		for _, v := range x {
			n += float64(v) * float64(v)
		}
		return math.Sqrt(n)
	}

	var maxErr, sumSq, maxBound float64
	n := 0
	for qi, q := range qs {
		for j := range tokens {
			for h := range heads {
				k := keys[(j*heads+h)*HeadDim:][:HeadDim]
				ks := stored[(j*heads+h)*HeadDim:][:HeadDim]
				kb := back[(j*heads+h)*HeadDim:][:HeadDim]
				dl := delta[(j*heads+h)*HeadDim:][:HeadDim]
				qh, qr := q[h*HeadDim:][:HeadDim], rq[qi][h*HeadDim:][:HeadDim]
				got, want := c*dotF32(qr, kb), c*dotF32(qh, k)
				var b, mag, sq, sk float64
				for i := range HeadDim {
					aq := math.Abs(float64(qr[i]))
					b += aq * dl[i]
					mag += aq*(math.Abs(float64(ks[i]))+math.Abs(float64(kb[i]))) + math.Abs(float64(qh[i])*float64(k[i]))
					sq += aq
					sk += math.Abs(float64(ks[i]))
				}
				if hadamard {
					eq, ek := gamma*norm(qh)+0x1p-150, gamma*norm(k)+0x1p-150
					b += ek*sq + eq*sk + HeadDim*eq*ek
				}
				b = c * (b + HeadDim*0x1p-52*mag) * (1 + 0x1p-40)
				e := math.Abs(got - want)
				if !(e <= b) {
					t.Fatalf("%s: score of token %d, head %d: error %g: want at most the bound %g", label, j, h, e, b)
				}
				maxErr, maxBound = max(maxErr, e), max(maxBound, b)
				sumSq += e * e
				n++
			}
		}
	}
	if name == "f32" && maxErr != 0 {
		t.Fatalf("f32: score error %g: want 0, the keys stored as they are", maxErr)
	}
	// The plain rows show each format's δ not vacuous; a Hadamard row's
	// bound is the same δ on the rotated keys (and its ε terms, some 10⁻⁶
	// of it), whose values H spreads evenly over a head, so the largest
	// error sits further below the sum of every value's largest error
	// (a seventh to an eighth here): not asserted again.
	if name != "f32" && !hadamard && maxErr < maxBound/5 {
		t.Errorf("%s: largest score error %g is under a fifth of the largest bound %g: the bound is vacuous", label, maxErr, maxBound)
	}
	out := attendAll(rq, back, vals, heads, tokens, c)
	var outErr float64
	for i := range out {
		outErr = max(outErr, math.Abs(out[i]-ref[i]))
	}
	t.Logf("| %s | %s | %.3g | %.3g | %.3g | %.3g |",
		label, bytesPerValue(f), maxErr, math.Sqrt(sumSq/float64(n)), maxBound, outErr)
}

// rotatedHeads returns x with every head of HeadDim values multiplied by
// H (verify/codec's Hadamard).
func rotatedHeads(x []float32) []float32 {
	y := append([]float32(nil), x...)
	for h := 0; h < len(y); h += HeadDim {
		codec.Hadamard(y[h : h+HeadDim])
	}
	return y
}

// bytesPerValue is f's storage per value, its tensor scale not counted.
func bytesPerValue(f codec.Format) string {
	if f.Scale == codec.TokenHeadScale { // and a float32 scale a head
		return fmt.Sprintf("%.4g", float64(f.Bytes)/float64(f.Block)+4.0/HeadDim)
	}
	return fmt.Sprintf("%.4g", float64(f.Bytes)/float64(f.Block))
}

// attendAll returns the softmax attention outputs of every query of qs
// over all tokens of keys (rotated, [token][head][HeadDim]) and vals, in
// float64, [query][head][HeadDim].
func attendAll(qs [][]float32, keys, vals []float32, heads, tokens int, c float64) []float64 {
	out := make([]float64, len(qs)*heads*HeadDim)
	s := make([]float64, tokens)
	for n, q := range qs {
		for h := range heads {
			m := math.Inf(-1)
			for j := range tokens {
				s[j] = c * dotF32(q[h*HeadDim:][:HeadDim], keys[(j*heads+h)*HeadDim:][:HeadDim])
				m = max(m, s[j])
			}
			var z float64
			for j := range s {
				s[j] = math.Exp(s[j] - m)
				z += s[j]
			}
			o := out[(n*heads+h)*HeadDim:][:HeadDim]
			for j := range tokens {
				w := s[j] / z
				for i, v := range vals[(j*heads+h)*HeadDim:][:HeadDim] {
					o[i] += w * float64(v)
				}
			}
		}
	}
	return out
}
