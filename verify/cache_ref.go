package verify

import (
	"fmt"
	"maps"
	"slices"
	"unsafe"
)

// cacheRef is a cache format (CacheFormat) at a package's head dimension:
// the layout of a cached head and the suite's reference of every store and
// load.
type cacheRef struct {
	f       CacheFormat
	dtype   string
	headDim int
	// values and blockBytes are the format's block; eb the bytes of one
	// cache element (the block's for one value per block, else 1).
	values, blockBytes, eb int
	// cacheHead is the elements of one cached head.
	cacheHead int
	// blocks: more than one value per block; scaled: one scale per call
	// (ScalePerTensor).
	blocks, scaled bool
}

func newCacheRef(dtype string, headDim int) (cacheRef, error) {
	f, ok := cacheFormats[dtype]
	if !ok {
		return cacheRef{}, fmt.Errorf("cache DType %q: want one of %v", dtype, formatNames())
	}
	values, bytes := f.Block()
	if hb, ok := f.(headBlock); ok {
		values, bytes = hb.HeadBlock(headDim)
	}
	r := cacheRef{f: f, dtype: dtype, headDim: headDim, values: values, blockBytes: bytes, eb: 1, blocks: values > 1}
	if values == 1 {
		r.eb = bytes
	}
	switch sc := f.Scales(); {
	case sc == ScalePerTensor:
		r.scaled = true
	case sc != ScaleNone && sc != ScaleInBlock:
		return r, fmt.Errorf("cache DType %q keeps its scales per %s: the cache forms Cache describes take one scale per call", dtype, sc)
	}
	if headDim%values != 0 {
		return r, fmt.Errorf("%s needs HeadDim %d to be a multiple of %d", dtype, headDim, values)
	}
	r.cacheHead = headDim / values * bytes / r.eb
	return r, nil
}

// formatNames lists cacheFormats' names, sorted.
func formatNames() []string { return slices.Sorted(maps.Keys(cacheFormats)) }

// size is the bytes of one cache element.
func (r cacheRef) size() int { return r.eb }

// scale is the scale the format's Encode and Decode take for a call's
// scale: the call's with a scale per call, else 1.
func (r cacheRef) scale(s float32) float32 {
	if r.scaled {
		return s
	}
	return 1
}

// bytesOf is the bytes the first n values of a head take (n a multiple of
// the block's values).
func (r cacheRef) bytesOf(n int) int { return n / r.values * r.blockBytes }

// quantize writes the first n values of the head x (n = HeadDim, or a
// whole number of blocks) into out, the cached head's bytes.
func (r cacheRef) quantize(out []byte, x []float32, n int, scale float32) {
	r.f.Encode(out[:r.bytesOf(n)], x[:n], r.scale(scale))
}

// dequantize widens the first n values of the cached head c into y.
func (r cacheRef) dequantize(y []float32, c []byte, n int, scale float32) {
	r.f.Decode(y[:n], c[:r.bytesOf(n)], r.scale(scale))
}

// sameBlocks returns the first byte of the blocks got and want that
// differs, or -1: blocks compared by the format's Same (two NaNs alike),
// from the start, len(got) a whole number of blocks.
func (r cacheRef) sameBlocks(got, want []byte) int {
	for i := 0; i < len(got); i += r.blockBytes {
		g, w := got[i:i+r.blockBytes], want[i:i+r.blockBytes]
		if r.f.Same(g, w) {
			continue
		}
		for j := range g {
			if g[j] != w[j] {
				return i + j
			}
		}
	}
	return -1
}

// elemsOf returns the cache elements whose memory b holds (a copy).
func elemsOf[C CacheElem](b []byte) []C {
	var z C
	out := make([]C, len(b)/int(unsafe.Sizeof(z)))
	copy(bytesOf(out), b)
	return out
}

// memOf returns a copy of the memory of the cache elements c.
func memOf[C CacheElem](c []C) []byte {
	return append([]byte(nil), bytesOf(c)...)
}
