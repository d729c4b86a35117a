package rt

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/ropegen/ropegen/verify/codec"
)

// alignedBytes returns n zero bytes starting on an 8-byte boundary (the
// backing array is []uint64), as a buffer of any cache type's elements.
func alignedBytes(n int) []byte {
	w := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(w))), len(w)*8)[:n]
}

// typedCache is the typed constructor's Cache of type name over a fresh
// buffer of n bytes, and that buffer's bytes.
func typedCache(t *testing.T, name string, n int, s Strides, scale float32) (Cache, []byte) {
	t.Helper()
	b := alignedBytes(n)
	var c Cache
	switch name {
	case "f32":
		c = F32Cache(unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), n/4), s)
	case "f16":
		c = F16Cache(unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), n/2), s)
	case "bf16":
		c = BF16Cache(unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(b))), n/2), s)
	case "e4m3":
		c = E4M3Cache(b, s, scale)
	case "e5m2":
		c = E5M2Cache(b, s, scale)
	case "q8_0":
		c = Q80Cache(b, s)
	case "q4_0":
		c = Q40Cache(b, s)
	case "q4_1":
		c = Q41Cache(b, s)
	case "q5_0":
		c = Q50Cache(b, s)
	case "q5_1":
		c = Q51Cache(b, s)
	case "mxfp4":
		c = MXFP4Cache(b, s)
	case "iq4_nl":
		c = IQ4NLCache(b, s)
	case "nvfp4":
		c = NVFP4Cache(b, s)
	case "int8_per_token_head":
		c = Int8PerTokenHeadCache(b, s)
	case "nvfp4_gs":
		c = NVFP4GSCache(b, s, scale)
	default:
		t.Fatalf("no typed constructor for %q", name)
	}
	return c, b
}

// TestNewCacheIsTheTypedCache stores the same keys through NewCache's
// Cache and the typed constructor's, for every cache type: the bytes
// written, DType, Strides and what Load reads back must be the same, and a
// scaled type's scale must be the one given (a different scale writes
// different bytes).
func TestNewCacheIsTheTypedCache(t *testing.T) {
	s := refShapes[2] // 64 values: whole q8_0 blocks
	r := mustNew(t, refParams(s, 10000))
	const heads, rows = 2, 5
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, rows*heads*s.HeadDim)
	for i := range src {
		src[i] = float32(rng.NormFloat64() * 3)
	}
	ss := Strides{heads, s.HeadDim, heads * s.HeadDim}
	slots := []int64{3, 0, 4, 1, 2}
	for k := 1; k < len(cacheNames); k++ {
		name := cacheNames[k]
		t.Run(name, func(t *testing.T) {
			e := r.CacheHead(name)
			cs := Strides{heads, e, heads * e}
			n := rows * heads * e * cacheElemBytes[k]
			buf := alignedBytes(n)
			c, err := NewCache(name, buf, cs, 0.25)
			if err != nil {
				t.Fatal(err)
			}
			if c.DType() != name || c.Strides() != cs {
				t.Fatalf("NewCache(%q): DType %q, Strides %v: want %q, %v", name, c.DType(), c.Strides(), name, cs)
			}
			want, wb := typedCache(t, name, n, cs, 0.25)
			r.Store(c, slots, src, ss)
			r.Store(want, slots, src, ss)
			if !bytes.Equal(buf, wb) {
				t.Fatalf("NewCache(%q): Store wrote other bytes than the typed constructor's Cache", name)
			}
			got, exp := make([]float32, len(src)), make([]float32, len(src))
			r.Load(got, ss, c, slots)
			r.Load(exp, ss, want, slots)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(exp[i]) {
					t.Fatalf("NewCache(%q): Load[%d] = %v: want %v, the typed Cache's", name, i, got[i], exp[i])
				}
			}
			if cacheScaled(uint8(k)) {
				other, ob := typedCache(t, name, n, cs, 1)
				r.Store(other, slots, src, ss)
				if bytes.Equal(ob, buf) {
					t.Fatalf("NewCache(%q): scale 1 and scale 0.25 store the same bytes: the scale is not used", name)
				}
			}
		})
	}
}

