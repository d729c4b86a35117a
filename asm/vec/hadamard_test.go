package vec_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/verify/codec"
)

// lanes is an evaluator of the Hadamard family (vec.Shuffler) whose
// members have w lanes: a V is a []uint32 of w float32 bits, a Mask a
// []bool; arrays are byte slices, as the lane evaluator's. Only the
// operations the family uses are implemented (the embedded nil Ops panics
// on any other).
type lanes struct {
	vec.Ops
	w, chunk int
}

func (l lanes) each(a, b vec.V, op func(x, y float32) float32) vec.V {
	z := make([]uint32, l.w)
	for i := range z {
		z[i] = math.Float32bits(op(math.Float32frombits(a.([]uint32)[i]), math.Float32frombits(b.([]uint32)[i])))
	}
	return z
}

func (l lanes) Add(a, b vec.V) vec.V {
	return l.each(a, b, func(x, y float32) float32 { return x + y })
}
func (l lanes) Sub(a, b vec.V) vec.V {
	return l.each(a, b, func(x, y float32) float32 { return x - y })
}
func (l lanes) Mul(a, b vec.V) vec.V {
	return l.each(a, b, func(x, y float32) float32 { return x * y })
}
func (l lanes) Const(v float64) vec.V {
	z := make([]uint32, l.w)
	for i := range z {
		z[i] = math.Float32bits(float32(v))
	}
	return z
}

func (l lanes) Width() int { return l.w }
func (l lanes) Chunk() int { return l.chunk }

func (l lanes) LoadF32(a vec.Arr, k int) []vec.V {
	if k%l.w != 0 {
		panic(fmt.Sprintf("lanes: LoadF32 of %d values, width %d", k, l.w))
	}
	xs := make([]vec.V, k/l.w)
	for m := range xs {
		z := make([]uint32, l.w)
		for i := range z {
			z[i] = binary.LittleEndian.Uint32(bytesOf(a)[4*(m*l.w+i):])
		}
		xs[m] = z
	}
	return xs
}

func (l lanes) StoreF32(a vec.Arr, xs []vec.V) {
	for m, x := range xs {
		for i, v := range x.([]uint32) {
			binary.LittleEndian.PutUint32(bytesOf(a)[4*(m*l.w+i):], v)
		}
	}
}

func (l lanes) SwapLanes(x vec.V, s int) vec.V {
	if s <= 0 || s >= l.w || s&(s-1) != 0 {
		panic(fmt.Sprintf("lanes: SwapLanes by %d, width %d", s, l.w))
	}
	z := make([]uint32, l.w)
	for i := range z {
		z[i] = x.([]uint32)[i^s]
	}
	return z
}

func (l lanes) LaneBit(s int) vec.Mask {
	m := make([]bool, l.w)
	for i := range m {
		m[i] = i&s != 0
	}
	return m
}

func (l lanes) Select(m vec.Mask, a, b vec.V) vec.V {
	z := make([]uint32, l.w)
	for i := range z {
		if m.([]bool)[i] {
			z[i] = a.([]uint32)[i]
		} else {
			z[i] = b.([]uint32)[i]
		}
	}
	return z
}

// hadamardHead is a head of n values for TestHadamardFamily, by trial:
// random values of a random scale, with ±0, subnormals, huge values whose
// butterflies overflow to ±Inf (and then give Inf − Inf = NaN), NaN.
func hadamardHead(r *rand.Rand, n, trial int) []float32 {
	x := make([]float32, n)
	scale := math.Ldexp(1, r.IntN(300)-150)
	for j := range x {
		x[j] = float32(r.NormFloat64() * scale)
	}
	some := func(v func() float32) {
		for range 1 + r.IntN(n/4) {
			x[r.IntN(n)] = v()
		}
	}
	switch trial % 8 {
	case 1: // zeros of both signs
		some(func() float32 { return []float32{0, negZero}[r.IntN(2)] })
	case 2: // all zeros, both signs
		for j := range x {
			x[j] = []float32{0, negZero}[r.IntN(2)]
		}
	case 3: // subnormals (and their sums, some normal)
		for j := range x {
			x[j] = math.Float32frombits(r.Uint32() & 0x807fffff)
		}
	case 4: // huge: sums overflow to ±Inf, then Inf − Inf
		for j := range x {
			x[j] = float32(r.NormFloat64() * 1e38)
		}
	case 5: // a NaN somewhere (every output is NaN)
		x[r.IntN(n)] = nan32
	case 6: // ±Inf among finite values
		some(func() float32 { return []float32{inf32, -inf32}[r.IntN(2)] })
	case 7: // edge values mixed in
		some(func() float32 { return qnEdges[r.IntN(len(qnEdges))] })
	}
	return x
}

// TestHadamardFamily checks the Hadamard family (hadamard.go's
// hadamardHead, as written once) against verify/codec's HadamardN bit for
// bit, for blocks of n = 16 … 512 values, on evaluators of member widths
// 1 (the lane evaluator's one lane a member, as pure Go) to 16 (AVX-512)
// and of every chunk from 16 to n (the stages in registers, below the
// width and above it, and through memory), in place and src → dst.
// NaN outputs compare by bits too.
func TestHadamardFamily(t *testing.T) {
	arr := func(b *[]byte) vec.Arr { return vec.Arr{Elem: vec.F32, P: b} }
	for n := 16; n <= 512; n *= 2 {
		if c := vec.HadamardScale(n); float64(c) != float64(float32(1/math.Sqrt(float64(n)))) {
			t.Errorf("HadamardScale(%d) = %v, want fl32(1/√n) = %v", n, c, float32(1/math.Sqrt(float64(n))))
		}
		for w := 1; w <= 16; w *= 2 {
			for ch := 16; ch <= n; ch *= 2 {
				l := lanes{w: w, chunk: ch}
				r := rand.New(rand.NewPCG(uint64(n), uint64(w*1000+ch)))
				for trial := range 400 {
					x := hadamardHead(r, n, trial)
					src := make([]byte, 4*n)
					for j, v := range x {
						binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
					}
					want := append([]float32(nil), x...)
					codec.HadamardN(want, n)
					inPlace := trial%2 == 1
					dst := src
					if !inPlace {
						dst = make([]byte, 4*n)
					}
					vec.HadamardHead(l, l, n, arr(&src), arr(&dst))
					for j := range want {
						got := binary.LittleEndian.Uint32(dst[4*j:])
						if got != math.Float32bits(want[j]) {
							t.Fatalf("n %d, width %d, chunk %d, in place %v: value %d = %#08x, HadamardN %#08x\nhead %v",
								n, w, ch, inPlace, j, got, math.Float32bits(want[j]), x)
						}
					}
					if !inPlace {
						for j, v := range x {
							if binary.LittleEndian.Uint32(src[4*j:]) != math.Float32bits(v) {
								t.Fatalf("n %d, width %d, chunk %d: src value %d written", n, w, ch, j)
							}
						}
					}
				}
			}
		}
	}
}

func (lanes) Var(x vec.V) vec.V { return x }
