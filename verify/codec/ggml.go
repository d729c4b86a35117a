package codec

import (
	"encoding/binary"
	"math"
)

// ggml's block formats, transcribed from ggml-org/ggml at commit
// d99724f2b141fed9e1a9f402213506c081433465, src/ggml-quants.c
// (quantize_row_<type>_ref, dequantize_row_<type>, best_index_int8,
// best_index_mxfp4, quantize_row_iq4_nl_impl), src/ggml-impl.h (MAX, MIN,
// GGML_FP32_TO_FP16, ggml_e8m0_to_fp32_half, ggml_ue4m3_to_fp32,
// ggml_fp32_to_ue4m3) and src/ggml-common.h (the block structs,
// kvalues_iq4nl, kvalues_mxfp4). Every operation is float32 and rounds
// once: a product that feeds an addition is converted explicitly, which
// keeps Go from fusing the two (ggml's reference is C evaluated without
// fused multiply-add). fp16 fields are little endian; fl() is float32
// rounding to nearest even.
//
// Where C leaves ggml undefined (a float-to-integer conversion of a NaN or
// of a value out of range: NaN or Inf inputs, or a nonzero scale so small
// that its reciprocal overflows), these definitions give what ropegen's
// q8_0 already gives: a NaN product x·id counts as 0, and the integer is
// clamped to the quant's range. Everywhere ggml is defined they equal it.

// putF16 writes the f16 bits of v at b, little endian.
func putF16(b []byte, v float32) { binary.LittleEndian.PutUint16(b, f32to16(v)) }

// getF16 reads the f16 at b as a float32.
func getF16(b []byte) float32 { return f16to32(binary.LittleEndian.Uint16(b)) }

// recip is ggml's id = d ? 1.0f/d : 0.0f.
func recip(d float32) float32 {
	if d != 0 {
		return 1 / d
	}
	return 0
}

// quant is ggml's MIN(hi, (int8_t)(v + off)) for v = fl(x·id): the
// float32 sum truncated toward zero, clamped to [0, hi], a NaN v counted
// as 0.
func quant(v, off float32, hi int) uint8 {
	if v != v {
		v = 0
	}
	t := v + off
	switch {
	case !(t >= 0): // negative
		return 0
	case t >= float32(hi):
		return uint8(hi)
	}
	return uint8(t) // toward zero
}

// absMax is ggml's loop `if (amax < fabsf(v)) { amax = fabsf(v); max = v; }`
// from amax = max = 0: the first value of largest magnitude, NaNs passed
// over (0, 0 for a block of zeros and NaNs).
func absMax(x []float32) (amax, max float32) {
	for _, v := range x {
		if av := abs(v); amax < av {
			amax, max = av, v
		}
	}
	return amax, max
}

// Q8_0 is ggml's q8_0, exactly as the q8_0 family (asm/vec) stores it: 32
// values in 34 bytes, d (f16) then 32 int8 q_j.
//
//	amax = MAX(amax, |x_j|) for j = 0…31 from 0, MAX(a, b) = a > b ? a : b
//	       (a NaN resets it: amax is the largest |x_j| after the last NaN,
//	       or that NaN if it is x_31)
//	d    = fl(amax/127), id = d ≠ 0 ? fl(1/d) : 0
//	q_j  = roundf(fl(x_j·id)), halves away from zero; a NaN product gives
//	       0 and a product beyond ±127 gives ±127 (C leaves both undefined)
//	d is stored as f16 (nearest even, ≥ 65520 to Inf, a NaN keeping the
//	top of its payload)
//	y_j  = fl(q_j·f16(d))
var Q8_0 = Format{Name: "q8_0", Block: 32, Bytes: 34, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 34, func(b []byte, x []float32) {
			var amax float32
			for _, v := range x {
				if av := abs(v); !(amax > av) {
					amax = av
				}
			}
			d := amax / 127
			id := recip(d)
			putF16(b, d)
			for j, v := range x {
				b[2+j] = byte(roundQ8(float32(v * id)))
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 34, func(y []float32, b []byte) {
			d := getF16(b)
			for j := range y {
				y[j] = float32(int8(b[2+j])) * d
			}
		})
	},
}

