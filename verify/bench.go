package verify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/x448/float16"
)

// Benchmark shapes.
const (
	benchHeads     = 32   // heads per token
	benchDecodePos = 1000 // the decode position
	benchTokens    = 512  // prefill tokens, at positions 0..511
	benchLong      = 4096 // prefill4k tokens
)

// Bench runs k's benchmarks as sub-benchmarks of b, named for benchstat:
//
//	decode/backend=<name>       Table.Apply on 32 heads at one position, per backend
//	decode/rotate               tableless Rotate on the same input, default backend
//	decode/baseline=plainloop   the plain Go loop over []float32 cos and sin tables
//	decode/baseline=stream      the stream kernel on the same bytes: the memory limit
//	decode/baseline=stream-avx2 the same at AVX2, where the best level is wider
//	prefill/backend=<name>      Table.ApplySeq on 512 tokens × 32 heads at 0..511
//	prefill/baseline=plainloop  the plain loop, token by token
//	prefill/baseline=stream     the stream kernel on the whole sequence at once
//	prefill/baseline=stream-avx2
//	prefill4k/backend=<name>    Table.ApplySeq on 4096 tokens × 32 heads, default backend
//	prefill4k/parallel=2        ApplySeqParallel with 2 workers, where the table has it
//	prefill4k/baseline=stream   (and stream-avx2)
//	axes/backend=<name>         multi-axis packages: ApplyAxes on 512 image tokens × 32 heads
//	axes/worst/backend=<name>   ApplyAxes with every axis moving every token
//	axes/seq/backend=<name>     ApplySeq on the same bytes, for the ratio
//	decodeqk/backend=<name>     packages with strides: ApplyQK on one fused QKV row of
//	                            32 q + 8 k + 8 v heads (Llama 3 8B) at one position
//	decodeqk/baseline=split     Table.Apply on contiguous q (32 heads), then k (8 heads)
//	decodeqk/baseline=copyloop  each q and k head of the fused row copied out, Apply, copied back
//	decodeqk/baseline=stream    the stream kernel on the q and k bytes (and stream-avx2)
//	prefillqk/backend=<name>    ApplyQK on 512 fused QKV rows at 0..511
//	prefillqk/baseline=split    ApplySeq on contiguous q, then k, of 512 tokens
//	prefillqk/baseline=stream   (and stream-avx2) on the q and k bytes
//	headmajor/backend=<name>    ApplyStrided on a head-major [32 heads][512 tokens] buffer
//	headmajor/baseline=stream   (and stream-avx2)
//	prefillnorm/…, decodenorm/… packages with a QK-norm: ApplyNormQK on Qwen3-8B's
//	                            shapes against the stream kernel, ApplyQK alone and the
//	                            norm and ApplyQK apart (see benchNorm)
//	cache/…                     packages with a cache type: see benchCache
//
// SetBytes is the size of x (for decodeqk and prefillqk, of the q and k
// heads the call rotates), so benchstat reports throughput; med-ns/op
// (see benchLoop) is the median over timed batches, steadier than ns/op on
// a busy machine. The decode
// input (32·HeadDim values) stays in L1; the prefill input (HeadDim·64 KiB
// for f32) does not fit in L2. The stream kernel (stream_amd64.s, pure Go
// elsewhere) multiplies x by 1 in place, one load, one multiply and one
// store per register and nothing else, at the best level the CPU has (and
// again at AVX2): no kernel that rotates x in place can beat it, so the
// ratio of a backend to it is how far the backend is from the memory
// system's limit. It depends only on the bytes, so both layouts share it. The plain loop is the one a Go
// developer would write: cos[pos*half+i] and sin[pos*half+i] tables (float64
// for f64), layout-aware, float32(a*c) - float32(b*s); f16 elements go
// through x448/float16 and bf16 through a bit shift and a rounding add. The
// buffer is rotated in place over and over; it is restored from a copy every
// few iterations (every 4096 when A = 1, more often otherwise so that A^n
// can neither overflow nor reach subnormals), a cost all variants share.
// Bench leaves Backends[0] active.
func Bench[T Elem](b *testing.B, k Kernel[T]) {
	s, err := newSuite(k)
	if err != nil {
		b.Fatalf("verify: invalid Kernel: %v", err)
	}
	backends := k.Backends
	restore := func() {}
	if len(backends) == 0 {
		backends = []Backend{{Name: "default", Use: restore}}
	} else {
		restore = k.Backends[0].Use
	}
	restore()
	defer restore()
	if err := s.buildTable(); err != nil {
		b.Fatalf("verify: %v", err)
	}
	bl := newBaseline(s, tableRows)
	every := s.resetEvery()
	rng := rand.New(rand.NewPCG(7, 11))
	input := func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = s.c.fromF64((1 + rng.Float64()) * float64(1-2*rng.IntN(2)) / 2)
		}
		return x
	}

	b.Run("decode", func(b *testing.B) {
		x0 := input(benchHeads * s.hd)
		for _, be := range backends {
			b.Run("backend="+be.Name, func(b *testing.B) {
				be.Use()
				defer restore()
				benchLoop(b, x0, every, func(x []T) { s.tab.Apply(x, benchDecodePos) })
			})
		}
		b.Run("rotate", func(b *testing.B) {
			restore()
			benchLoop(b, x0, every, func(x []T) { k.Rotate(x, benchDecodePos) })
		})
		b.Run("baseline=plainloop", func(b *testing.B) {
			benchLoop(b, x0, every, func(x []T) { bl.apply(x, benchDecodePos) })
		})
		benchStream(b, x0, every)
	})

	b.Run("prefill", func(b *testing.B) {
		x0 := input(benchTokens * benchHeads * s.hd)
		pos := make([]int32, benchTokens)
		for i := range pos {
			pos[i] = int32(i)
		}
		tok := benchHeads * s.hd
		for _, be := range backends {
			b.Run("backend="+be.Name, func(b *testing.B) {
				be.Use()
				defer restore()
				benchLoop(b, x0, every, func(x []T) { s.tab.ApplySeq(x, pos) })
			})
		}
		b.Run("baseline=plainloop", func(b *testing.B) {
			benchLoop(b, x0, every, func(x []T) {
				for j, p := range pos {
					bl.apply(x[j*tok:(j+1)*tok], int(p))
				}
			})
		})
		benchStream(b, x0, every)
	})

	b.Run("prefill4k", func(b *testing.B) {
		x0 := input(benchLong * benchHeads * s.hd)
		pos := make([]int32, benchLong)
		for i := range pos {
			pos[i] = int32(i % s.n)
		}
		restore()
		b.Run("backend="+backends[0].Name, func(b *testing.B) {
			benchLoop(b, x0, every, func(x []T) { s.tab.ApplySeq(x, pos) })
		})
		if pt, ok := s.tab.(ParallelTable[T]); ok {
			want, got := slices.Clone(x0), slices.Clone(x0)
			s.tab.ApplySeq(want, pos)
			pt.ApplySeqParallel(got, pos, 2)
			if i := s.firstDiff(got, want); i >= 0 {
				b.Fatalf("ApplySeqParallel(x, pos, 2) differs from ApplySeq at index %d", i)
			}
			b.Run("parallel=2", func(b *testing.B) {
				benchLoop(b, x0, every, func(x []T) { pt.ApplySeqParallel(x, pos, 2) })
			})
		}
		benchStream(b, x0, every)
	})
	if k.Axes != nil {
		b.Run("axes", func(b *testing.B) { benchAxes(b, s, backends, restore, every, input) })
	}
	if st := k.Strided; st != nil && st.ApplyQK != nil && st.ApplyStrided != nil {
		benchStrided(b, s, backends, restore, every, input)
	}
	if ok, _ := s.normState(); ok {
		benchNorm(b, s, backends, restore, every, input)
	}
	if k.Caches != nil {
		benchCache(b, s, backends, restore, input)
	}
	if s.paramsOK() {
		benchTables(b, s, restore)
	}
}

