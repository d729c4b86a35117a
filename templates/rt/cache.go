package rt

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Cache is a view of a KV cache buffer by slot (cache row): its type, its
// buffer, its Strides (head h of row s at s·Token + h·Head; a block
// format's strides count bytes), for e4m3 and e5m2 its per-tensor scale
// or a scale per KV head (WithHeadScales), for nvfp4_gs its tensor scale
// g, and whether it is
// Hadamard-rotated (WithHadamard). Make one with the constructor of its
// type (F16Cache, Q80Cache, …: one per cache type the package has), or
// with NewCache from the type's name and a byte buffer; the zero Cache is
// no cache and panics where one is used. A Cache is a small value: pass it
// by value, make one per call if you like. The entry points that use it
// check its view (every field positive, the rows it gives its buffer, its
// heads apart, its scales) and name what is wrong.
type Cache struct {
	kind  uint8
	s     Strides
	f32   []float32
	u16   []uint16
	u8    []byte
	scale float32
	had   uint8     // hadRotated, hadOriginal: the Hadamard option (WithHadamard)
	heads []float32 // e4m3, e5m2: a scale per KV head (WithHeadScales), else nil
}

// WithHeadScales returns the e4m3 or e5m2 view c with a scale per KV head
// in place of its per-tensor scale: head h of every row stores
// code(y/scales[h]) and loads code·scales[h], as vLLM's per-head k_scale
// and v_scale (#30141) do. scales is the engine's own slice, kept, not
// copied, one scale per head of c's view (len(scales) = c.Strides().Heads),
// each finite and > 0: the entry points that use the view check it and
// panic naming the index, as they do for a view of another type (the
// other types keep no scale outside their bytes). The bits are those of
// the per-tensor view with scale scales[h], head by head, on every
// backend.
func (c Cache) WithHeadScales(scales []float32) Cache {
	c.heads = scales
	return c
}

// HeadScales returns the view's scale per KV head (WithHeadScales), nil
// for a per-tensor scale or none.
func (c Cache) HeadScales() []float32 { return c.heads }

// The Hadamard option of a Cache view: Cache.had's bits.
const (
	hadRotated  = 1 // every head is stored as H·y (WithHadamard)
	hadOriginal = 2 // Load returns H·(the stored head): the original basis (Original)
)

// WithHadamard returns c as the view of a Hadamard-rotated cache: every
// head an entry point stores there (a key after its rotation and QK-norm,
// a value as it is) is first multiplied by H, the normalized Walsh–Hadamard
// matrix of the head, and then stored as the cache type stores it. H is
// block diagonal: blocks of B values, B the largest power of two dividing
// HeadDim (HeadDim itself for a power of two; 32 for 96), each transformed
// by the butterfly of docs/contract.md §15, the same bits on every backend.
// Spread over its block, an outlier costs a quantized format less.
//
// Prep multiplies the step's queries by H too when its KCache has the
// option, so that q·k is unchanged up to rounding; Load returns the heads
// as stored, in H's basis (what attention with those queries wants),
// unless the view is Original's; Rotary.Hadamard takes the rows attention
// computes from rotated values back (H is its own inverse); Shift
// un-rotates, turns and re-rotates each whole head. The option is a
// property of the view, as the cache type is: view the same memory with it
// on every call. An entry point given it at a HeadDim above 1024, or one
// whose block B is below 16, panics.
func (c Cache) WithHadamard() Cache {
	c.had |= hadRotated
	return c
}

// Original returns the view c whose Load returns the original basis: a
// Hadamard-rotated cache's heads loaded and multiplied by H once more (H
// is its own inverse, up to the rounding docs/contract.md §15 bounds).
// The other entry points treat it as c. Without WithHadamard the stored
// heads are already in the original basis and Original changes nothing.
func (c Cache) Original() Cache {
	c.had |= hadOriginal
	return c
}

// Hadamard reports whether c is the view of a Hadamard-rotated cache
// (WithHadamard).
func (c Cache) Hadamard() bool { return c.had&hadRotated != 0 }

// Cache types: Cache.kind.
const (
	cacheF32 = 1 + iota
	cacheF16
	cacheBF16
	cacheE4M3
	cacheQ80
	cacheE5M2
	cacheQ40
	cacheQ41
	cacheQ50
	cacheQ51
	cacheMXFP4
	cacheIQ4NL
	cacheNVFP4
	cacheInt8 // int8_per_token_head
	cacheNVFP4GS
)

