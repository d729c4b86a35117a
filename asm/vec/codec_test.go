package vec_test

import (
	"bytes"
	"encoding/binary"
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

// The lane evaluator's blocks of 32 (vec.Quantizer): 32 members of one
// lane, arrays as byte slices (an Arr's P is a *[]byte, its Off counted
// in its elements).

func (lane) Div(a, b vec.V) vec.V  { return u(f(a) / f(b)) }
func (lane) Const(v float64) vec.V { return u(float32(v)) }
func (lane) MinF(a, b vec.V) vec.V { return u(min(f(a), f(b))) }
func (lane) MaxF(a, b vec.V) vec.V { return u(max(f(a), f(b))) }
func (lane) Iota(i, _ int) vec.V   { return uint32(i + 1) }
func (lane) If(m vec.Mask, then, els func()) {
	if m.(bool) {
		then()
	} else {
		els()
	}
}

func (lane) MaxAcross(xs []vec.V) vec.V {
	m := uint32(0)
	for _, x := range xs {
		m = max(m, x.(uint32))
	}
	return m
}

// Local is n elements of e, zeroed, as an Arr of the lane evaluator's
// (the nvfp4 family's scratch).
func (lane) Local(n int, e vec.Elem) vec.Arr {
	b := make([]byte, n*e.Size)
	return vec.Arr{Name: "scratch", Elem: e, P: &b}
}

func bytesOf(a vec.Arr) []byte { return (*a.P.(*[]byte))[a.Off*a.Elem.Size:] }

func (lane) LoadF32x32(a vec.Arr) []vec.V {
	xs := make([]vec.V, 32)
	for j := range xs {
		xs[j] = binary.LittleEndian.Uint32(bytesOf(a)[4*j:])
	}
	return xs
}

func (lane) StoreF32x32(a vec.Arr, xs []vec.V) {
	for j, x := range xs {
		binary.LittleEndian.PutUint32(bytesOf(a)[4*j:], x.(uint32))
	}
}

func (lane) LoadI8x32(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32)
	for j := range qs {
		qs[j] = uint32(int32(int8(bytesOf(a)[j])))
	}
	return qs
}

func (lane) StoreI8x32(a vec.Arr, qs []vec.V) {
	for j, q := range qs {
		bytesOf(a)[j] = byte(q.(uint32))
	}
}

func (lane) LoadU16(a vec.Arr) vec.V { return uint32(binary.LittleEndian.Uint16(bytesOf(a))) }
func (lane) StoreU16(a vec.Arr, v vec.V) {
	binary.LittleEndian.PutUint16(bytesOf(a), uint16(v.(uint32)))
}

// TestQ8Family checks the q8_0 family (cache.go's quantize and
// dequantize, as written once) against verify/codec's Q8_0 bit for bit on
// the lane evaluator: blocks of random values mixed with the edge cases
// (NaN at every position, the last NaN at x_31, ±Inf, subnormals, zeros,
// values whose d is subnormal or whose 1/d overflows, halves), both
// paths (common and rare); and dequantizing random bytes (every f16
// scale pattern among them: NaN, Inf, subnormal).
func TestQ8Family(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(3, 4))
	nan := float32(math.NaN())
	edge := []float32{0, float32(math.Copysign(0, -1)), nan, -nan, float32(math.Inf(1)), float32(math.Inf(-1)),
		1e-45, -3e-42, 1e-38, 1.17e-38, 3e38, -3.4e38, 65504, 7e4, 0.5, -0.5, 1.5, 127, 63.5, 1e-8}
	block := func(trial int) []float32 {
		x := make([]float32, 32)
		scale := math.Ldexp(1, r.IntN(300)-150)
		for j := range x {
			x[j] = float32(r.NormFloat64() * scale)
			if trial%2 == 1 && r.IntN(4) == 0 {
				x[j] = edge[r.IntN(len(edge))]
			}
		}
		switch trial % 7 {
		case 3:
			x[r.IntN(32)] = nan
		case 4:
			x[31] = nan
		case 5:
			x[r.IntN(32)], x[31] = nan, float32(r.NormFloat64())
		case 6:
			for j := range x {
				x[j] = float32(r.IntN(255)-127) / 2 // halves: roundf's ties
			}
		}
		return x
	}
	arr := func(b *[]byte, e vec.Elem) vec.Arr { return vec.Arr{Elem: e, P: b} }
	for trial := range 200000 {
		x := block(trial)
		src := make([]byte, 128)
		for j, v := range x {
			binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
		}
		got, want := make([]byte, 34), make([]byte, 34)
		vec.Quantize(l, l, arr(&src, vec.F32), arr(&got, vec.Q8))
		codec.Q8_0.Encode(want, x, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("quantize %v:\n got %x\nwant %x", x, got, want)
		}
		q := make([]byte, 34)
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		out := make([]byte, 128)
		vec.Dequantize(l, l, arr(&q, vec.Q8), arr(&out, vec.F32))
		y := make([]float32, 32)
		codec.Q8_0.Decode(y, q, 0)
		for j := range y {
			if g := binary.LittleEndian.Uint32(out[4*j:]); g != math.Float32bits(y[j]) {
				t.Fatalf("dequantize %x: value %d = %#08x, want %#08x", q, j, g, math.Float32bits(y[j]))
			}
		}
	}
}

