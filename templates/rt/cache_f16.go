package rt

// F16Cache returns the view s of buf as a cache of IEEE binary16 values
// (bits in uint16): stored rounded to nearest even, read back exactly.
func F16Cache(buf []uint16, s Strides) Cache {
	return Cache{kind: cacheF16, s: s, u16: buf}
}

func init() { cacheBuilt[cacheF16] = true }
