// Package codec is the scalar reference implementation of every KV-cache
// format ropegen supports: what each format stores for a float32 value,
// bit for bit, and what it reads back. verify's cache checks and asm/vec's
// kernel tests compare every backend with it byte for byte, so its
// definitions are the contract. It imports only the standard library.
//
// # API
//
// A [Format] is a row of the table [Formats], found by its -out-dtype name
// with [Lookup]: Block values are stored in Bytes bytes, blocks one after
// another, and [Format.Encode] and [Format.Decode] take whole blocks:
//
//	f, ok := codec.Lookup("q4_0")
//	b := make([]byte, f.Size(len(x)))
//	s := f.Encode(b, x, scale) // scale: see Format.Scale
//	f.Decode(y, b, s)
//
// Format.Scale says where the scales that are not in the bytes live:
// [NoScale] (f32, f16, bf16, ggml's block formats: all in the bytes),
// [TensorScale] (e4m3, e5m2: one float32 per tensor, x/s is stored;
// nvfp4_gs: NVIDIA's global scale), [HeadScale] (e4m3_head, e5m2_head:
// the caller passes the scale of the KV head being coded) and
// [TokenHeadScale] (int8_per_token_head: Encode computes the scale of the
// one head of one token it codes and returns it; the caller keeps it
// beside the bytes and passes it to Decode). A scale is data: the codecs
// compute with whatever float32 they are given; the entry points that take
// one from a user check it.
//
// [Hadamard], [InverseHadamard], [HadamardN] and [HadamardBlock] are the
// transform of Hadamard-rotated caches (below).
//
// # Formats
//
//	name                 values/bytes  scale            definition
//	f32                  1/4           none             float32 bits, little endian
//	f16                  1/2           none             IEEE binary16, nearest even, overflow to ±Inf
//	bf16                 1/2           none             bfloat16, nearest even, a NaN quieted
//	e4m3                 1/1           per tensor       OCP e4m3fn of x/s, nearest even, saturating at ±448
//	e5m2                 1/1           per tensor       OCP e5m2 of x/s, nearest even, saturating at ±57344
//	e4m3_head            1/1           per KV head      e4m3 with the head's scale (vLLM #30141)
//	e5m2_head            1/1           per KV head      e5m2 with the head's scale
//	q8_0                 32/34         none             ggml q8_0 (ties away from zero)
//	q4_0, q4_1           32/18, 32/20  none             ggml q4_0, q4_1
//	q5_0, q5_1           32/22, 32/24  none             ggml q5_0, q5_1
//	iq4_nl               32/18         none             ggml iq4_nl (the ref: no scale search)
//	mxfp4                32/17         none             ggml mxfp4 (E8M0 exponent, E2M1 values)
//	nvfp4                64/36         none             ggml nvfp4 (4 UE4M3 scales, no tensor scale)
//	nvfp4_gs             16/9          per tensor       NVIDIA NVFP4 with its float32 global scale (vLLM's reference)
//	int8_per_token_head  1/1           per token, head  vLLM int8_per_token_head
//
// Each format's variable ([F16], [Q4_0], [MXFP4], [NVFP4GS],
// [Int8PerTokenHead], …) gives its arithmetic exactly, every rounding.
// fl() is float32 rounding to nearest even; every float32 operation rounds
// once, and no multiplication is fused with an addition (the code converts
// each product explicitly, which is what keeps Go from fusing it on arm64,
// ppc64, s390x, riscv64 and amd64 v3; ggml's vectors were recorded with
// -ffp-contract=off). A NaN's sign and payload are not part of the
// contract: compare NaN as NaN (the NaN an operation such as Inf/Inf
// produces differs between x86 and arm64).
//
// f32, f16, bf16, e4m3 and q8_0 keep the bits ropegen produced before this
// package (templates/rt/convert.go, templates/rt/cache_e4m3.go, the q8_0
// family in asm/vec, docs/contract.md §11).
//
// # Where the sources leave a value undefined, and what is defined here
//
//   - q8_0, q4_0, q4_1, q5_0, q5_1 (ggml converts NaN, or values out of
//     the integer's range, to int8: undefined in C): a NaN product x·id
//     counts as 0 (the zero quant: q = 0, 8, 16; for q4_1 and q5_1 the
//     quant 0, the block minimum), and the integer is clamped to the
//     quant's range (q8_0 ±127, q4 0…15, q5 0…31). So a NaN among finite
//     values reads back as 0; an Inf makes d = ±Inf and the block reads
//     back as NaN and ±Inf (as ggml's arithmetic goes); a nonzero scale so
//     small that 1/d overflows sends positive values to the top quant and
//     negative ones to the bottom. Everywhere ggml is defined these equal
//     it.
//   - mxfp4: ggml's (uint8_t)(floorf(log2f(amax)) − 2 + 127) is undefined
//     for amax < 2⁻¹²⁵ and for Inf: e is 0 for the first (the scale that
//     represents such a block best) and 254 for an Inf (OCP E8M0's largest
//     exponent; 0xFF is its NaN), which quantizes the whole block to +0.
//     log2f is computed as the correctly rounded float32 logarithm's floor,
//     exactly, from the bits (floorLog2f derives it); it equals glibc
//     2.36's floorf(log2f(a)) on every positive finite float32 (checked
//     exhaustively outside the package: both round up at the same 7456
//     values).
//   - iq4_nl: a block with absolute maximum below 1e-15 gets d = 0, and
//     nibbles ggml never writes (it copies a stale local array); here they
//     are 8 (the grid index of a zero input, kvalues_iq4nl[8] = 1), so the
//     block is 00 00 then sixteen 0x88 and reads back as +0.
//   - nvfp4_gs: vLLM's reference takes a NaN into its block maximum
//     (torch.max) and turns the block to NaN; here a NaN is left out of the
//     maximum and quantizes to 0, as the CUDA kernel's __hmax and ggml's
//     nvfp4 do. A value that rounds to zero keeps its sign bit (0x8 for
//     −0), as an IEEE conversion does.
//   - int8_per_token_head: Triton's maximum over a head and its clamp are
//     unspecified for NaN; here a NaN is left out of the maximum and stores
//     0.
//   - Decoders, for any byte pattern: an f16 scale that is NaN or Inf
//     gives NaN or ±Inf values by float32 arithmetic (0·Inf = NaN); e8m0
//     0xFF reads as 2¹²⁷ (ggml_e8m0_to_fp32_half; OCP would say NaN), so
//     ±8 and ±12 then overflow to ±Inf; UE4M3 (ggml) 0x00 and 0x7F read as
//     0, bit 7 is ignored otherwise (0xFF reads as 480); the e4m3 codes
//     S.1111.111 read as NaN, the e5m2 codes S.11111.00 as ±Inf and
//     S.11111.01…11 as NaN; nvfp4_gs's scale byte is a signed e4m3fn.
//
// # Sources
//
//   - ggml-org/ggml at d99724f2b141fed9e1a9f402213506c081433465:
//     src/ggml-quants.c (quantize_row_{q4_0,q4_1,q5_0,q5_1,q8_0,mxfp4,
//     nvfp4}_ref, quantize_row_iq4_nl_ref via quantize_row_iq4_nl_impl,
//     best_index_int8, best_index_mxfp4, dequantize_row_*), src/ggml-impl.h
//     (MAX, MIN, ggml_compute_fp32_to_fp16, ggml_e8m0_to_fp32_half,
//     ggml_ue4m3_to_fp32, ggml_fp32_to_ue4m3), src/ggml-common.h (block
//     layouts, kvalues_iq4nl, kvalues_fp4), src/ggml-cpu/ops.cpp
//     (ggml_compute_forward_fwht_f32), tests/test-backend-ops.cpp
//     (test_mul_mat_hadamard: the Sylvester-ordered matrix). The 133 rows
//     of testdata/ggml_quant_vectors.json were recorded from that code
//     (testdata/README.md).
//   - OCP 8-bit Floating Point Specification (OFP8) rev. 1.0 (e4m3fn,
//     e5m2), OCP Microscaling Formats (MX) v1.0 (E8M0, E2M1).
//   - vLLM (vllm-project/vllm): csrc/quantization/w8a8/fp8/nvidia/
//     quant_utils.cuh at ceb47f433cf9289a7a4e50cc14917c70e71d80f6
//     (scaled_vec_conversion: __nv_cvt_float_to_fp8(a / scale,
//     __NV_SATFINITE, …), fp8 → half → float · scale) for e4m3/e5m2; CUDA's
//     cuda_fp8.hpp (__nv_cvt_double_to_fp8: NaN stays NaN, anything past
//     the overflow threshold, ±Inf included, gives the largest finite value
//     under __NV_SATFINITE) for what that does with Inf and NaN; PR #30141
//     ("Add llmcompressor fp8 kv-cache quant (per-tensor and
//     per-attn_head)", merged) for per-head scales;
//     vllm/v1/attention/ops/triton_reshape_and_cache_flash.py and
//     vllm/v1/attention/ops/triton_quant_kv/int8_fp8_per_token_head.py
//     (_reshape_cache_per_token_head: scale = max(absmax/127, 1e-6) per
//     (token, head), stored as float32 in [num_blocks, block_size,
//     num_kv_heads] scale caches; q = clamp(x·(1/scale), −128, 127) through
//     Triton's truncating int8 store) and PR #45361 ("Fix INT8
//     per-token-head KV cache rounding", merged 2026-06) for
//     int8_per_token_head; tests/kernels/quantization/test_nvfp4_quant.py
//     at e0055804ee6d5ffead27bd513be78a61c5c850a1 (ref_nvfp4_quant,
//     cast_to_fp4), tests/kernels/quantization/nvfp4_utils.py at
//     552ba11716543b9ccad53e5a75bad90a2e7bf244 (dequantize_nvfp4_to_dtype,
//     break_fp4_bytes), csrc/libtorch_stable/quantization/fp4/
//     nvfp4_utils.cuh at bde90062eb908dec6a314970a5edb554f6e8a0cc
//     (cvt_warp_fp16_to_fp4, cvt.rn.satfinite.e2m1x2.f32) and
//     csrc/libtorch_stable/nvfp4_kv_cache_kernels.cu at
//     5a5fc0680558bf68191b6717aa43ab1691846240 (the KV cache's data and
//     scale regions, global scale = 1/k_scale) for nvfp4_gs.
//   - llama.cpp (ggml-org/llama.cpp) PR #21038 ("llama : rotate
//     activations for better quantization", merged 2026-04-01 as 744c0c73):
//     src/llama-kv-cache.cpp (attn_rot_k, attn_rot_v, build_input_k_rot,
//     build_input_v_rot) for the Hadamard rotation.
//
// # What could not be pinned down
//
//   - int8_per_token_head's rounding: the stored vLLM sources (up to the
//     triton_quant_kv module) clamp x·(1/s) and let Triton's store truncate
//     toward zero; PR #45361 (merged) rounds before clamping. Its diff was
//     not available here; its description gives torch.round semantics, and
//     two independent ports that say they match vLLM use
//     where(v ≥ 0, v + 0.5, v − 0.5) before the truncating store, which is
//     what Int8PerTokenHead does (halves away from zero, through a float32
//     add). If the merged code uses rint (ties to even), only exact halves
//     of v differ.
//   - GPU arithmetic is not IEEE everywhere: Triton's default float32
//     division and vLLM's CUDA NVFP4 kernel (rcp.approx.ftz) are
//     approximate, so vLLM's GPU bytes can differ from these definitions by
//     one step where a value sits near a rounding boundary. The definitions
//     here are the IEEE evaluation of vLLM's formulas (its PyTorch
//     references for NVFP4).
//   - ggml's CPU backend does not use the ref for q8_0 (its SIMD code
//     rounds ties to even); the ref is the contract, as
//     testdata/ggml_quant_vectors.md explains.
//
// # Hadamard-rotated caches
//
// llama.cpp (#21038) multiplies Q, K and V by H_n/√n before a quantized
// cache stores them and the attention output by it again (H_n is symmetric
// and H_n·H_n = n·I, so the normalized matrix is its own inverse), in n×n
// blocks along the head: for K, n is the largest power of two dividing the
// head size (build_input_k_rot: from 64, doubled while it divides), for V
// a fixed 64; it rotates only when the cache type is quantized and the
// head size is a multiple of 64, so heads of 96 or 80 are not rotated
// there. ggml builds H_n in Sylvester order, H[i][j] = (−1)^popcount(i&j),
// and its CPU backend computes the product as a fast transform that scales
// by 1.0f/sqrtf(n) first, then butterflies.
//
// ropegen fixes its own arithmetic, the same bits on every backend: blocks
// of n = 2^k values, n the largest power of two dividing the head size
// ([HadamardBlock]: llama.cpp's K rotation for every head size it rotates,
// and defined for the others: 96 gives blocks of 32, 80 of 16; [HadamardN]
// takes any other n, such as llama.cpp's 64 for V), and in each block the
// butterflies first, for s = 1, 2, 4, …, n/2, for every i with i&s = 0,
//
//	(x_i, x_{i+s}) ← (fl(x_i + x_{i+s}), fl(x_i − x_{i+s})),
//
// which leaves Σ_j H[i][j]·x_j in x_i, then every value multiplied by
// c = fl32(1/√n): 2^(−k/2) exactly for even k, 2^(−(k−1)/2)·0x1.6a09e6p-1
// for odd k. The inverse is the same function.
//
// Error bound. Let y = (H_n/√n)·x exactly and ŷ the computed block, with
// u = 2⁻²⁴ and γ_m = m·u/(1 − m·u). After stage t every value is
// Σ_j ±x_j·Π(1 + δ), one factor |δ| ≤ u per stage on the path of x_j (a
// sum that underflows is exact, so this holds for subnormals too); c is
// (1/√n)(1 + ε), |ε| ≤ u, ε = 0 for even k; the product rounds once more,
// relative u, or absolute at most 2⁻¹⁵⁰ where it underflows. With no
// overflow, by Higham's lemma on products of k+2 factors (1 + δ),
//
//	|ŷ_i − y_i| ≤ γ_{k+2}·(1/√n)·Σ_j |x_j| + 2⁻¹⁵⁰   (γ_{k+1} for even k),
//
// at most γ_{k+2}·‖x‖₂ + 2⁻¹⁵⁰ since Σ|x_j| ≤ √n·‖x‖₂: for n = 128, about
// 9u·‖x‖₂ ≈ 5.4e-7·‖x‖₂ (k = 7, odd). TestHadamardBound checks it against a float64
// transform on random blocks of 1 to 512 values, and the round trip
// InverseHadamard(Hadamard(x)) within the bound applied twice.
package codec
