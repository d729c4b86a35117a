package rt

// NVFP4GSCache returns the view s of buf as a cache of NVIDIA's NVFP4
// with its float32 tensor (global) scale g: a head of HeadDim values (a
// multiple of 32) takes HeadDim/16 blocks of 9 bytes, each 16 values as 8
// bytes of E2M1 codes (byte j holding c_{2j} in its low nibble and
// c_{2j+1} in its high one) then the block's e4m3fn scale S
// (Rotary.CacheHead("nvfp4_gs")), and s counts bytes. A block is stored
// as vLLM's reference quantizer stores it: S = e4m3(min(g·amax/6, 448))
// (amax the largest |x| of the block, NaNs passed over), each value the
// E2M1 code of x/(e4m3(S)/g), rounded to nearest even on {0, ½, 1, 1½, 2,
// 3, 4, 6}, saturating at ±6 (a NaN as 0), every step rounded to float32
// in verify/codec's NVFP4GS order; it is read back as e2m1·(e4m3(S)/g).
// g is a multiplier (NVIDIA's recipe: 448·6/amax of the tensor; vLLM's
// NVFP4 KV cache passes g = 1/k_scale); the entry points that use the view
// check that it is finite and > 0.
func NVFP4GSCache(buf []byte, s Strides, g float32) Cache {
	return Cache{kind: cacheNVFP4GS, s: s, u8: buf, scale: g}
}

func init() { cacheBuilt[cacheNVFP4GS] = true }