// Blocks32 is not used: the test calls the block functions itself.
func (lane) Blocks32(vec.Head, int, vec.Arr, int, vec.Arr, int, func(s, d vec.Arr)) {
	panic("lane: no Blocks32")
}

// The lane evaluator's Packer operations (the qn family).

func (lane) Sub(a, b vec.V) vec.V    { return u(f(a) - f(b)) }
func (lane) Shlv32(a, b vec.V) vec.V { return a.(uint32) << b.(uint32) }
func (lane) Shrv32(a, b vec.V) vec.V { return a.(uint32) >> b.(uint32) }
func (lane) AddInOrder(a vec.V, xs []vec.V) vec.V {
	s := f(a)
	for _, x := range xs {
		s += f(x)
	}
	return u(s)
}
func (lane) OrAcross(xs []vec.V) vec.V {
	m := uint32(0)
	for _, x := range xs {
		m |= x.(uint32)
	}
	return m
}
func (lane) StoreNibbles(a vec.Arr, qs []vec.V) {
	for j := range 16 {
		bytesOf(a)[j] = byte(qs[j].(uint32) | qs[j+16].(uint32)<<4)
	}
}
func (lane) LoadNibbles(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32)
	for j := range 16 {
		qs[j], qs[j+16] = uint32(bytesOf(a)[j]&15), uint32(bytesOf(a)[j]>>4)
	}
	return qs
}
func (lane) LoadU32(a vec.Arr) vec.V { return binary.LittleEndian.Uint32(bytesOf(a)) }
func (lane) StoreU32(a vec.Arr, v vec.V) {
	binary.LittleEndian.PutUint32(bytesOf(a), v.(uint32))
}

// qnEdges are the qn family's edge values.
var qnEdges = []float32{0, negZero, nan32, -nan32, inf32, -inf32, 1e-45, -3e-42, 1e-38, -1.17e-38,
	3e38, -3.4e38, math.MaxFloat32, -math.MaxFloat32, 65504, -65520, 5.24e5, -5.3e5, 7e4, 0.5, -0.5, 1, -1, 8, -8, 16, 1e-8}

var (
	negZero = float32(math.Copysign(0, -1))
	nan32   = float32(math.NaN())
	inf32   = float32(math.Inf(1))
)

// qnBlocks are the blocks TestQNFamily quantizes, trial by trial: random
// values of random scale mixed with edge values, and the edge blocks: a NaN
// at every position, ±0 ties in every order (alone and with NaNs), all
// zero, all NaN, all ±Inf, subnormals, huge, and values at the rounding
// boundaries (x·id + off at a half).
func qnBlock(r *rand.Rand, trial int) []float32 {
	x := make([]float32, 32)
	scale := math.Ldexp(1, r.IntN(300)-150)
	for j := range x {
		x[j] = float32(r.NormFloat64() * scale)
		if trial%2 == 1 && r.IntN(4) == 0 {
			x[j] = qnEdges[r.IntN(len(qnEdges))]
		}
	}
	switch trial % 13 {
	case 3: // a NaN at position trial/13 % 32
		x[trial/13%32] = nan32
	case 4: // zeros of both signs, some NaNs, in random order
		for j := range x {
			x[j] = []float32{0, negZero, nan32, 0, negZero}[r.IntN(5)]
		}
	case 5: // all NaN, or NaNs and one ±Inf
		for j := range x {
			x[j] = nan32
		}
		if r.IntN(2) == 0 {
			x[r.IntN(32)] = []float32{inf32, -inf32, 0, negZero, 1}[r.IntN(5)]
		}
	case 6: // rounding boundaries: multiples of a quarter step of d
		d := float32(r.IntN(64)+1) / 4
		for j := range x {
			x[j] = float32(r.IntN(129)-64) / 4 * d
		}
	case 7: // ties of the largest magnitude, both signs
		v := float32(r.NormFloat64())
		for j := range x {
			x[j] = []float32{v, -v, v / 2, 0}[r.IntN(4)]
		}
	case 8: // subnormals
		for j := range x {
			x[j] = math.Float32frombits(r.Uint32() & 0x807fffff)
		}
	case 9: // huge: d = ±Inf
		for j := range x {
			x[j] = float32(r.NormFloat64() * 1e6)
		}
	case 10: // all zero, one sign or mixed
		for j := range x {
			x[j] = []float32{0, negZero}[(trial/13+j*(trial/26%2))%2]
		}
	case 11: // ±Inf and finite
		for j := range x {
			x[j] = []float32{inf32, -inf32, 1, -2}[r.IntN(4)]
		}
	}
	return x
}