// cacheNames spells the cache types as -out-dtype does.
var cacheNames = [...]string{"", "f32", "f16", "bf16", "e4m3", "q8_0", "e5m2", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4", "int8_per_token_head", "nvfp4_gs"}

// cacheBuilt[k] is true when the package has cache type k: each type's
// file (cache_<type>.go, copied into a package generated with that
// -out-dtype) sets its entry.
var cacheBuilt [len(cacheNames)]bool

// cacheElemBytes[k] is the size of one buffer element of cache type k: a
// float32, a uint16, or a byte (e4m3, e5m2, and the block formats, whose
// strides count bytes).
var cacheElemBytes = [len(cacheNames)]int{0, 4, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}

// cacheBlockBytes[k] is the bytes of one block of cacheBlockValues[k]
// values of the block format k (ggml's q8_0 34: an f16 d, 32 int8; q4_0
// 18: d, 16 bytes of nibbles; q4_1 20: d, an f16 m, nibbles; q5_0 22: d, a
// uint32 of fifth bits, nibbles; q5_1 24: d, m, fifth bits, nibbles; mxfp4
// 17: an E8M0 exponent byte, nibbles; iq4_nl 18: d, nibbles; nvfp4 36: four
// UE4M3 scales, nibbles; nvfp4_gs 18: two of its blocks of 16 values, 8
// bytes of nibbles then an e4m3 scale each), 0 for a type stored value by
// value.
var cacheBlockBytes = [len(cacheNames)]int{cacheQ80: q8Bytes, cacheQ40: 18, cacheQ41: 20, cacheQ50: 22, cacheQ51: 24, cacheMXFP4: 17, cacheIQ4NL: 18, cacheNVFP4: 36, cacheNVFP4GS: 18}

// cacheBlockValues[k] is the values of a block of the block format k: 32,
// but nvfp4's 64 (nvfp4_gs's 32 are two of its blocks of 16: a head holds
// an even number of them); 0 for a type stored value by value.
// int8_per_token_head is in neither table: its block is the head
// (cacheHeadOf).
var cacheBlockValues = [len(cacheNames)]int{cacheQ80: 32, cacheQ40: 32, cacheQ41: 32, cacheQ50: 32, cacheQ51: 32, cacheMXFP4: 32, cacheIQ4NL: 32, cacheNVFP4: 64, cacheNVFP4GS: 32}

// cacheScaled reports whether cache type k keeps a per-tensor scale outside
// its bytes (e4m3, e5m2; nvfp4_gs's tensor scale g).
func cacheScaled(k uint8) bool { return k == cacheE4M3 || k == cacheE5M2 || k == cacheNVFP4GS }

// cacheHeadScaled reports whether cache type k takes a scale per KV head
// (WithHeadScales) in place of its per-tensor one: e4m3 and e5m2.
func cacheHeadScaled(k uint8) bool { return k == cacheE4M3 || k == cacheE5M2 }

// q8_0 blocks (ggml's block_q8_0): 32 values, stored as an f16 scale d and
// 32 int8.
const (
	q8Values = 32
	q8Bytes  = 2 + q8Values
)

// NewCache returns the view s of buf as a cache of the type name, as
// -out-dtype spells it: "f32", "f16", "bf16", "e4m3", "q8_0", "e5m2",
// "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4", "iq4_nl", "nvfp4" or
// "int8_per_token_head" or "nvfp4_gs", one this package was generated with.
// It is the Cache that type's constructor (F32Cache, F16Cache, BF16Cache,
// E4M3Cache, Q80Cache, E5M2Cache, Q40Cache, Q41Cache, Q50Cache, Q51Cache,
// MXFP4Cache, IQ4NLCache, NVFP4Cache, Int8PerTokenHeadCache, NVFP4GSCache)
// returns for the same memory, so that an engine reading its cache type from its
// configuration needs no switch of its own. buf holds the type's elements
// in the machine's byte order: float32 values for f32 (len(buf) a multiple
// of 4 and buf 4-byte aligned), uint16 bits for f16 and bf16 (a multiple
// of 2, 2-byte aligned), bytes for e4m3, e5m2 and the block formats (any
// length); s counts elements of that type, as the typed constructor's view
// does (bytes for a block format and int8_per_token_head). scale is the
// per-tensor scale of e4m3 and e5m2, or nvfp4_gs's tensor scale g, taken
// as E4M3Cache, E5M2Cache and NVFP4GSCache take theirs (the entry points that use the
// cache check that it is finite and > 0); the other types keep no scale
// outside their bytes and ignore it. The Cache shares buf's memory.
//
// An unknown name, or a type this package has no cache of, is an error
// naming it and the names accepted; a buffer whose length or address does
// not fit the type's elements is an error naming them and what is
// accepted. How many rows the buffer holds is checked, as for a typed
// Cache, by the entry points that use it.
func NewCache(name string, buf []byte, s Strides, scale float32) (Cache, error) {
	k := cacheKind(name)
	if k == 0 || !cacheBuilt[k] {
		var have []string
		for i, ok := range cacheBuilt {
			if ok {
				have = append(have, strconv.Quote(cacheNames[i]))
			}
		}
		why := "not a cache type"
		if k != 0 {
			why = "a cache type this package was not generated with"
		}
		return Cache{}, fmt.Errorf("%s.NewCache: name = %q is %s: want one of %s", pkgName, name, why, strings.Join(have, ", "))
	}
	size := cacheElemBytes[k]
	if len(buf)%size != 0 {
		return Cache{}, fmt.Errorf("%s.NewCache: len(buf) = %d: want a multiple of %d (%s elements of %d bytes)", pkgName, len(buf), size, name, size)
	}
	if p := uintptr(unsafe.Pointer(unsafe.SliceData(buf))); len(buf) > 0 && p%uintptr(size) != 0 {
		return Cache{}, fmt.Errorf("%s.NewCache: buf at %#x: want a %d-byte aligned buffer (%s elements of %d bytes)", pkgName, p, size, name, size)
	}
	c := Cache{kind: k, s: s}
	switch size {
	case 4:
		c.f32 = unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)/4)
	case 2:
		c.u16 = unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(buf))), len(buf)/2)
	default:
		c.u8 = buf
	}
	if cacheScaled(k) {
		c.scale = scale
	}
	return c, nil
}

