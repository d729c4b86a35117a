package verify

import (
	"math/rand/v2"

	"github.com/x448/float16"
)

// KV-cache benchmark shapes (Bench's cache sub-benchmarks): 8 key/value
// heads of HeadDim, a prefill of 512 tokens into a paged cache (blocks of 16
// rows in shuffled order), and a 4096-token cache read back and shifted.
const (
	benchCacheHeads  = 8
	benchCacheBlock  = 16
	benchCacheTokens = benchTokens // 512
	benchCacheLong   = benchLong   // 4096
	benchCacheShift  = -1000       // Shift's delta
	benchCacheScale  = 1.0 / 64    // the scale of a format with a scale per call
)

// bench is the cache forms' benchmark groups (cacheBench, through their
// entryPoint), inputs drawn from r; with named (several cache types) under
// type=<DType>/.
func (c *Cache[C]) bench(s *suite[float32], named bool, r *rand.Rand) []benchGroup {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		panic("verify: invalid Cache: " + err.Error())
	}
	gs := cs.cacheEntries().bench(r)
	if named {
		for i := range gs {
			gs[i].name = "type=" + c.DType + "/" + gs[i].name
		}
	}
	return gs
}

// cacheBench is the cache forms' benchmark groups:
//
//	cache/prefill/backend=<name>       ApplyStore of 512 tokens' keys and Store of their values,
//	                                   8 heads of HeadDim each, into a paged token-major cache by slot
//	cache/prefill/baseline=stream      the float32 keys and values read once and as many bytes as the
//	                                   two caches hold written once, interleaved; and stream-avx2
//	cache/prefill/baseline=handwritten ApplyStrided on the keys, then a plain Go loop narrowing keys and
//	                                   values into the slots (verify's own conversions)
//	cache/load/backend=<name>          Load of 4096 slots into float32, and its baselines: stream (the
//	                                   cache's bytes read, the float32 bytes written) and a plain widening loop
//	cache/shift/backend=<name>         Shift of a 4096-token cache by −1000, and its baselines: stream over
//	                                   the cache's bytes (in place, as Shift), and widen + ApplyStrided + narrow
//
// SetBytes is the bytes read plus written (prefill, load) and the cache's
// bytes (shift, which reads and writes them in place). The stream baseline
// is the call's memory bound: it reads exactly the bytes the call must read
// and writes exactly the bytes it must write, each once, with one multiply
// per register and nothing else, so no store, Load or Shift can take less
// time on the same machine; a form's ratio to it is how far the form is
// from that bound.
func (cs *cacheSuite[C]) cacheBench(input func(int) []float32) []benchGroup {
	scale := float32(1)
	if cs.ref.scaled {
		scale = benchCacheScale
	}
	cv, xv := cs.benchViews()
	n := benchCacheLong
	slots := make([]int64, n)
	for i := range slots {
		slots[i] = int64(i)
	}
	cache0 := make([]C, n*benchCacheHeads*cs.ref.cacheHead)
	cs.c.ApplyStore(cs.s.tab, cache0, scale, cv, slots, input(n*xv.Token), xv, upTo(n, cs.s.n))
	load := &cacheCall{op: opLoad, layout: "4096 rows", cv: cv, xv: xv, slots: slots, scale: scale}
	delta := make([]int32, n)
	for i := range delta {
		delta[i] = benchCacheShift
	}
	shift := &cacheCall{op: opShift, layout: "4096 rows", cv: cv, xv: xv, slots: slots, delta: delta, scale: scale}
	return []benchGroup{
		cs.prefillBench(input, scale),
		{name: "cache/load", main: cs.cacheCallOf(load, cacheState{cache: memOf(cache0), x: make([]float32, n*xv.Token)}),
			extra: []timed{{name: "baseline=handwritten", c: cs.handLoad(cache0, slots, scale)}}},
		{name: "cache/shift", main: cs.cacheCallOf(shift, cacheState{cache: memOf(cache0)}), every: -1,
			extra: []timed{{name: "baseline=handwritten", c: cs.handShift(cache0, scale)}}},
	}
}

// benchViews are the cache and token views of the cache benchmarks:
// token-major, 8 heads.
func (cs *cacheSuite[C]) benchViews() (cv, xv Strides) {
	e, hd := cs.ref.cacheHead, cs.s.hd
	return Strides{benchCacheHeads, e, benchCacheHeads * e}, Strides{benchCacheHeads, hd, benchCacheHeads * hd}
}