// qnElems are the family's elements with verify/codec's formats.
var qnElems = []struct {
	e  vec.Elem
	fm codec.Format
}{{vec.Q4_0, codec.Q4_0}, {vec.Q4_1, codec.Q4_1}, {vec.Q5_0, codec.Q5_0}, {vec.Q5_1, codec.Q5_1}}

// TestQNFamily checks the qn family (qn.go's quantizeQN and dequantizeQN,
// as written once) against verify/codec's Q4_0, Q4_1, Q5_0 and Q5_1 bit
// for bit on the lane evaluator: qnBlock's blocks quantized (every edge
// rule: NaNs passed over, the first of ties incl. ±0, all zero, all NaN,
// d = Inf), and random bytes dequantized (every f16 pattern of d and m).
// The backends run the same blocks through TestKernels' check.
func TestQNFamily(t *testing.T) {
	var l lane
	arr := func(b *[]byte, e vec.Elem) vec.Arr { return vec.Arr{Elem: e, P: b} }
	for _, c := range qnElems {
		r := rand.New(rand.NewPCG(5, uint64(c.e.BlockBytes())))
		bb := c.e.BlockBytes()
		for trial := range 100000 {
			x := qnBlock(r, trial)
			src := make([]byte, 128)
			for j, v := range x {
				binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
			}
			got, want := make([]byte, bb), make([]byte, bb)
			vec.QuantizeQN(l, l, c.e, arr(&src, vec.F32), arr(&got, c.e))
			c.fm.Encode(want, x, 0)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: quantize %v:\n got %x\nwant %x", c.e.Name, x, got, want)
			}
			q := make([]byte, bb)
			for j := range q {
				q[j] = byte(r.Uint32())
			}
			out := make([]byte, 128)
			vec.DequantizeQN(l, l, c.e, arr(&q, c.e), arr(&out, vec.F32))
			y := make([]float32, 32)
			c.fm.Decode(y, q, 0)
			for j := range y {
				if g := binary.LittleEndian.Uint32(out[4*j:]); g != math.Float32bits(y[j]) {
					t.Fatalf("%s: dequantize %x: value %d = %#08x, want %#08x", c.e.Name, q, j, g, math.Float32bits(y[j]))
				}
			}
		}
	}
}

// mxfp4Block is a block TestMXFP4Family quantizes: qnBlock's blocks, and
// mxfp4's own edges: a maximum one float32 step below 2^k (where log2f
// rounds up to k) or at 2^k and its neighbours, at every exponent; values
// at the grid's midpoints and ties (|x| = 0.25d … 7d, d = 2^(e−128) for the
// block's e, and their float32 neighbours); tiny maxima around 2⁻¹²⁵.
func mxfp4Block(r *rand.Rand, trial int) []float32 {
	switch trial % 5 {
	case 0, 1:
		return qnBlock(r, trial/5*2+trial%5)
	}
	x := make([]float32, 32)
	// the maximum: 2^k, with a few float32 steps either side
	k := r.IntN(280) - 150
	top := math.Float32bits(float32(math.Ldexp(1, k))) + uint32(r.IntN(9)) - 4
	if top > 0x7f7fffff {
		top = 0x7f7fffff
	}
	if trial%5 == 4 && r.IntN(2) == 0 { // far below the round-up: w large
		top = math.Float32bits(float32(math.Ldexp(1, k))) - uint32(r.IntN(200))
	}
	amax := math.Float32frombits(top)
	hb := make([]byte, 17)
	codec.MXFP4.Encode(hb, append([]float32{amax}, make([]float32, 31)...), 0)
	d := float32(math.Ldexp(1, int(hb[0])-128)) // the block's d
	mids := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 7, 0.5, 1, 1.5, 2, 3, 4, 6}
	for j := range x {
		v := mids[r.IntN(len(mids))] * d
		b := math.Float32bits(v) + uint32(r.IntN(3)) - 1
		if v == 0 {
			b = r.Uint32() & 0x7fffff
		}
		v = math.Float32frombits(b)
		if r.IntN(2) == 0 {
			v = -v
		}
		if trial%5 == 3 && r.IntN(4) == 0 {
			v = float32(r.NormFloat64()) * amax
		}
		if !(float32(math.Abs(float64(v))) <= amax) {
			v = amax / 2
		}
		x[j] = v
	}
	x[r.IntN(32)] = amax
	if r.IntN(2) == 0 {
		x[r.IntN(32)] = -amax
	}
	if r.IntN(8) == 0 {
		x[r.IntN(32)] = nan32
	}
	return x
}

