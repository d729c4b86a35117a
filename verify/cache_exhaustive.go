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
// multiples of a prime stride. A NaN must store as a NaN. k.Cache is the
// package's Cache; for q8_0, whose blocks checkQ8Blocks covers, it skips.
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

func cacheExhaustive[C CacheElem](t tb, k Kernel[float32], c *Cache[C], stride uint64) {
	t.Helper()
	ref, err := newCacheRef(c.DType, k.HeadDim)
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if ref.blocks {
		t.Skip("q8_0 stores blocks, not values: checkQ8Blocks checks them")
	}
	if ref.size() == 4 {
		t.Skip("f32 stores values as they are: the cache checks compare their bits")
	}
	one := func(v float32) uint16 {
		var out [1]uint32
		ref.quantize(out[:], []float32{v}, 1, 1)
		return uint16(out[0])
	}
	segs := newSegments(one)
	sign := uint16(0x8000)
	if ref.size() == 1 {
		sign = 0x80
	}
	nan := func(h uint16) bool {
		out := [1]uint32{uint32(h)}
		want := [1]uint32{uint32(one(float32(math.NaN())))}
		return ref.firstDiff(out[:], want[:], 1) < 0
	}
	hd := k.HeadDim
	heads := max(1, (1<<20)/hd)
	view := Strides{heads, hd, heads * hd}
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
				src := make([]float32, heads*hd)
				dst := make([]C, len(src))
				want := make([]uint16, len(src))
				seg := 0
				chunk := uint64(len(src)) * stride
				for start := uint64(w) * chunk; start < 1<<32; start += uint64(workers) * chunk {
					u := start
					for i := range src {
						if u >= 1<<32 {
							u = 0 // past the last pattern: +0 again
						}
						src[i] = math.Float32frombits(uint32(u))
						a := uint32(u) & 0x7fffffff
						switch {
						case a > 0x7f800000:
							want[i] = 0xffff // any NaN
						default:
							if seg >= len(segs.starts) || a < segs.starts[seg] {
								seg = sort.Search(len(segs.starts), func(i int) bool { return segs.starts[i] > a }) - 1
							}
							for seg+1 < len(segs.starts) && a >= segs.starts[seg+1] {
								seg++
							}
							want[i] = segs.codes[seg]
							if uint32(u) != a {
								want[i] |= sign
							}
						}
						u += stride
					}
					c.Store(dst, 1, view, []int64{0}, src, view)
					for i, got := range dst {
						g, w := uint16(bitsOf(got)), want[i]
						if g == w || w == 0xffff && nan(g) {
							continue
						}
						if bad.Add(1) <= 5 {
							t.Errorf("%s: %s store of %#08x = %#x, want %#x", b.Name, c.DType, math.Float32bits(src[i]), g, w)
						}
					}
				}
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
