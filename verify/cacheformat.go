package verify

import (
	"encoding/binary"
	"math"
	"sort"

	refcodec "github.com/ropegen/ropegen/verify/codec"
	"github.com/x448/float16"
)

// CacheFormat is the scalar reference of one KV cache format
// (docs/contract.md §11): how a head's float32 values become the bytes a
// cache stores, and back. It is written from the format's definition and
// apart from the code of any generated package, and it is all that the
// cache checks know of a format: the element the forms take, the layout of
// a cached head, the bits every store must write, what every Load must
// read, how far a context shift may move a value, and whether a scale
// comes with each call. A format is one CacheFormat in cacheFormats. Its
// methods use only built-in types, so that a package of formats can
// implement it without importing verify.
type CacheFormat interface {
	// Name is the format's -out-dtype name: "f16", "q8_0".
	Name() string
	// Block returns how many values one block holds and the bytes it
	// takes: 1 value in 2 bytes for f16, 32 values in 34 bytes for q8_0.
	// A head of HeadDim values is HeadDim/values blocks. A format of one
	// value per block is stored as elements of that many bytes (f32 as
	// float32, f16 and bf16 as uint16, e4m3 as uint8); a format of larger
	// blocks as bytes.
	Block() (values, bytes int)
	// Scales says where the format keeps the scales its values are divided
	// by, if anywhere outside its blocks.
	Scales() ScalePlace
	// Encode writes the values of src, a whole number of blocks, into dst,
	// their blocks' bytes, each value divided by scale first (ScalePerTensor:
	// e4m3, e5m2; nvfp4_gs takes it as its tensor scale g, a multiplier;
	// scale is 1 for the other places).
	Encode(dst []byte, src []float32, scale float32)
	// Decode writes the values of the blocks of src into dst, len(dst)
	// values, each times scale. Any bytes decode, without a panic.
	Decode(dst []float32, src []byte, scale float32)
	// Same reports whether two encodings a and b of one block hold the same
	// values: the same bits, but that a NaN matches a NaN whatever their
	// payloads (which may differ from one code path to another).
	Same(a, b []byte) bool
	// Spacing bounds the distance between two neighbouring decoded values
	// at magnitude v with scale, where the blocks involved decode to values
	// among around (a block format's step follows its block's largest
	// value, whatever v is: callers ask it once a head): the unit of the bound of the checks that are not bit for
	// bit, such as Shift against ApplyStore at the shifted position.
	Spacing(v float64, scale float32, around ...[]float32) float64
}

// ScalePlace is where a cache format keeps the scales its values are
// divided by before they are encoded. It is a string, so that a package of
// formats can implement CacheFormat without importing verify (which
// imports it): its Scales returns one of these values.
type ScalePlace = string

const (
	// ScaleNone: no scale (f32, f16, bf16).
	ScaleNone ScalePlace = "none"
	// ScaleInBlock: every block carries its own (q8_0 and ggml's other
	// block formats).
	ScaleInBlock ScalePlace = "block"
	// ScalePerTensor: one float32 for the whole cache, which every call
	// passes beside the cache (e4m3, e5m2).
	ScalePerTensor ScalePlace = "tensor"
	// ScalePerHead: one float32 per KV head, beside the cache.
	ScalePerHead ScalePlace = "head"
	// ScalePerTokenHead: one float32 per cache row and KV head, beside the
	// cache.
	ScalePerTokenHead ScalePlace = "token-head"
)

// cacheFormats are the formats the cache checks know, by name.
var cacheFormats = map[string]CacheFormat{
	"f32":                 f32Format{},
	"f16":                 f16Format{},
	"bf16":                bf16Format{},
	"e4m3":                e4m3Format{},
	"q8_0":                q8Format{},
	"e5m2":                e5m2Format{},
	"q4_0":                ggmlFormat{refcodec.Q4_0, 1, 8, false},
	"q4_1":                ggmlFormat{refcodec.Q4_1, 2, 15, true},
	"q5_0":                ggmlFormat{refcodec.Q5_0, 1, 16, false},
	"q5_1":                ggmlFormat{refcodec.Q5_1, 2, 31, true},
	"mxfp4":               mxfp4Format{ggmlFormat{f: refcodec.MXFP4}},
	"iq4_nl":              iq4nlFormat{ggmlFormat{f: refcodec.IQ4NL, halves: 1}},
	"nvfp4":               nvfp4Format{ggmlFormat{f: refcodec.NVFP4}},
	"int8_per_token_head": int8Format{},
	"nvfp4_gs":            nvfp4gsFormat{},
}

// headBlock is implemented by a format whose block is a whole head
// (int8_per_token_head, its one scale covering the head): HeadBlock is the
// block's values and bytes at a head of headDim values, which the cache
// checks use in place of Block.
type headBlock interface {
	HeadBlock(headDim int) (values, bytes int)
}

