package amd64

import (
	"math"
	"strings"
	"testing"
)

// TestQ8RoundTrick checks the rounding the q8_0 kernels use once a value is
// clamped to ±127: trunc(v + copysign(h, v)), h the largest float32 below
// 1/2, with the sum rounded to nearest even as VADDPS rounds it, is
// roundf(v) (halves away from zero) for every float32 v with |v| <= 127.
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

// GenerateCache refuses geometry its kernels cannot serve.
func TestGenerateCacheRefuses(t *testing.T) {
	for _, k := range []CacheKernel{
		{Kernel: Kernel{HeadDim: 64, RotaryDim: 64, DType: "f32"}, Cache: "q4_0", ShiftValues: 64},
		{Kernel: Kernel{HeadDim: 48, RotaryDim: 48, DType: "f32"}, Cache: "q8_0", ShiftValues: 64},
		{Kernel: Kernel{HeadDim: 64, RotaryDim: 40, DType: "f32"}, Cache: "q8_0", ShiftValues: 40},
		{Kernel: Kernel{HeadDim: 64, RotaryDim: 64, DType: "f16"}, Cache: "f16", ShiftValues: 64},
		{Kernel: Kernel{HeadDim: 64, RotaryDim: 32, DType: "f32"}, Cache: "e4m3", ShiftValues: 16},
	} {
		if _, err := GenerateCache([]CacheKernel{k}, "// h", "amd64,!purego"); err == nil {
			t.Errorf("GenerateCache(%+v) accepted it", k)
		}
	}
	out, err := GenerateCache([]CacheKernel{{Kernel: Kernel{HeadDim: 96, RotaryDim: 40, NeoX: true, DType: "f32"}, Cache: "q8_0", ShiftValues: 64, RotTo: true}}, "// h", "amd64,!purego")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, f := range out.Funcs {
		kinds[f.Kind]++
	}
	for _, k := range []string{"store", "load", "storeShift", "loadShift", "rotTo"} {
		if kinds[k] != 2 {
			t.Errorf("%d %s kernels, want one per level", kinds[k], k)
		}
	}
	if n := strings.Count(string(out.Asm), "VZEROUPPER\n\tRET"); n != len(out.Funcs) {
		t.Errorf("%d functions end VZEROUPPER; RET, want %d", n, len(out.Funcs))
	}
}
