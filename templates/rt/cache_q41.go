package rt

// Q41Cache returns the view s of buf as a cache of ggml q4_1 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 20 bytes (an f16 scale d and
// an f16 minimum m, little endian, then 16 bytes of nibbles as q4_0's;
// Rotary.CacheHead("q4_1")), and s counts bytes. Values are stored as
// ggml's quantize_row_q4_1_ref stores them (d = (max − min)/15, m = min,
// q_j = min(15, trunc((x_j − min)/d + 0.5))) and read back as q_j·d + m.
func Q41Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ41, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ41] = true }