// hardBlocks is implemented by a block format with inputs of its own that
// its rounding is easy to get wrong on; checkBlocks stores them beside the
// classes every block format gets.
type hardBlocks interface {
	// HardBlock fills x, one block, with a hard case drawn from seed, and
	// names its class ("tied").
	HardBlock(x []float32, seed uint64) (class string)
}

// ---- one value per element ---------------------------------------------------------

// ieee16 is a per-value format of 16-bit codes: Encode and Decode of one
// value, NaN-ness of a code.
type ieee16 struct {
	enc func(float32) uint16
	dec func(uint16) float32
	f   format
}

func (q ieee16) encode(dst []byte, src []float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint16(dst[2*i:], q.enc(v))
	}
}

func (q ieee16) decode(dst []float32, src []byte) {
	for i := range dst {
		dst[i] = q.dec(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

func (q ieee16) same(a, b []byte) bool {
	x, y := binary.LittleEndian.Uint16(a), binary.LittleEndian.Uint16(b)
	return x == y || q.f.isNaN(uint64(x)) && q.f.isNaN(uint64(y))
}

// f32Format is float32 values as they are.
type f32Format struct{}

func (f32Format) Name() string               { return "f32" }
func (f32Format) Block() (values, bytes int) { return 1, 4 }
func (f32Format) Scales() ScalePlace         { return ScaleNone }
func (f32Format) Encode(dst []byte, src []float32, _ float32) {
	for i, v := range src {
		binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
	}
}
func (f32Format) Decode(dst []float32, src []byte, _ float32) {
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
	}
}
func (f32Format) Same(a, b []byte) bool {
	x, y := binary.LittleEndian.Uint32(a), binary.LittleEndian.Uint32(b)
	return x == y || formats[kF32].isNaN(uint64(x)) && formats[kF32].isNaN(uint64(y))
}
func (f32Format) Spacing(float64, float32, ...[]float32) float64 { return 0 }

// f16Format is IEEE binary16, rounded to nearest even by
// github.com/x448/float16.
type f16Format struct{}

var f16Codec = ieee16{
	enc: func(v float32) uint16 { return float16.Fromfloat32(v).Bits() },
	dec: func(h uint16) float32 { return float16.Frombits(h).Float32() },
	f:   formats[kF16],
}

func (f16Format) Name() string                                { return "f16" }
func (f16Format) Block() (values, bytes int)                  { return 1, 2 }
func (f16Format) Scales() ScalePlace                          { return ScaleNone }
func (f16Format) Encode(dst []byte, src []float32, _ float32) { f16Codec.encode(dst, src) }
func (f16Format) Decode(dst []float32, src []byte, _ float32) { f16Codec.decode(dst, src) }
func (f16Format) Same(a, b []byte) bool                       { return f16Codec.same(a, b) }
func (f16Format) Spacing(v float64, _ float32, _ ...[]float32) float64 {
	return codec[uint16]{kind: kF16, f: formats[kF16]}.storageULP(v)
}

// bf16Format is bfloat16, rounded to nearest even by f32ToBF16.
type bf16Format struct{}

var bf16Codec = ieee16{enc: f32ToBF16, dec: bf16ToF32, f: formats[kBF16]}

func (bf16Format) Name() string                                { return "bf16" }
func (bf16Format) Block() (values, bytes int)                  { return 1, 2 }
func (bf16Format) Scales() ScalePlace                          { return ScaleNone }
func (bf16Format) Encode(dst []byte, src []float32, _ float32) { bf16Codec.encode(dst, src) }
func (bf16Format) Decode(dst []float32, src []byte, _ float32) { bf16Codec.decode(dst, src) }
func (bf16Format) Same(a, b []byte) bool                       { return bf16Codec.same(a, b) }
func (bf16Format) Spacing(v float64, _ float32, _ ...[]float32) float64 {
	return codec[uint16]{kind: kBF16, f: formats[kBF16]}.storageULP(v)
}

// ---- OCP FP8 e4m3fn ------------------------------------------------------------------

// e4m3Format is OCP FP8 e4m3fn with one scale per cache, passed with every
// call: stored is e4m3(x/scale), read back as e4m3→f32 times scale.
type e4m3Format struct{}

func (e4m3Format) Name() string               { return "e4m3" }
func (e4m3Format) Block() (values, bytes int) { return 1, 1 }
func (e4m3Format) Scales() ScalePlace         { return ScalePerTensor }
func (e4m3Format) Encode(dst []byte, src []float32, scale float32) {
	for i, v := range src {
		dst[i] = refE4M3(v / scale)
	}
}
func (e4m3Format) Decode(dst []float32, src []byte, scale float32) {
	for i := range dst {
		dst[i] = refE4M3Value(src[i]) * scale
	}
}
func (e4m3Format) Same(a, b []byte) bool {
	return a[0] == b[0] || a[0]&0x7f == 0x7f && b[0]&0x7f == 0x7f
}

// Spacing is e4m3's step at v/scale, times scale: 2⁻⁹ below the smallest
// normal 2⁻⁶, 2^(e−3) in the binade [2^e, 2^(e+1)).
func (e4m3Format) Spacing(v float64, scale float32, _ ...[]float32) float64 {
	x := v / float64(scale)
	if x < 0x1p-6 {
		return 0x1p-9 * float64(scale)
	}
	return math.Ldexp(1, int(math.Floor(math.Log2(x)))-3) * float64(scale)
}

// e4m3Mags[k] is the magnitude of the e4m3fn code k, k = 0…0x7e: exponent
// field e = k>>3 (bias 7), mantissa m = k&7; (1 + m/8)·2^(e−7) for e ≥ 1,
// (m/8)·2⁻⁶ for e = 0. Code 0x7f (with either sign) is NaN; there is no
// infinity. The largest finite magnitude is 0x7e, 448.
var e4m3Mags = func() [0x7f]float64 {
	var v [0x7f]float64
	for k := range v {
		e, m := k>>3, float64(k&7)
		if e == 0 {
			v[k] = m / 8 * math.Ldexp(1, -6)
		} else {
			v[k] = (1 + m/8) * math.Ldexp(1, e-7)
		}
	}
	return v
}()

// refE4M3 is the e4m3fn code of v: the code whose value is nearest, a tie
// going to the even code (the one whose mantissa's last bit is 0);
// magnitudes above 448, infinities included, saturate to ±448; a NaN gives
// S.1111.111 with v's sign.
func refE4M3(v float32) uint8 {
	var sign uint8
	if math.Signbit(float64(v)) {
		sign = 0x80
	}
	if v != v {
		return sign | 0x7f
	}
	a := math.Abs(float64(v))
	if a >= e4m3Mags[0x7e] {
		return sign | 0x7e
	}
	// The largest code whose magnitude is at most a.
	k := sort.Search(len(e4m3Mags), func(i int) bool { return e4m3Mags[i] > a }) - 1
	lo, hi := a-e4m3Mags[k], e4m3Mags[k+1]-a
	switch {
	case lo < hi:
	case hi < lo:
		k++
	case k&1 == 1:
		k++
	}
	return sign | uint8(k)
}

// refE4M3Value is the value of the e4m3fn code b as a float32 (exact), NaN
// for S.1111.111.
func refE4M3Value(b uint8) float32 {
	if b&0x7f == 0x7f {
		return float32(math.NaN())
	}
	v := float32(e4m3Mags[b&0x7f])
	if b&0x80 != 0 {
		v = -v
	}
	return v
}

// ---- OCP FP8 e5m2 --------------------------------------------------------------------

// e5m2Format is OCP FP8 e5m2 with one scale per cache, passed with every
// call: stored is e5m2(x/scale), nearest even, saturating at ±57344, a NaN
// staying a NaN; read back as e5m2→f32 times scale. Its bits are
// verify/codec's E5M2, the scalar reference of every cache format.
type e5m2Format struct{}

func (e5m2Format) Name() string               { return "e5m2" }
func (e5m2Format) Block() (values, bytes int) { return 1, 1 }
func (e5m2Format) Scales() ScalePlace         { return ScalePerTensor }
func (e5m2Format) Encode(dst []byte, src []float32, scale float32) {
	refcodec.E5M2.Encode(dst[:len(src)], src, scale)
}
func (e5m2Format) Decode(dst []float32, src []byte, scale float32) {
	refcodec.E5M2.Decode(dst, src[:len(dst)], scale)
}

// Same: the same byte, or two NaNs (S.11111.xx, xx ≠ 0).
func (e5m2Format) Same(a, b []byte) bool {
	nan := func(c byte) bool { return c&0x7c == 0x7c && c&3 != 0 }
	return a[0] == b[0] || nan(a[0]) && nan(b[0])
}

// Spacing is e5m2's step at v/scale, times scale: 2⁻¹⁶ below the smallest
// normal 2⁻¹⁴, 2^(e−2) in the binade [2^e, 2^(e+1)).
func (e5m2Format) Spacing(v float64, scale float32, _ ...[]float32) float64 {
	x := v / float64(scale)
	if x < 0x1p-14 {
		return 0x1p-16 * float64(scale)
	}
	return math.Ldexp(1, int(math.Floor(math.Log2(x)))-2) * float64(scale)
}

// ---- ggml q8_0 ------------------------------------------------------------------------

// q8Block is ggml's QK8_0, q8Bytes the size of block_q8_0: an f16 d, 32 int8.
const (
	q8Block = 32
	q8Bytes = 2 + q8Block
)

// q8Format is ggml's q8_0, its bits verify/codec's Q8_0 (the scalar
// transcription of quantize_row_q8_0_ref and dequantize_row_q8_0, which
// ggml's recorded rows check).
type q8Format struct{}

func (q8Format) Name() string               { return "q8_0" }
func (q8Format) Block() (values, bytes int) { return q8Block, q8Bytes }
func (q8Format) Scales() ScalePlace         { return ScaleInBlock }
func (q8Format) Encode(dst []byte, src []float32, _ float32) {
	n := len(src) / q8Block * q8Block
	refcodec.Q8_0.Encode(dst[:refcodec.Q8_0.Size(n)], src[:n], 0)
}

// Decode decodes the blocks covering len(dst) values.
func (q8Format) Decode(dst []float32, src []byte, _ float32) {
	n := (len(dst) + q8Block - 1) / q8Block * q8Block
	y := make([]float32, n)
	refcodec.Q8_0.Decode(y, src[:refcodec.Q8_0.Size(n)], 0)
	copy(dst, y)
}

// Same compares d as an f16, two NaNs alike, and the 32 int8 bit for bit.
func (q8Format) Same(a, b []byte) bool {
	return f16Codec.same(a[:2], b[:2]) && string(a[2:q8Bytes]) == string(b[2:q8Bytes])
}

// Spacing is the largest d of the blocks around: amax/127, a little more
// for d's rounding to f16.
func (q8Format) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	return largestMagnitude(around) / 127 * (1 + 0x1p-10)
}

// HardBlock fills x with a block whose d is 2^e exactly (amax = 127·2^e),
// so that id = 2^−e and x·id is exactly k + 0.5 for most values: ties,
// which roundf takes away from zero.
func (q8Format) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	e := int(h(0)%40) - 20
	p := math.Ldexp(1, e)
	for j := range x {
		k := float64(int(h(uint64(j)+1)%254) - 127)
		x[j] = float32((k + 0.5) * p)
		if h(uint64(j)+100)%5 == 0 {
			x[j] = float32(k * p)
		}
	}
	x[h(200)%uint64(len(x))] = float32(127 * p * float64(1-2*int(h(201)%2)))
	return "tied"
}

