package verify

import (
	"math"
	"unsafe"
)

//go:generate go run ../internal/streamgen

// streamKernel is one level of the stream baseline, the memory system's
// limit that the benchmarks set a call against. f32 and f64 multiply every
// value of x by k in place, a load, a multiply and a store per value and
// nothing else: a call that rotates x in place reads and writes the same
// bytes. move stores src[i]·k into dst[i] (len(src) >= len(dst)), load only
// reads x and fill only writes it: with them streamMove reads one buffer and
// writes another of another size, as a cache store does. The assembly forms
// (stream_amd64.s) are written by internal/streamgen.
type streamKernel struct {
	name string
	f32  func(x []float32, k float32)
	f64  func(x []float64, k float64)
	move func(dst, src []float32, k float32)
	load func(x []float32)
	fill func(x []float32, k float32)
}

// streamGo is the pure Go stream kernel, the last level everywhere.
var streamGo = streamKernel{name: "go", f32: streamF32Go, f64: streamF64Go, move: streamMoveGo, load: streamLoadGo, fill: streamFillGo}

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

func streamMoveGo(dst, src []float32, k float32) {
	src = src[:len(dst)]
	for i := range dst {
		dst[i] = src[i] * k
	}
}

// streamSink keeps streamLoadGo's reads from being dropped.
var streamSink uint32

func streamLoadGo(x []float32) {
	var acc uint32
	for _, v := range x {
		acc |= math.Float32bits(v)
	}
	streamSink |= acc & 1
}

func streamFillGo(x []float32, k float32) {
	for i := range x {
		x[i] = k
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

// streamChunk is the most bytes of the longer buffer one step of streamMove
// moves: the two buffers are walked together, a chunk of each at a time, so
// that reads and writes interleave through the call as they do in a cache
// store or Load, not one buffer after the other.
const streamChunk = 16 << 10

// streamMove reads every byte of src once and writes every byte of dst once
// (dst = src·1 where they overlap in index, the rest of the longer one only
// read or only written), in steps that take a proportional share of each:
// the memory traffic of a call that reads len(src) float32s' worth of bytes
// and writes len(dst)'s, with no byte touched twice.
func streamMove(sk streamKernel, dst, src []float32) {
	long := max(len(dst), len(src))
	if long == 0 {
		return
	}
	steps := (long*4 + streamChunk - 1) / streamChunk
	for i := range steps {
		d := dst[i*len(dst)/steps : (i+1)*len(dst)/steps]
		s := src[i*len(src)/steps : (i+1)*len(src)/steps]
		n := min(len(d), len(s))
		sk.move(d[:n], s[:n], 1)
		if len(s) > n {
			sk.load(s[n:])
		}
		if len(d) > n {
			sk.fill(d[n:], 1)
		}
	}
}