// quotedCacheNames is every cache type's name, quoted, comma-separated.
func quotedCacheNames() string {
	var q []string
	for _, n := range cacheNames[1:] {
		q = append(q, strconv.Quote(n))
	}
	return strings.Join(q, ", ")
}

// cacheKind returns the cache type spelled name, 0 for none.
func cacheKind(name string) uint8 {
	for k, n := range cacheNames {
		if k > 0 && n == name {
			return uint8(k)
		}
	}
	return 0
}

// Strides returns the cache's view.
func (c Cache) Strides() Strides { return c.s }

// DType returns the cache's type, as -out-dtype spells it: "f32", "f16",
// "bf16", "e4m3", "q8_0", "e5m2", "q4_0", "q4_1", "q5_0", "q5_1", "mxfp4",
// "iq4_nl", "nvfp4", "int8_per_token_head" or "nvfp4_gs"; "" for the zero Cache.
func (c Cache) DType() string { return cacheNames[c.kind] }

// CacheHead returns the elements one head of r's shape takes in a cache of
// type dtype (as -out-dtype spells it): HeadDim, or for a block format the
// bytes of its HeadDim/32 blocks (34 for q8_0, 18 q4_0, 20 q4_1, 22 q5_0,
// 24 q5_1, 17 mxfp4, 18 iq4_nl, 18 nvfp4_gs: two of its blocks of 16) or
// HeadDim/64 (36 nvfp4), or for int8_per_token_head HeadDim+4 (the head's
// float32 scale, then its int8). It panics for another dtype, or for a
// block format with a HeadDim that is not a multiple of its block.
func (r *Rotary) CacheHead(dtype string) int {
	r.checkNil("Rotary.CacheHead")
	for k, name := range cacheNames {
		if name == dtype && k > 0 {
			if v := cacheBlockValues[k]; v != 0 && r.hd%v != 0 {
				panicf("Rotary.CacheHead: dtype = %q with HeadDim = %d: want a HeadDim that is a multiple of %d", dtype, r.hd, v)
			}
			return r.cacheHead(uint8(k))
		}
	}
	panicf("Rotary.CacheHead: dtype = %q: want one of %s", dtype, quotedCacheNames())
	return 0
}

// cacheHead is the size of a cached head of r's shape in kind's elements.
func (r *Rotary) cacheHead(kind uint8) int { return cacheHeadOf(kind, r.hd) }

// cacheHeadOf is the size of a cached head of hd values in kind's
// elements: hd, a block format's blocks' bytes, or int8_per_token_head's
// one block a head, hd+4 bytes (its float32 scale, then hd int8).
func cacheHeadOf(kind uint8, hd int) int {
	switch b := cacheBlockBytes[kind]; {
	case kind == cacheInt8:
		return hd + 4
	case b != 0:
		return hd / cacheBlockValues[kind] * b
	}
	return hd
}