// TestMXFP4Family checks the mxfp4 family (mxfp4.go's quantizeMXFP4 and
// dequantizeMXFP4, as written once) against verify/codec's MXFP4 bit for
// bit on the lane evaluator: mxfp4Block's blocks quantized, and random
// nibbles under every header byte e dequantized. The backends run the
// same family through TestKernels' check.
func TestMXFP4Family(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(7, 17))
	checkQuantizeBlocks(t, codec.MXFP4, vec.MXFP4, func(s, d vec.Arr) { vec.QuantizeMXFP4(l, l, s, d) }, 200000, func(trial int) []float32 { return mxfp4Block(r, trial) })
	checkDequantizeBlocks(t, codec.MXFP4, vec.MXFP4, func(s, d vec.Arr) { vec.DequantizeMXFP4(l, l, s, d) }, 256*64, func(trial int, q []byte) {
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		q[0] = byte(trial) // every header byte e
	})
}

// iq4nlBlock is a block TestIQ4NLFamily quantizes: qnBlock's blocks
// (NaNs, zeros, subnormals, Inf, huge), maxima around 1e-15 (the tiny
// blocks' bound), and values whose id·x_j falls on or a few float32 steps
// around the midpoints of kvalues_iq4nl's neighbours and the grid values,
// at random scales.
func iq4nlBlock(r *rand.Rand, trial int) []float32 {
	switch trial % 6 {
	case 0, 1:
		return qnBlock(r, trial/6*2+trial%6)
	case 2:
		x := make([]float32, 32)
		eps := math.Float32bits(1e-15)
		for j := range x {
			x[j] = math.Float32frombits(eps + uint32(r.IntN(5)) - 2 - uint32(r.IntN(2))*uint32(r.IntN(1<<24)))
			if r.IntN(2) == 0 {
				x[j] = -x[j]
			}
		}
		return x
	}
	kv := []float32{-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}
	x := make([]float32, 32)
	amax := float32(math.Ldexp(1+r.Float64(), r.IntN(200)-100))
	mx := amax
	if r.IntN(2) == 0 {
		mx = -amax
	}
	id := 1 / (mx / -127)
	for j := range x {
		i := 1 + r.IntN(15)
		v := (kv[i-1] + kv[i]) / 2
		if r.IntN(3) == 0 {
			v = kv[r.IntN(16)]
		}
		y := math.Float32frombits(math.Float32bits(v/id) + uint32(r.IntN(7)) - 3)
		if !(float32(math.Abs(float64(y))) <= amax) {
			y = amax / 3
		}
		x[j] = y
		if trial%6 == 5 && r.IntN(4) == 0 {
			x[j] = float32(r.NormFloat64()) * amax / 2
		}
	}
	x[r.IntN(32)] = mx
	return x
}

// TestIQ4NLFamily checks the iq4_nl family (iq4nl.go's quantizeIQ4NL and
// dequantizeIQ4NL, as written once) against verify/codec's IQ4NL bit for
// bit on the lane evaluator: iq4nlBlock's blocks quantized, and random
// nibbles under random and special d (±0, subnormal, ±Inf, NaN, every
// exponent) dequantized. The backends run the same family through
// TestKernels' check.
func TestIQ4NLFamily(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(9, 19))
	checkQuantizeBlocks(t, codec.IQ4NL, vec.IQ4NL, func(s, d vec.Arr) { vec.QuantizeIQ4NL(l, l, s, d) }, 200000, func(trial int) []float32 { return iq4nlBlock(r, trial) })
	checkDequantizeBlocks(t, codec.IQ4NL, vec.IQ4NL, func(s, d vec.Arr) { vec.DequantizeIQ4NL(l, l, s, d) }, 1<<16, func(trial int, q []byte) {
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		q[0], q[1] = byte(trial), byte(trial>>8) // every f16 d
	})
}

