package verify

import (
	"fmt"
	"math"
	"sort"

	"github.com/x448/float16"
)

// The suite's own references for the KV-cache types (docs/contract.md §11),
// written from the formats' definitions and apart from the generated code:
// e4m3 by searching a table of the format's 127 magnitudes, q8_0 by
// transcribing ggml's quantize_row_q8_0_ref (ggml/src/ggml-quants.c) with
// Go's float32 arithmetic, f16 through github.com/x448/float16 and bf16
// through f32ToBF16.

// ---- OCP FP8 e4m3fn ------------------------------------------------------------------

// e4m3Mags[k] is the magnitude of the e4m3fn code k, k = 0…0x7e: exponent
// field e = k>>3 (bias 7), mantissa m = k&7; (1 + m/8)·2^(e−7) for e ≥ 1,
// (m/8)·2⁻⁶ for e = 0. Code 0x7f (with either sign) is NaN; there is no
// infinity. The largest finite magnitude is 0x7e, 448.
var e4m3Mags = func() [0x7f]float64 {
	var v [0x7f]float64
	for k := range v {
		e, m := k>>3, float64(k&7)
		if e == 0 {
			v[k] = m / 8 * math.Ldexp(1, -6)
		} else {
			v[k] = (1 + m/8) * math.Ldexp(1, e-7)
		}
	}
	return v
}()

// refE4M3 is the e4m3fn code of v: the code whose value is nearest, a tie
// going to the even code (the one whose mantissa's last bit is 0);
// magnitudes above 448, infinities included, saturate to ±448; a NaN gives
// S.1111.111 with v's sign.
func refE4M3(v float32) uint8 {
	var sign uint8
	if math.Signbit(float64(v)) {
		sign = 0x80
	}
	if v != v {
		return sign | 0x7f
	}
	a := math.Abs(float64(v))
	if a >= e4m3Mags[0x7e] {
		return sign | 0x7e
	}
	// The largest code whose magnitude is at most a.
	k := sort.Search(len(e4m3Mags), func(i int) bool { return e4m3Mags[i] > a }) - 1
	lo, hi := a-e4m3Mags[k], e4m3Mags[k+1]-a
	switch {
	case lo < hi:
	case hi < lo:
		k++
	case k&1 == 1:
		k++
	}
	return sign | uint8(k)
}

// refE4M3Value is the value of the e4m3fn code b as a float32 (exact), NaN
// for S.1111.111.
func refE4M3Value(b uint8) float32 {
	if b&0x7f == 0x7f {
		return float32(math.NaN())
	}
	v := float32(e4m3Mags[b&0x7f])
	if b&0x80 != 0 {
		v = -v
	}
	return v
}

// ---- ggml q8_0 ------------------------------------------------------------------------

// q8Block is ggml's QK8_0, q8Bytes the size of block_q8_0: an f16 d, 32 int8.
const (
	q8Block = 32
	q8Bytes = 2 + q8Block
)

// refQ8 quantizes the 32 values of x into one q8_0 block as ggml's
// quantize_row_q8_0_ref computes it, statement by statement:
//
//	float amax = 0.0f;
//	for j: amax = MAX(amax, fabsf(x[j]));     MAX(a, b) = ((a) > (b) ? (a) : (b))
//	const float d = amax / ((1 << 7) - 1);
//	const float id = d ? 1.0f/d : 0.0f;
//	y.d = GGML_FP32_TO_FP16(d);              round to nearest even
//	for j: y.qs[j] = roundf(x[j]*id);        halves away from zero
//
// The conversion of roundf's float to int8_t is undefined in C when the
// value does not fit, which happens only when the block holds a NaN (a
// product NaN, or the MAX that a NaN resets leaves amax below an earlier
// value) or when d is so small that 1/d overflows; there ropegen defines q
// as 0 for a NaN product and ±127 beyond ±127, and so does this reference.
func refQ8(x []float32) (d uint16, q [q8Block]int8) {
	if len(x) != q8Block {
		panic(fmt.Sprintf("verify: refQ8: %d values, want %d", len(x), q8Block))
	}
	var amax float32
	for _, v := range x {
		av := float32(math.Abs(float64(v)))
		if amax > av {
			// amax stays
		} else {
			amax = av
		}
	}
	dq := amax / 127
	var id float32
	if dq != 0 {
		id = 1 / dq
	}
	d = float16.Fromfloat32(dq).Bits()
	for j, v := range x {
		x0 := float32(v * id)
		r := math.Round(float64(x0))
		switch {
		case r != r:
			q[j] = 0
		case r > 127:
			q[j] = 127
		case r < -127:
			q[j] = -127
		default:
			q[j] = int8(r)
		}
	}
	return d, q
}

// refQ8Value is ggml's dequantize_row_q8_0 of one value: q·d in float32, d
// widened from f16.
func refQ8Value(d uint16, q int8) float32 {
	return float32(q) * float16.Frombits(d).Float32()
}