// ---- ggml q4_0, q4_1, q5_0, q5_1 -------------------------------------------------------

// ggmlFormat is one of ggml's 4- and 5-bit block formats, its bits
// verify/codec's (the scalar transcription of ggml's quantize_row_<type>_ref
// and dequantize_row_<type>, which ggml's recorded rows check): 32 values a
// block, halves f16 fields first (d; d and m for the range formats), then
// the quants. steps is the values' span in d: a symmetric format's d is
// its block's largest magnitude over steps (8, 16), a range format's d the
// block's max − min over steps (15, 31).
type ggmlFormat struct {
	f      refcodec.Format
	halves int
	steps  float64
	ranged bool
}

func (g ggmlFormat) Name() string               { return g.f.Name }
func (g ggmlFormat) Block() (values, bytes int) { return g.f.Block, g.f.Bytes }
func (ggmlFormat) Scales() ScalePlace           { return ScaleInBlock }
func (g ggmlFormat) Encode(dst []byte, src []float32, _ float32) {
	g.f.Encode(dst[:g.f.Size(len(src))], src, 0)
}

// Decode decodes the blocks covering len(dst) values.
func (g ggmlFormat) Decode(dst []float32, src []byte, _ float32) {
	n := (len(dst) + g.f.Block - 1) / g.f.Block * g.f.Block
	y := make([]float32, n)
	g.f.Decode(y, src[:g.f.Size(n)], 0)
	copy(dst, y)
}