// TestNewCacheErrors checks that NewCache refuses an unknown name, a type
// the package was not generated with, a buffer of the wrong length and a
// misaligned one, naming the value and what is accepted; and that a bad
// e5m2 scale reaches the entry points' check.
func TestNewCacheErrors(t *testing.T) {
	s := Strides{1, 4, 4}
	wantErr := func(t *testing.T, err error, parts ...string) {
		t.Helper()
		if err == nil {
			t.Fatalf("no error: want one containing %q", parts)
		}
		for _, p := range append([]string{"rt.NewCache: "}, parts...) {
			if !strings.Contains(err.Error(), p) {
				t.Errorf("error %q: want it to contain %q", err, p)
			}
		}
	}
	all := []string{`"f32"`, `"f16"`, `"bf16"`, `"e4m3"`, `"q8_0"`, `"e5m2"`, `"q4_0"`, `"q4_1"`, `"q5_0"`, `"q5_1"`, `"mxfp4"`, `"iq4_nl"`, `"nvfp4"`, `"int8_per_token_head"`, `"nvfp4_gs"`}
	_, err := NewCache("nvfp4_x", alignedBytes(16), s, 1)
	wantErr(t, err, append([]string{`name = "nvfp4_x" is not a cache type`}, all...)...)
	_, err = NewCache("", alignedBytes(16), s, 1)
	wantErr(t, err, `name = "" is not a cache type`)

	cacheBuilt[cacheE5M2] = false
	_, err = NewCache("e5m2", alignedBytes(16), s, 1)
	cacheBuilt[cacheE5M2] = true
	wantErr(t, err, `name = "e5m2" is a cache type this package was not generated with`, `want one of "f32", "f16", "bf16", "e4m3", "q8_0"`)
	if strings.Contains(err.Error(), `"q8_0", "e5m2"`) {
		t.Errorf("error %q lists e5m2, which the package lacks", err)
	}

	_, err = NewCache("f32", alignedBytes(6), s, 1)
	wantErr(t, err, "len(buf) = 6: want a multiple of 4 (f32 elements of 4 bytes)")
	_, err = NewCache("bf16", alignedBytes(7), s, 1)
	wantErr(t, err, "len(buf) = 7: want a multiple of 2 (bf16 elements of 2 bytes)")
	_, err = NewCache("f16", alignedBytes(10)[1:9], s, 1)
	wantErr(t, err, "want a 2-byte aligned buffer (f16 elements of 2 bytes)")
	for _, name := range []string{"e4m3", "e5m2", "q8_0"} {
		if _, err := NewCache(name, alignedBytes(10)[1:8], s, 1); err != nil {
			t.Errorf("NewCache(%q, 7 bytes at an odd address): %v: want no error for a byte type", name, err)
		}
	}

	r := mustNew(t, refParams(refShapes[0], 10000))
	c, err := NewCache("e5m2", alignedBytes(r.CacheHead("e5m2")), Strides{1, 16, 16}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "Rotary.Store: c's scale = 0: want a finite scale > 0") {
			t.Errorf("Store with NewCache's e5m2 Cache of scale 0: panic %q: want the scale named", msg)
		}
	}()
	r.Store(c, []int64{0}, make([]float32, 16), Strides{1, 16, 16})
}

// TestNVFP4GSScale checks the nvfp4_gs view's tensor scale g: Store and
// Load code with it (verify/codec's NVFP4GS, whose bytes the reference
// kernels are), a g that is not finite and > 0 panics naming it before
// anything is written, and WithHeadScales is refused (a scale per head is
// e4m3's and e5m2's).
func TestNVFP4GSScale(t *testing.T) {
	s := refShapes[2] // 64 values: two pairs of nvfp4_gs blocks
	r := mustNew(t, refParams(s, 10000))
	e := r.CacheHead("nvfp4_gs")
	if e != 36 {
		t.Fatalf(`CacheHead("nvfp4_gs") = %d: want 36 (4 blocks of 9 bytes)`, e)
	}
	src := make([]float32, s.HeadDim)
	for i := range src {
		src[i] = float32(i%7) - 3.25
	}
	ss, cs := Strides{1, s.HeadDim, s.HeadDim}, Strides{1, e, e}
	for _, g := range []float32{1, 448 * 6 / 3.25, 1 / 0.0123} {
		buf := make([]byte, e)
		r.Store(NVFP4GSCache(buf, cs, g), []int64{0}, src, ss)
		want := make([]byte, e)
		codec.NVFP4GS.Encode(want, src, g)
		if !bytes.Equal(buf, want) {
			t.Fatalf("g = %v: Store wrote % x: want % x", g, buf, want)
		}
		y, wy := make([]float32, s.HeadDim), make([]float32, s.HeadDim)
		r.Load(y, ss, NVFP4GSCache(buf, cs, g), []int64{0})
		codec.NVFP4GS.Decode(wy, buf, g)
		for i := range y {
			if math.Float32bits(y[i]) != math.Float32bits(wy[i]) {
				t.Fatalf("g = %v: Load[%d] = %v: want %v", g, i, y[i], wy[i])
			}
		}
	}
	for _, g := range []float32{0, -1, float32(math.Inf(1)), float32(math.NaN())} {
		buf := make([]byte, e)
		msg := panics(func() { r.Store(NVFP4GSCache(buf, cs, g), []int64{0}, src, ss) })
		if want := fmt.Sprintf("Rotary.Store: c's scale = %v: want a finite scale > 0", g); !strings.Contains(msg, want) {
			t.Errorf("g = %v: panic %q: want %q", g, msg, want)
		}
		if !bytes.Equal(buf, make([]byte, e)) {
			t.Errorf("g = %v: the panicking Store wrote % x", g, buf)
		}
	}
	c := NVFP4GSCache(make([]byte, e), cs, 1).WithHeadScales([]float32{1})
	msg := panics(func() { r.Store(c, []int64{0}, src, ss) })
	if !strings.Contains(msg, "c is a nvfp4_gs cache with scales per head (WithHeadScales): want an e4m3 or e5m2 cache") {
		t.Errorf("WithHeadScales on nvfp4_gs: panic %q", msg)
	}
}
