package rt

import "math"

// The conversions of f16 and bf16 values (element types and cache types):
// exact widening, and narrowing with round-to-nearest-even in which a NaN
// stays a NaN (quieted, payload truncated, as F16C's VCVTPS2PH and arm64's
// FCVTN do).

// f16to32 widens IEEE binary16 bits to float32, exactly.
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
}

// f32to16 narrows f to IEEE binary16 bits, rounding to nearest even;
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
}

// bf16to32 widens bfloat16 bits to float32, exactly.
func bf16to32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// f32tobf16 narrows f to bfloat16 bits, rounding to nearest even;
// overflow gives ±Inf and a NaN stays a NaN (quieted).
func f32tobf16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}
