package rt

// rt's tests install these pure Go cache kernels (refkernels_test.go);
// generated packages get theirs from the vector layer's purego target.

import (
	"encoding/binary"
	"math"

	"github.com/ropegen/ropegen/verify/codec"
)

// cacheLoop is the pure Go cache kernels' loop: the first
// m values of n heads, head i of src at src[i·ss:], of dst at dst[i·ds:],
// converted value by value by conv.
func cacheLoop[D, S any](dst []D, ds int, src []S, ss, n, m int, conv func(d []D, s []S)) {
	for i := range n {
		conv(dst[i*ds:][:m], src[i*ss:][:m])
	}
}

// genericTo is the pure Go rotate-and-narrow kernel of a uint16 cache type
// with the shape's fwd kernel: each head copied into a float32 scratch
// head, turned there, and narrowed by narrow; the bits of turning in
// float32 and narrowing each result once.
func genericTo(hd int, fwd rotKernel, narrow func(float32) uint16) halfToKernel {
	return func(dst []uint16, ds int, src []float32, ss, n int, r *comp) {
		if n <= 0 {
			return
		}
		b := scratchPool.Get().(*[]float32)
		if len(*b) < hd {
			*b = make([]float32, hd)
		}
		v := (*b)[:hd]
		for i := range n {
			copy(v, src[i*ss:][:hd])
			fwd(v, hd, 1, r)
			d := dst[i*ds:][:hd]
			for j, x := range v {
				d[j] = narrow(x)
			}
		}
		scratchPool.Put(b)
	}
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

// genericF16 returns the pure Go f16 cache kernels of a shape of hd values,
// rd of them rotary, whose pure Go forward kernel is fwd.
func genericF16(hd, rd int, fwd rotKernel) halfKernels {
	return genericHalf(hd, rd, fwd, f32to16, f16to32)
}

// genericBF16 returns the pure Go bf16 cache kernels of a shape of hd
// values, rd of them rotary, whose pure Go forward kernel is fwd.
func genericBF16(hd, rd int, fwd rotKernel) halfKernels {
	return genericHalf(hd, rd, fwd, f32tobf16, bf16to32)
}

// genericE4M3 returns the pure Go e4m3 cache kernels of a shape of hd
// values, rd of them rotary.
func genericE4M3(hd, rd int) byteKernels {
	store := func(m int) byteStoreKernel {
		return func(dst []byte, ds int, src []float32, ss, n int, scale float32) {
			cacheLoop(dst, ds, src, ss, n, m, func(d []byte, s []float32) {
				for i, v := range s {
					d[i] = f32toe4m3(v / scale)
				}
			})
		}
	}
	load := func(m int) byteLoadKernel {
		return func(dst []float32, ds int, src []byte, ss, n int, scale float32) {
			cacheLoop(dst, ds, src, ss, n, m, func(d []float32, s []byte) {
				for i, v := range s {
					d[i] = e4m3to32(v) * scale
				}
			})
		}
	}
	return byteKernels{store: store(hd), storeShift: store(rd), load: load(hd), loadShift: load(rd)}
}

// genericE5M2 returns the pure Go e5m2 cache kernels of a shape of hd
// values, rd of them rotary: verify/codec's E5M2, value by value.
func genericE5M2(hd, rd int) byteKernels {
	store := func(m int) byteStoreKernel {
		return func(dst []byte, ds int, src []float32, ss, n int, scale float32) {
			cacheLoop(dst, ds, src, ss, n, m, func(d []byte, s []float32) {
				codec.E5M2.Encode(d, s, scale)
			})
		}
	}
	load := func(m int) byteLoadKernel {
		return func(dst []float32, ds int, src []byte, ss, n int, scale float32) {
			cacheLoop(dst, ds, src, ss, n, m, func(d []float32, s []byte) {
				codec.E5M2.Decode(d, s, scale)
			})
		}
	}
	return byteKernels{store: store(hd), storeShift: store(rd), load: load(hd), loadShift: load(rd)}
}

// genericQ80 returns the pure Go q8_0 cache kernels of a shape of hd
// values, rd of them rotary: verify/codec's Q8_0, whole blocks, those
// holding a rotary value for Shift.
func genericQ80(hd, rd int) byteKernels { return genericBlocks(codec.Q8_0, hd, rd) }

// genericQN returns the pure Go kernels of q4_0, q4_1, q5_0 and q5_1, in
// kernels.bytes' order, for a shape of hd values, rd of them rotary.
func genericQN(hd, rd int) [4]byteKernels {
	var ks [4]byteKernels
	for i, f := range []codec.Format{codec.Q4_0, codec.Q4_1, codec.Q5_0, codec.Q5_1} {
		ks[i] = genericBlocks(f, hd, rd)
	}
	return ks
}

// genericMXFP4 returns the pure Go mxfp4 cache kernels of a shape of hd
// values, rd of them rotary: verify/codec's MXFP4, whole blocks.
func genericMXFP4(hd, rd int) byteKernels { return genericBlocks(codec.MXFP4, hd, rd) }

// genericIQ4NL returns the pure Go iq4_nl cache kernels of a shape of hd
// values, rd of them rotary: verify/codec's IQ4NL, whole blocks.
func genericIQ4NL(hd, rd int) byteKernels { return genericBlocks(codec.IQ4NL, hd, rd) }

// genericNVFP4 returns the pure Go nvfp4 cache kernels of a shape of hd
// values, rd of them rotary: verify/codec's NVFP4, whole blocks of 64.
func genericNVFP4(hd, rd int) byteKernels { return genericBlocks(codec.NVFP4, hd, rd) }

// genericInt8 returns the pure Go int8_per_token_head cache kernels of a
// shape of hd values: verify/codec's Int8PerTokenHead, a head a call, its
// scale's float32 bits first (little endian), then its hd int8; Shift's
// kernels are the whole head's (one scale covers it).
func genericInt8(hd int) byteKernels {
	f := codec.Int8PerTokenHead
	store := func(dst []byte, ds int, src []float32, ss, n int, _ float32) {
		for i := range n {
			s := f.Encode(dst[i*ds+4:i*ds+4+hd], src[i*ss:i*ss+hd], 0)
			binary.LittleEndian.PutUint32(dst[i*ds:], math.Float32bits(s))
		}
	}
	load := func(dst []float32, ds int, src []byte, ss, n int, _ float32) {
		for i := range n {
			s := math.Float32frombits(binary.LittleEndian.Uint32(src[i*ss:]))
			f.Decode(dst[i*ds:i*ds+hd], src[i*ss+4:i*ss+4+hd], s)
		}
	}
	return byteKernels{store: store, storeShift: store, load: load, loadShift: load}
}

// genericNVFP4GS returns the pure Go nvfp4_gs cache kernels of a shape
// of hd values, rd of them rotary: verify/codec's NVFP4GS with the
// kernels' scale as g, whole blocks, those of the 32-value blocks (two of
// the format's) holding a rotary value for Shift, as the run-time's
// geometry takes them.
func genericNVFP4GS(hd, rd int) byteKernels {
	f := codec.NVFP4GS
	shift := (rd + 31) / 32 * 32
	store := func(m int) byteStoreKernel {
		return func(dst []byte, ds int, src []float32, ss, n int, g float32) {
			for i := range n {
				f.Encode(dst[i*ds:i*ds+f.Size(m)], src[i*ss:i*ss+m], g)
			}
		}
	}
	load := func(m int) byteLoadKernel {
		return func(dst []float32, ds int, src []byte, ss, n int, g float32) {
			for i := range n {
				f.Decode(dst[i*ds:i*ds+m], src[i*ss:i*ss+f.Size(m)], g)
			}
		}
	}
	return byteKernels{store: store(hd), storeShift: store(shift), load: load(hd), loadShift: load(shift)}
}

// genericBlocks returns the pure Go kernels of the block format f (q8_0,
// q4_0, q4_1, q5_0, q5_1, mxfp4, iq4_nl, nvfp4) for a shape of hd values,
// rd of them rotary: verify/codec's f, whole blocks, those holding a rotary
// value for Shift.
func genericBlocks(f codec.Format, hd, rd int) byteKernels {
	shift := (rd + f.Block - 1) / f.Block * f.Block
	store := func(m int) byteStoreKernel {
		return func(dst []byte, ds int, src []float32, ss, n int, _ float32) {
			for i := range n {
				f.Encode(dst[i*ds:i*ds+f.Size(m)], src[i*ss:i*ss+m], 0)
			}
		}
	}
	load := func(m int) byteLoadKernel {
		return func(dst []float32, ds int, src []byte, ss, n int, _ float32) {
			for i := range n {
				f.Decode(dst[i*ds:i*ds+m], src[i*ss:i*ss+f.Size(m)], 0)
			}
		}
	}
	return byteKernels{store: store(hd), storeShift: store(shift), load: load(hd), loadShift: load(shift)}
}
