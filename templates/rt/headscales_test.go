package rt

import (
	"math"
	"testing"
)

// A view with scales per head panics before writing, naming the value,
// when the scales do not fit it: too few or too many, one not finite and
// > 0, or a cache type without a scale.
func TestHeadScalesPanics(t *testing.T) {
	r := mustNew(t, refParams(refShapes[0], 10000)) // 16/16
	s := Strides{Heads: 2, Head: 16, Token: 32}
	buf := make([]uint8, 64)
	for i := range buf {
		buf[i] = uint8(i)
	}
	src := make([]float32, 32)
	for _, c := range []struct {
		what  string
		c     Cache
		words []string
	}{
		{"one scale for two heads", E4M3Cache(buf, s, 1).WithHeadScales([]float32{1}), []string{"Rotary.Store", "len(scales) = 1", "c.Heads = 2"}},
		{"three scales", E5M2Cache(buf, s, 1).WithHeadScales([]float32{1, 2, 3}), []string{"len(scales) = 3"}},
		{"a zero scale", E4M3Cache(buf, s, 1).WithHeadScales([]float32{1, 0}), []string{"scales[1] = 0", "finite scale > 0"}},
		{"a NaN scale", E4M3Cache(buf, s, 1).WithHeadScales([]float32{float32(math.NaN()), 1}), []string{"scales[0] = NaN"}},
		{"an f16 cache", F16Cache(make([]uint16, 64), s).WithHeadScales([]float32{1, 1}), []string{"f16 cache", "e4m3 or e5m2"}},
	} {
		before := append([]uint8(nil), buf...)
		if !panicSays(t, c.what, func() { r.Store(c.c, []int64{1}, src, s) }, c.words...) {
			continue
		}
		if string(buf) != string(before) {
			t.Fatalf("%s: wrote the cache before panicking", c.what)
		}
	}
	if sc := []float32{1, 2}; &E4M3Cache(buf, s, 1).WithHeadScales(sc).HeadScales()[0] != &sc[0] || E4M3Cache(buf, s, 1).HeadScales() != nil {
		t.Errorf("HeadScales does not return the view's scales (the slice given), or nil without them")
	}
}
