package codec

import (
	"math"
	"math/bits"
)

// The element conversions every format builds on. Narrowing rounds to
// nearest even unless a function says otherwise; widening is exact.

// abs is fabsf: the sign bit cleared, a NaN stays a NaN.
func abs(v float32) float32 {
	return math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
}

// f16to32 widens IEEE binary16 bits to float32, exactly; Inf stays Inf
// and a NaN keeps its payload.
func f16to32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	}
	v := float32(man) * 0x1p-24 // zero or subnormal: man·2⁻²⁴, exact
	if sign != 0 {
		v = -v
	}
	return v
}

// f32to16 narrows f to IEEE binary16 bits, rounding to nearest even:
// magnitudes from 65520 up (Inf included) give ±Inf, and a NaN stays a
// NaN of its sign, quieted, keeping the top 10 bits of its payload (as
// F16C's VCVTPS2PH and arm64's FCVT do).
func f32to16(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	u &= 0x7fffffff
	switch {
	case u > 0x7f800000:
		return sign | 0x7e00 | uint16(u>>13)&0x3ff
	case u >= 0x477ff000: // rounds to 65520 or more
		return sign | 0x7c00
	case u >= 0x38800000: // normal in binary16: rebias, round 13 bits
		u -= 112 << 23
		u += 0xfff + (u>>13)&1
		return sign | uint16(u>>13)
	}
	// Subnormal or zero: adding 0.5, whose float32 ulp is 2⁻²⁴, rounds the
	// value to a multiple of 2⁻²⁴, to nearest even.
	return sign | uint16(math.Float32bits(math.Float32frombits(u)+0.5)-0x3f000000)
}

// bf16to32 widens bfloat16 bits to float32, exactly.
func bf16to32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// f32tobf16 narrows f to bfloat16 bits, rounding to nearest even;
// overflow gives ±Inf and a NaN stays a NaN: its top 16 bits with the
// quiet bit set.
func f32tobf16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// e4m3to32 widens OCP FP8 e4m3fn bits (1 sign, 4 exponent bits of bias 7,
// 3 mantissa bits; S.1111.111 is NaN, there is no Inf) to float32,
// exactly; the NaN code gives a quiet float32 NaN of its sign.
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
}

// f32toe4m3 narrows f to e4m3fn, rounding to nearest even: magnitudes
// from 448 up, ±Inf included, saturate to ±448 (S.1111.110), a NaN gives
// S.1111.111 with f's sign, and the sign of zero is kept.
func f32toe4m3(f float32) uint8 {
	u := math.Float32bits(f)
	sign := uint8(u>>24) & 0x80
	u &= 0x7fffffff
	switch {
	case u > 0x7f800000:
		return sign | 0x7f
	case u >= 0x43e00000: // 448 or more
		return sign | 0x7e
	case u >= 0x3c800000: // 2⁻⁶ or more: normal, keep 3 of 23 mantissa bits
		u += 0x7ffff + (u>>20)&1
		return sign | uint8(u>>20-120<<3)
	}
	// Below 2⁻⁶: a multiple of 2⁻⁹; adding 2¹⁴, whose float32 ulp is 2⁻⁹,
	// rounds to it, to nearest even.
	return sign | uint8(math.Float32bits(math.Float32frombits(u)+0x1p14)-0x46800000)
}

// e5m2to32 widens OCP FP8 e5m2 bits (1 sign, 5 exponent bits of bias 15,
// 2 mantissa bits: the top byte of a binary16) to float32, exactly:
// S.11111.00 is ±Inf and S.11111.xx, xx ≠ 0, a NaN keeping its payload.
func e5m2to32(b uint8) float32 {
	return f16to32(uint16(b) << 8)
}

// f32toe5m2 narrows f to e5m2, rounding to nearest even and saturating as
// CUDA's __nv_cvt_float_to_fp8 with __NV_SATFINITE does: magnitudes from
// 61440 (57344 plus half its ulp) up, ±Inf included, give ±57344
// (S.11110.11); a NaN gives S.11111.11 with f's sign; the sign of zero is
// kept.
func f32toe5m2(f float32) uint8 {
	u := math.Float32bits(f)
	sign := uint8(u>>24) & 0x80
	u &= 0x7fffffff
	switch {
	case u > 0x7f800000:
		return sign | 0x7f
	case u >= 0x47700000: // 61440 or more
		return sign | 0x7b
	case u >= 0x38800000: // 2⁻¹⁴ or more: normal, keep 2 of 23 mantissa bits
		u += 0xfffff + (u>>21)&1
		return sign | uint8(u>>21-112<<2)
	}
	// Below 2⁻¹⁴: a multiple of 2⁻¹⁶; adding 2⁷, whose float32 ulp is
	// 2⁻¹⁶, rounds to it, to nearest even.
	return sign | uint8(math.Float32bits(math.Float32frombits(u)+0x1p7)-0x43000000)
}

