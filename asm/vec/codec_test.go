package vec_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/verify/codec"
)

// lane is a one-lane target evaluating the codec families in Go: a V is
// the uint32 bits of a lane, a Mask a bool. Only the operations the
// minifloat family uses are implemented (the embedded nil Target panics
// on any other).
type lane struct {
	vec.Target
	vec.Codec
}

func f(v vec.V) float32 { return math.Float32frombits(v.(uint32)) }
func u(v float32) vec.V { return math.Float32bits(v) }

func (lane) Add(a, b vec.V) vec.V       { return u(f(a) + f(b)) }
func (lane) Mul(a, b vec.V) vec.V       { return u(f(a) * f(b)) }
func (lane) U32(v uint32) vec.V         { return v }
func (lane) AsU32(a vec.V) vec.V        { return a }
func (lane) AsF32(a vec.V) vec.V        { return a }
func (lane) And(a, b vec.V) vec.V       { return a.(uint32) & b.(uint32) }
func (lane) Or(a, b vec.V) vec.V        { return a.(uint32) | b.(uint32) }
func (lane) Xor(a, b vec.V) vec.V       { return a.(uint32) ^ b.(uint32) }
func (lane) AndNot(a, b vec.V) vec.V    { return a.(uint32) &^ b.(uint32) }
func (lane) Add32(a, b vec.V) vec.V     { return a.(uint32) + b.(uint32) }
func (lane) Sub32(a, b vec.V) vec.V     { return a.(uint32) - b.(uint32) }
func (lane) Shl32(a vec.V, n int) vec.V { return a.(uint32) << n }
func (lane) Shr32(a vec.V, n int) vec.V { return a.(uint32) >> n }
func (lane) Gt32(a, b vec.V) vec.Mask   { return int32(a.(uint32)) > int32(b.(uint32)) }
func (lane) Eq32(a, b vec.V) vec.Mask   { return a.(uint32) == b.(uint32) }
func (lane) IsNaN(a vec.V) vec.Mask     { return f(a) != f(a) }
func (lane) ToF32(a vec.V) vec.V        { return u(float32(int32(a.(uint32)))) }
func (lane) TruncI32(a vec.V) vec.V     { return uint32(int32(f(a))) }
func (lane) Select(m vec.Mask, a, b vec.V) vec.V {
	if m.(bool) {
		return a
	}
	return b
}

// one is 1, a variable: the compiler does not drop a product by it.
var one float32 = 1

// refNarrow and refWiden are verify/codec's element codecs, value by value.
func refNarrow(e vec.Elem, x float32) uint32 {
	fm, _ := codec.Lookup(e.Name)
	b := make([]byte, e.Size)
	fm.Encode(b, []float32{x}, 1)
	if e.Size == 2 {
		return uint32(b[0]) | uint32(b[1])<<8
	}
	return uint32(b[0])
}

func refWiden(e vec.Elem, c uint32) float32 {
	fm, _ := codec.Lookup(e.Name)
	b := []byte{byte(c), byte(c >> 8)}[:e.Size]
	y := make([]float32, 1)
	fm.Decode(y, b, 1)
	return y[0]
}

// TestMinifloatFamily checks the family's arithmetic (Narrow, Widen, as
// written once in codec.go) against verify/codec bit for bit: widening
// every code of each element (for e4m3 and e5m2 times the scale 1, as
// verify/codec's fp8 decoding and the load kernels multiply); narrowing every float32 whose dropped bits
// are at a rounding boundary (0, 1, half−1, half, half+1, all ones) for
// every value of the kept bits (f16: 2¹⁹ values of the top bits, bf16 2¹⁶,
// e4m3 2¹², e5m2 2¹¹), and a million random bit patterns. NaN results
// compare by bits too: the family keeps verify/codec's payloads.
func TestMinifloatFamily(t *testing.T) {
	var l lane
	for _, e := range []vec.Elem{vec.F16, vec.BF16, vec.E4M3, vec.E5M2} {
		m := vec.Minifloats[e]
		for c := uint32(0); c < 1<<(8*e.Size); c++ {
			got, want := vec.Widen(l, e, c).(uint32), math.Float32bits(refWiden(e, c))
			if e.Size == 1 { // verify/codec reads fl(e(b)·s), s = 1: the product quiets a NaN
				got = math.Float32bits(f(got) * one)
			}
			if got != want {
				t.Fatalf("%s: Widen(%#x) = %#08x, verify/codec %#08x", e.Name, c, got, want)
			}
		}
		sh := 23 - m.Man
		half := uint32(1) << (sh - 1)
		lows := []uint32{0, 1, half - 1, half, half + 1, 1<<sh - 1}
		check := func(x uint32) {
			got, want := vec.Narrow(l, e, x).(uint32), refNarrow(e, math.Float32frombits(x))
			if got != want {
				t.Fatalf("%s: Narrow(%#08x) = %#x, verify/codec %#x", e.Name, x, got, want)
			}
		}
		for hi := uint32(0); hi < 1<<(32-sh); hi++ {
			for _, lo := range lows {
				check(hi<<sh | lo)
			}
		}
		r := rand.New(rand.NewPCG(1, uint64(e.Size)))
		for range 1 << 20 {
			check(r.Uint32())
		}
	}
}

// TestQ8RoundTrick checks the rounding the q8_0 family (cache.go's
// quantize) uses once a value is clamped to ±127: trunc(v + copysign(h,
// v)), h = 0x3effffff the largest float32 below 1/2, with the sum rounded
// to nearest even as every target's float32 addition rounds it, is
// roundf(v) (halves away from zero) for every float32 v with |v| ≤ 127.
// (From asm/vec/amd64, whose q8_0 kernels used the same trick.)
func TestQ8RoundTrick(t *testing.T) {
	h := math.Float32frombits(0x3effffff)
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