// cacheOp is a Cache bound to a Rotary's shape and the active backend's
// kernels for its type: the cache forms' steps, each one kernel call over n
// heads.
type cacheOp struct {
	r     *Rotary
	c     *Cache
	k     *kernels
	half  *halfKernels
	bytes *byteKernels
	head  int // a cached head's elements
	shift int // the leading values of a head Shift rewrites
	// had is the backend's Hadamard kernel for a Hadamard-rotated cache,
	// else nil; orig: Load multiplies by H (Original).
	had  hadamardKernel
	orig bool
	// scales is the view's scale per KV head (WithHeadScales), else nil:
	// every head takes c.scale.
	scales []float32
}

// headSeq says which KV heads a kernel call's n heads are: head i is KV head
// (h0 + i·step) mod the view's Heads (step 1: the heads of a row, or of
// rows back to back; 0: one head along rows). Only a view with a scale
// per head reads it.
type headSeq struct{ h0, step int }

// from is hs past its first i heads.
func (hs headSeq) from(i int) headSeq { return headSeq{hs.h0 + i*hs.step, hs.step} }

// each calls f for the runs of the n heads hs names that share a scale,
// f(i, m, scale) for heads i … i+m−1: one run with the per-tensor scale or
// one head's, else a call per head.
func (o *cacheOp) each(hs headSeq, n int, f func(i, m int, scale float32)) {
	switch {
	case o.scales == nil:
		f(0, n, o.c.scale)
	case hs.step == 0:
		f(0, n, o.scales[hs.h0%len(o.scales)])
	default:
		for i := range n {
			f(i, 1, o.scales[(hs.h0+i*hs.step)%len(o.scales)])
		}
	}
}

// cacheOp binds c (named what in messages) to r: it panics, naming fn, for
// the zero Cache, a type the package has no kernels for at r's shape, or an
// e4m3, e5m2 or nvfp4_gs scale that is not finite and > 0.
func (r *Rotary) cacheOp(fn, what string, c *Cache) cacheOp {
	if c.kind == 0 {
		panicf("%s: %s is the zero Cache: want one from a cache type's constructor (F16Cache, Q80Cache, …)", fn, what)
	}
	k := r.kern()
	o := cacheOp{r: r, c: c, k: k, head: r.cacheHead(c.kind), shift: r.rd}
	var ok bool
	switch c.kind {
	case cacheF32:
		ok = true
	case cacheF16, cacheBF16:
		o.half = &k.half[c.kind-cacheF16]
		ok = o.half.store != nil
	default:
		o.bytes = &k.bytes[c.kind-cacheE4M3]
		ok = o.bytes.store != nil
		if cacheBlockBytes[c.kind] != 0 {
			v := cacheBlockValues[c.kind]
			o.shift = (r.rd + v - 1) / v * v
		}
		if c.kind == cacheInt8 { // one scale a head: Shift codes it whole
			o.shift = r.hd
		}
	}
	if !ok {
		panicf("%s: %s is a %s cache: this package has no %s kernels for the shape %s", fn, what, cacheNames[c.kind], cacheNames[c.kind], shapeList[r.si])
	}
	switch {
	case c.heads != nil && !cacheHeadScaled(c.kind):
		panicf("%s: %s is a %s cache with scales per head (WithHeadScales): want an e4m3 or e5m2 cache, the types with a scale per head", fn, what, cacheNames[c.kind])
	case c.heads != nil:
		if len(c.heads) != c.s.Heads {
			panicf("%s: %s: len(scales) = %d (WithHeadScales): want %s.Heads = %d, a scale per KV head", fn, what, len(c.heads), what, c.s.Heads)
		}
		for h, sc := range c.heads {
			if !(sc > 0) || sc > math.MaxFloat32 {
				panicf("%s: %s's scales[%d] = %v (WithHeadScales): want a finite scale > 0", fn, what, h, sc)
			}
		}
		o.scales = c.heads
	case cacheScaled(c.kind) && (!(c.scale > 0) || c.scale > math.MaxFloat32):
		panicf("%s: %s's scale = %v: want a finite scale > 0", fn, what, c.scale)
	}
	if c.had&hadRotated != 0 {
		o.had, o.orig = r.hadamard(fn, what+" (WithHadamard)"), c.had&hadOriginal != 0
	}
	return o
}

// hadamard returns the backend's Hadamard kernel for r's shape, named what
// in messages; it panics, naming fn, for a HeadDim whose block (the
// largest power of two dividing it) is below 16, or above 1024.
func (r *Rotary) hadamard(fn, what string) hadamardKernel {
	k := r.kern().hadamard
	if k == nil {
		panicf("%s: %s: HeadDim = %d (blocks of %d): the Hadamard option wants a HeadDim of at most 1024 whose largest power-of-two divisor is at least 16", fn, what, r.hd, r.hd&-r.hd)
	}
	return k
}

