package verify

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// CacheElem is the element type of a KV cache: float32 for f32, uint16 for
// f16 and bf16 bits, uint8 for e4m3 and e5m2 bytes and for the bytes of q8_0
// blocks.
type CacheElem interface{ ~uint8 | ~uint16 | ~float32 }

// Cache describes the KV-cache forms of one cache type of a package
// (docs/contract.md §11) to Run, Bench and CacheExhaustive: a *Cache[float32]
// (f32), *Cache[uint16] (f16, bf16) or *Cache[uint8] (e4m3, q8_0, e5m2), in
// Kernel.Caches. Each function calls the package's form of the same name on
// the table given with a cache view of dst (c, src) of that type, converting
// Strides; scale is the e4m3 or e5m2 view's and ignored by the others.
type Cache[C CacheElem] struct {
	// DType is the cache type: "f32", "f16", "bf16", "e4m3", "q8_0" or "e5m2".
	DType string
	// CacheHead is the package's CacheHead: the elements one cached head
	// takes (HeadDim, or for q8_0 the HeadDim/32·34 bytes of its blocks).
	CacheHead  int
	ApplyStore func(tab Table[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides, pos []int32)
	Store      func(dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides)
	Load       func(dst []float32, scale float32, ds Strides, src []C, ss Strides, slots []int64)
	Shift      func(tab Table[float32], c []C, scale float32, cs Strides, slots []int64, delta []int32)
	// BatchApplyStore calls a Batch's ApplyStore (docs/contract.md §12):
	// token j at the position the Batch's Set gave it. Optional.
	BatchApplyStore func(b Batch[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides)
	// Prep calls the table's Prep (docs/contract.md §13) with the step p,
	// its caches of this type; BatchPrep a Batch's. Optional: with them,
	// Run checks Prep against the Kernel's ApplyNormQK (ApplyQK without a
	// Norm) and Store, and RunNorm against its Norm's.
	Prep      func(tab Table[float32], p PrepStep[C], pos []int32)
	BatchPrep func(b Batch[float32], p PrepStep[C])
	// Hadamard says that every function views its caches with the
	// Hadamard option (docs/contract.md §15: heads stored as H·y, Prep's
	// queries multiplied by H, Shift over whole heads); LoadOriginal is
	// then Load of the view's Original (the heads multiplied by H again)
	// and Rows the package's Rotary.Hadamard, both required. Run checks
	// the forms' bits, guard pages, panics, Batch and Prep (not the
	// per-format checks of blocks, every code and far shifts, which the
	// same type's Cache without the option makes), and Rows; Bench
	// measures them; CacheExhaustive leaves them out.
	Hadamard     bool
	LoadOriginal func(dst []float32, scale float32, ds Strides, src []C, ss Strides, slots []int64)
	Rows         func(x []float32, xs Strides, n int)
	// HeadScales says that every function views its e4m3 or e5m2 caches
	// with a scale per KV head, HeadScales(scale, heads) for the call's
	// scale and the view's heads, not the per-tensor scale. Run checks the
	// forms' bits, guard pages, panics (a bad scales[0]), Batch and Prep;
	// Bench measures them; CacheExhaustive leaves them out.
	HeadScales bool
}

// HeadScales are the scales per KV head a Cache with HeadScales gives a
// view of heads heads for a call's scale s: s for the even heads,
// fl32(0.75·s) for the odd (a scale of another binade or mantissa, finite
// and > 0 whenever s is, even at the extremes drawn), and a bad s bad
// for head 0.
func HeadScales(s float32, heads int) []float32 {
	sc := make([]float32, heads)
	for h := range sc {
		sc[h] = headScale(s, h)
	}
	return sc
}

// headScale is HeadScales(s, …)[h].
func headScale(s float32, h int) float32 {
	if h%2 == 1 {
		return 0.75 * s
	}
	return s
}

// CacheForms is the cache forms of one cache type of a package: a
// *Cache[C] (Kernel.Caches lists one per cache type). Run checks them,
// Bench measures them and CacheExhaustive stores every float32 through
// them.
type CacheForms interface {
	cacheType() string
	hadamard() bool
	run(t *testing.T, s *suite[float32])
	bench(s *suite[float32], named bool, r *rand.Rand) []benchGroup
	exhaustive(t tb, k Kernel[float32], stride uint64)
	prep(t *testing.T, s *suite[float32])
	fuzzPrep(s *suite[float32], hdr, vals []byte) string
}

func (c *Cache[C]) hadamard() bool { return c.Hadamard || c.HeadScales }
func (c *Cache[C]) cacheType() string {
	switch {
	case c.Hadamard:
		return c.DType + "+hadamard"
	case c.HeadScales:
		return c.DType + "+headscales"
	}
	return c.DType
}

func (c *Cache[C]) run(t *testing.T, s *suite[float32]) { runCacheOf(t, s, c) }
func (c *Cache[C]) prep(t *testing.T, s *suite[float32]) {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		t.Fatalf("verify: invalid Cache: %v", err)
	}
	runPrep(t, cs)
}

// cacheOp is one of the four cache forms.
type cacheOp int

const (
	opStore cacheOp = iota
	opApplyStore
	opLoad
	opShift
)

var cacheOpNames = [...]string{"Store", "ApplyStore", "Load", "Shift"}

func (o cacheOp) String() string { return cacheOpNames[o] }

// cacheSuite is the suite of one package's cache forms of one type.
type cacheSuite[C CacheElem] struct {
	s      *suite[float32]
	c      *Cache[C]
	ref    cacheRef
	shiftN int // values of a head Shift reads and writes: RotaryDim, whole blocks of it
}

func newCacheSuite[C CacheElem](s *suite[float32], c *Cache[C]) (*cacheSuite[C], error) {
	ref, err := newCacheRef(c.DType, s.hd)
	if err != nil {
		return nil, err
	}
	var z C
	if want, got := ref.size(), int(unsafe.Sizeof(z)); got != want {
		return nil, fmt.Errorf("cache DType %q takes %d-byte elements, the Cache has %d", c.DType, want, got)
	}
	if c.CacheHead != ref.cacheHead {
		return nil, fmt.Errorf("Cache.CacheHead = %d: want %d for %s and HeadDim %d", c.CacheHead, ref.cacheHead, c.DType, s.hd)
	}
	if c.ApplyStore == nil || c.Store == nil || c.Load == nil || c.Shift == nil {
		return nil, fmt.Errorf("Cache needs ApplyStore, Store, Load and Shift")
	}
	if c.Hadamard && (c.LoadOriginal == nil || c.Rows == nil) {
		return nil, fmt.Errorf("a Cache with Hadamard needs LoadOriginal and Rows")
	}
	if c.HeadScales && (c.Hadamard || !ref.scaled) {
		return nil, fmt.Errorf("a Cache with HeadScales of DType %q: want e4m3 or e5m2, without Hadamard", c.DType)
	}
	if b := s.hd & -s.hd; c.Hadamard && (b < 16 || s.hd > 1024) {
		return nil, fmt.Errorf("a Cache with Hadamard at HeadDim %d (blocks of %d): want blocks of 16 or more and a head of at most 1024", s.hd, b)
	}
	v := ref.values
	shiftN := (s.rd + v - 1) / v * v
	if c.Hadamard {
		shiftN = s.hd // H mixes every value of a head into the rotary ones
	}
	return &cacheSuite[C]{s: s, c: c, ref: ref, shiftN: shiftN}, nil
}

// runCache runs the cache checks when the package has cache forms.
func runCache[T Elem](t *testing.T, s *suite[T]) {
	if len(s.k.Caches) == 0 {
		t.Skip("no cache forms")
	}
	sf, ok := any(s).(*suite[float32])
	if !ok {
		t.Fatalf("Kernel.Caches is set for DType %q: the cache forms take float32", s.k.DType)
	}
	for _, c := range s.k.Caches {
		t.Run(c.cacheType(), func(t *testing.T) { c.run(t, sf) })
	}
}

func runCacheOf[C CacheElem](t *testing.T, s *suite[float32], c *Cache[C]) {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		t.Fatalf("verify: invalid Cache: %v", err)
	}
	t.Logf("cache %s: CacheHead %d, Shift touches %d values of a head", c.cacheType(), c.CacheHead, cs.shiftN)
	if c.Hadamard || c.HeadScales {
		t.Run("bits", func(t *testing.T) { checkCacheBits(t, cs) })
		if c.Hadamard {
			t.Run("rows", func(t *testing.T) { checkHadamardRows(t, cs) })
		}
		t.Run("guard", func(t *testing.T) { checkCacheGuard(t, cs) })
		t.Run("panics", func(t *testing.T) { checkCachePanics(t, cs) })
		t.Run("batch", func(t *testing.T) { checkCacheBatch(t, cs) })
		runPrep(t, cs)
		return
	}
	t.Run("bits", func(t *testing.T) { checkCacheBits(t, cs) })
	t.Run("load-all", func(t *testing.T) { checkCacheLoadAll(t, cs) })
	if cs.ref.blocks {
		t.Run("blocks", func(t *testing.T) { checkBlocks(t, cs) })
	}
	t.Run("shift-far", func(t *testing.T) { checkShiftFar(t, cs) })
	t.Run("guard", func(t *testing.T) { checkCacheGuard(t, cs) })
	t.Run("panics", func(t *testing.T) { checkCachePanics(t, cs) })
	t.Run("batch", func(t *testing.T) { checkCacheBatch(t, cs) })
	runPrep(t, cs)
}

