package rt

import "math"

// Q80Cache returns the view s of buf as a cache of ggml q8_0 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 34 bytes (an f16 scale d,
// little endian, then 32 int8; Rotary.CacheHead("q8_0")), and s counts
// bytes. Values are stored as ggml's quantize_row_q8_0_ref stores them
// (ties away from zero) and read back as q·d.
func Q80Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ80, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ80] = true }

// q8Block quantizes the 32 values of x into one q8_0 block, d as f16 bits
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
}

// q8Unblock dequantizes one q8_0 block into y: y_j = q_j·d in float32, d
// widened from its f16 bits, as ggml's dequantize_row_q8_0 does.
func q8Unblock(y *[32]float32, b *[34]byte) {
	d := f16to32(uint16(b[0]) | uint16(b[1])<<8)
	for j := range y {
		y[j] = float32(int8(b[2+j])) * d
	}
}