// prefillBench is cache/prefill: ApplyStore of the keys and Store of the
// values of 512 tokens into slots of a paged cache, blocks of 16 rows in
// shuffled order.
func (cs *cacheSuite[C]) prefillBench(input func(int) []float32, scale float32) benchGroup {
	n := benchCacheTokens
	cv, xv := cs.benchViews()
	rng := rand.New(rand.NewPCG(3, 5))
	slots := make([]int64, n)
	for j, blk := range rng.Perm(n / benchCacheBlock) {
		for i := range benchCacheBlock {
			slots[j*benchCacheBlock+i] = int64(blk*benchCacheBlock + i)
		}
	}
	kv := input(2 * n * xv.Token) // keys, then values
	cacheLen := n * benchCacheHeads * cs.ref.cacheHead
	store := func(op cacheOp, x []float32, names ...string) *call {
		c := &cacheCall{op: op, layout: "paged", cv: cv, xv: xv, slots: slots, pos: upTo(n, cs.s.n), scale: scale}
		return cs.cacheCallOf(c, cacheState{cache: make([]byte, cacheLen*cs.ref.eb), x: x}, names...)
	}
	keys := store(opApplyStore, kv[:n*xv.Token], "the key cache", "keys")
	vals := store(opStore, kv[n*xv.Token:], "the value cache", "values")
	main := &call{what: "ApplyStore and Store", args: append(keys.args, vals.args...), run: func() { keys.run(); vals.run() }}
	return benchGroup{name: "cache/prefill", main: main, extra: []timed{{name: "baseline=handwritten", c: cs.handPrefill(kv, slots, scale)}}}
}

// narrow and widen are the hand-written baselines' loops over one cached
// head: for f16 the plain loop a Go developer would write with
// x448/float16, for f32 a copy, for the other formats the reference's
// Encode and Decode.
func (cs *cacheSuite[C]) narrow(dst []C, x []float32, scale float32) {
	hd := cs.s.hd
	switch d := any(dst).(type) {
	case []uint16:
		if cs.ref.dtype == "f16" {
			for i, v := range x[:hd] {
				d[i] = float16.Fromfloat32(v).Bits()
			}
			return
		}
	case []float32:
		copy(d, x[:hd])
		return
	}
	cs.ref.quantize(bytesOf(dst[:cs.ref.cacheHead]), x, hd, scale)
}

func (cs *cacheSuite[C]) widen(y []float32, src []C, scale float32) {
	hd := cs.s.hd
	switch c := any(src).(type) {
	case []uint16:
		if cs.ref.dtype == "f16" {
			for i, v := range c[:hd] {
				y[i] = float16.Frombits(v).Float32()
			}
			return
		}
	case []float32:
		copy(y, c[:hd])
		return
	}
	cs.ref.dequantize(y, bytesOf(src[:cs.ref.cacheHead]), hd, scale)
}

// handPrefill is what a user writes without the cache forms: ApplyStrided
// on the keys in place, then a plain loop narrowing keys and values into
// their slots.
func (cs *cacheSuite[C]) handPrefill(kv []float32, slots []int64, scale float32) *call {
	n, hd, e := benchCacheTokens, cs.s.hd, cs.ref.cacheHead
	cv, xv := cs.benchViews()
	x := newBuf("keys and values", kv, inPlace)
	kc := newBuf("the key cache", make([]C, n*benchCacheHeads*e), writes)
	vc := newBuf("the value cache", make([]C, n*benchCacheHeads*e), writes)
	pos := upTo(n, cs.s.n)
	return &call{what: "the hand-written prefill", args: []arg{x, kc, vc}, run: func() {
		k, v := x.cur[:n*xv.Token], x.cur[n*xv.Token:]
		cs.s.k.Strided.ApplyStrided(cs.s.tab, k, xv, pos)
		for j, sl := range slots {
			for h := range benchCacheHeads {
				cs.narrow(kc.cur[int(sl)*cv.Token+h*e:], k[j*xv.Token+h*hd:], scale)
				cs.narrow(vc.cur[int(sl)*cv.Token+h*e:], v[j*xv.Token+h*hd:], scale)
			}
		}
	}}
}

// handLoad is a plain loop widening every head of the slots of cache0.
func (cs *cacheSuite[C]) handLoad(cache0 []C, slots []int64, scale float32) *call {
	hd, e := cs.s.hd, cs.ref.cacheHead
	cv, xv := cs.benchViews()
	dst := newBuf("dst", make([]float32, len(slots)*xv.Token), writes)
	return &call{what: "the hand-written Load", args: []arg{dst}, run: func() {
		for j, sl := range slots {
			for h := range benchCacheHeads {
				cs.widen(dst.cur[j*xv.Token+h*hd:], cache0[int(sl)*cv.Token+h*e:], scale)
			}
		}
	}}
}

// handShift widens every head of the cache, turns them back with
// ApplyInverseStrided by −benchCacheShift positions and narrows them.
func (cs *cacheSuite[C]) handShift(cache0 []C, scale float32) *call {
	n, hd, e := benchCacheLong, cs.s.hd, cs.ref.cacheHead
	cv, xv := cs.benchViews()
	c := newBuf("cache", cache0, inPlace)
	x := make([]float32, n*xv.Token)
	at := make([]int32, n)
	for i := range at {
		at[i] = -benchCacheShift
	}
	return &call{what: "the hand-written Shift", args: []arg{c}, run: func() {
		for j := range n {
			for h := range benchCacheHeads {
				cs.widen(x[j*xv.Token+h*hd:], c.cur[j*cv.Token+h*e:], scale)
			}
		}
		cs.s.k.Strided.ApplyInverseStrided(cs.s.tab, x, xv, at)
		for j := range n {
			for h := range benchCacheHeads {
				cs.narrow(c.cur[j*cv.Token+h*e:], x[j*xv.Token+h*hd:], scale)
			}
		}
	}}
}
