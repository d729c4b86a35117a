package codec

// NVFP4GS is NVIDIA's NVFP4 with its float32 tensor (global) scale g, as
// vLLM's reference quantizer computes it: ref_nvfp4_quant and cast_to_fp4
// in tests/kernels/quantization/test_nvfp4_quant.py (vllm-project/vllm
// at e0055804ee6d5ffead27bd513be78a61c5c850a1), with the e4m3 scale
// saturated at 448 as the CUDA kernel's __nv_fp8_e4m3 conversion
// (csrc/libtorch_stable/quantization/fp4/nvfp4_utils.cuh,
// cvt_warp_fp16_to_fp4) and later versions of the reference
// (clamp(scale, −448, 448)) do, the nibble order of that kernel
// (cvt.rn.satfinite.e2m1x2.f32: the first value of a pair in the low
// nibble) and the dequantizer dequantize_nvfp4_to_dtype of
// tests/kernels/quantization/nvfp4_utils.py (vllm-project/vllm at
// 552ba11716543b9ccad53e5a75bad90a2e7bf244).
//
// g is the multiplier that maps the tensor onto the FP8 × FP4 range
// (NVIDIA's recipe: g = 448·6/amax(tensor); vLLM's NVFP4 KV cache passes
// g = 1/k_scale), passed as the scale of Encode and Decode. A block of 16
// values takes 9 bytes, ropegen's layout: bytes 0…7 the E2M1 codes, byte
// j = c_{2j} | c_{2j+1}<<4, then byte 8 the block's e4m3fn scale. (vLLM's
// cache keeps the same 8 bytes per 16 values in a data region and the
// scale bytes in a separate region of the page; moving byte 8 of every
// block there gives its layout.)
//
//	amax = the largest |x_j| of the block, NaNs passed over (0 if all NaN)
//	S    = f32toe4m3(min(fl(g·fl(amax·fl32(1/6))), 448)) (nearest even;
//	       a NaN S, from a NaN g, gives the NaN byte 0x7F)
//	rg   = g ≠ 0 ? fl(1/g) : 0, p = fl(e4m3(S)·rg), o = p ≠ 0 ? fl(1/p) : 0
//	c_j  = f32toe2m1(fl(x_j·o)): nearest even on {0, ½, 1, 1½, 2, 3, 4, 6},
//	       saturating at ±6, the sign bit the product's (−0 and small
//	       negatives give 0x8), a NaN giving 0
//	y_j  = fl(e2m1(c_j)·fl(e4m3(S)/g))
//
// Where vLLM's reference is not defined this way: torch.max propagates a
// NaN, so one NaN there turns its whole block to NaN; here a NaN is left
// out of amax and quantizes to 0 (as the CUDA kernel's __hmax and ggml's
// nvfp4 leave it out). Every byte decodes: the scale byte is a signed
// e4m3fn (0x7F and 0xFF are NaN), c = 0x8 is −0.
var NVFP4GS = Format{Name: "nvfp4_gs", Block: 16, Bytes: 9, Scale: TensorScale,
	enc: func(dst []byte, x []float32, g float32) float32 {
		blocks(dst, x, 16, 9, func(b []byte, x []float32) {
			var amax float32
			for _, v := range x {
				if av := abs(v); av > amax {
					amax = av
				}
			}
			sf := float32(g * float32(amax*sixth))
			if sf > 448 {
				sf = 448
			}
			b[8] = f32toe4m3(sf)
			var rg float32
			if g != 0 {
				rg = 1 / g
			}
			o := recip(float32(e4m3to32(b[8]) * rg))
			for j := 0; j < 8; j++ {
				b[j] = f32toe2m1(float32(x[2*j]*o)) | f32toe2m1(float32(x[2*j+1]*o))<<4
			}
		})
		return g
	},
	dec: func(y []float32, src []byte, g float32) {
		unblocks(y, src, 16, 9, func(y []float32, b []byte) {
			s := e4m3to32(b[8]) / g
			for j := 0; j < 8; j++ {
				y[2*j] = e2m1to32(b[j]) * s
				y[2*j+1] = e2m1to32(b[j]>>4) * s
			}
		})
	},
}

// sixth is get_reciprocal(FLOAT4_E2M1_MAX) as torch multiplies a float32
// tensor by it: 1/6 rounded to float32.
const sixth = float32(1.0 / 6)