// checkQuantizeBlocks quantizes trials blocks of 32 float32 from block
// with quantize (a family as written once, run on the lane evaluator) and
// fails at the first whose bytes are not fm's.
func checkQuantizeBlocks(t *testing.T, fm codec.Format, e vec.Elem, quantize func(src, dst vec.Arr), trials int, block func(trial int) []float32) {
	t.Helper()
	for trial := range trials {
		x := block(trial)
		src := make([]byte, 4*fm.Block)
		for j, v := range x {
			binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
		}
		got, want := make([]byte, fm.Bytes), make([]byte, fm.Bytes)
		quantize(vec.Arr{Elem: vec.F32, P: &src}, vec.Arr{Elem: e, P: &got})
		fm.Encode(want, x, 0)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: quantize %v:\n got %x\nwant %x", fm.Name, x, got, want)
		}
	}
}

// checkDequantizeBlocks dequantizes trials blocks that fill writes with
// dequantize and fails at the first value whose bits are not fm's (a NaN
// matching any NaN).
func checkDequantizeBlocks(t *testing.T, fm codec.Format, e vec.Elem, dequantize func(src, dst vec.Arr), trials int, fill func(trial int, q []byte)) {
	t.Helper()
	for trial := range trials {
		q := make([]byte, fm.Bytes)
		fill(trial, q)
		out := make([]byte, 4*fm.Block)
		dequantize(vec.Arr{Elem: e, P: &q}, vec.Arr{Elem: vec.F32, P: &out})
		y := make([]float32, fm.Block)
		fm.Decode(y, q, 0)
		for j := range y {
			g := math.Float32frombits(binary.LittleEndian.Uint32(out[4*j:]))
			if math.Float32bits(g) != math.Float32bits(y[j]) && !(y[j] != y[j] && g != g) {
				t.Fatalf("%s: dequantize %x: value %d = %#08x, want %#08x", fm.Name, q, j, math.Float32bits(g), math.Float32bits(y[j]))
			}
		}
	}
}

// nvfp4Sub fills the sub-block x (16 values) of a block TestNVFP4Family
// quantizes, by kind: a qnBlock's values (random of random scale with edge
// values, NaNs, ±0, ±Inf, subnormals, huge, ties); a maximum of 6 times a
// UE4M3 value or of 6 times a rounding boundary of f32toue4m3 (half a step
// above a code: ties away from zero; [7.5, 8)·2⁻⁹; the carry into the
// next exponent; 248 and 448, where it saturates to 0x7E), a few float32
// steps either side, with the others at the grid's points and midpoints
// times the sub-block's D and their float32 neighbours; a sub-block that
// flushes to zero (amax below 6·2⁻¹¹, subnormals among them); and huge
// values (a scale saturating to 0x7E, 3e38, ±Inf).
func nvfp4Sub(r *rand.Rand, x []float32, kind int) {
	switch kind % 5 {
	case 0, 1:
		copy(x, qnBlock(r, r.IntN(1<<20))[r.IntN(17):])
		return
	case 2:
		for j := range x {
			x[j] = float32(r.NormFloat64() * math.Ldexp(1, -13-r.IntN(140)))
			if r.IntN(4) == 0 {
				x[j] = math.Float32frombits(r.Uint32() & 0x807fffff) // a subnormal or ±0
			}
		}
		return
	case 3:
		for j := range x {
			x[j] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(130)))
		}
		if r.IntN(2) == 0 {
			x[r.IntN(16)] = []float32{inf32, -inf32, 3e38, -2688, 2688.5, 448 * 6, 248 * 6}[r.IntN(7)]
		}
		return
	}
	c := r.IntN(0x7f) // a code below 0x7F
	v := float64(c&7) / 8 * math.Ldexp(1, -6)
	if c>>3 != 0 {
		v = (1 + float64(c&7)/8) * math.Ldexp(1, c>>3-7)
	}
	switch r.IntN(3) {
	case 0: // half a step above: the rounding boundary
		if c>>3 != 0 {
			v = (1 + (float64(c&7)+0.5)/8) * math.Ldexp(1, c>>3-7)
		} else {
			v += math.Ldexp(1, -10)
		}
	case 1: // a few more boundaries
		v = []float64{7.5 * 0x1p-9, 8 * 0x1p-9, 0x1p-6, 248, 240, 448, 464, 1e-3, 0x1p-10, 0.5 * 0x1p-9}[r.IntN(10)]
	}
	top := math.Float32bits(float32(6*v)) + uint32(r.IntN(17)) - 8
	if float32(6*v) == 0 {
		top = uint32(r.IntN(8))
	}
	amax := math.Float32frombits(min(top, 0x7f7fffff))
	hb := make([]byte, 36)
	codec.NVFP4.Encode(hb, append([]float32{amax}, make([]float32, 63)...), 0)
	q := make([]byte, 36)
	q[0], q[4] = hb[0], 1 // d_0, q_0 = 1: y_0 = kvalues[1]·D = D
	y := make([]float32, 64)
	codec.NVFP4.Decode(y, q, 0)
	d := y[0]
	pts := []float32{0.5, 1.5, 2.5, 3.5, 5, 7, 10, 1, 2, 3, 4, 6, 8, 12}
	for j := range x {
		v := math.Float32frombits(math.Float32bits(pts[r.IntN(len(pts))]*d) + uint32(r.IntN(3)) - 1)
		if d == 0 {
			v = math.Float32frombits(r.Uint32() & 0x7fffff)
		}
		if !(float32(math.Abs(float64(v))) <= amax) {
			v = amax / 2
		}
		if r.IntN(2) == 0 {
			v = -v
		}
		x[j] = v
	}
	x[r.IntN(16)] = amax
	if r.IntN(2) == 0 {
		x[r.IntN(16)] = -amax
	}
	if r.IntN(8) == 0 {
		x[r.IntN(16)] = nan32
	}
}

