package rt

// Q40Cache returns the view s of buf as a cache of ggml q4_0 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 18 bytes (an f16 scale d,
// little endian, then 16 bytes, byte j holding q_j in its low nibble and
// q_{j+16} in its high one; Rotary.CacheHead("q4_0")), and s counts bytes.
// Values are stored as ggml's quantize_row_q4_0_ref stores them (d from the
// block's first value of largest magnitude over −8, q_j = min(15,
// trunc(x_j/d + 8.5))) and read back as (q_j − 8)·d.
func Q40Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ40, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ40] = true }
