package rt

// NVFP4Cache returns the view s of buf as a cache of ggml nvfp4 blocks: a
// head of HeadDim values takes HeadDim/64 blocks of 36 bytes (four UE4M3
// scale bytes d_s, one per 16 values, then 32 bytes: sub-block s's byte j
// holding q_{16s+j} in its low nibble and q_{16s+j+8} in its high one, each
// an index into twice the E2M1 grid; Rotary.CacheHead("nvfp4")), and s
// counts bytes. Values are stored as ggml's quantize_row_nvfp4_ref stores
// them (d_s = ue4m3(amax_s/6), ggml's rounding of the UE4M3 mantissa half
// up; each value the first of the nearest grid points of x/D_s, D_s half
// the UE4M3 value; a NaN or an infinity as index 0, an infinity saturating
// its sub-block's scale) and read back as kvalues[q]·D_s. It keeps no
// tensor scale: NVIDIA's form with a float32 tensor scale is not this one.
func NVFP4Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheNVFP4, s: s, u8: buf}
}

func init() { cacheBuilt[cacheNVFP4] = true }