// size returns the length of the cache's buffer, in its elements.
func (c *Cache) size() int {
	switch c.kind {
	case cacheF32:
		return len(c.f32)
	case cacheF16, cacheBF16:
		return len(c.u16)
	}
	return len(c.u8)
}

// check checks the cache view for the rows slots names (slot −1: none) and
// returns the rows it gives its buffer: every field positive, every slot
// −1 or a row that fits, no row twice, the heads of those rows apart.
func (o *cacheOp) check(fn, what, sname string, slots []int64) int {
	n := o.c.size()
	rows := cacheRows(fn, what, o.c.s, n, o.head)
	checkSlots(fn, sname, "its buffer", what, slots, rows, n)
	checkCacheView(fn, what, o.c.s, rows, o.head, slots)
	return rows
}

// store stores n float32 heads of src (ss apart), the KV heads hs, at the
// cache's element off on, cs apart: all of each head, or (shift) the values
// Shift rewrites.
func (o *cacheOp) store(off, cs int, src []float32, ss, n int, hs headSeq, shift bool) {
	c := o.c
	switch {
	case c.kind == cacheF32:
		m := o.r.hd
		if shift {
			m = o.shift
		}
		for i := range n {
			copy(c.f32[off+i*cs:][:m], src[i*ss:][:m])
		}
	case o.half != nil && shift:
		o.half.storeShift(c.u16[off:], cs, src, ss, n)
	case o.half != nil:
		o.half.store(c.u16[off:], cs, src, ss, n)
	default:
		k := o.bytes.store
		if shift {
			k = o.bytes.storeShift
		}
		if o.scales == nil {
			k(c.u8[off:], cs, src, ss, n, c.scale)
			return
		}
		o.each(hs, n, func(i, m int, scale float32) {
			k(c.u8[off+i*cs:], cs, src[i*ss:], ss, m, scale)
		})
	}
}

// put stores n float32 heads of src (ss apart) as store stores them, each
// multiplied by H first for a Hadamard-rotated cache: through the scratch
// buffer sp, its capacity of heads at a time (src is not modified).
func (o *cacheOp) put(off, cs int, src []float32, ss, n int, hs headSeq, sp []float32) {
	if o.had == nil {
		o.store(off, cs, src, ss, n, hs, false)
		return
	}
	hd := o.r.hd
	g := len(sp) / hd
	for h := 0; h < n; h += g {
		m := min(g, n-h)
		for i := range m {
			copy(sp[i*hd:][:hd], src[(h+i)*ss:][:hd])
		}
		o.had(sp, hd, m)
		o.store(off+h*cs, cs, sp, hd, m, hs.from(h), false)
	}
}

// get loads n cached heads as load loads all of each, multiplied by H
// once more when the view is a Hadamard-rotated cache's Original.
func (o *cacheOp) get(dst []float32, ds, off, cs, n int, hs headSeq) {
	o.load(dst, ds, off, cs, n, hs, false)
	if o.orig {
		o.had(dst, ds, n)
	}
}

// load loads n cached heads, the KV heads hs, from the element off on (cs
// apart) into float32 heads of dst, ds apart: all of each head, or (shift)
// the values Shift rewrites.
func (o *cacheOp) load(dst []float32, ds, off, cs, n int, hs headSeq, shift bool) {
	c := o.c
	switch {
	case c.kind == cacheF32:
		m := o.r.hd
		if shift {
			m = o.shift
		}
		for i := range n {
			copy(dst[i*ds:][:m], c.f32[off+i*cs:][:m])
		}
	case o.half != nil && shift:
		o.half.loadShift(dst, ds, c.u16[off:], cs, n)
	case o.half != nil:
		o.half.load(dst, ds, c.u16[off:], cs, n)
	default:
		k := o.bytes.load
		if shift {
			k = o.bytes.loadShift
		}
		if o.scales == nil {
			k(dst, ds, c.u8[off:], cs, n, c.scale)
			return
		}
		o.each(hs, n, func(i, m int, scale float32) {
			k(dst[i*ds:], ds, c.u8[off+i*cs:], cs, m, scale)
		})
	}
}

// rotTo turns n float32 heads of src forward by row into dst: the
// backend's rotTo kernel, or a copy and its fwd kernel (the same bits).
func (o *cacheOp) rotTo(dst []float32, ds int, src []float32, ss, n int, row *comp) {
	if f := o.k.rotTo; f != nil {
		f(dst, ds, src, ss, n, row)
		return
	}
	hd := o.r.hd
	for i := range n {
		copy(dst[i*ds:][:hd], src[i*ss:][:hd])
	}
	o.k.fwd(dst, ds, n, row)
}