// ---- one cache type ------------------------------------------------------------------

// cacheRef is the reference for one cache type: quantizing a head of
// HeadDim float32 values into its cache elements, and back.
type cacheRef struct {
	dtype     string
	headDim   int
	cacheHead int // elements (q8_0: bytes) of one cached head
	blocks    bool
	scaled    bool
}

func newCacheRef(dtype string, headDim int) (cacheRef, error) {
	r := cacheRef{dtype: dtype, headDim: headDim, cacheHead: headDim}
	switch dtype {
	case "f32", "f16", "bf16":
	case "e4m3":
		r.scaled = true
	case "q8_0":
		if headDim%q8Block != 0 {
			return r, fmt.Errorf("q8_0 needs HeadDim %d to be a multiple of %d", headDim, q8Block)
		}
		r.blocks, r.cacheHead = true, headDim/q8Block*q8Bytes
	default:
		return r, fmt.Errorf("cache DType %q: want f32, f16, bf16, e4m3 or q8_0", dtype)
	}
	return r, nil
}

// size is the bytes of one cache element.
func (r cacheRef) size() int {
	switch r.dtype {
	case "f32":
		return 4
	case "f16", "bf16":
		return 2
	}
	return 1
}

// quantize writes the first n values of the head x (n = HeadDim, or a
// multiple of 32 for q8_0) into out, the cached head, as elements of 32
// or 16 bits or bytes held in uint32s.
func (r cacheRef) quantize(out []uint32, x []float32, n int, scale float32) {
	switch r.dtype {
	case "f32":
		for i := range n {
			out[i] = math.Float32bits(x[i])
		}
	case "f16":
		for i := range n {
			out[i] = uint32(float16.Fromfloat32(x[i]).Bits())
		}
	case "bf16":
		for i := range n {
			out[i] = uint32(f32ToBF16(x[i]))
		}
	case "e4m3":
		for i := range n {
			out[i] = uint32(refE4M3(x[i] / scale))
		}
	case "q8_0":
		for b := 0; b < n/q8Block; b++ {
			d, q := refQ8(x[b*q8Block : (b+1)*q8Block])
			o := out[b*q8Bytes:]
			o[0], o[1] = uint32(d&0xff), uint32(d>>8)
			for j, v := range q {
				o[2+j] = uint32(uint8(v))
			}
		}
	}
}

// dequantize widens the first n values of the cached head c into y.
func (r cacheRef) dequantize(y []float32, c []uint32, n int, scale float32) {
	switch r.dtype {
	case "f32":
		for i := range n {
			y[i] = math.Float32frombits(c[i])
		}
	case "f16":
		for i := range n {
			y[i] = float16.Frombits(uint16(c[i])).Float32()
		}
	case "bf16":
		for i := range n {
			y[i] = bf16ToF32(uint16(c[i]))
		}
	case "e4m3":
		for i := range n {
			y[i] = float32(refE4M3Value(uint8(c[i])) * scale)
		}
	case "q8_0":
		for b := 0; b < n/q8Block; b++ {
			o := c[b*q8Bytes:]
			d := uint16(o[0] | o[1]<<8)
			for j := range q8Block {
				y[b*q8Block+j] = refQ8Value(d, int8(uint8(o[2+j])))
			}
		}
	}
}

// elems is how many cache elements the first n values of a head take.
func (r cacheRef) elems(n int) int {
	if r.blocks {
		return n / q8Block * q8Bytes
	}
	return n
}

// firstDiff returns the first of the n cache elements of got that differs
// from want, or -1: bit for bit, but two NaNs match (f32, f16, bf16 and
// e4m3 values, q8_0 scales d, each pair of bytes taken as one f16).
func (r cacheRef) firstDiff(got, want []uint32, n int) int {
	for i := 0; i < n; i++ {
		if r.blocks && i%q8Bytes == 0 {
			g, w := got[i]|got[i+1]<<8, want[i]|want[i+1]<<8
			if g != w && !(formats[kF16].isNaN(uint64(g)) && formats[kF16].isNaN(uint64(w))) {
				return i
			}
			i++
			continue
		}
		g, w := got[i], want[i]
		if g == w {
			continue
		}
		nan := false
		switch r.dtype {
		case "f32":
			nan = formats[kF32].isNaN(uint64(g)) && formats[kF32].isNaN(uint64(w))
		case "f16":
			nan = formats[kF16].isNaN(uint64(g)) && formats[kF16].isNaN(uint64(w))
		case "bf16":
			nan = formats[kBF16].isNaN(uint64(g)) && formats[kBF16].isNaN(uint64(w))
		case "e4m3":
			nan = g&0x7f == 0x7f && w&0x7f == 0x7f
		}
		if !nan {
			return i
		}
	}
	return -1
}
