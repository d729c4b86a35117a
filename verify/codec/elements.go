package codec

import (
	"encoding/binary"
	"math"
)

// F32 stores each value as its float32 bits, little endian, and reads
// them back as they are: NaN payloads included, nothing rounds.
var F32 = Format{Name: "f32", Block: 1, Bytes: 4, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		for i, v := range x {
			binary.LittleEndian.PutUint32(dst[4*i:], math.Float32bits(v))
		}
		return 0
	},
	dec: func(dst []float32, src []byte, _ float32) {
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(src[4*i:]))
		}
	},
}

// F16 stores each value as IEEE binary16 bits, little endian: rounded to
// nearest even, magnitudes from 65520 up (Inf included) to ±Inf, a NaN a
// quiet NaN of its sign keeping the top 10 bits of its payload. It reads
// every one of the 65536 patterns back exactly (subnormals, ±Inf, NaN
// payloads). These are the bits templates/rt/convert.go's f32to16 and
// f16to32 produce.
var F16 = Format{Name: "f16", Block: 1, Bytes: 2, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], f32to16(v))
		}
		return 0
	},
	dec: func(dst []float32, src []byte, _ float32) {
		for i := range dst {
			dst[i] = f16to32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	},
}

// BF16 stores each value as bfloat16 bits (the top half of a float32),
// little endian: rounded to nearest even (overflow to ±Inf), a NaN kept as
// its top 16 bits with the quiet bit 0x0040 set. It reads every pattern
// back exactly. These are templates/rt/convert.go's f32tobf16 and
// bf16to32.
var BF16 = Format{Name: "bf16", Block: 1, Bytes: 2, Scale: NoScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		for i, v := range x {
			binary.LittleEndian.PutUint16(dst[2*i:], f32tobf16(v))
		}
		return 0
	},
	dec: func(dst []float32, src []byte, _ float32) {
		for i := range dst {
			dst[i] = bf16to32(binary.LittleEndian.Uint16(src[2*i:]))
		}
	},
}

// E4M3 stores each value x as the OCP FP8 e4m3fn byte of fl(x/s), s the
// per-tensor scale the caller passes: the float32 quotient rounded to
// nearest even in e4m3 (1 sign, 4 exponent bits of bias 7, 3 mantissa
// bits; subnormals m·2⁻⁹), magnitudes from 448 up and ±Inf saturating to
// ±448 (S.1111.110), a NaN giving S.1111.111 with its sign, the sign of
// zero kept. It reads byte b back as fl(e4m3(b)·s): S.1111.111 is a NaN,
// every other byte exact before the product. This is vLLM's
// scaled_convert (x/scale, then __nv_cvt_float_to_fp8 with
// __NV_SATFINITE) and templates/rt/cache_e4m3.go's f32toe4m3 and
// e4m3to32. The quotient and product use whatever s is given (0, Inf and
// NaN follow float32 arithmetic); the entry points check s is finite and
// positive.
var E4M3 = Format{Name: "e4m3", Block: 1, Bytes: 1, Scale: TensorScale,
	enc: func(dst []byte, x []float32, s float32) float32 { return fp8Encode(dst, x, s, f32toe4m3) },
	dec: func(dst []float32, src []byte, s float32) { fp8Decode(dst, src, s, e4m3to32) },
}