// storeRotated turns n float32 heads of src (ss apart) forward by row and
// stores them at the element off on, cs apart: in one kernel into an f32,
// f16 or bf16 cache; else (or with the Hadamard option, H between the two)
// through the scratch buffer sp, its capacity of heads at a time.
func (o *cacheOp) storeRotated(off, cs int, src []float32, ss, n int, hs headSeq, row *comp, sp []float32) {
	c := o.c
	switch {
	case c.kind == cacheF32 && o.had == nil:
		o.rotTo(c.f32[off:], cs, src, ss, n, row)
	case o.half != nil && o.had == nil:
		o.half.to(c.u16[off:], cs, src, ss, n, row)
	default:
		hd := o.r.hd
		g := len(sp) / hd
		for h := 0; h < n; h += g {
			m := min(g, n-h)
			o.rotTo(sp, hd, src[h*ss:], ss, m, row)
			if o.had != nil {
				o.had(sp, hd, m)
			}
			o.store(off+h*cs, cs, sp, hd, m, hs.from(h), false)
		}
	}
}

// shiftHeads turns n cached heads in place from the element off on (st
// apart) by the table row r (filled with A = 1), backward when inverse: an
// f32 cache with the backend's own kernels, f16 and bf16 with its fused
// shift kernels where it has them, else through the scratch buffer sp, its
// capacity of heads at a time: loadShift, the fwd or inv kernel,
// storeShift.
func (o *cacheOp) shiftHeads(off, st, n int, hs headSeq, r *comp, inverse bool, sp []float32) {
	c := o.c
	kern := o.r.rot(inverse)
	hd := o.r.hd
	g := len(sp) / hd
	if o.had != nil {
		// A Hadamard-rotated cache: every value of a head holds some of
		// the rotary ones, so whole heads: load, H, turn, H, store.
		for h := 0; h < n; h += g {
			m := min(g, n-h)
			o.load(sp, hd, off+h*st, st, m, hs.from(h), false)
			o.had(sp, hd, m)
			kern(sp, hd, m, r)
			o.had(sp, hd, m)
			o.store(off+h*st, st, sp, hd, m, hs.from(h), false)
		}
		return
	}
	switch {
	case c.kind == cacheF32:
		kern(c.f32[off:], st, n, r)
		return
	case o.half != nil && o.half.shift != nil:
		if inverse {
			o.half.shiftInv(c.u16[off:], st, n, r)
		} else {
			o.half.shift(c.u16[off:], st, n, r)
		}
		return
	}
	for h := 0; h < n; h += g {
		m := min(g, n-h)
		o.load(sp, hd, off+h*st, st, m, hs.from(h), true)
		kern(sp, hd, m, r)
		o.store(off+h*st, st, sp, hd, m, hs.from(h), true)
	}
}

// scratchPool holds the float32 buffers keys and shifted heads pass through:
// scratchValues values, or more for a token-scope norm of many heads.
var scratchPool = sync.Pool{New: func() any {
	b := make([]float32, scratchValues)
	return &b
}}

// scratchValues is the size of a scratch buffer: 16 KiB of float32, one
// head at least.
const scratchValues = 4096

// scratch returns a buffer of whole heads of r's shape, at least min heads
// (a token-scope norm needs all of a token's heads at once), from the pool.
func (r *Rotary) scratch(least int) (*[]float32, []float32) {
	b := scratchPool.Get().(*[]float32)
	need := max(1, scratchValues/r.hd, least) * r.hd
	if len(*b) < need {
		*b = make([]float32, need)
	}
	return b, (*b)[:max(1, scratchValues/r.hd, least)*r.hd]
}

