package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// dtype describes how an element type is stored and computed (docs/contract.md §5).
type dtype struct {
	name    string // flag value: "f32", "f64", "f16", "bf16"
	goType  string // Go type of the stored elements
	compute string // Go type of the table and the arithmetic
	about   string // for the package doc
	widen   string // generated func from goType to compute ("" when they are the same)
	narrow  string // generated func from compute to goType, round to nearest even
	ulp     string // the narrowing's share of the error bound, for the package doc
}

var dtypes = map[string]dtype{
	"f32":  {name: "f32", goType: "float32", compute: "float32", about: "float32"},
	"f64":  {name: "f64", goType: "float64", compute: "float64", about: "float64"},
	"f16":  {name: "f16", goType: "uint16", compute: "float32", about: "IEEE binary16 (bits in uint16)", widen: "f16to32", narrow: "f32to16", ulp: " + one binary16 ulp of |y|"},
	"bf16": {name: "bf16", goType: "uint16", compute: "float32", about: "bfloat16 (bits in uint16)", widen: "bf16to32", narrow: "f32tobf16", ulp: " + one bfloat16 ulp of |y|"},
}

func (p *Plan) dtype() dtype    { return dtypes[p.Spec.DType] }
func (p *Plan) outDtype() dtype { return dtypes[p.Spec.OutDType] }

// elemType is the Go type of x for the plan's dtype.
func (p *Plan) elemType() string { return p.dtype().goType }

// computeType is the Go type the arithmetic and the table use.
func (p *Plan) computeType() string { return p.dtype().compute }

// unitRoundoff is u of the compute type, as doc text.
func (p *Plan) unitRoundoff() string {
	if p.computeType() == "float64" {
		return "2⁻⁵³"
	}
	return "2⁻²⁴"
}

// errorBound is the documented per-pair bound of docs/contract.md §6, as text.
func (p *Plan) errorBound() string {
	return fmt.Sprintf("|y − y_ref| ≤ 4·%s·A·(|x_a| + |x_b|)%s per pair", p.unitRoundoff(), p.dtype().ulp)
}

// conversions emits the pure Go conversions named in names, in a fixed
// order: exact widening, and narrowing with round-to-nearest-even in which a
// NaN stays a NaN (quieted, payload truncated, as F16C's VCVTPS2PH and
// arm64's FCVTN do), for f16 and bf16 values and caches; and those an e4m3
// or a q8_0 cache adds, written from the formats' definitions and checked
// against package verify's own references (every float32 for e4m3; ggml's
// quantize_row_q8_0_ref for q8_0).
func conversions(f *jen.File, names map[string]bool) {
	code := map[string]string{
		"f16to32": `// f16to32 widens IEEE binary16 bits to float32, exactly.
func f16to32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f: // Inf or NaN: keep the payload
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0: // normal
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	}
	v := float32(man) * 0x1p-24 // zero or subnormal: man·2⁻²⁴, exact in float32
	if sign != 0 {
		v = -v
	}
	return v
}`,
		"f32to16": `// f32to16 narrows f to IEEE binary16 bits, rounding to nearest even;
// overflow gives ±Inf and a NaN stays a NaN.
func f32to16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	u &= 0x7fffffff
	switch {
	case u > 0x7f800000: // NaN: quiet it, keep the top of the payload
		return sign | 0x7e00 | uint16(u>>13)&0x3ff
	case u >= 0x477ff000: // rounds to 65520 or more: Inf
		return sign | 0x7c00
	case u >= 0x38800000: // normal in binary16: rebias, round the 13 dropped bits
		u -= 112 << 23
		u += 0xfff + (u>>13)&1
		return sign | uint16(u>>13)
	}
	// subnormal or zero in binary16: adding 0.5 makes float32 addition round
	// the value to a multiple of 2⁻²⁴, to nearest even.
	return sign | uint16(math.Float32bits(math.Float32frombits(u)+0.5)-0x3f000000)
}`,
		"bf16to32": `// bf16to32 widens bfloat16 bits to float32, exactly.
func bf16to32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}`,
		"f32tobf16": `// f32tobf16 narrows f to bfloat16 bits, rounding to nearest even;
// overflow gives ±Inf and a NaN stays a NaN (quieted).
func f32tobf16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}`,
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
	for _, n := range []string{"f16to32", "f32to16", "bf16to32", "f32tobf16", "f32toe4m3", "e4m3to32", "q8Block", "q8Unblock"} {
		if names[n] {
			f.Line()
			f.Id(code[n])
		}
	}
}
