package verify

import (
	"math"
	"testing"
)

// TestStream checks every stream kernel against the pure Go one for lengths
// 0…300 and two past 1 MiB (where the AVX-512 loop changes) at every
// alignment of a float32, and that no value outside x moves.
func TestStream(t *testing.T) {
	ks := append(streamKernels(), streamGo)
	const guard = 40
	var lens []int
	for n := range 301 {
		lens = append(lens, n)
	}
	lens = append(lens, 1<<18+37, 1<<17+5)
	for _, sk := range ks {
		for _, n := range lens {
			for off := range 4 {
				buf := make([]float32, n+2*guard)
				want := make([]float32, len(buf))
				for i := range buf {
					buf[i] = float32(i) + 0.25
					want[i] = buf[i]
				}
				x := buf[guard+off : guard+off+n]
				sk.f32(x, 3)
				streamF32Go(want[guard+off:guard+off+n], 3)
				for i := range buf {
					if math.Float32bits(buf[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s f32: n = %d, offset %d: value %d = %v, want %v", sk.name, n, off, i-guard-off, buf[i], want[i])
					}
				}
				b64 := make([]float64, n+2*guard)
				w64 := make([]float64, len(b64))
				for i := range b64 {
					b64[i] = float64(i) + 0.25
					w64[i] = b64[i]
				}
				sk.f64(b64[guard+off:guard+off+n], 3)
				streamF64Go(w64[guard+off:guard+off+n], 3)
				for i := range b64 {
					if b64[i] != w64[i] {
						t.Fatalf("%s f64: n = %d, offset %d: value %d = %v, want %v", sk.name, n, off, i-guard-off, b64[i], w64[i])
					}
				}
			}
		}
	}
	t.Logf("stream kernels: %d levels", len(ks))
}
