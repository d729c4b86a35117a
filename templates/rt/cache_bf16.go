package rt

// BF16Cache returns the view s of buf as a cache of bfloat16 values (bits
// in uint16): stored rounded to nearest even, read back exactly.
func BF16Cache(buf []uint16, s Strides) Cache {
	return Cache{kind: cacheBF16, s: s, u16: buf}
}

func init() { cacheBuilt[cacheBF16] = true }