// nvfp4Block is a block TestNVFP4Family quantizes: four sub-blocks of
// nvfp4Sub's kinds (every kind at every sub-block as trials go), and a NaN
// at every position of the block in turn every 7th trial.
func nvfp4Block(r *rand.Rand, trial int) []float32 {
	x := make([]float32, 64)
	for s := range 4 {
		nvfp4Sub(r, x[16*s:16*s+16], trial/(s+1)+s+r.IntN(2))
	}
	if trial%7 == 3 {
		x[trial/7%64] = nan32
	}
	return x
}

// TestNVFP4Family checks the nvfp4 family (nvfp4.go's quantizeNVFP4 and
// dequantizeNVFP4, as written once) against verify/codec's NVFP4 bit for
// bit on the lane evaluator: nvfp4Block's blocks quantized, random blocks
// dequantized with every byte at each scale position; and its scale
// conversions alone: ue4m3Code (f32toue4m3 of amax/6) for amax a
// float32 every 4093 steps from +0 to +Inf and a few float32 steps either
// side of 6 times every code and every rounding boundary, ue4m3Half
// (ue4m3to32) for every byte.
func TestNVFP4Family(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(9, 23))
	checkQuantizeBlocks(t, codec.NVFP4, vec.NVFP4, func(s, d vec.Arr) { vec.QuantizeNVFP4(l, l, s, d) }, 60000, func(trial int) []float32 { return nvfp4Block(r, trial) })
	checkDequantizeBlocks(t, codec.NVFP4, vec.NVFP4, func(s, d vec.Arr) { vec.DequantizeNVFP4(l, l, s, d) }, 256*32, func(trial int, q []byte) {
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		q[trial%4] = byte(trial / 4) // every scale byte at every position
	})
	// the scale: the codec's d_0 of a sub-block whose maximum is amax
	code := func(amax float32) {
		hb := make([]byte, 36)
		codec.NVFP4.Encode(hb, append([]float32{amax}, make([]float32, 63)...), 0)
		got := vec.UE4M3Code(l, l, u(amax/6)).(uint32)
		if got != uint32(hb[0]) {
			t.Fatalf("ue4m3Code(fl(%g/6) = %#08x) = %#x, f32toue4m3 %#x", amax, math.Float32bits(amax/6), got, hb[0])
		}
	}
	for b := uint64(0); b <= 0x7f800000; b += 4093 {
		code(math.Float32frombits(uint32(b)))
	}
	code(inf32)
	code(math.MaxFloat32)
	for c := range 0x7f {
		lo := float64(c&7) / 8 * 0x1p-6
		if c>>3 != 0 {
			lo = (1 + float64(c&7)/8) * math.Ldexp(1, c>>3-7)
		}
		hi := lo + 0x1p-10 // half a step up
		if c>>3 != 0 {
			hi = (1 + (float64(c&7)+0.5)/8) * math.Ldexp(1, c>>3-7)
		}
		for _, v := range []float64{lo, hi, 7.5 * 0x1p-9, 248, 448} {
			m := math.Float32bits(float32(6 * v))
			for k := max(m, 64) - 64; k <= m+64; k++ {
				code(math.Float32frombits(k))
			}
		}
	}
	// the decoding: every byte, as the codec reads D (y_0 with q_0 = 1)
	for c := range 256 {
		q := make([]byte, 36)
		q[0], q[4] = byte(c), 1
		y := make([]float32, 64)
		codec.NVFP4.Decode(y, q, 0)
		if got := vec.UE4M3Half(l, l, uint32(c)).(uint32); got != math.Float32bits(y[0]) {
			t.Fatalf("ue4m3Half(%#x) = %#08x, ue4m3to32 %#08x", c, got, math.Float32bits(y[0]))
		}
	}
}