// ApplyStore turns the keys of a step into a KV cache by slot: for every
// token j with slots[j] ≠ −1 and every h < ss.Heads it turns the head
// src[j·ss.Token + h·ss.Head :][:HeadDim] by the positions of token j, as
// Apply does (the attention factor A applied once, here), and stores it in
// cache row slots[j] of c: f32 as is, f16 and bf16 rounded to nearest even
// (values past RotaryDim narrowed unrotated), e4m3 as e4m3(y/scale)
// saturating at ±448, e5m2 as e5m2(y/scale) saturating at ±57344, q8_0,
// q4_0, q4_1, q5_0, q5_1, mxfp4 and iq4_nl block by block as ggml's
// quantize_row_<type>_ref, int8_per_token_head head by head as vLLM does
// (Int8PerTokenHeadCache: a scale computed from each head); into a
// Hadamard-rotated cache (WithHadamard) each
// turned head is multiplied by H before it is stored.
// A slot of −1 skips its token (padding); a paged cache resolves its block
// table to slots. Nothing else of the cache is written, and src is not
// modified. With slots 0…n−1 and a cache laid out as src, it rotates and
// narrows a sequence in one pass.
//
// A view field that is not positive, a slot outside the rows c gives its
// buffer, a slot listed twice, heads of different counts, len(pos) ≠
// len(slots)·Axes, a position outside the table, or a cache type the
// package has no kernels for at this shape panic before anything is
// written.
func (t *Table) ApplyStore(c Cache, slots []int64, src []float32, ss Strides, pos []int32) {
	const fn = "Table.ApplyStore"
	w := t.seq(fn, pos)
	if w.n != len(slots) {
		panicLen(fn, len(pos), "len(slots)", len(slots), t.r.axes)
	}
	t.r.applyStore(fn, &w, &c, slots, src, ss)
}

// ApplyStore turns the keys of token j by the positions of token j and
// stores them in cache row slots[j], as Table.ApplyStore does: a decode
// step's keys written straight into the cache, whatever each sequence's
// position. pos is the positions Set was given.
func (b *Batch) ApplyStore(c Cache, slots []int64, src []float32, ss Strides, pos []int32) {
	const fn = "Batch.ApplyStore"
	w := b.walk(fn, pos)
	if w.n != len(slots) {
		panicf("%s: len(slots) = %d: want b.Len() = %d, a slot per token", fn, len(slots), w.n)
	}
	b.t.r.applyStore(fn, &w, &c, slots, src, ss)
}

func (r *Rotary) applyStore(fn string, w *walk, c *Cache, slots []int64, src []float32, ss Strides) {
	o := r.cacheOp(fn, "c", c)
	o.check(fn, "c", "slots", slots)
	r.checkTokens(fn, "ss", ss, len(src), len(slots), "len(slots)")
	checkHeads(fn, "c", c.s, "ss", ss)
	var buf *[]float32
	var sp []float32
	if o.bytes != nil || o.had != nil {
		buf, sp = r.scratch(0)
	}
	for j, s := range slots {
		if s < 0 {
			continue
		}
		o.storeRotated(int(s)*c.s.Token, c.s.Head, src[j*ss.Token:], ss.Head, ss.Heads, headSeq{0, 1}, w.row(j), sp)
	}
	if buf != nil {
		scratchPool.Put(buf)
	}
	w.done()
}

// panicLen panics for len(pos) = n where slots (named what) has m entries:
// a position per axis of each token.
func panicLen(fn string, n int, what string, m, axes int) {
	if axes == 1 {
		panicf("%s: len(pos) = %d: want %s = %d", fn, n, what, m)
	}
	panicf("%s: len(pos) = %d: want %s·Axes = %d (%s = %d, Axes = %d)", fn, n, what, m*axes, what, m, axes)
}

// checkTokens checks a float32 token view of tokens tokens, named what.
func (r *Rotary) checkTokens(fn, what string, s Strides, n, tokens int, word string) {
	if !smallView(s, n, tokens, r.hd) {
		checkView(fn, what, s, n, tokens, r.hd, word)
	}
}

// checkHeads panics unless the views a and b have as many heads.
func checkHeads(fn, an string, a Strides, bn string, b Strides) {
	if a.Heads != b.Heads {
		panicf("%s: %s.Heads = %d: want %s.Heads (%d)", fn, an, a.Heads, bn, b.Heads)
	}
}

// Store writes the values of a step into a KV cache by slot, as ApplyStore
// writes keys but without rotating: for every token j with slots[j] ≠ −1
// and every h < ss.Heads, src[j·ss.Token + h·ss.Head :][:HeadDim] stored in
// cache row slots[j] of c (multiplied by H first for a Hadamard-rotated
// cache). The checks and panics are ApplyStore's (without positions).
func (r *Rotary) Store(c Cache, slots []int64, src []float32, ss Strides) {
	r.store("Rotary.Store", c, slots, src, ss)
}

func (r *Rotary) store(fn string, c Cache, slots []int64, src []float32, ss Strides) {
	r.checkNil(fn)
	o := r.cacheOp(fn, "c", &c)
	o.check(fn, "c", "slots", slots)
	r.checkTokens(fn, "ss", ss, len(src), len(slots), "len(slots)")
	checkHeads(fn, "c", c.s, "ss", ss)
	var buf *[]float32
	var sp []float32
	if o.had != nil {
		buf, sp = r.scratch(0)
	}
	cacheWalk(slots, nil, c.s, ss, func(_, cOff, cs, xOff, xs, n int, hs headSeq) {
		o.put(cOff, cs, src[xOff:], xs, n, hs, sp)
	})
	if buf != nil {
		scratchPool.Put(buf)
	}
}