// Same compares the f16 fields as f16s, two NaNs alike, and the rest bit
// for bit.
func (g ggmlFormat) Same(a, b []byte) bool {
	for i := 0; i < 2*g.halves; i += 2 {
		if !f16Codec.same(a[i:], b[i:]) {
			return false
		}
	}
	h := 2 * g.halves
	return string(a[h:g.f.Bytes]) == string(b[h:g.f.Bytes])
}

// Spacing is the largest d of the blocks around (a little more for d's
// rounding to f16): their largest magnitude over steps, or for a range
// format their span over steps.
func (g ggmlFormat) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	amax, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for _, y := range around {
		for _, x := range y {
			v := float64(x)
			amax, lo, hi = max(amax, math.Abs(v)), min(lo, v), max(hi, v)
		}
	}
	if g.ranged {
		return max(hi-lo, 0) / g.steps * (1 + 0x1p-10)
	}
	return amax / g.steps * (1 + 0x1p-10)
}

// ---- ggml mxfp4 ------------------------------------------------------------------------

// mxfp4Format is ggml's mxfp4, its bits verify/codec's MXFP4 (the scalar
// transcription of quantize_row_mxfp4_ref and dequantize_row_mxfp4, which
// ggml's recorded rows check): 32 values a block, the E8M0 exponent byte e
// (no f16 field: halves 0, so Same compares every byte bit for bit; no
// encoding is a NaN), then the nibbles. Encode, Decode and Same are
// ggmlFormat's.
type mxfp4Format struct{ ggmlFormat }