// checkCacheBatch checks Batch.ApplyStore, a decode step's keys stored at
// scattered positions, on every backend against Table.ApplyStore token by
// token on one-position range tables, with a skipped (−1) slot among them.
func checkCacheBatch[C CacheElem](t tb, cs *cacheSuite[C]) {
	t.Helper()
	s, k := cs.s, &cs.s.k
	if cs.c.BatchApplyStore == nil || k.Runtime == nil || k.Runtime.NewBatch == nil {
		t.Logf("the kernel describes no Batch.ApplyStore")
		return
	}
	defer s.restore()
	rng := rand.New(rand.NewPCG(seed(), 21))
	const heads, rows = 2, 16
	hd, ch := s.hd, cs.c.CacheHead
	ds := Strides{Heads: heads, Head: ch, Token: heads * ch}
	ss := Strides{Heads: heads, Head: hd, Token: heads * hd}
	for _, be := range s.backendsOrOnly() {
		be.Use()
		pos := []int32{5, 1 << 29, 131071, 700_000, 0}
		slots := []int64{3, 11, -1, 0, 7}
		b := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), len(pos))
		b.Set(pos)
		src := make([]float32, len(pos)*heads*hd)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		scale := cs.drawScale(rng)
		got, want := make([]C, rows*heads*ch), make([]C, rows*heads*ch)
		cs.c.BatchApplyStore(b, got, scale, ds, slots, src, ss)
		for j, p := range pos {
			tab := k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), int(p), 1)
			cs.c.ApplyStore(tab, want, scale, ds, slots[j:j+1], src[j*heads*hd:(j+1)*heads*hd], ss, pos[j:j+1])
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("backend %s: Batch.ApplyStore at %v into slots %v: cache element %d (row %d) is %#x, Table.ApplyStore token by token gives %#x", be.Name, pos, slots, i, i/(heads*ch), got[i], want[i])
			}
		}
	}
}
