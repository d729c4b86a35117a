package verify

import (
	"math"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

// CacheExhaustive checks Store of a package whose cache type holds one
// value per element (f16, bf16, e4m3; e4m3 with scale 1, where x/scale is
// x) on every backend, the pure Go one included, against the suite's own
// rounding (x448/float16 for f16, f32ToBF16 for bf16, refE4M3's search of
// the format's magnitudes for e4m3): on every float32 bit pattern when the
// environment has ROPEGEN_EXHAUSTIVE=1 (make test-exhaustive), else on the
// multiples of a prime stride. A NaN must store as a NaN. Each of k.Caches
// is a subtest; f32 (stored as it is) and the block formats (whose blocks
// checkBlocks covers in Run) skip, saying so.
func CacheExhaustive(t *testing.T, k Kernel[float32]) {
	t.Helper()
	stride := uint64(narrowStride)
	if os.Getenv("ROPEGEN_EXHAUSTIVE") == "1" {
		stride = 1
	}
	if len(k.Caches) == 0 {
		t.Fatalf("Kernel.Caches is empty: no cache forms to store through")
	}
	for _, c := range k.Caches {
		if c.hadamard() {
			continue // the same conversions as the type's Cache without the option, after H
		}
		t.Run(c.cacheType(), func(t *testing.T) { c.exhaustive(t, k, stride) })
	}
}

func (c *Cache[C]) exhaustive(t tb, k Kernel[float32], stride uint64) {
	cacheExhaustive(t, k, c, stride)
}

// segments lists, for the positive float32 bit patterns 0…0x7f800000 (+0 up
// to +Inf), where the stored code changes: the code of every pattern from
// starts[i] up to starts[i+1] is codes[i]. Rounding to nearest never maps a
// larger value to a smaller code, so each code is one run.
type segments struct {
	starts []uint32
	codes  []uint16
}

func newSegments(code func(float32) uint16) segments {
	var s segments
	for a := uint32(0); a <= 0x7f800000; {
		c := code(math.Float32frombits(a))
		// The last pattern with code c: binary search, codes being monotonic.
		hi := a + uint32(sort.Search(int(0x7f800000-a+1), func(i int) bool {
			return code(math.Float32frombits(a+uint32(i))) != c
		})) - 1
		s.starts, s.codes = append(s.starts, a), append(s.codes, c)
		a = hi + 1
	}
	return s
}

// codes is the exhaustive check's reference for a format of one value per
// element: the code of every float32 bit pattern, from the runs of
// segments of each sign.
type codes struct {
	pos, neg segments
	nan      []byte // the code of a NaN
	ref      cacheRef
}

func newCodes(ref cacheRef) *codes {
	code := func(v float32) uint16 {
		var out [4]byte
		ref.quantize(out[:], []float32{v}, 1, 1)
		return uint16(out[0]) | uint16(out[1])<<8
	}
	c := &codes{pos: newSegments(code), neg: newSegments(func(v float32) uint16 { return code(-v) }), ref: ref}
	c.nan = make([]byte, ref.eb)
	ref.quantize(c.nan, []float32{float32(math.NaN())}, 1, 1)
	return c
}

// nanCode is the want of a NaN input: any NaN code.
const nanCode = 0xffff

// want returns the code of the float32 bit pattern u, nanCode for a NaN;
// seg is a hint, the run of the last lookup of that sign.
func (c *codes) want(u uint32, seg *[2]int) uint16 {
	a := u & 0x7fffffff
	if a > 0x7f800000 {
		return nanCode
	}
	s, i := &c.pos, 0
	if u != a {
		s, i = &c.neg, 1
	}
	k := seg[i]
	if k >= len(s.starts) || a < s.starts[k] {
		k = sort.Search(len(s.starts), func(j int) bool { return s.starts[j] > a }) - 1
	}
	for k+1 < len(s.starts) && a >= s.starts[k+1] {
		k++
	}
	seg[i] = k
	return s.codes[k]
}

// matches reports whether the stored code g is want's.
func (c *codes) matches(g, want uint16) bool {
	if g == want {
		return true
	}
	if want != nanCode {
		return false
	}
	b := []byte{byte(g), byte(g >> 8)}[:c.ref.eb]
	return c.ref.f.Same(b, c.nan)
}

func cacheExhaustive[C CacheElem](t tb, k Kernel[float32], c *Cache[C], stride uint64) {
	t.Helper()
	ref, err := newCacheRef(c.DType, k.HeadDim)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if ref.blocks {
		t.Skipf("%s stores blocks, not values: checkBlocks checks them", c.DType)
	}
	if ref.size() == 4 {
		t.Skip("f32 stores values as they are: the cache checks compare their bits")
	}
	cd := newCodes(ref)
	bs := k.Backends
	if len(bs) == 0 {
		bs = []Backend{{Name: "(only)", Use: func() {}}}
	} else {
		defer bs[0].Use()
	}
	workers := runtime.GOMAXPROCS(0)
	for _, b := range bs {
		b.Use()
		var bad atomic.Int64
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				storeEvery(t, c, k.HeadDim, cd, stride, w, workers, b.Name, &bad)
			}()
		}
		wg.Wait()
		if m := bad.Load(); m > 0 {
			t.Errorf("%s: %d mismatches", b.Name, m)
		} else {
			t.Logf("%s: every float32 tested (stride %d) stores as %s as verify rounds it", b.Name, stride, c.DType)
		}
	}
}

// storeEvery is worker w of workers of cacheExhaustive: it stores its
// share of the float32 bit patterns, every stride-th, with Store (scale 1)
// a megabyte of heads at a time, and counts in bad the codes other than
// cd's, reporting the first five.
func storeEvery[C CacheElem](t tb, c *Cache[C], hd int, cd *codes, stride uint64, w, workers int, backend string, bad *atomic.Int64) {
	heads := max(1, (1<<20)/hd)
	view := Strides{heads, hd, heads * hd}
	src := make([]float32, heads*hd)
	dst := make([]C, len(src))
	want := make([]uint16, len(src))
	var seg [2]int
	chunk := uint64(len(src)) * stride
	for start := uint64(w) * chunk; start < 1<<32; start += uint64(workers) * chunk {
		u := start
		for i := range src {
			if u >= 1<<32 {
				u = 0 // past the last pattern: +0 again
			}
			src[i] = math.Float32frombits(uint32(u))
			want[i] = cd.want(uint32(u), &seg)
			u += stride
		}
		c.Store(dst, 1, view, []int64{0}, src, view)
		for i := range dst {
			mem := bytesOf(dst[i : i+1])
			g := uint16(mem[0])
			if len(mem) > 1 {
				g |= uint16(mem[1]) << 8
			}
			if cd.matches(g, want[i]) {
				continue
			}
			if bad.Add(1) <= 5 {
				t.Errorf("%s: %s store of %#08x = %#x, want %#x", backend, c.DType, math.Float32bits(src[i]), g, want[i])
			}
		}
	}
}
