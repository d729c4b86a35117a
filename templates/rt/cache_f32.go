package rt

// F32Cache returns the view s of buf as a cache of float32 values: stored
// and read back as they are; ApplyStore writes the rotated keys, Shift turns
// them in place.
func F32Cache(buf []float32, s Strides) Cache {
	return Cache{kind: cacheF32, s: s, f32: buf}
}

func init() { cacheBuilt[cacheF32] = true }