// benchTables times building tables (docs/contract.md §12), with the
// default backend:
//
//	table/new=131072          NewTable(131072): a 128Ki-position context from 0
//	table/range=512@1000000   NewTableRange of 512 rows at a start of 10⁶
//	table/batch=64            Batch.Set of 64 scattered positions (a decode step)
func benchTables[T Elem](b *testing.B, s *suite[T], restore func()) {
	restore()
	k := &s.k
	b.Run("table", func(b *testing.B) {
		b.Run("new=131072", func(b *testing.B) {
			b.SetBytes(int64(131072 * s.rowBytes()))
			for b.Loop() {
				k.NewTable(131072)
			}
		})
		b.Run("range=512@1000000", func(b *testing.B) {
			b.SetBytes(int64(512 * s.rowBytes()))
			for b.Loop() {
				k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), 1_000_000, 512)
			}
		})
		if k.Runtime.NewBatch != nil {
			b.Run("batch=64", func(b *testing.B) {
				bt := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), 64)
				rng := rand.New(rand.NewPCG(3, 5))
				pos := make([]int32, 64)
				for i := range pos {
					pos[i] = int32(rng.IntN(1 << 20))
				}
				b.SetBytes(int64(64 * s.rowBytes()))
				for b.Loop() {
					bt.Set(pos)
				}
			})
		}
	})
}