// roundQ8 is roundf(v) as an int8, halves away from zero; a NaN gives 0
// and values beyond ±127 give ±127.
func roundQ8(v float32) int8 {
	switch {
	case v != v:
		return 0
	case v > 127:
		return 127
	case v < -127:
		return -127
	}
	t := float32(int32(v)) // toward zero, exact for |v| ≤ 127
	switch f := v - t; {   // exact: t and v share their binade or t = 0
	case f >= 0.5:
		t++
	case f <= -0.5:
		t--
	}
	return int8(t)
}

// Q4_0 is ggml's q4_0: 32 values in 18 bytes, d (f16), then 16 bytes, byte
// j = q_j | q_{j+16}<<4.
//
//	amax, max = the first x_j of largest |x_j| (NaNs passed over)
//	d  = fl(max/−8), id = d ≠ 0 ? fl(1/d) : 0
//	q_j = MIN(15, trunc(fl(fl(x_j·id) + 8.5))), halves up; a NaN product
//	      counts as 0 (q = 8), and the truncation is clamped to [0, 15]
//	y_j = fl((q_j − 8)·f16(d))
//
// An all-zero block stores d = −0.0 (bytes 00 80) and q = 8: it reads back
// as −0.0. A block whose |max| is past about 5.2e5 stores d = ±Inf and
// reads back as NaN (0·Inf) and ±Inf, as ggml's does.
var Q4_0 = Format{Name: "q4_0", Block: 32, Bytes: 18, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 18, func(b []byte, x []float32) {
			_, max := absMax(x)
			d := max / -8
			id := recip(d)
			putF16(b, d)
			for j := 0; j < 16; j++ {
				b[2+j] = quant(float32(x[j]*id), 8.5, 15) | quant(float32(x[j+16]*id), 8.5, 15)<<4
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 18, func(y []float32, b []byte) {
			d := getF16(b)
			for j := 0; j < 16; j++ {
				y[j] = float32(int(b[2+j]&0xf)-8) * d
				y[j+16] = float32(int(b[2+j]>>4)-8) * d
			}
		})
	},
}

// minMax is ggml's `if (v < min) min = v; if (v > max) max = v;` from
// min = FLT_MAX, max = −FLT_MAX (NaNs passed over).
func minMax(x []float32) (lo, hi float32) {
	lo, hi = math.MaxFloat32, -math.MaxFloat32
	for _, v := range x {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
	}
	return lo, hi
}

// Q4_1 is ggml's q4_1: 32 values in 20 bytes, d (f16), m (f16), then 16
// bytes of nibbles as Q4_0.
//
//	min, max as minMax (from ±FLT_MAX, NaNs passed over)
//	d  = fl(fl(max − min)/15), id = d ≠ 0 ? fl(1/d) : 0
//	q_j = MIN(15, trunc(fl(fl(fl(x_j − min)·id) + 0.5))), a NaN product
//	      counting as 0 and the truncation clamped to [0, 15]
//	y_j = fl(fl(q_j·f16(d)) + f16(min))
//
// As in ggml, a block whose min is −65520 or less stores m = −Inf and reads
// back as −Inf or NaN.
var Q4_1 = Format{Name: "q4_1", Block: 32, Bytes: 20, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 20, func(b []byte, x []float32) {
			lo, hi := minMax(x)
			d := (hi - lo) / 15
			id := recip(d)
			putF16(b, d)
			putF16(b[2:], lo)
			for j := 0; j < 16; j++ {
				b[4+j] = quant(float32((x[j]-lo)*id), 0.5, 15) | quant(float32((x[j+16]-lo)*id), 0.5, 15)<<4
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 20, func(y []float32, b []byte) {
			d, m := getF16(b), getF16(b[2:])
			for j := 0; j < 16; j++ {
				y[j] = float32(float32(b[4+j]&0xf)*d) + m
				y[j+16] = float32(float32(b[4+j]>>4)*d) + m
			}
		})
	},
}

