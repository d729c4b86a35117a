package rt

// F16Cache returns the view s of buf as a cache of IEEE binary16 values
// (bits in uint16): stored rounded to nearest even, read back exactly. It
// panics unless every field of s is positive.
func F16Cache(buf []uint16, s Strides) Cache {
	checkStrides("F16Cache", s)
	return Cache{kind: cacheF16, s: s, u16: buf}
}

// genericF16 returns the pure Go f16 cache kernels of a shape of hd values,
// rd of them rotary, whose pure Go forward kernel is fwd.
func genericF16(hd, rd int, fwd rotKernel) halfKernels {
	return genericHalf(hd, rd, fwd, f32to16, f16to32)
}

// genericHalf returns the pure Go kernels of a uint16 cache type with the
// conversions narrow and widen.
func genericHalf(hd, rd int, fwd rotKernel, narrow func(float32) uint16, widen func(uint16) float32) halfKernels {
	to := func(d []uint16, s []float32) {
		for i, v := range s {
			d[i] = narrow(v)
		}
	}
	from := func(d []float32, s []uint16) {
		for i, v := range s {
			d[i] = widen(v)
		}
	}
	return halfKernels{
		store:      func(dst []uint16, ds int, src []float32, ss, n int) { cacheLoop(dst, ds, src, ss, n, hd, to) },
		storeShift: func(dst []uint16, ds int, src []float32, ss, n int) { cacheLoop(dst, ds, src, ss, n, rd, to) },
		load:       func(dst []float32, ds int, src []uint16, ss, n int) { cacheLoop(dst, ds, src, ss, n, hd, from) },
		loadShift:  func(dst []float32, ds int, src []uint16, ss, n int) { cacheLoop(dst, ds, src, ss, n, rd, from) },
		to:         genericTo(hd, fwd, narrow),
	}
}