// e2m1Values are the magnitudes of the FP4 E2M1 codes 0…7 (1 sign bit
// above them, 2 exponent bits of bias 1, 1 mantissa bit).
var e2m1Values = [8]float32{0, 0.5, 1, 1.5, 2, 3, 4, 6}

// e2m1to32 is the value of the E2M1 code c (its low 4 bits); 0x8 is -0.
func e2m1to32(c uint8) float32 {
	v := e2m1Values[c&7]
	if c&8 != 0 {
		v = -v
	}
	return v
}

// f32toe2m1 narrows v to an E2M1 code, rounding to nearest even and
// saturating at ±6 (as PTX cvt.rn.satfinite.e2m1x2.f32 and the thresholds
// of vLLM's cast_to_fp4 do); the sign bit is v's sign bit, so -0 and
// negative values that round to zero give 0x8; a NaN gives 0.
func f32toe2m1(v float32) uint8 {
	if v != v {
		return 0
	}
	var s uint8
	if math.Signbit(float64(v)) {
		s = 8
	}
	m := abs(v)
	var c uint8
	switch {
	case m <= 0.25:
		c = 0
	case m < 0.75:
		c = 1
	case m <= 1.25:
		c = 2
	case m < 1.75:
		c = 3
	case m <= 2.5:
		c = 4
	case m < 3.5:
		c = 5
	case m <= 5:
		c = 6
	default:
		c = 7
	}
	return s | c
}

// floorLog2f is floor(log2f(a)) for a finite a > 0, where log2f is the
// binary32 logarithm correctly rounded to nearest: the floor of the exact
// logarithm, plus one where that rounding reaches the next integer.
//
// Write a = 2^E·M, M ∈ [1, 2). The exact log2(a) = E + log2(M) lies in
// [E, E+1) and E is a float32, so the rounded value is E or more, and its
// floor is E+1 exactly when the rounding gives E+1 = n, that is, when
// log2(M) > 1 − δ with δ half the gap from n to its float32 neighbour on
// the side of n−1 (never at equality: log2 of a rational M ≠ 1, 2 is
// irrational, a midpoint is not). That gap is 2^(q−23), q = ⌊log2|n|⌋,
// except below a positive power of two n = 2^q, where it is 2^(q−24);
// for n = 0 the neighbour is −2⁻¹⁴⁹ and the rounding never reaches 0.
// With δ = K·2⁻²⁴ (K = 2^(q−1) or 2^q, from 2⁻¹ to 2⁷ since
// −148 ≤ n ≤ 128) and w = (2 − M)·2²³ ≥ 1, an integer since M has at most
// 23 fraction bits, the condition is −ln(1 − w·2⁻²⁴)·2²⁴ < K·ln 2, whose
// left side is w·(1 + ε) with 0 < ε < w·2⁻²⁴ ≤ 2⁻¹⁶ for the w that can
// meet it. Every K·ln 2 is at least 0.09 from an integer (K = 16:
// 11.0904), far more than w·ε < 0.001, so the condition is exactly
// w ≤ ⌊K·ln 2⌋, the table below. This is why it needs no libm, and why the
// test compares it with float64 logarithms away from their midpoints.
func floorLog2f(a float32) int {
	u := math.Float32bits(a)
	e := int(u>>23) - 127
	m := u & 0x7fffff // fraction bits of M, as 23-bit fixed point
	if e == -127 {    // subnormal: a = m·2⁻¹⁴⁹, normalize
		p := 31 - bits.LeadingZeros32(m) // top bit of m
		e = p - 149
		m = (m << (23 - p)) & 0x7fffff
	}
	w := uint32(1<<23) - m // (2 − M)·2²³
	n := e + 1
	if n != 0 && w <= log2RoundUp(n) {
		return n
	}
	return e
}

// log2RoundUp is ⌊K·ln 2⌋ for the n of floorLog2f: the largest w for
// which log2f rounds E + log2(2 − w·2⁻²³) up to n = E + 1.
func log2RoundUp(n int) uint32 {
	a := n
	if a < 0 {
		a = -a
	}
	q := bits.Len(uint(a)) - 1 // ⌊log2|n|⌋
	k := q                     // log2 K
	if n > 0 && a&(a-1) == 0 {
		k = q - 1 // below a positive power of two the gap halves
	}
	// ⌊2^k·ln 2⌋ for k = −1…7.
	return [...]uint32{0, 0, 1, 2, 5, 11, 22, 44, 88}[k+1]
}