// benchStream runs baseline=stream at the best stream level, and
// baseline=stream-avx2 when that is wider than AVX2.
func benchStream[T Elem](b *testing.B, x0 []T, every int) {
	ks := append(streamKernels(), streamGo)
	b.Run("baseline=stream", func(b *testing.B) {
		benchLoop(b, x0, every, func(x []T) { streamRun(ks[0], x) })
	})
	for _, sk := range ks[1:] {
		if sk.name == "avx2" {
			b.Run("baseline=stream-avx2", func(b *testing.B) {
				benchLoop(b, x0, every, func(x []T) { streamRun(sk, x) })
			})
		}
	}
}

// benchBatch is the least time benchLoop's batches take.
const benchBatch = 20 * time.Microsecond

// benchLoop times f on a copy of x0, restoring it every `every` iterations.
// Besides ns/op, the mean, it reports med-ns/op: the iterations run in
// batches of at least benchBatch, each timed, and med-ns/op is the median
// batch's time per iteration. On a shared machine a preemption or another
// process's burst lands in a few batches and moves the mean, not the
// median.
func benchLoop[T Elem](b *testing.B, x0 []T, every int, f func([]T)) {
	benchLoopBytes(b, x0, every, int64(len(x0))*int64(sizeOf[T]()), f)
}

// benchLoopBytes is benchLoop with SetBytes(bytes): for calls that touch
// only part of x.
func benchLoopBytes[T Elem](b *testing.B, x0 []T, every int, bytes int64, f func([]T)) {
	x := slices.Clone(x0)
	b.SetBytes(bytes)
	t0 := time.Now()
	f(x) // warm up, and size the batches
	batch := max(1, int(benchBatch/max(time.Since(t0), 1)))
	copy(x, x0)
	per := make([]float64, 0, b.N/batch+1)
	b.ResetTimer()
	for i := 0; i < b.N; {
		n := min(batch, b.N-i)
		t := time.Now()
		for j := i; j < i+n; j++ {
			if j%every == every-1 {
				copy(x, x0)
			}
			f(x)
		}
		per = append(per, float64(time.Since(t).Nanoseconds())/float64(n))
		i += n
	}
	b.StopTimer()
	slices.Sort(per)
	b.ReportMetric(per[len(per)/2], "med-ns/op")
}

// resetEvery returns how many in-place rotations of inputs near 1 stay
// within the storage type's comfortable range: every rotation scales the
// norm by A.
func (s *suite[T]) resetEvery() int {
	if s.attn == 1 {
		return 4096
	}
	binades := 60.0
	switch s.c.kind {
	case kF16:
		binades = 8
	case kF64:
		binades = 500
	}
	return max(1, min(4096, int(binades/math.Abs(math.Log2(s.attn)))))
}