// Q5_0 is ggml's q5_0: 32 values in 22 bytes, d (f16), qh (uint32, little
// endian: bit j is bit 4 of q_j), then 16 bytes, byte j = (q_j & 15) |
// (q_{j+16} & 15)<<4.
//
//	amax, max as Q4_0; d = fl(max/−16), id = d ≠ 0 ? fl(1/d) : 0
//	q_j = MIN(31, trunc(fl(fl(x_j·id) + 16.5))), a NaN product counting as
//	      0 (q = 16) and the truncation clamped to [0, 31]
//	y_j = fl((q_j − 16)·f16(d))
//
// An all-zero block stores d = −0.0, qh = 0xffffffff and nibbles 0, and
// reads back as −0.0.
var Q5_0 = Format{Name: "q5_0", Block: 32, Bytes: 22, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 22, func(b []byte, x []float32) {
			_, max := absMax(x)
			d := max / -16
			id := recip(d)
			putF16(b, d)
			var qh uint32
			for j := 0; j < 16; j++ {
				q0, q1 := quant(float32(x[j]*id), 16.5, 31), quant(float32(x[j+16]*id), 16.5, 31)
				b[6+j] = q0&0xf | (q1&0xf)<<4
				qh |= uint32(q0>>4)<<j | uint32(q1>>4)<<(j+16)
			}
			binary.LittleEndian.PutUint32(b[2:], qh)
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 22, func(y []float32, b []byte) {
			d := getF16(b)
			qh := binary.LittleEndian.Uint32(b[2:])
			for j := 0; j < 16; j++ {
				h0, h1 := int(qh>>j&1)<<4, int(qh>>(j+16)&1)<<4
				y[j] = float32(int(b[6+j]&0xf)|h0-16) * d
				y[j+16] = float32(int(b[6+j]>>4)|h1-16) * d
			}
		})
	},
}

// Q5_1 is ggml's q5_1: 32 values in 24 bytes, d (f16), m (f16), qh, then 16
// bytes of low nibbles as Q5_0.
//
//	min, max as Q4_1; d = fl(fl(max − min)/31), id = d ≠ 0 ? fl(1/d) : 0
//	q_j = trunc(fl(fl(fl(x_j − min)·id) + 0.5)) (ggml's (uint8_t), with no
//	      MIN), a NaN product counting as 0 and the truncation clamped to
//	      [0, 31], which changes nothing where ggml is defined
//	y_j = fl(fl(q_j·f16(d)) + f16(min))
var Q5_1 = Format{Name: "q5_1", Block: 32, Bytes: 24, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 24, func(b []byte, x []float32) {
			lo, hi := minMax(x)
			d := (hi - lo) / 31
			id := recip(d)
			putF16(b, d)
			putF16(b[2:], lo)
			var qh uint32
			for j := 0; j < 16; j++ {
				q0, q1 := quant(float32((x[j]-lo)*id), 0.5, 31), quant(float32((x[j+16]-lo)*id), 0.5, 31)
				b[8+j] = q0&0xf | (q1&0xf)<<4
				qh |= uint32(q0>>4)<<j | uint32(q1>>4)<<(j+16)
			}
			binary.LittleEndian.PutUint32(b[4:], qh)
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 24, func(y []float32, b []byte) {
			d, m := getF16(b), getF16(b[2:])
			qh := binary.LittleEndian.Uint32(b[4:])
			for j := 0; j < 16; j++ {
				h0, h1 := qh>>j&1<<4, qh>>(j+16)&1<<4
				y[j] = float32(float32(uint32(b[8+j]&0xf)|h0)*d) + m
				y[j+16] = float32(float32(uint32(b[8+j]>>4)|h1)*d) + m
			}
		})
	},
}

