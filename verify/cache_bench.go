package verify

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/x448/float16"
)

// KV-cache benchmark shapes (Bench's cache sub-benchmarks): 8 key/value
// heads of HeadDim, a prefill of 512 tokens into a paged cache (blocks of 16
// rows in shuffled order), and a 4096-token cache read back and shifted.
const (
	benchCacheHeads   = 8
	benchCacheBlock   = 16
	benchCacheTokens  = benchTokens // 512
	benchCacheLong    = benchLong   // 4096
	benchCacheShift   = -1000       // Shift's delta
	benchCacheE4M3Scl = 1.0 / 64
)

// benchCache runs the cache sub-benchmarks when k has cache forms:
//
//	cache/prefill/backend=<name>       ApplyStore of 512 tokens' keys and Store of their values,
//	                                   8 heads of HeadDim each, into a paged token-major cache by slot
//	cache/prefill/baseline=stream      streamMove: the float32 keys and values read once and as many bytes as
//	                                   the two caches hold written once, interleaved; and stream-avx2
//	cache/prefill/baseline=handwritten ApplyStrided on the keys, then a plain Go loop narrowing keys and
//	                                   values into the slots (verify's own conversions)
//	cache/load/backend=<name>          Load of 4096 slots into float32, and its baselines: streamMove (the
//	                                   cache's bytes read, the float32 bytes written) and a plain widening loop
//	cache/shift/backend=<name>         Shift of a 4096-token cache by −1000, and its baselines: stream over
//	                                   the cache's bytes (in place, as Shift), and widen + ApplyStrided + narrow
//
// SetBytes is the bytes read plus written (prefill, load) and the cache's
// bytes (shift, which reads and writes them in place, as stream does).
// The stream baseline is the call's memory bound: it reads exactly the
// bytes the call must read and writes exactly the bytes it must write, each
// once, with one multiply per register and nothing else, so no store, Load
// or Shift can take less time on the same machine; a form's ratio to it is
// how far the form is from that bound.
func benchCache[T Elem](b *testing.B, s *suite[T], backends []Backend, restore func(), input func(int) []T) {
	sf, ok := any(s).(*suite[float32])
	if !ok {
		return
	}
	in := func(n int) []float32 { return any(input(n)).([]float32) }
	for _, c := range s.k.Caches {
		c.bench(b, sf, len(s.k.Caches) > 1, backends, restore, in)
	}
}

func (c *Cache[C]) bench(b *testing.B, s *suite[float32], named bool, backends []Backend, restore func(), input func(int) []float32) {
	if named {
		b.Run("type="+c.DType, func(b *testing.B) { benchCacheOf(b, s, c, backends, restore, input) })
		return
	}
	benchCacheOf(b, s, c, backends, restore, input)
}

