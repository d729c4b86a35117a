package verify

import (
	"math"
	"slices"
	"testing"
	"unsafe"
)

// streamLens are the lengths TestStream tries: 0…300 and two past 1 MiB
// (where the AVX-512 loop changes).
func streamLens() []int {
	var lens []int
	for n := range 301 {
		lens = append(lens, n)
	}
	return append(lens, 1<<18+37, 1<<17+5)
}

// TestStream checks every stream kernel against the pure Go one for the
// streamLens lengths at every alignment of a float32, and that no value
// outside x moves.
func TestStream(t *testing.T) {
	ks := append(streamKernels(), streamGo)
	const guard = 40
	for _, sk := range ks {
		for _, n := range streamLens() {
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

// TestStreamMoveLoadFill checks every level's move, load and fill kernels
// for the streamLens lengths at every alignment: move writes src·k into
// dst, fill k, load nothing, and no value outside dst moves.
func TestStreamMoveLoadFill(t *testing.T) {
	const guard = 40
	for _, sk := range append(streamKernels(), streamGo) {
		for _, n := range streamLens() {
			for off := range 4 {
				src := make([]float32, n+2*guard)
				for i := range src {
					src[i] = float32(i) + 0.5
				}
				src0 := slices.Clone(src)
				for _, op := range []string{"move", "load", "fill"} {
					buf := make([]float32, n+2*guard)
					for i := range buf {
						buf[i] = -float32(i)
					}
					want := slices.Clone(buf)
					x := buf[guard+off : guard+off+n]
					s := src[guard : guard+n]
					switch op {
					case "move":
						sk.move(x, s, 3)
						streamMoveGo(want[guard+off:guard+off+n], s, 3)
					case "load":
						sk.load(x)
					case "fill":
						sk.fill(x, 3)
						streamFillGo(want[guard+off:guard+off+n], 3)
					}
					for i := range buf {
						if math.Float32bits(buf[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s %s: n = %d, offset %d: value %d = %v, want %v", sk.name, op, n, off, i-guard-off, buf[i], want[i])
						}
					}
					if !slices.Equal(src, src0) {
						t.Fatalf("%s %s: n = %d: src changed", sk.name, op, n)
					}
				}
			}
		}
	}
}

// TestStreamMoveBytes checks that streamMove reads every value of src and
// writes every value of dst exactly once, for shorter and longer dst, with a
// kernel that counts what it touches.
func TestStreamMoveBytes(t *testing.T) {
	for _, c := range []struct{ nd, ns int }{{0, 0}, {0, 5}, {7, 0}, {1000, 2000}, {2000, 1000}, {12345, 54321}, {1 << 16, 1<<16 + 3}, {17, 17 * 34 / 128}} {
		dst, src := make([]float32, c.nd), make([]float32, c.ns)
		reads, writes := make([]int, c.ns), make([]int, c.nd)
		at := func(base, x []float32) int {
			if len(x) == 0 {
				return 0
			}
			return int((uintptr(unsafe.Pointer(&x[0])) - uintptr(unsafe.Pointer(&base[0]))) / 4)
		}
		count := func(n []int, base, x []float32) {
			o := at(base, x)
			for i := range x {
				n[o+i]++
			}
		}
		sk := streamKernel{
			move: func(d, s []float32, _ float32) { count(writes, dst, d); count(reads, src, s[:len(d)]) },
			load: func(x []float32) { count(reads, src, x) },
			fill: func(x []float32, _ float32) { count(writes, dst, x) },
		}
		streamMove(sk, dst, src)
		for i, n := range reads {
			if n != 1 {
				t.Fatalf("len(dst) %d, len(src) %d: src[%d] read %d times", c.nd, c.ns, i, n)
			}
		}
		for i, n := range writes {
			if n != 1 {
				t.Fatalf("len(dst) %d, len(src) %d: dst[%d] written %d times", c.nd, c.ns, i, n)
			}
		}
	}
}
