package verify

import "unsafe"

//go:generate go run ../internal/streamgen

// streamKernel is one level of the stream baseline: f32 and f64 multiply
// every value of x by k in place, a load, a multiply and a store per value
// and nothing else, so that the time of a rotation in place, which reads and
// writes the same bytes, can be set against the memory system's limit. The
// assembly forms (stream_amd64.s) are written by internal/streamgen.
type streamKernel struct {
	name string
	f32  func(x []float32, k float32)
	f64  func(x []float64, k float64)
}

// streamGo is the pure Go stream kernel, the last level everywhere.
var streamGo = streamKernel{name: "go", f32: streamF32Go, f64: streamF64Go}

func streamF32Go(x []float32, k float32) {
	for i := range x {
		x[i] *= k
	}
}

func streamF64Go(x []float64, k float64) {
	for i := range x {
		x[i] *= k
	}
}

// run multiplies the bytes of x by 1 in place: as float64 values when T is
// float64, else as float32 values (a pair of uint16 elements is one float32;
// Bench's inputs make those normal numbers, so the multiply takes no assist).
// An odd trailing uint16 is left alone.
func streamRun[T Elem](sk streamKernel, x []T) {
	if len(x) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(x))
	n := len(x) * int(unsafe.Sizeof(x[0]))
	if unsafe.Sizeof(x[0]) == 8 {
		sk.f64(unsafe.Slice((*float64)(p), n/8), 1)
		return
	}
	sk.f32(unsafe.Slice((*float32)(p), n/4), 1)
}
