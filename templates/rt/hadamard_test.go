package rt

import (
	"testing"
)

// The Hadamard option is a property of the view: WithHadamard sets it,
// Original adds the original basis for Load, and neither touches the
// memory or the other fields.
func TestHadamardView(t *testing.T) {
	buf := make([]float32, 64)
	s := Strides{Heads: 1, Head: 16, Token: 16}
	c := F32Cache(buf, s)
	h := c.WithHadamard()
	o := h.Original()
	if c.Hadamard() || !h.Hadamard() || !o.Hadamard() || c.Original().Hadamard() {
		t.Fatalf("Hadamard(): plain %v, WithHadamard %v, its Original %v, plain Original %v: want false, true, true, false",
			c.Hadamard(), h.Hadamard(), o.Hadamard(), c.Original().Hadamard())
	}
	if h.DType() != "f32" || h.Strides() != s || &h.f32[0] != &buf[0] || o.had != hadRotated|hadOriginal {
		t.Fatalf("WithHadamard changed the view: %q %+v", h.DType(), h.Strides())
	}
}

// An entry point given the Hadamard option at a HeadDim whose block is
// below 16 (12: blocks of 4) panics before writing, naming the head and
// its block; so does Rotary.Hadamard, and Rotary.Hadamard with a negative
// row count or a view x cannot hold.
func TestHadamardPanics(t *testing.T) {
	r12 := mustNew(t, refParams(refShapes[1], 10000)) // 12/8
	r16 := mustNew(t, refParams(refShapes[0], 10000)) // 16/16
	s := Strides{Heads: 1, Head: 12, Token: 12}
	buf := make([]float32, 24)
	for i := range buf {
		buf[i] = float32(i)
	}
	for _, c := range []struct {
		what  string
		call  func()
		words []string
	}{
		{"Store at 12", func() { r12.Store(F32Cache(buf, s).WithHadamard(), []int64{0}, make([]float32, 12), s) }, []string{"Rotary.Store", "HeadDim = 12", "blocks of 4", "at least 16"}},
		{"Load at 12", func() { r12.Load(make([]float32, 12), s, F32Cache(buf, s).WithHadamard(), []int64{1}) }, []string{"Rotary.Load", "HeadDim = 12"}},
		{"Rotary.Hadamard at 12", func() { r12.Hadamard(buf, s, 2) }, []string{"Rotary.Hadamard", "HeadDim = 12", "blocks of 4"}},
		{"n = -1", func() { r16.Hadamard(buf[:16], Strides{Heads: 1, Head: 16, Token: 16}, -1) }, []string{"Rotary.Hadamard", "n = -1"}},
		{"two rows in one", func() { r16.Hadamard(buf[:16], Strides{Heads: 1, Head: 16, Token: 16}, 2) }, []string{"Rotary.Hadamard", "n = 2", "len = 16"}},
	} {
		before := append([]float32(nil), buf...)
		if !panicSays(t, c.what, c.call, c.words...) {
			continue
		}
		for i := range buf {
			if buf[i] != before[i] {
				t.Fatalf("%s: wrote buf[%d] before panicking", c.what, i)
			}
		}
	}
}