// Spacing is the widest distance between neighbouring values of the blocks
// around. A block's values are kvalues_mxfp4 (0, ±1, ±2, ±3, ±4, ±6, ±8,
// ±12: twice the E2M1 grid) times d = 2^(e−128), a power of two, so its
// grid spacing is d below 4d, 2d up to 8d and 4d up to 12d, and a value
// from 12d up to the next binade (16d, which amax never reaches) rounds to
// 12d, at most 4d away: 4d bounds the spacing at every magnitude. d is
// 2^(⌊log2 amax⌋ − 3) for the block's largest input magnitude amax (e =
// ⌊log2f(amax)⌋ − 2 + 127) or, where log2f rounds up just below a power
// of two, twice that; either way its largest decoded magnitude is 8d or
// 12d (amax < 16d; 8d for the rounded-up case), so the
// largest decoded magnitude m of the blocks around gives their largest d as
// 2^(⌊log2 m⌋ − 3) exactly; not below 2^−128, the d of e = 0 (the clamp
// of tiny blocks, whose values may then all be below 8d).
func (mxfp4Format) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	amax := largestMagnitude(around)
	if !(amax < math.Inf(1)) {
		return amax // NaN or Inf: no bound
	}
	d := 0x1p-128
	if amax > 0 {
		_, exp := math.Frexp(amax) // amax = f·2^exp, ½ ≤ f < 1: ⌊log2 amax⌋ = exp − 1
		d = max(d, math.Ldexp(1, exp-1-3))
	}
	return 4 * d
}

// largestMagnitude is the largest |x| of the values around, NaN if one
// is NaN (max propagates it).
func largestMagnitude(around [][]float32) float64 {
	var amax float64
	for _, y := range around {
		for _, x := range y {
			amax = max(amax, math.Abs(float64(x)))
		}
	}
	return amax
}

// mxfp4Halves are the magnitudes, in d, of mxfp4's hard values: the
// midpoints between neighbouring grid points (ties, which go to the first
// index, the smaller magnitude) and the grid points themselves.
var mxfp4Halves = [...]float64{0.5, 1.5, 2.5, 3.5, 5, 7, 10, 0, 1, 2, 3, 4, 6, 8, 12}

// HardBlock fills x with a block whose d is 2^e exactly (amax = 12·2^e or
// 8·2^e) and whose values are mostly midpoints between grid points, ties
// that go to the first index; one block in four has its largest value one
// float32 step below 16·2^e instead, where log2f rounds up and d doubles.
func (mxfp4Format) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	p := math.Ldexp(1, int(h(0)%40)-20)
	sign := func(i uint64) float64 { return float64(1 - 2*int(h(i)%2)) }
	for j := range x {
		x[j] = float32(sign(uint64(j)+300) * mxfp4Halves[h(uint64(j)+1)%uint64(len(mxfp4Halves))] * p)
	}
	top := 12 * p
	switch h(201) % 4 {
	case 0:
		top = float64(math.Nextafter32(float32(16*p), 0))
	case 1:
		top = 8 * p
	}
	x[h(200)%uint64(len(x))] = float32(sign(202) * top)
	return "tied"
}

// ---- ggml iq4_nl -----------------------------------------------------------------------

// iq4nlFormat is ggml's iq4_nl, its bits verify/codec's IQ4NL (the scalar
// transcription of quantize_row_iq4_nl_ref without weights and
// dequantize_row_iq4_nl, which ggml's recorded rows check): 32 values a
// block, the f16 scale d (one half, compared as an f16), then the nibbles,
// indices into kvalues_iq4nl. Encode, Decode and Same are ggmlFormat's.
type iq4nlFormat struct{ ggmlFormat }

// iq4nlGap is the widest gap between neighbouring points of kvalues_iq4nl
// (−127, −104, −83, −65, −49, −35, −22, −10, 1, 13, 25, 38, 53, 69, 89,
// 113): 24, from 89 to 113; the others are 11 to 23.
const iq4nlGap = 24

// Spacing is the widest distance between neighbouring values of the blocks
// around: a block's values are f16(d)·kvalues_iq4nl[L], so its grid's
// widest gap is 24·|d|, with d the block's stored scale. That d is not
// the block's max/−127 (the nibbles are chosen with d0 = max/−127, then d
// is recomputed as the least-squares scale of those indices, and rounded
// to f16), so it is read from the stored block: the block's first value of
// largest magnitude always takes index 0 (its x·id is −127 within a
// float32 rounding, and best_index_int8 gives 0 at or below −127 and for
// the lower half of −127…−104), the grid's largest magnitude, and so the
// block's largest decoded magnitude is fl(127·|f16(d)|). The largest
// decoded magnitude m of the blocks around thus gives their largest |d| as
// m/127, a little more for that product's float32 rounding. A block of
// absolute maximum below 1e-15, or one holding a NaN, has d = 0 and adds
// nothing; an Inf makes d a NaN, and then there is no bound.
func (iq4nlFormat) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	amax := largestMagnitude(around)
	if !(amax < math.Inf(1)) {
		return amax // NaN or Inf: no bound
	}
	return iq4nlGap * amax / 127 * (1 + 0x1p-20)
}