// E5M2 stores each value x as the OCP FP8 e5m2 byte of fl(x/s), s the
// per-tensor scale: rounded to nearest even in e5m2 (1 sign, 5 exponent
// bits of bias 15, 2 mantissa bits; subnormals m·2⁻¹⁶), saturating as
// vLLM's fp8 KV cache does (__nv_cvt_float_to_fp8 with __NV_SATFINITE,
// csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh): magnitudes from
// 61440 (57344 plus half its ulp) up and ±Inf give ±57344 (S.11110.11),
// never Inf; a NaN gives S.11111.11 with its sign (CUDA's software path
// gives 0x7F, its sign dropped; both are NaN). It reads byte b back as
// fl(e5m2(b)·s), e5m2(b) exact: S.11111.00 is ±Inf (the encoder never
// writes it), S.11111.01 to .11 NaN. s is used as given, as for E4M3.
var E5M2 = Format{Name: "e5m2", Block: 1, Bytes: 1, Scale: TensorScale,
	enc: func(dst []byte, x []float32, s float32) float32 { return fp8Encode(dst, x, s, f32toe5m2) },
	dec: func(dst []float32, src []byte, s float32) { fp8Decode(dst, src, s, e5m2to32) },
}

// E4M3Head is E4M3 with one scale per KV head (vLLM #30141,
// llm-compressor's attn_head strategy: reshape_and_cache_flash takes a
// k_scale/v_scale array of num_kv_heads entries): the same element codec,
// a call coding values of one KV head with that head's scale s.
var E4M3Head = Format{Name: "e4m3_head", Block: 1, Bytes: 1, Scale: HeadScale, enc: E4M3.enc, dec: E4M3.dec}

// E5M2Head is E5M2 with one scale per KV head, as E4M3Head.
var E5M2Head = Format{Name: "e5m2_head", Block: 1, Bytes: 1, Scale: HeadScale, enc: E5M2.enc, dec: E5M2.dec}

func fp8Encode(dst []byte, x []float32, s float32, narrow func(float32) uint8) float32 {
	for i, v := range x {
		dst[i] = narrow(v / s)
	}
	return s
}

func fp8Decode(dst []float32, src []byte, s float32, widen func(uint8) float32) {
	for i, b := range src {
		dst[i] = widen(b) * s
	}
}

// int8Floor is vLLM's lower bound on a per-token-head scale, 1e-6 as a
// float32.
const int8Floor = float32(1e-6)

// Int8PerTokenHead is vLLM's int8_per_token_head KV cache: one call codes
// one head of one token, x, into len(x) int8 bytes and returns its float32
// scale:
//
//	amax = max |x_j|, NaNs left out (0 if every value is NaN)
//	s    = max(fl(amax/127), fl32(1e-6))
//	inv  = fl(1/s)
//	v_j  = fl(x_j·inv), a NaN counted as 0
//	r_j  = fl(v_j + 0.5) if v_j ≥ 0, else fl(v_j − 0.5)
//	q_j  = trunc(clamp(r_j, −128, 127))   (int8, two's complement byte)
//
// that is, halves rounded away from zero by an add and Triton's truncating
// int8 store. The scale lives outside the bytes: vLLM keeps it as a float32
// per (token, KV head) in k_scale_cache/v_scale_cache, shaped
// [num_blocks, block_size, num_kv_heads] (triton_reshape_and_cache_flash.py,
// _reshape_cache_per_token_head); ropegen's engine keeps it beside the
// cache row and passes it back to Decode, which reads y_j = fl(q_j·s) for
// any bytes and any s. With an Inf in x, s is Inf, inv 0 and every q 0.
var Int8PerTokenHead = Format{Name: "int8_per_token_head", Block: 1, Bytes: 1, Scale: TokenHeadScale,
	enc: func(dst []byte, x []float32, _ float32) float32 {
		var amax float32
		for _, v := range x {
			if av := abs(v); av > amax {
				amax = av
			}
		}
		s := amax / 127
		if !(s >= int8Floor) {
			s = int8Floor
		}
		inv := 1 / s
		for i, v := range x {
			r := float32(v * inv)
			switch {
			case r != r:
				r = 0.5
			case r >= 0:
				r += 0.5
			default:
				r -= 0.5
			}
			r = min(max(r, -128), 127)
			dst[i] = byte(int8(r))
		}
		return s
	},
	dec: func(dst []float32, src []byte, s float32) {
		for i, b := range src {
			dst[i] = float32(int8(b)) * s
		}
	},
}
