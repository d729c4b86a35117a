package amd64

import (
	"math"
	"testing"
)

// TestQ8RoundTrick checks the rounding the q8_0 kernels use once a value is
// clamped to ±127: trunc(v + copysign(h, v)), h the largest float32 below
// 1/2, with the sum rounded to nearest even as VADDPS rounds it, is
// roundf(v) (halves away from zero) for every float32 v with |v| <= 127.
// (From asm/amd64, whose q8_0 kernels used the same trick.)
func TestQ8RoundTrick(t *testing.T) {
	h := math.Float32frombits(f32Below)
	step := uint32(1)
	if testing.Short() {
		step = 97
	}
	bad := 0
	for u := uint32(0); u <= math.Float32bits(127); u += step {
		for _, v := range []float32{math.Float32frombits(u), -math.Float32frombits(u)} {
			a := h
			if math.Signbit(float64(v)) {
				a = -h
			}
			got := float64(int32(v + a)) // Go's float32 sum rounds to nearest even; int32() truncates
			if want := math.Round(float64(v)); got != want && bad < 5 {
				bad++
				t.Errorf("trunc(%v + %v) = %v, want roundf = %v", v, a, got, want)
			}
		}
	}
}
