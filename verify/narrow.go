package verify

import (
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Narrowing describes the rotate-and-narrow kernels of a package generated
// with -out-dtype to [NarrowExhaustive].
type Narrowing struct {
	// OutDType is the stored type: "f16" (IEEE binary16) or "bf16".
	OutDType string
	// HeadDim is the number of values in one head.
	HeadDim int
	// Firsts holds the first index a of every pair (a, b) of a head.
	Firsts []int
	// AttentionFactor is the package's A: at position 0 a table row holds
	// C = float32(A) and S = ±0.
	AttentionFactor float64
	// Backends are the kernels to check, typically every assembly level
	// this CPU runs (the pure Go one narrows with the package's own
	// conversion, which checkTo compares with this package's).
	Backends []NarrowBackend
}

// NarrowBackend is one backend's rotate-and-narrow kernel.
type NarrowBackend struct {
	// Name identifies the backend in messages.
	Name string
	// To rotates the len(src)/HeadDim heads of src, laid one after another,
	// forward by position 0 and stores them narrowed in dst, len(dst) =
	// len(src).
	To func(dst []uint16, src []float32)
}

// narrowStride is the step between the float32 bit patterns NarrowExhaustive
// tries without ROPEGEN_EXHAUSTIVE=1: a prime, so the sample reaches every
// exponent and a spread of mantissas.
const narrowStride = 4099

// NarrowExhaustive checks every backend's narrowing store against this
// package's own round-to-nearest-even conversion (x448/float16 for f16,
// verify's bfloat16 rounding for bf16) on every float32 bit pattern when the
// environment has ROPEGEN_EXHAUSTIVE=1 (make test-exhaustive sets it), else
// on the multiples of a prime stride across all 2³² of them. At position 0
// with the second value of each pair +0, the forward rotation stores exactly
// narrow(fl(x·float32(A))) at the pair's first index (x·C − 0·S keeps −0
// too), which is narrow(x) when A = 1. Two NaNs match whatever their
// payloads. With no backends it skips, saying so.
func NarrowExhaustive(t *testing.T, n Narrowing) {
	t.Helper()
	stride := uint64(narrowStride)
	if os.Getenv("ROPEGEN_EXHAUSTIVE") == "1" {
		stride = 1
	}
	narrowExhaustive(t, n, stride)
}

func narrowExhaustive(t tb, n Narrowing, stride uint64) {
	t.Helper()
	out, err := newCodec[uint16](n.OutDType)
	if err != nil || (out.kind != kF16 && out.kind != kBF16) {
		t.Fatalf("Narrowing.OutDType = %q: want \"f16\" or \"bf16\"", n.OutDType)
	}
	per := len(n.Firsts)
	if n.HeadDim < 2 || per == 0 || per > n.HeadDim/2 {
		t.Fatalf("Narrowing: HeadDim = %d, %d pair indices: want HeadDim >= 2 and 1 … HeadDim/2 indices", n.HeadDim, per)
	}
	for _, a := range n.Firsts {
		if a < 0 || a >= n.HeadDim {
			t.Fatalf("Narrowing.Firsts holds %d: want 0 <= a < HeadDim = %d", a, n.HeadDim)
		}
	}
	if !(n.AttentionFactor > 0) || math.IsInf(n.AttentionFactor, 0) {
		t.Fatalf("Narrowing.AttentionFactor = %v: want finite and > 0", n.AttentionFactor)
	}
	if len(n.Backends) == 0 {
		t.Skip("SKIPPED: no assembly backend in this build: nothing to check")
	}
	c := float32(n.AttentionFactor)
	heads := max(1, (1<<20)/per)
	workers := runtime.GOMAXPROCS(0)
	bad := make([]atomic.Int64, len(n.Backends))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := make([]float32, heads*n.HeadDim)
			dst := make([]uint16, len(src))
			want := make([]uint16, len(src))
			chunk := uint64(heads*per) * stride
			for start := uint64(w) * chunk; start < 1<<32; start += uint64(workers) * chunk {
				u := start
				for h := range heads {
					for _, a := range n.Firsts {
						x := float32(0) // past the last pattern: +0, pattern 0 again
						if u < 1<<32 {
							x = math.Float32frombits(uint32(u))
							u += stride
						}
						src[h*n.HeadDim+a] = x
						want[h*n.HeadDim+a] = out.fromF32(x * c)
					}
				}
				for i, b := range n.Backends {
					b.To(dst, src)
					for h := range heads {
						for _, a := range n.Firsts {
							got, exp := dst[h*n.HeadDim+a], want[h*n.HeadDim+a]
							if got != exp && !(out.isNaN(got) && out.isNaN(exp)) && bad[i].Add(1) <= 5 {
								t.Errorf("%s: %s narrowing of %#08x (× %v) = %#04x, want %#04x",
									b.Name, n.OutDType, math.Float32bits(src[h*n.HeadDim+a]), c, got, exp)
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	for i, b := range n.Backends {
		if m := bad[i].Load(); m > 0 {
			t.Errorf("%s: %d mismatches", b.Name, m)
		} else {
			t.Logf("%s: every float32 tested (stride %d) narrows to %s as verify does", b.Name, stride, n.OutDType)
		}
	}
}
