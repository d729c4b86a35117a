package templates

// CacheKernel is the template contract of the KV-cache files,
// cache_arm64.s.tmpl and cache_arm64.go.tmpl: a generated package's
// rope_cache_arm64.s (the NEON store and load kernels of its cache type) and
// rope_cache_arm64.go (their declarations and the cacheNEON value). As for
// [Kernel], the generator decides; the templates spell.
//
// # The kernels
//
// Each function converts n heads, head h at src[h·srcStride:] into
// dst[h·dstStride:], strides in elements of their slices (bytes for q8_0):
//
//	store: func(dst []C, dstStride int, src []float32, srcStride, n int[, scale float32])
//	load:  func(dst []float32, dstStride int, src []C, srcStride, n int[, scale float32])
//
// reading and writing exactly the first Count values of each head (q8_0:
// Count/32 blocks of 34 bytes), nothing else and no slice length; n ≤ 0
// returns at once. The conversions are the generated pure Go ones lane by
// lane (gen/cache.go): f16 with FCVTN/FCVTL, bf16 with the integer rounding
// of [Narrow] (quiet bit set for NaNs) and SHLL, e4m3 with integer lanes
// (see the template's comments), q8_0 with FMAX for the block's amax when
// it holds no NaN (FMAXV gives NaN otherwise, and a scalar loop then
// follows ggml's sequence amax = MAX(amax, |x_j|) with FCMP and FCSEL GT,
// which is C's a > b ? a : b), FRINTA for roundf and FCVTZS.
//
// # Registers
//
// R0 dst, R1 dstStride in bytes, R2 src, R5 srcStride in bytes, R6 the
// heads left, R3 and R4 the load and store pointers of the current head
// (post-incremented), R7 the loop counter within a head, R8 a q8_0 block's
// first value (for the NaN path), R9 and R10 scratch. Vector: V0–V15
// working registers, the constants of [CacheKernel.K] from V16 up, the
// e4m3 scale in V31 (every lane), V20–V23 q8_0's scalar temporaries.
type CacheKernel struct {
	Header  string // the first line of every file
	Package string
	// Cache is the cache type: "f16", "bf16", "e4m3" or "q8_0"; About it in
	// words.
	Cache, About string
	// Funcs are the store and load kernels: of HeadDim values, and when
	// Shift touches fewer, of that many (Kind "storeShift", "loadShift").
	Funcs []CacheFunc
	// K holds the registers of the constants; Consts sets them, each
	// before a function's head loop.
	K      CacheConsts
	Consts []Const
}

// CacheConsts are the vector constants' registers (every .4S lane of VReg
// holding the value named), 0 where the cache type needs none.
type CacheConsts struct {
	// bf16 narrowing: the lowest kept bit 0x10000, the bias 0x7fff, a
	// NaN's quiet bit 0x400000 ([Narrow]).
	Lsb, Bias, Quiet int
	// e4m3 store: 0x7fffffff, 448's bits 0x43e00000, 1, 0x7ffff, 0x3c0
	// (120<<3), 2¹⁴'s bits 0x46800000, 2⁻⁶'s bits 0x3c800000, +Inf's bits,
	// 0x7f.
	Abs, Max, One, Round, Rebias, Magic, Normal, Inf, NaN int
	// e4m3 load: 0x7f (NaN above), 0x80, 8, 120<<23, 2⁻⁹, a quiet NaN.
	High, Eight, Exp, Sub, QNaN int
	// Scale is the e4m3 scale's register.
	Scale int
	// q8_0: 127.0, −127.0, 1.0 and 0.0.
	F127, FM127, F1, F0 int
}

// CacheFunc is one kernel.
type CacheFunc struct {
	Name string // Go name, e.g. "cacheStoreNEON"
	// Kind is the cacheKernels field: "store", "load", "storeShift" or
	// "loadShift".
	Kind  string
	Store bool // a store (float32 to the cache); else a load
	Count int  // values of each head converted
	// Params is the Go parameter list, also the comment above TEXT; the
	// frame is dst_base+0 dstStride+24 src_base+32 srcStride+56 n+64 and,
	// for e4m3, scale+72: ArgSize 72 or 76.
	Params  string
	ArgSize int
	Scale   bool
	// DstShift and SrcShift are log2 of the bytes of an element of dst and
	// src: the strides' LSL.
	DstShift, SrcShift int
	// Loop is the iterations of the head's loop: 16 values each (f16, bf16,
	// e4m3), or one 32-value block (q8_0); Tails the chunks that follow it,
	// of 8, 4 or 2 values (f16, bf16, e4m3), largest first.
	Loop  int
	Tails []int
}

// CacheChunk is what a template's chunk receives: Values (16, 8, 4 or 2) and
// the constants' registers.
type CacheChunk struct {
	Values int
	K      CacheConsts
}

// Regs returns the float32 registers of a chunk: V0… one per 4 values.
func (c CacheChunk) Regs() []int {
	r := make([]int, (c.Values+3)/4)
	for i := range r {
		r[i] = i
	}
	return r
}

// cacheArgs is the argument of cache_arm64.s.tmpl's chunk sub-template
// (helper args): the function named Name, the chunk C.
type cacheArgs struct {
	Name string
	C    CacheChunk
}

// ExecuteCache runs the named cache template with k, as [Execute] runs the
// kernel templates: the encoder's functions and [Helpers] available, and an
// error for any operand an encoder rejected.
func ExecuteCache(name string, k *CacheKernel) ([]byte, error) { return execute(name, k) }