// baseline is the plain-loop comparison: cos and sin tables indexed
// [pos*half+i] with A folded in.
type baseline[T Elem] struct {
	s            *suite[T]
	cos32, sin32 []float32
	cos64, sin64 []float64
}

func newBaseline[T Elem](s *suite[T], rows int) *baseline[T] {
	bl := &baseline[T]{s: s}
	n := rows * s.hf
	if s.c.kind == kF64 {
		bl.cos64, bl.sin64 = make([]float64, n), make([]float64, n)
	} else {
		bl.cos32, bl.sin32 = make([]float32, n), make([]float32, n)
	}
	for p := range rows {
		for i, th := range s.k.Freqs {
			sin, cos := math.Sincos(float64(p) * th)
			if s.c.kind == kF64 {
				bl.cos64[p*s.hf+i], bl.sin64[p*s.hf+i] = s.attn*cos, s.attn*sin
			} else {
				bl.cos32[p*s.hf+i], bl.sin32[p*s.hf+i] = float32(s.attn*cos), float32(s.attn*sin)
			}
		}
	}
	return bl
}

// apply runs the plain loop matching the dtype on x at pos.
func (bl *baseline[T]) apply(x []T, pos int) {
	s := bl.s
	neox := s.k.Layout == "neox"
	p := unsafe.Pointer(unsafe.SliceData(x))
	switch s.c.kind {
	case kF32:
		plainF32(unsafe.Slice((*float32)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	case kF64:
		plainF64(unsafe.Slice((*float64)(p), len(x)), bl.cos64, bl.sin64, pos, s.hd, s.rd, neox)
	case kF16:
		plainF16(unsafe.Slice((*uint16)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	case kBF16:
		plainBF16(unsafe.Slice((*uint16)(p), len(x)), bl.cos32, bl.sin32, pos, s.hd, s.rd, neox)
	}
}

func plainF32(x, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		if neox {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[i], v[i+half]
				v[i] = float32(a*c) - float32(b*s)
				v[i+half] = float32(b*c) + float32(a*s)
			}
		} else {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[2*i], v[2*i+1]
				v[2*i] = float32(a*c) - float32(b*s)
				v[2*i+1] = float32(b*c) + float32(a*s)
			}
		}
	}
}

func plainF64(x, cos, sin []float64, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		if neox {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[i], v[i+half]
				v[i] = float64(a*c) - float64(b*s)
				v[i+half] = float64(b*c) + float64(a*s)
			}
		} else {
			for i := 0; i < half; i++ {
				c, s := cos[pos*half+i], sin[pos*half+i]
				a, b := v[2*i], v[2*i+1]
				v[2*i] = float64(a*c) - float64(b*s)
				v[2*i+1] = float64(b*c) + float64(a*s)
			}
		}
	}
}

func plainF16(x []uint16, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		for i := 0; i < half; i++ {
			ia, ib := 2*i, 2*i+1
			if neox {
				ia, ib = i, i+half
			}
			c, s := cos[pos*half+i], sin[pos*half+i]
			a, b := float16.Frombits(v[ia]).Float32(), float16.Frombits(v[ib]).Float32()
			v[ia] = float16.Fromfloat32(float32(a*c) - float32(b*s)).Bits()
			v[ib] = float16.Fromfloat32(float32(b*c) + float32(a*s)).Bits()
		}
	}
}

func plainBF16(x []uint16, cos, sin []float32, pos, hd, rd int, neox bool) {
	half := rd / 2
	for h := 0; h+hd <= len(x); h += hd {
		v := x[h : h+hd]
		for i := 0; i < half; i++ {
			ia, ib := 2*i, 2*i+1
			if neox {
				ia, ib = i, i+half
			}
			c, s := cos[pos*half+i], sin[pos*half+i]
			a, b := bf16ToF32(v[ia]), bf16ToF32(v[ib])
			v[ia] = f32ToBF16(float32(a*c) - float32(b*s))
			v[ib] = f32ToBF16(float32(b*c) + float32(a*s))
		}
	}
}
