package rt

// IQ4NLCache returns the view s of buf as a cache of ggml iq4_nl blocks: a
// head of HeadDim values takes HeadDim/32 blocks of 18 bytes (an f16 scale
// d, little endian, then 16 bytes, byte j holding L_j in its low nibble and
// L_{j+16} in its high one, each an index into kvalues_iq4nl;
// Rotary.CacheHead("iq4_nl")), and s counts bytes. Values are stored as
// ggml's quantize_row_iq4_nl_ref stores them without weights (max the first
// value of largest magnitude, L_j the nearest grid index of x_j·(−127/max),
// a tie going up, d the least-squares scale of those indices, in float32
// sums in value order; a block of absolute maximum below 1e-15 as d = 0 and
// every L_j = 8) and read back as f16(d)·kvalues_iq4nl[L_j].
func IQ4NLCache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheIQ4NL, s: s, u8: buf}
}

func init() { cacheBuilt[cacheIQ4NL] = true }
