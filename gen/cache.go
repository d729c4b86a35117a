package gen

import "github.com/ropegen/ropegen/spec"

// cacheType describes a KV cache element type, -out-dtype's value
// (docs/contract.md §11): how it is stored and which conversions its
// kernels use.
type cacheType struct {
	name   string // flag value: "f16", "bf16", "e4m3", "q8_0"
	goType string // Go type of the cache's elements: "uint16", or "uint8" (byte) for e4m3 and q8_0
	size   int    // bytes per element of goType
	about  string // for doc comments
	scale  bool   // the forms take a per-tensor scale (e4m3)
	blocks bool   // q8_0: heads are blocks of spec.Q8Block values, strides count bytes
	narrow string // the pure Go conversion from float32 (per value types)
	widen  string // the pure Go conversion to float32 (per value types)
}

var cacheTypes = map[string]cacheType{
	"f16":  {name: "f16", goType: "uint16", size: 2, about: "IEEE binary16 (bits in uint16)", narrow: "f32to16", widen: "f16to32"},
	"bf16": {name: "bf16", goType: "uint16", size: 2, about: "bfloat16 (bits in uint16)", narrow: "f32tobf16", widen: "bf16to32"},
	"e4m3": {name: "e4m3", goType: "uint8", size: 1, about: "OCP FP8 e4m3fn bytes, scaled", scale: true, narrow: "f32toe4m3", widen: "e4m3to32"},
	"q8_0": {name: "q8_0", goType: "uint8", size: 1, about: "ggml q8_0 blocks (an f16 scale, then 32 int8)", blocks: true},
}

// cache returns the plan's cache type, and false without -out-dtype.
func (p *Plan) cache() (cacheType, bool) {
	c, ok := cacheTypes[p.Spec.OutDType]
	return c, ok
}

// narrowTo reports whether the package has the rotate-and-narrow forms
// ApplyTo, ApplySeqTo and ApplyStridedTo: for an f16 or bf16 cache. An e4m3
// cache needs a scale and a q8_0 cache whole blocks, so those packages
// store keys with ApplyStore only.
func (p *Plan) narrowTo() bool {
	return p.Spec.OutDType == "f16" || p.Spec.OutDType == "bf16"
}

// toDType is the out dtype of the rotate-and-narrow kernels ("" if none).
func (p *Plan) toDType() string {
	if p.narrowTo() {
		return p.Spec.OutDType
	}
	return ""
}

// cacheHead is the size of one cached head in the cache's elements: HeadDim
// values, or for q8_0 HeadDim/32 blocks of 34 bytes.
func (p *Plan) cacheHead() int {
	if c, _ := p.cache(); c.blocks {
		return p.HeadDim / spec.Q8Block * spec.Q8BlockBytes
	}
	return p.HeadDim
}

// shiftValues is how many leading values of a cached head Shift reads and
// writes: RotaryDim, or for q8_0 the blocks that hold a rotary value. The
// rest keep their bits.
func (p *Plan) shiftValues() int {
	if c, _ := p.cache(); c.blocks {
		return (p.RotaryDim + spec.Q8Block - 1) / spec.Q8Block * spec.Q8Block
	}
	return p.RotaryDim
}

// cacheConversions is the pure Go source of the conversions an e4m3 or a
// q8_0 cache adds to conversions: written from the formats' definitions,
// checked against package verify's own references (every float32 for
// e4m3; ggml's quantize_row_q8_0_ref for q8_0).
var cacheConversions = map[string]string{
	"f32toe4m3": `// f32toe4m3 narrows f to OCP FP8 e4m3fn bits (1 sign, 4 exponent bits of
// bias 7, 3 mantissa bits; no infinities, S.1111.111 is NaN), rounding to
// nearest even: magnitudes from 448 up, and ±Inf, saturate to ±448, and a
// NaN stays a NaN (S.1111.111).
func f32toe4m3(f float32) uint8 {
	u := math.Float32bits(f)
	sign := uint8(u>>24) & 0x80
	u &= 0x7fffffff
	switch {
	case u > 0x7f800000: // NaN
		return sign | 0x7f
	case u >= 0x43e00000: // 448 (1.75·2⁸) or more: saturate
		return sign | 0x7e
	case u >= 0x3c800000: // 2⁻⁶ or more: normal, keep 3 of the 23 mantissa bits
		u += 0x7ffff + (u>>20)&1
		return sign | uint8(u>>20-120<<3)
	}
	// Below 2⁻⁶: a multiple m of 2⁻⁹ (m = 8 is 2⁻⁶, the smallest normal);
	// adding 2¹⁴, whose float32 ulp is 2⁻⁹, rounds to it, to nearest even.
	return sign | uint8(math.Float32bits(math.Float32frombits(u)+0x1p14)-0x46800000)
}`,
	"e4m3to32": `// e4m3to32 widens OCP FP8 e4m3fn bits to float32, exactly; NaN
// (S.1111.111) gives a quiet float32 NaN of the same sign.
func e4m3to32(b uint8) float32 {
	sign := uint32(b&0x80) << 24
	e, m := uint32(b>>3)&0xf, uint32(b&7)
	switch {
	case b&0x7f == 0x7f:
		return math.Float32frombits(sign | 0x7fc00000)
	case e != 0:
		return math.Float32frombits(sign | (e+120)<<23 | m<<20)
	}
	return math.Float32frombits(sign | math.Float32bits(float32(m)*0x1p-9))
}`,
	"q8Block": `// q8Block quantizes the 32 values of x into one q8_0 block, d as f16 bits
// (little endian) then 32 int8, as ggml's reference quantize_row_q8_0_ref
// does: amax = MAX(amax, |x_j|) for j = 0…31 from amax = 0, where
// MAX(a, b) is a > b ? a : b (so a NaN resets it: amax is the largest |x_j|
// after the last NaN, or that NaN if it is x_31); d = amax/127 and
// id = d ≠ 0 ? 1/d : 0 in float32; d is stored rounded to f16 (nearest
// even); q_j = roundf(x_j·id), halves away from zero. Where C leaves
// ggml's int8 conversion undefined (a NaN in the block, or a subnormal d
// whose 1/d overflows), q_j is 0 for a NaN product and ±127 beyond ±127.
func q8Block(dst *[34]byte, x *[32]float32) {
	var amax float32
	for _, v := range x {
		av := math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
		if !(amax > av) {
			amax = av
		}
	}
	d := amax / 127
	var id float32
	if d != 0 {
		id = 1 / d
	}
	h := f32to16(d)
	dst[0], dst[1] = byte(h), byte(h>>8)
	for j, v := range x {
		dst[2+j] = byte(q8Round(float32(v * id))) // rounded: never fused into q8Round's subtraction
	}
}

// q8Round is roundf(v), halves away from zero, as an int8: NaN gives 0 and
// values beyond ±127 saturate there.
func q8Round(v float32) int8 {
	switch {
	case v != v:
		return 0
	case v > 127:
		return 127
	case v < -127:
		return -127
	}
	t := float32(int32(v)) // toward zero
	switch f := v - t; {
	case f >= 0.5:
		t++
	case f <= -0.5:
		t--
	}
	return int8(t)
}`,
	"q8Unblock": `// q8Unblock dequantizes one q8_0 block into y: y_j = q_j·d in float32, d
// widened from its f16 bits, as ggml's dequantize_row_q8_0 does.
func q8Unblock(y *[32]float32, b *[34]byte) {
	d := f16to32(uint16(b[0]) | uint16(b[1])<<8)
	for j := range y {
		y[j] = float32(int8(b[2+j])) * d
	}
}`,
}
