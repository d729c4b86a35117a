package rt

// MXFP4Cache returns the view s of buf as a cache of ggml mxfp4 blocks: a
// head of HeadDim values takes HeadDim/32 blocks of 17 bytes (an E8M0
// exponent byte e, then 16 bytes, byte j holding q_j in its low nibble and
// q_{j+16} in its high one, each an index into kvalues_mxfp4, twice the
// E2M1 values; Rotary.CacheHead("mxfp4")), and s counts bytes. Values are
// stored as ggml's quantize_row_mxfp4_ref stores them (e = ⌊log2f(amax)⌋ −
// 2 + 127, clamped to 0…254, d = 2^(e−128), q_j the first index i of
// least |kvalues_mxfp4[i]·d − x_j|, a NaN giving 0) and read back as
// kvalues_mxfp4[q_j]·d.
func MXFP4Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheMXFP4, s: s, u8: buf}
}

func init() { cacheBuilt[cacheMXFP4] = true }
