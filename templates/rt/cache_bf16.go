package rt

// BF16Cache returns the view s of buf as a cache of bfloat16 values (bits
// in uint16): stored rounded to nearest even, read back exactly.
func BF16Cache(buf []uint16, s Strides) Cache {
	return Cache{kind: cacheBF16, s: s, u16: buf}
}

// genericBF16 returns the pure Go bf16 cache kernels of a shape of hd
// values, rd of them rotary, whose pure Go forward kernel is fwd.
func genericBF16(hd, rd int, fwd rotKernel) halfKernels {
	return genericHalf(hd, rd, fwd, f32tobf16, bf16to32)
}