// iq4nlHard are the points, in units of d0 = max/−127, of iq4_nl's hard
// values: the midpoints between neighbouring grid points (ties, which
// best_index_int8 takes up, to the larger index) and the grid points
// themselves.
var iq4nlHard = [...]float64{-115.5, -93.5, -74, -57, -42, -28.5, -16, -4.5, 7, 19, 31.5, 45.5, 61, 79, 101,
	-104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// HardBlock fills x with a block whose largest magnitude is 127·2^e, its
// only value of that magnitude, so that d0 = ∓2^e and id = ∓2^−e exactly
// and x·id lands on the chosen points: mostly midpoints between grid
// points, ties that go to the larger index.
func (iq4nlFormat) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	p := math.Ldexp(1, int(h(0)%40)-20)
	sgn := float64(1 - 2*int(h(201)%2)) // the sign of max; id = −sgn/p
	for j := range x {
		x[j] = float32(-sgn * iq4nlHard[h(uint64(j)+1)%uint64(len(iq4nlHard))] * p)
	}
	x[h(200)%uint64(len(x))] = float32(sgn * 127 * p)
	return "tied"
}

// ---- ggml nvfp4 ------------------------------------------------------------------------

// nvfp4Format is ggml's nvfp4, its bits verify/codec's NVFP4 (the scalar
// transcription of quantize_row_nvfp4_ref and dequantize_row_nvfp4, which
// ggml's recorded rows check): 64 values a block, four UE4M3 scale bytes
// (one per 16 values; no f16 field: halves 0, so Same compares every byte
// bit for bit, and no encoding is a NaN), then the nibbles. Encode, Decode
// and Same are ggmlFormat's.
type nvfp4Format struct{ ggmlFormat }

// Spacing is the widest distance between neighbouring values of the blocks
// around. A sub-block's values are kvalues_mxfp4 (0, ±1, ±2, ±3, ±4, ±6,
// ±8, ±12: twice the E2M1 grid) times D, half its UE4M3 scale S =
// ue4m3(amax/6), so its grid's widest gap is 4D, and a value past 12D
// (stored as 12D) is at most 4D away as long as x/D < 16. Its largest
// decoded magnitude m is at least 6D when S ≠ 0: for a normal S, rounded
// half up on 3 mantissa bits, amax/D ≥ 12/(1 + 1/16) > 10, the midpoint of
// 8 and 12, so m = 12D; S clamped to 448 (ggml's 0x7E from amax/6 ≥ 248)
// gives amax/D ≥ 248·12/448 > 6.6, so m ≥ 6D; a subnormal S = k·2⁻⁹ from
// trunc(amax/6·512 + ½) = k ≥ 1 (or 7 from above) gives amax/6 ≥
// (k − ½)·2⁻⁹, amax/D ≥ 12(k − ½)/k ≥ 6, so m ≥ 6D. (An S of 0 stores
// every value as 0: D = 0.) So the largest decoded magnitude m of the
// blocks around bounds every D there by m/6 and the gap by 4m/6, a little
// more for the float32 rounding of k·D.
func (nvfp4Format) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	amax := largestMagnitude(around)
	if !(amax < math.Inf(1)) {
		return amax // NaN or Inf: no bound
	}
	return 4 * amax / 6 * (1 + 0x1p-20)
}

// nvfp4Scales are UE4M3 values S (some normal, some subnormal: 2⁻⁹…7·2⁻⁹)
// as multiples of a power of two, and the midpoints between neighbouring
// ones, where ggml's UE4M3 rounding goes up: a sub-block's amax is 6·S.
var nvfp4Scales = [...]float64{1, 1.125, 1.25, 1.75, 1.0625, 1.1875, 1.9375}

// HardBlock fills x, 64 values, with four sub-blocks of 16 whose amax/6 is
// a UE4M3 value S = s·2^e exactly, or a midpoint between two (rounded up
// by ggml's rule, or for a subnormal S by trunc(·512 + ½)), and whose
// other values are mostly midpoints between grid points of D = S/2 (ties,
// which go to the first index, the smaller magnitude) and grid points.
func (nvfp4Format) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	sign := func(i uint64) float64 { return float64(1 - 2*int(h(i)%2)) }
	for s := 0; s+16 <= len(x); s += 16 {
		k := uint64(s) * 1000
		S := nvfp4Scales[h(k)%uint64(len(nvfp4Scales))] * math.Ldexp(1, int(h(k+1)%17)-11)
		if h(k+2)%4 == 0 {
			S = float64(1+h(k+3)%7) * 0x1p-9 // subnormal S
			if h(k+4)%2 == 0 {
				S -= 0.5 * 0x1p-9 // its lower rounding boundary
			}
		}
		d := S / 2
		for j := range 16 {
			x[s+j] = float32(sign(k+uint64(j)+300) * mxfp4Halves[h(k+uint64(j)+1)%uint64(len(mxfp4Halves))] * d)
		}
		x[s+int(h(k+200)%16)] = float32(sign(k+202) * 6 * S)
	}
	return "tied"
}