// kvaluesIQ4NL is ggml's kvalues_iq4nl, the non-linear 4-bit grid.
var kvaluesIQ4NL = [16]int8{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

// iq4nlEps is ggml's GROUP_MAX_EPS, 1e-15f.
const iq4nlEps = float32(1e-15)

// IQ4NL is ggml's iq4_nl as quantize_row_iq4_nl_ref writes it
// (quantize_row_iq4_nl_impl with super_block_size = block_size = 32, no
// quant_weights, ntry = −1: no scale search): 32 values in 18 bytes, d
// (f16), then 16 bytes, byte j = L_j | L_{j+16}<<4, L indexing
// kvaluesIQ4NL.
//
//	amax, max = the first x_j of largest |x_j| (`ax > amax`, NaNs passed
//	            over)
//	if amax < fl32(1e-15): d = +0 and every L_j = 8 (see below)
//	d0 = fl(max/−127), id = fl(1/d0)
//	L_j = best_index_int8(fl(id·x_j)): 0 if ≤ −127, 15 if ≥ 113 (a NaN
//	      falls through the binary search to 15), else of the two grid
//	      values around it the lower when fl(v − lo) < fl(hi − v), the
//	      upper otherwise (a tie goes up)
//	w_j = fl(x_j·x_j), q_j = kvaluesIQ4NL[L_j]
//	sumqx = Σ fl(fl(w_j·q_j)·x_j), sumq2 = Σ fl(fl(w_j·q_j)·q_j), summed
//	        in float32 in order j = 0…31
//	d = sumq2 > 0 ? fl(sumqx/sumq2) : 0, stored as f16 (the nibbles are not
//	    chosen again for it)
//	y_j = fl(f16(d)·kvaluesIQ4NL[L_j])
//
// A block with amax < 1e-15 (zeros, all NaN, or tiny values) gets d = 0 in
// ggml too, but ggml copies its nibbles out of a local L[] it never wrote
// for that block: the previous block's nibbles in the same call, stack
// memory before any. Here they are defined as 8, the index ggml gives a
// zero input (kvaluesIQ4NL[8] = 1), so such a block stores 00 00 then
// sixteen 0x88 bytes and reads back as +0.0: a function of the block
// alone. A NaN in a written block makes sumq2 NaN, so d = 0 and the block
// reads back as ±0; an Inf makes d = NaN (Inf/Inf) and the block reads
// back as NaN; both as in ggml.
var IQ4NL = Format{Name: "iq4_nl", Block: 32, Bytes: 18, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 18, func(b []byte, x []float32) {
			var amax, max float32
			for _, v := range x {
				if av := abs(v); av > amax {
					amax, max = av, v
				}
			}
			if amax < iq4nlEps {
				b[0], b[1] = 0, 0
				for j := 2; j < 18; j++ {
					b[j] = 0x88
				}
				return
			}
			id := 1 / (max / -127)
			var l [32]uint8
			var sumqx, sumq2 float32
			for j, v := range x {
				w := float32(v * v)
				l[j] = bestIndexIQ4NL(float32(id * v))
				q := float32(kvaluesIQ4NL[l[j]])
				sumqx += float32(float32(w*q) * v)
				sumq2 += float32(float32(w*q) * q)
			}
			var d float32
			if sumq2 > 0 {
				d = sumqx / sumq2
			}
			putF16(b, d)
			for j := 0; j < 16; j++ {
				b[2+j] = l[j] | l[j+16]<<4
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 18, func(y []float32, b []byte) {
			d := getF16(b)
			for j := 0; j < 16; j++ {
				y[j] = d * float32(kvaluesIQ4NL[b[2+j]&0xf])
				y[j+16] = d * float32(kvaluesIQ4NL[b[2+j]>>4])
			}
		})
	},
}

// bestIndexIQ4NL is ggml's best_index_int8(16, kvalues_iq4nl, x).
func bestIndexIQ4NL(x float32) uint8 {
	v := &kvaluesIQ4NL
	if x <= float32(v[0]) {
		return 0
	}
	if x >= float32(v[15]) {
		return 15
	}
	ml, mu := 0, 15
	for mu-ml > 1 {
		mav := (ml + mu) / 2
		if x < float32(v[mav]) {
			mu = mav
		} else {
			ml = mav
		}
	}
	if below, above := x-float32(v[mu-1]), float32(v[mu])-x; below < above {
		return uint8(mu - 1)
	}
	return uint8(mu)
}

// kvaluesMXFP4 is ggml's kvalues_mxfp4: twice the E2M1 values, in E2M1
// code order.
var kvaluesMXFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// bestIndexMXFP4 is ggml's best_index_mxfp4(x, e): the first index i of
// least fl(|fl(kvalues[i]·e) − x|), by strict <, from index 0; a NaN x
// gives 0, and equally near grid points give the first, the smaller
// magnitude (not round-to-even: 10 goes to 8, −0.5 to +0).
func bestIndexMXFP4(x, e float32) uint8 {
	best := uint8(0)
	bestErr := abs(float32(float32(kvaluesMXFP4[0])*e) - x)
	for i := 1; i < 16; i++ {
		if err := abs(float32(float32(kvaluesMXFP4[i])*e) - x); err < bestErr {
			best, bestErr = uint8(i), err
		}
	}
	return best
}

// e8m0Half is ggml_e8m0_to_fp32_half: 2^(e−128) for every byte, e = 0xFF
// included (2¹²⁷; OCP's MX spec makes 0xFF a NaN, ggml's dequantizer does
// not).
func e8m0Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// MXFP4 is ggml's mxfp4: 32 values in 17 bytes, the E8M0 exponent e, then
// 16 bytes, byte j = q_j | q_{j+16}<<4, q indexing kvaluesMXFP4.
//
//	amax = the largest |x_j| (`amax < fabsf(v)`, NaNs passed over)
//	e    = amax > 0 ? ⌊log2f(amax)⌋ − 2 + 127 : 0
//	d    = 2^(e−128) (ggml_e8m0_to_fp32_half)
//	q_j  = bestIndexMXFP4(x_j, d)
//	y_j  = fl(kvaluesMXFP4[q_j]·2^(e−128))
//
// log2f is the float32 logarithm correctly rounded (floorLog2f computes
// its floor exactly): one float32 step below 2^k it rounds up to k, so
// ggml takes the next exponent there (2^4 − 2⁻²⁰ gets e = 129, not 128),
// which glibc's log2f gives too. ggml's cast (uint8_t) of that float is
// undefined below 0 and for Inf; here e is clamped: 0 < amax < 2⁻¹²⁵ gives
// e = 0 (d = 2⁻¹²⁸, the scale that represents such a block best), and an
// Inf gives e = 254, the largest exponent OCP's E8M0 allows (0xFF is its
// NaN); then Inf and every value of the block quantize to index 0 (+0),
// since every error against Inf is Inf or NaN. A NaN quantizes to index 0.
// Every byte decodes: e = 0xFF reads as 2¹²⁷, kvalues ±8 and ±12 then
// overflow to ±Inf.
var MXFP4 = Format{Name: "mxfp4", Block: 32, Bytes: 17, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 32, 17, func(b []byte, x []float32) {
			amax, _ := absMax(x)
			e := mxfp4Exponent(amax)
			d := e8m0Half(e)
			b[0] = e
			for j := 0; j < 16; j++ {
				b[1+j] = bestIndexMXFP4(x[j], d) | bestIndexMXFP4(x[j+16], d)<<4
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 32, 17, func(y []float32, b []byte) {
			d := e8m0Half(b[0])
			for j := 0; j < 16; j++ {
				y[j] = float32(kvaluesMXFP4[b[1+j]&0xf]) * d
				y[j+16] = float32(kvaluesMXFP4[b[1+j]>>4]) * d
			}
		})
	},
}

// mxfp4Exponent is MXFP4's e for a block maximum amax ≥ 0 (never NaN).
func mxfp4Exponent(amax float32) uint8 {
	switch {
	case !(amax > 0):
		return 0
	case math.IsInf(float64(amax), 1):
		return 254
	}
	e := floorLog2f(amax) - 2 + 127
	if e < 0 {
		return 0
	}
	return uint8(e)
}

// ue4m3to32 is ggml_ue4m3_to_fp32: half the value of an unsigned e4m3 byte
// (kvaluesMXFP4 being twice E2M1), for every byte: 0x00 and 0x7F give 0;
// otherwise bit 7 is ignored, exponent field e = b>>3&15 and mantissa
// m = b&7 give (m/8)·2⁻⁶ (e = 0) or (1 + m/8)·2^(e−7), times ½; so 0xFF
// reads as 240.
func ue4m3to32(b uint8) float32 {
	if b == 0 || b == 0x7f {
		return 0
	}
	e, m := int(b>>3&0xf), float32(b&7)
	var raw float32
	if e == 0 {
		raw = float32(math.Ldexp(float64(m), -9))
	} else {
		raw = float32(math.Ldexp(float64(1+m/8), e-7))
	}
	return raw * 0.5
}

// f32toue4m3 is ggml_fp32_to_ue4m3: for !(x > 0) (0, negatives, NaN) 0;
// x is clamped to 448 (Inf included); below 2⁻⁶ the code is
// MIN(7, trunc(fl(fl(x·512) + 0.5))) (0 if that is 0), so [7.5, 8)·2⁻⁹
// gives 7·2⁻⁹; above, the 3 mantissa bits are rounded half up by bit 19
// (ties away from zero, not to even: 1.0625 gives 1.125) and an exponent
// field reaching 15 gives 448 (0x7E): everything from 248 up is 448.
func f32toue4m3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	x = min(x, 448)
	u := math.Float32bits(x)
	e := int(u>>23&0xff) - 127 + 7
	if e <= 0 {
		m := float32(x*512) + 0.5
		if m >= 7 {
			return 7
		}
		return uint8(m) // 0 below 1
	}
	if e >= 15 {
		return 0x7e
	}
	m := int(u>>20&7) + int(u>>19&1)
	if m > 7 {
		m, e = 0, e+1
		if e >= 15 {
			return 0x7e
		}
	}
	return uint8(e<<3 | m)
}