// int8Head is a head of h values TestInt8Family quantizes, by kind:
// random values of a random scale with specials mixed in (NaN, ±Inf, ±0,
// subnormals, huge); all zeros (s = 1e-6); all NaN; magnitudes below the
// floor; a scale s = 2^e exactly with values at k + ½ times it, their
// float32 neighbours (the add of ½ rounding up to an integer or not) and
// ±127s (127.5, truncated to 127); a maximum near the largest float32.
func int8Head(r *rand.Rand, trial, h int) []float32 {
	x := make([]float32, h)
	switch trial % 7 {
	case 0, 1:
		sc := math.Ldexp(1, r.IntN(80)-40)
		for j := range x {
			x[j] = float32(r.NormFloat64() * sc)
			if r.IntN(8) == 0 {
				x[j] = []float32{float32(math.NaN()), inf32, -inf32, 0, float32(math.Copysign(0, -1)), 1e-40, -3e-45, 3e38}[r.IntN(8)]
			}
		}
	case 2:
		for j := range x {
			x[j] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		}
		if r.IntN(2) == 0 {
			for j := range x {
				x[j] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<22)) | uint32(r.IntN(2))<<31)
			}
		}
	case 3:
		for j := range x {
			x[j] = float32(r.NormFloat64() * math.Ldexp(1, -r.IntN(30)-14))
		}
	case 6:
		for j := range x {
			x[j] = float32(r.NormFloat64() * 1e37)
		}
		x[r.IntN(h)] = math.MaxFloat32
	default:
		s := math.Ldexp(1, r.IntN(60)-40)
		for j := range x {
			k := float64(r.IntN(255) - 127)
			v := float32((k + 0.5) * s)
			if k+0.5 > 127 {
				v = float32(127 * s)
			}
			switch r.IntN(6) {
			case 0:
				v = float32(k * s)
			case 1:
				v = math.Nextafter32(v, 0)
			case 2:
				v = math.Nextafter32(v, inf32)
			case 3:
				v = -v
			}
			x[j] = v
		}
		x[r.IntN(h)] = float32(127 * s)
		x[r.IntN(h)] = float32(-127 * s)
	}
	return x
}

// TestInt8Family checks the int8_per_token_head family (int8.go's
// quantizeInt8Head and dequantizeInt8Head, as written once) against
// verify/codec's Int8PerTokenHead bit for bit on the lane evaluator: heads
// of 32 to 1024 values (int8Head's kinds), the scale word then the int8;
// and random heads decoded, the scale word random, NaN, ±Inf, negative,
// zero or subnormal.
func TestInt8Family(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(8, 31))
	f := codec.Int8PerTokenHead
	for trial := range 30000 {
		n := []int{1, 2, 3, 4, 5, 8, 32}[trial/7%7] // pieces of 32, every kind at each
		x := int8Head(r, trial, 32*n)
		src := make([]byte, 4*len(x))
		for j, v := range x {
			binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
		}
		got, want := make([]byte, 4+len(x)), make([]byte, 4+len(x))
		vec.QuantizeInt8Head(l, l, n, vec.Arr{Elem: vec.F32, P: &src}, vec.Arr{Elem: vec.Int8PerTokenHead, P: &got})
		binary.LittleEndian.PutUint32(want, math.Float32bits(f.Encode(want[4:], x, 0)))
		if !bytes.Equal(got, want) {
			t.Fatalf("quantize %v:\n got %x\nwant %x", x, got, want)
		}
	}
	for trial := range 4000 {
		n := 1 + trial%4
		q := make([]byte, 4+32*n)
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		if trial%2 == 0 {
			s := []float32{float32(math.NaN()), inf32, -inf32, -0.75, 0, 1e-40, 1e-6, math.MaxFloat32}[trial/2%8]
			binary.LittleEndian.PutUint32(q, math.Float32bits(s))
		}
		out := make([]byte, 4*32*n)
		vec.DequantizeInt8Head(l, l, n, vec.Arr{Elem: vec.Int8PerTokenHead, P: &q}, vec.Arr{Elem: vec.F32, P: &out})
		y := make([]float32, 32*n)
		f.Decode(y, q[4:], math.Float32frombits(binary.LittleEndian.Uint32(q)))
		for j := range y {
			g := math.Float32frombits(binary.LittleEndian.Uint32(out[4*j:]))
			if math.Float32bits(g) != math.Float32bits(y[j]) && !(y[j] != y[j] && g != g) {
				t.Fatalf("dequantize %x: value %d = %#08x, want %#08x", q, j, math.Float32bits(g), math.Float32bits(y[j]))
			}
		}
	}
}