// Load reads cache rows back as float32 for attention: for every token j
// with slots[j] ≠ −1 and every h < ds.Heads, the head of cache row slots[j]
// of c widened (f16, bf16: exactly; e4m3, e5m2: times the scale, rounded
// once; q8_0, q4_0, q4_1, q5_0, q5_1, mxfp4, iq4_nl: as ggml's dequantize_row_<type>;
// int8_per_token_head: each int8 times its head's scale) into dst[j·ds.Token +
// h·ds.Head :][:HeadDim]: from a Hadamard-rotated cache, in H's basis as
// stored, or multiplied by H again (the original basis) with the view's
// Original. The heads of tokens with slot −1 and every other
// element of dst keep their values. A view field that is not positive, a
// slot outside the rows c gives its buffer, a slot listed twice or heads of
// different counts panic before dst is written.
func (r *Rotary) Load(dst []float32, ds Strides, c Cache, slots []int64) {
	r.load("Rotary.Load", dst, ds, c, slots)
}

func (r *Rotary) load(fn string, dst []float32, ds Strides, c Cache, slots []int64) {
	r.checkNil(fn)
	o := r.cacheOp(fn, "c", &c)
	o.check(fn, "c", "slots", slots)
	r.checkTokens(fn, "ds", ds, len(dst), len(slots), "len(slots)")
	checkHeads(fn, "ds", ds, "c", c.s)
	cacheWalk(slots, nil, c.s, ds, func(_, cOff, cs, xOff, xs, n int, hs headSeq) {
		o.get(dst[xOff:], xs, cOff, cs, n, hs)
	})
}

// Shift turns keys already in the cache, for a context shift: the heads of
// every row slots[j] ≠ −1 of c turn by delta[j] positions (negative:
// backward), in the cache's type: each head is widened, turned by R_delta
// with A = 1 and stored back as Store stores it. The attention factor A was
// applied once, when ApplyStore wrote the key, and is not applied again. A
// context shift moves every axis of a multi-axis token by the same delta.
// The rotation's cos and sin are computed from the table's own frequencies
// for |delta| (one row per run of equal deltas), so delta may be any int32
// but −2³¹, whatever positions the table covers. A delta of 0 leaves its row
// as it is; values past RotaryDim (a block format: the blocks that hold no
// rotary value) keep their bits, but in an int8_per_token_head cache, whose
// one scale covers the head, each head is coded again whole (a new scale,
// so every int8 may change), and in a Hadamard-rotated cache
// (WithHadamard), where each head is loaded whole, multiplied by H, turned,
// multiplied by H and stored whole, every value of it may change by
// rounding. A view field that is not positive, a slot
// outside the rows c gives its buffer, a slot listed twice, len(delta) ≠
// len(slots) or a delta of −2³¹ panic before anything is written.
func (t *Table) Shift(c Cache, slots []int64, delta []int32) {
	const fn = "Table.Shift"
	t.checkNil(fn)
	r := t.r
	o := r.cacheOp(fn, "c", &c)
	if len(delta) != len(slots) {
		panicf("%s: len(delta) = %d: want len(slots) = %d", fn, len(delta), len(slots))
	}
	for j, d := range delta {
		if d == math.MinInt32 {
			panicf("%s: delta[%d] = %d: want |delta| < 2³¹", fn, j, d)
		}
	}
	o.check(fn, "c", "slots", slots)
	row := rowPool.Get().(*[]comp)
	rr := (*row)[:r.rowLen]
	buf, sp := r.scratch(0)
	cur := int32(0) // the delta rr is filled for; 0: none yet
	cacheWalk(slots, delta, c.s, c.s, func(j, off, st, _, _, n int, hs headSeq) {
		d := delta[j]
		if d == 0 {
			return
		}
		if d != cur {
			p := int64(d)
			if p < 0 {
				p = -p
			}
			r.fill(rr, int(p), t.freqs, 1, t.maxFreq)
			cur = d
		}
		o.shiftHeads(off, st, n, hs, &rr[0], d < 0, sp)
	})
	scratchPool.Put(buf)
	rowPool.Put(row)
}

// sameMemory reports whether the slices a and b share an element.
func sameMemory[A, B any](a []A, b []B) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	var za A
	var zb B
	return pa < pb+uintptr(len(b))*unsafe.Sizeof(zb) && pb < pa+uintptr(len(a))*unsafe.Sizeof(za)
}