// ---- vLLM int8_per_token_head -----------------------------------------------------------

// int8Format is vLLM's int8 KV cache with a scale per token and KV head,
// its bits verify/codec's Int8PerTokenHead, in ropegen's layout: a head of
// h values is one block of h+4 bytes, the head's float32 scale s (little
// endian) and then its h int8 codes. Its block is the head (headBlock), so
// a context shift codes a head again whole. Block reports the smallest
// head a package may have (32 values: the kernels take heads of a multiple
// of 32); Encode and Decode take any number of whole heads, each
// (len(dst) − len(src))/4 apart in Encode's bytes, and tell the heads'
// size from the lengths.
type int8Format struct{}

// int8Head is Block's head: 32 values in 36 bytes.
const int8Head = 32

func (int8Format) Name() string               { return "int8_per_token_head" }
func (int8Format) Block() (values, bytes int) { return int8Head, int8Head + 4 }
func (int8Format) Scales() ScalePlace         { return ScaleInBlock }

// HeadBlock is the block at a head of headDim values: the head, in
// headDim+4 bytes.
func (int8Format) HeadBlock(headDim int) (values, bytes int) { return headDim, headDim + 4 }

// int8Heads is how many heads of how many values len(x) values in
// len(b) bytes are: 4 bytes of scale a head.
func int8Heads(x, b int) (heads, values int) {
	heads = (b - x) / 4
	if heads <= 0 || x%heads != 0 || b != x+4*heads {
		panic("verify: int8_per_token_head: the values and bytes are no whole number of heads")
	}
	return heads, x / heads
}

func (int8Format) Encode(dst []byte, src []float32, _ float32) {
	n, h := int8Heads(len(src), len(dst))
	for i := range n {
		d := dst[i*(h+4):]
		s := refcodec.Int8PerTokenHead.Encode(d[4:4+h], src[i*h:(i+1)*h], 0)
		binary.LittleEndian.PutUint32(d, math.Float32bits(s))
	}
}

// Decode decodes the heads of src into dst (whole heads: Decode's callers
// pass a head's HeadDim values).
func (int8Format) Decode(dst []float32, src []byte, _ float32) {
	n, h := int8Heads(len(dst), len(src))
	for i := range n {
		d := src[i*(h+4):]
		s := math.Float32frombits(binary.LittleEndian.Uint32(d))
		refcodec.Int8PerTokenHead.Decode(dst[i*h:(i+1)*h], d[4:4+h], s)
	}
}

// Same compares every byte: the encoder never writes a NaN scale, and the
// codes are integers.
func (int8Format) Same(a, b []byte) bool { return string(a) == string(b) }

// Spacing is the largest s of the heads around: the grid step of a head
// is its s = max(amax/127, 1e-6), a little more for the float32 rounding
// of amax/127 and of the decoded q·s (the largest decoded magnitude is
// 127s within those roundings).
func (int8Format) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	return max(largestMagnitude(around)/127*(1+0x1p-20), 1e-6*(1+0x1p-20))
}

// HardBlock fills x, one head, with a head whose s is 2^e exactly (amax =
// 127·2^e), so that 1/s is exact and x·(1/s) is exactly k + 1/2 for most
// values (ties, which the add of ±1/2 and the truncation take away from
// zero), with the float32 neighbours of some of them, ±127·2^e (127.5,
// truncated to 127) and, for some heads, a scale below the floor.
func (int8Format) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	e := int(h(0)%40) - 20
	if h(1)%6 == 0 {
		e = -28 // amax/127 = 2⁻²⁸ < 1e-6: s is the floor
	}
	p := math.Ldexp(1, e)
	for j := range x {
		k := float64(int(h(uint64(j)+2)%254) - 127)
		v := float32((k + 0.5) * p)
		switch h(uint64(j)+1000) % 6 {
		case 0:
			v = float32(k * p)
		case 1:
			v = math.Nextafter32(v, 0)
		case 2:
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
		x[j] = v
	}
	x[h(2000)%uint64(len(x))] = float32(127 * p)
	x[h(2001)%uint64(len(x))] = float32(-127 * p)
	return "tied"
}

// ---- NVIDIA NVFP4 with a tensor scale --------------------------------------------------

