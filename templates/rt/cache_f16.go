package rt

// F16Cache returns the view s of buf as a cache of IEEE binary16 values
// (bits in uint16): stored rounded to nearest even, read back exactly.
func F16Cache(buf []uint16, s Strides) Cache {
	return Cache{kind: cacheF16, s: s, u16: buf}
}

// genericF16 returns the pure Go f16 cache kernels of a shape of hd values,
// rd of them rotary, whose pure Go forward kernel is fwd.
func genericF16(hd, rd int, fwd rotKernel) halfKernels {
	return genericHalf(hd, rd, fwd, f32to16, f16to32)
}
