package rt

import "math"

// E4M3Cache returns the view s of buf as a cache of OCP FP8 e4m3fn bytes
// with the per-tensor scale: a value x is stored as e4m3(x/scale), rounded
// to nearest even, saturating at ±448, a NaN staying a NaN, and read back
// as e4m3·scale. The entry points that use it check that scale is finite
// and > 0.
func E4M3Cache(buf []uint8, s Strides, scale float32) Cache {
	return Cache{kind: cacheE4M3, s: s, u8: buf, scale: scale}
}

func init() { cacheBuilt[cacheE4M3] = true }

// f32toe4m3 narrows f to OCP FP8 e4m3fn bits (1 sign, 4 exponent bits of
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
}

// e4m3to32 widens OCP FP8 e4m3fn bits to float32, exactly; NaN
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
}
