package rt

// Q50Cache returns the view s of buf as a cache of ggml q5_0 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 22 bytes (an f16 scale d, a
// little-endian uint32 whose bit j is bit 4 of q_j, then 16 bytes of the
// low nibbles as q4_0's; Rotary.CacheHead("q5_0")), and s counts bytes.
// Values are stored as ggml's quantize_row_q5_0_ref stores them (d from
// the block's first value of largest magnitude over −16, q_j = min(31,
// trunc(x_j/d + 16.5))) and read back as (q_j − 16)·d.
func Q50Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ50, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ50] = true }