func benchCacheOf[C CacheElem](b *testing.B, s *suite[float32], c *Cache[C], backends []Backend, restore func(), input func(int) []float32) {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		b.Fatalf("verify: invalid Cache: %v", err)
	}
	hd, e := s.hd, cs.ref.cacheHead
	size := int64(cs.ref.size())
	scale := float32(1)
	if cs.ref.scaled {
		scale = benchCacheE4M3Scl
	}
	every := s.resetEvery()
	cv := Strides{benchCacheHeads, e, benchCacheHeads * e}
	xv := Strides{benchCacheHeads, hd, benchCacheHeads * hd}
	token := benchCacheHeads * hd

	// narrow and widen are the hand-written baseline's plain loops over one
	// cached head, with verify's own conversions.
	q := make([]uint32, e)
	narrow := func(dst []C, x []float32) {
		cs.ref.quantize(q, x, hd, scale)
		for i, v := range q {
			dst[i] = elemOf[C](v)
		}
	}
	w := make([]uint32, e)
	widen := func(y []float32, src []C) {
		for i, v := range src[:e] {
			w[i] = bitsOf(v)
		}
		cs.ref.dequantize(y, w, hd, scale)
	}
	switch cs.ref.dtype {
	case "f16": // the plain loop a Go developer would write
		narrow = func(dst []C, x []float32) {
			for i, v := range x[:hd] {
				dst[i] = elemOf[C](uint32(float16.Fromfloat32(v).Bits()))
			}
		}
		widen = func(y []float32, src []C) {
			for i, v := range src[:hd] {
				y[i] = float16.Frombits(uint16(bitsOf(v))).Float32()
			}
		}
	case "f32":
		narrow = func(dst []C, x []float32) { copy(any(dst).([]float32), x[:hd]) }
		widen = func(y []float32, src []C) { copy(y, any(src).([]float32)[:hd]) }
	}

	b.Run("cache", func(b *testing.B) {
		b.Run("prefill", func(b *testing.B) {
			n := benchCacheTokens
			rng := rand.New(rand.NewPCG(3, 5))
			slots := make([]int64, n)
			for j, blk := range rng.Perm(n / benchCacheBlock) {
				for i := range benchCacheBlock {
					slots[j*benchCacheBlock+i] = int64(blk*benchCacheBlock + i)
				}
			}
			pos := make([]int32, n)
			for i := range pos {
				pos[i] = int32(i)
			}
			kv := input(2 * n * token) // keys, then values
			keys, vals := kv[:n*token], kv[n*token:]
			kc, vc := make([]C, n*benchCacheHeads*e), make([]C, n*benchCacheHeads*e)
			// Bytes read (keys and values, float32) and written (two caches).
			bytes := int64(2*n*token)*4 + int64(2*n*benchCacheHeads*e)*size
			for _, be := range backends {
				b.Run("backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					benchLoopBytes(b, kv, 1<<30, bytes, func([]float32) {
						c.ApplyStore(s.tab, kc, scale, cv, slots, keys, xv, pos)
						c.Store(vc, scale, cv, slots, vals, xv)
					})
				})
			}
			restore()
			benchStreamMove(b, int64(len(kv))*4, int64(len(kc)+len(vc))*size)
			b.Run("baseline=handwritten", func(b *testing.B) {
				benchLoopBytes(b, kv, every, bytes, func(x []float32) {
					k, v := x[:n*token], x[n*token:]
					s.k.Strided.ApplyStrided(s.tab, k, xv, pos)
					for j, sl := range slots {
						for h := range benchCacheHeads {
							narrow(kc[int(sl)*cv.Token+h*e:], k[j*token+h*hd:])
							narrow(vc[int(sl)*cv.Token+h*e:], v[j*token+h*hd:])
						}
					}
				})
			})
		})

		// A cache of 4096 tokens, written once.
		n := benchCacheLong
		slots := make([]int64, n)
		for i := range slots {
			slots[i] = int64(i)
		}
		pos := make([]int32, n)
		for i := range pos {
			pos[i] = int32(i % s.n)
		}
		cache0 := make([]C, n*benchCacheHeads*e)
		c.ApplyStore(s.tab, cache0, scale, cv, slots, input(n*token), xv, pos)
		cacheBytes := int64(len(cache0)) * size

		b.Run("load", func(b *testing.B) {
			dst := make([]float32, n*token)
			bytes := cacheBytes + int64(len(dst))*4
			for _, be := range backends {
				b.Run("backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					benchLoopBytes(b, dst, 1<<30, bytes, func(y []float32) { c.Load(y, scale, xv, cache0, cv, slots) })
				})
			}
			restore()
			benchStreamMove(b, cacheBytes, int64(len(dst))*4)
			b.Run("baseline=handwritten", func(b *testing.B) {
				benchLoopBytes(b, dst, 1<<30, bytes, func(y []float32) {
					for j, sl := range slots {
						for h := range benchCacheHeads {
							widen(y[j*token+h*hd:], cache0[int(sl)*cv.Token+h*e:])
						}
					}
				})
			})
		})

		b.Run("shift", func(b *testing.B) {
			delta := make([]int32, n)
			at := make([]int32, n)
			for i := range delta {
				delta[i] = benchCacheShift
				at[i] = -benchCacheShift
			}
			cache := slices.Clone(cache0)
			for _, be := range backends {
				b.Run("backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					copy(cache, cache0)
					benchLoopBytes(b, make([]float32, 1), 1<<30, cacheBytes, func([]float32) { c.Shift(s.tab, cache, scale, cv, slots, delta) })
				})
			}
			restore()
			benchStreamBytes(b, cacheBytes, cacheBytes, every)
			b.Run("baseline=handwritten", func(b *testing.B) {
				x := make([]float32, n*token)
				copy(cache, cache0)
				benchLoopBytes(b, make([]float32, 1), 1<<30, cacheBytes, func([]float32) {
					for j := range n {
						for h := range benchCacheHeads {
							widen(x[j*token+h*hd:], cache[j*cv.Token+h*e:])
						}
					}
					s.k.Strided.ApplyInverseStrided(s.tab, x, xv, at)
					for j := range n {
						for h := range benchCacheHeads {
							narrow(cache[j*cv.Token+h*e:], x[j*token+h*hd:])
						}
					}
				})
			})
		})
	})
}

// benchStreamBytes runs the stream baselines over a float32 buffer of buf
// bytes, which the kernel reads and writes in place (it moves 2·buf bytes),
// with SetBytes(set).
func benchStreamBytes(b *testing.B, buf, set int64, every int) {
	x0 := make([]float32, buf/4)
	for i := range x0 {
		x0[i] = 0.75
	}
	ks := append(streamKernels(), streamGo)
	b.Run("baseline=stream", func(b *testing.B) {
		benchLoopBytes(b, x0, every, set, func(x []float32) { streamRun(ks[0], x) })
	})
	for _, sk := range ks[1:] {
		if sk.name == "avx2" {
			b.Run("baseline=stream-avx2", func(b *testing.B) {
				benchLoopBytes(b, x0, every, set, func(x []float32) { streamRun(sk, x) })
			})
		}
	}
}

// benchStreamMove runs the stream baselines of a call that reads read bytes
// and writes written other bytes: streamMove from a float32 buffer of read
// bytes into one of written bytes, with SetBytes(read + written).
func benchStreamMove(b *testing.B, read, written int64) {
	src, dst := make([]float32, read/4), make([]float32, written/4)
	for i := range src {
		src[i] = 0.75
	}
	ks := append(streamKernels(), streamGo)
	run := func(name string, sk streamKernel) {
		b.Run(name, func(b *testing.B) {
			benchLoopBytes(b, dst, 1<<30, read+written, func(d []float32) { streamMove(sk, d, src) })
		})
	}
	run("baseline=stream", ks[0])
	for _, sk := range ks[1:] {
		if sk.name == "avx2" {
			run("baseline=stream-avx2", sk)
		}
	}
}