// nvgsScales are tensor scales g TestNVFP4GSFamily codes with: 1,
// NVIDIA's recipe 448·6/amax for amaxes far apart, vLLM's 1/k_scale, and
// the extremes (a subnormal g, whose 1/g is +Inf; the largest float32,
// whose 1/g is subnormal; g that saturate every scale at 448 or flush it
// to 0).
var nvgsScales = []float32{1, 448 * 6 / 3.5, 448 * 6 / 1e4, 448 * 6 / 1e-3, 1 / 0.0123, 0.5, 2, 1e-30, 1e30,
	1e-45, 3e-39, 1.2e-38, math.MaxFloat32, 0x1p-126, 0x1p127, 1e-10, 1e10}

// nvgsG is the tensor scale of a trial: one of nvgsScales or a random
// positive float32 of any exponent.
func nvgsG(r *rand.Rand, trial int) float32 {
	if trial%3 != 0 {
		return nvgsScales[r.IntN(len(nvgsScales))]
	}
	return math.Float32frombits(1 + r.Uint32N(0x7f7fffff))
}

// TestNVFP4GSFamily checks the nvfp4_gs family (nvfp4gs.go's
// quantizeNVFP4GS and dequantizeNVFP4GS, as written once: a Packer block
// is two of the format's blocks) against verify/codec's NVFP4GS bit for
// bit on the lane evaluator: blocks of nvfp4Sub's kinds (random of any
// scale, NaNs, ±0, ±Inf, subnormals, huge values, values at the E2M1
// grid's points and midpoints) and values on every E2M1 threshold times
// a block scale, each with a tensor scale from nvgsG; random bytes with
// every scale byte at both positions, dequantized with the same scales.
func TestNVFP4GSFamily(t *testing.T) {
	var l lane
	r := rand.New(rand.NewPCG(11, 29))
	fm := codec.NVFP4GS
	arr := func(b *[]byte, e vec.Elem) vec.Arr { return vec.Arr{Elem: e, P: b} }
	for trial := range 60000 {
		x := make([]float32, 32)
		for b := range 2 {
			nvfp4Sub(r, x[16*b:16*b+16], trial/(b+1)+b+r.IntN(2))
		}
		g := nvgsG(r, trial)
		if trial%7 == 3 { // values on the E2M1 thresholds (and a float32 step either side) times a scale
			th := []float32{0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 6, 0.5, 1, 1.5, 2, 3, 4}
			d := float32(math.Ldexp(1, r.IntN(40)-20))
			for j := range x {
				v := th[r.IntN(len(th))] * d
				v = math.Float32frombits(math.Float32bits(v) + uint32(r.IntN(3)) - 1)
				if r.IntN(2) == 0 {
					v = -v
				}
				x[j] = v
			}
			x[r.IntN(16)], x[16+r.IntN(16)] = 6*d, -6*d
			g = 1 / d
		}
		src := make([]byte, 128)
		for j, v := range x {
			binary.LittleEndian.PutUint32(src[4*j:], math.Float32bits(v))
		}
		got, want := make([]byte, 18), make([]byte, 18)
		vec.QuantizeNVFP4GS(l, l, u(g), arr(&src, vec.F32), arr(&got, vec.NVFP4GS))
		fm.Encode(want, x, g)
		if !bytes.Equal(got, want) {
			t.Fatalf("quantize %v with g = %g:\n got %x\nwant %x", x, g, got, want)
		}
	}
	for trial := range 256 * 8 {
		q := make([]byte, 18)
		for j := range q {
			q[j] = byte(r.Uint32())
		}
		q[8+9*(trial%2)] = byte(trial / 8) // every scale byte at both positions
		g := nvgsG(r, trial)
		out := make([]byte, 128)
		vec.DequantizeNVFP4GS(l, l, u(g), arr(&q, vec.NVFP4GS), arr(&out, vec.F32))
		y := make([]float32, 32)
		fm.Decode(y, q, g)
		for j := range y {
			v := math.Float32frombits(binary.LittleEndian.Uint32(out[4*j:]))
			if math.Float32bits(v) != math.Float32bits(y[j]) && !(y[j] != y[j] && v != v) {
				t.Fatalf("dequantize %x with g = %g: value %d = %#08x, want %#08x", q, g, j, math.Float32bits(v), math.Float32bits(y[j]))
			}
		}
	}
}
