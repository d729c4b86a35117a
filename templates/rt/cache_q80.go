package rt

// Q80Cache returns the view s of buf as a cache of ggml q8_0 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 34 bytes (an f16 scale d,
// little endian, then 32 int8; Rotary.CacheHead("q8_0")), and s counts
// bytes. Values are stored as ggml's quantize_row_q8_0_ref stores them
// (ties away from zero) and read back as q·d.
func Q80Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ80, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ80] = true }
