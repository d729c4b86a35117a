package rt

// Q51Cache returns the view s of buf as a cache of ggml q5_1 blocks: a head
// of HeadDim values takes HeadDim/32 blocks of 24 bytes (an f16 scale d and
// an f16 minimum m, little endian, the uint32 of fifth bits and the low
// nibbles as q5_0's; Rotary.CacheHead("q5_1")), and s counts bytes. Values
// are stored as ggml's quantize_row_q5_1_ref stores them (d = (max −
// min)/31, m = min, q_j = min(31, trunc((x_j − min)/d + 0.5))) and read
// back as q_j·d + m.
func Q51Cache(buf []byte, s Strides) Cache {
	return Cache{kind: cacheQ51, s: s, u8: buf}
}

func init() { cacheBuilt[cacheQ51] = true }