// nvfp4gsFormat is NVIDIA's NVFP4 with its float32 tensor (global) scale
// g, its bits verify/codec's NVFP4GS (vLLM's reference quantizer and
// dequantizer): blocks of 16 values in 9 bytes (8 bytes of E2M1 codes,
// then an e4m3fn scale S), g passed with every call (ScalePerTensor: the
// call's scale is g). A package takes its blocks two at a time, a head a
// multiple of 32 values, and Shift rewrites the pairs holding a rotary
// value: Block is that pair, 32 values in 18 bytes, as the run-time's
// geometry. No encoding holds a NaN byte (S is made from a finite g and
// amax, a code from a NaN is 0), so Same compares the bytes.
type nvfp4gsFormat struct{}

func (nvfp4gsFormat) Name() string               { return "nvfp4_gs" }
func (nvfp4gsFormat) Block() (values, bytes int) { return 32, 18 }
func (nvfp4gsFormat) Scales() ScalePlace         { return ScalePerTensor }
func (nvfp4gsFormat) Encode(dst []byte, src []float32, g float32) {
	f := refcodec.NVFP4GS
	f.Encode(dst[:f.Size(len(src))], src, g)
}

// Decode decodes the blocks holding dst's len(dst) values.
func (nvfp4gsFormat) Decode(dst []float32, src []byte, g float32) {
	f := refcodec.NVFP4GS
	n := (len(dst) + 31) / 32 * 32
	y := make([]float32, n)
	f.Decode(y, src[:f.Size(n)], g)
	copy(dst, y)
}

// Same: the same bytes.
func (nvfp4gsFormat) Same(a, b []byte) bool { return string(a[:18]) == string(b[:18]) }

// Spacing is the widest distance between neighbouring values of the blocks
// around. A block's values are the E2M1 grid (0, ±½, ±1, ±1½, ±2, ±3, ±4,
// ±6) times D = fl(e4m3(S)/g), so its widest gap is 2D, and a value past
// 6D is stored as 6D. Its largest decoded magnitude m is at least 3D when
// S ≠ 0, whatever g: with sf = g·amax/6 (S = e4m3(sf)) the largest
// |x|·o is about 6·sf/e4m3(S); for a normal S (rounded to nearest on 3
// mantissa bits) that is at least 6/(1 + 1/16) > 5, code 7, m = 6D; S
// saturated at 448 < sf gives more than 6, m = 6D; a subnormal S, a
// multiple of 2⁻⁹ from sf > 2⁻¹⁰ (a tie at 2⁻¹⁰ goes to 0), is below
// 2·sf, so the largest |x|·o is above 3 less the float32 roundings, past
// the threshold 2.5, m ≥ 3D; then |x|·o < 9 (S ≥ 2⁻⁹ > sf/1.5), a value
// stored as 6D being less than 3D ≤ m away. (An S of 0 stores every value
// as ±0: D = 0.) So the largest decoded magnitude m of the blocks around
// bounds every D there by m/3 and the gap by 2m/3, a little more for the
// float32 roundings of D and of the products.
func (nvfp4gsFormat) Spacing(_ float64, _ float32, around ...[]float32) float64 {
	amax := largestMagnitude(around)
	if !(amax < math.Inf(1)) {
		return amax // NaN or Inf: no bound
	}
	return 2 * amax / 3 * (1 + 0x1p-20)
}

// nvfp4gsPoints are E2M1 grid points and the midpoints between
// neighbouring ones (the thresholds of its rounding, ties to even), in
// units of a block's D.
var nvfp4gsPoints = [...]float64{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 0, 0.5, 1, 1.5, 2, 3, 4, 6}

// HardBlock fills x, two blocks of 16, with blocks whose amax/6 is an
// e4m3 value S (normal or subnormal) or a rounding midpoint between two,
// and whose other values are E2M1 grid points and thresholds (ties) times
// S: with a tensor scale g = 1 (one call in eight draws it) D is S, and
// the codes fall on or next to every tie of e2m1's rounding.
func (nvfp4gsFormat) HardBlock(x []float32, seed uint64) string {
	h := func(i uint64) uint64 { return mix(seed ^ i*0x9e3779b97f4a7c15) }
	sign := func(i uint64) float64 { return float64(1 - 2*int(h(i)%2)) }
	for s := 0; s+16 <= len(x); s += 16 {
		k := uint64(s) * 1000
		S := (1 + float64(h(k)%8)/8) * math.Ldexp(1, int(h(k+1)%15)-6) // a normal e4m3 value
		switch h(k+2) % 4 {
		case 0:
			S = float64(1+h(k+3)%7) * 0x1p-9 // subnormal
		case 1:
			S += math.Ldexp(1, int(h(k+1)%15)-6) / 16 // the midpoint above
		}
		for j := range 16 {
			x[s+j] = float32(sign(k+uint64(j)+300) * nvfp4gsPoints[h(k+uint64(j)+1)%uint64(len(nvfp4gsPoints))] * S)
		}
		x[s+int(h(k+200)%16)] = float32(sign(k+202) * 6 * S)
	}
	return "tied"
}