// NVFP4 is ggml's nvfp4 (GGML_TYPE_NVFP4): 64 values in 36 bytes, four
// UE4M3 scales d_s (one per 16 values), then 32 bytes: sub-block s owns
// bytes 4+8s…4+8s+7, byte 4+8s+j = q_{16s+j} | q_{16s+j+8}<<4, q indexing
// kvaluesMXFP4. There is no tensor scale.
//
//	amax_s = the largest |x| of the sub-block (NaNs passed over)
//	d_s    = f32toue4m3(fl(amax_s/6)), D_s = ue4m3to32(d_s)
//	q      = bestIndexMXFP4(x, D_s)
//	y      = fl(kvaluesMXFP4[q]·D_s)
//
// A NaN or ±Inf quantizes to index 0 (+0); an Inf saturates its
// sub-block's scale to 448 (0x7E), so its other values mostly flush to 0.
// A sub-block with amax below about 0.006 flushes to zero, one above 2688
// saturates. Every byte decodes (ue4m3to32, kvaluesMXFP4).
var NVFP4 = Format{Name: "nvfp4", Block: 64, Bytes: 36, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		blocks(dst, x, 64, 36, func(b []byte, x []float32) {
			for s := 0; s < 4; s++ {
				xb := x[16*s : 16*s+16]
				amax, _ := absMax(xb)
				b[s] = f32toue4m3(amax / 6)
				d := ue4m3to32(b[s])
				for j := 0; j < 8; j++ {
					b[4+8*s+j] = bestIndexMXFP4(xb[j], d) | bestIndexMXFP4(xb[j+8], d)<<4
				}
			}
		})
		return 0
	},
	dec: func(y []float32, src []byte, _ float32) {
		unblocks(y, src, 64, 36, func(y []float32, b []byte) {
			for s := 0; s < 4; s++ {
				d := ue4m3to32(b[s])
				yb := y[16*s : 16*s+16]
				for j := 0; j < 8; j++ {
					q := b[4+8*s+j]
					yb[j] = float32(kvaluesMXFP4[q&0xf]) * d
					yb[j+8] = float32(kvaluesMXFP4[q>>4]) * d
				}
			}
		})
	},
}
