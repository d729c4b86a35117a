package verify

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/x448/float16"
)

// kind is the storage format of a dtype.
type kind int

const (
	kF32 kind = iota
	kF64
	kF16
	kBF16
)

// format is an IEEE-style binary format: a sign bit, expBits exponent bits
// and mantBits fraction bits.
type format struct{ expBits, mantBits uint }

var formats = [...]format{kF32: {8, 23}, kF64: {11, 52}, kF16: {5, 10}, kBF16: {8, 7}}

// codec converts between a storage type T and float64 and knows the dtype's
// unit roundoff and storage ulp. All conversions to float64 are exact.
type codec[T Elem] struct {
	kind kind
	name string
	f    format
	u    float64 // unit roundoff of the compute type
}

func newCodec[T Elem](dtype string) (codec[T], error) {
	size := sizeOf[T]()
	var k kind
	var want uintptr
	switch dtype {
	case "f32":
		k, want = kF32, 4
	case "f64":
		k, want = kF64, 8
	case "f16":
		k, want = kF16, 2
	case "bf16":
		k, want = kBF16, 2
	default:
		return codec[T]{}, fmt.Errorf("DType %q must be f32, f64, f16 or bf16", dtype)
	}
	if size != want {
		return codec[T]{}, fmt.Errorf("DType %q needs a %d-byte element type, got %d bytes", dtype, want, size)
	}
	u := 0x1p-24
	if k == kF64 {
		u = 0x1p-53
	}
	return codec[T]{kind: k, name: dtype, f: formats[k], u: u}, nil
}

// toF64 widens x exactly.
func (c codec[T]) toF64(x T) float64 {
	switch c.kind {
	case kF32:
		return float64(float32(x))
	case kF64:
		return float64(x)
	case kF16:
		return float64(float16.Frombits(uint16(x)).Float32())
	default:
		return float64(bf16ToF32(uint16(x)))
	}
}

// toF32 widens x to the float32 compute type (not for f64).
func (c codec[T]) toF32(x T) float32 {
	switch c.kind {
	case kF32:
		return float32(x)
	case kF16:
		return float16.Frombits(uint16(x)).Float32()
	default:
		return bf16ToF32(uint16(x))
	}
}

// fromF32 narrows a float32 compute result to T with round-to-nearest-even
// (not for f64).
func (c codec[T]) fromF32(v float32) T {
	switch c.kind {
	case kF32:
		return T(v)
	case kF16:
		return T(float16.Fromfloat32(v).Bits())
	default:
		return T(f32ToBF16(v))
	}
}

// fromF64 rounds v to T (through float32 for the 16-bit types: only used to
// make inputs, where any nearby value will do).
func (c codec[T]) fromF64(v float64) T {
	if c.kind == kF64 {
		return T(v)
	}
	return c.fromF32(float32(v))
}

// bits returns the bit pattern of x.
func (c codec[T]) bits(x T) uint64 {
	switch c.kind {
	case kF32:
		return uint64(math.Float32bits(float32(x)))
	case kF64:
		return math.Float64bits(float64(x))
	default:
		return uint64(uint16(x))
	}
}

// fromBits returns the T with bit pattern b.
func (c codec[T]) fromBits(b uint64) T {
	switch c.kind {
	case kF32:
		return T(math.Float32frombits(uint32(b)))
	case kF64:
		return T(math.Float64frombits(b))
	default:
		return T(uint16(b))
	}
}

// isNaN reports whether x decodes to a NaN.
func (c codec[T]) isNaN(x T) bool { return c.f.isNaN(c.bits(x)) }

// isFinite reports whether x decodes to a finite value.
func (c codec[T]) isFinite(x T) bool { return c.f.isFinite(c.bits(x)) }

// same reports whether a and b have the same bits, or are both NaN.
func (c codec[T]) same(a, b T) bool {
	ba, bb := c.bits(a), c.bits(b)
	return ba == bb || (c.f.isNaN(ba) && c.f.isNaN(bb))
}

// show formats x as its value and bit pattern.
func (c codec[T]) show(x T) string {
	w := int(1+c.f.expBits+c.f.mantBits) / 4
	return fmt.Sprintf("%v (%#0*x)", c.toF64(x), w, c.bits(x))
}

// showAll formats a slice of T.
func (c codec[T]) showAll(x []T) string {
	s := "["
	for i, v := range x {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprint(c.toF64(v))
	}
	return s + "]"
}

// storageULP returns ulp_S(|v|), the storage type's unit in the last place
// at |v| for f16 and bf16 (the spacing at the smallest normal below it), and
// 0 for f32 and f64, whose results are not narrowed.
func (c codec[T]) storageULP(v float64) float64 {
	var minExp, mant int
	switch c.kind {
	case kF16:
		minExp, mant = -14, 10
	case kBF16:
		minExp, mant = -126, 7
	default:
		return 0
	}
	e := minExp
	if v = math.Abs(v); v != 0 {
		_, fe := math.Frexp(v) // v = f·2^fe, f in [0.5, 1)
		e = max(fe-1, minExp)
	}
	return math.Ldexp(1, e-mant)
}

// canon evaluates docs/contract.md §5 for one pair in the compute type: forward
// y_a = fl(fl(x_a·c) − fl(x_b·s)), y_b = fl(fl(x_b·c) + fl(x_a·s)); inverse
// with s negated. c and s are compute-type values held in float64. The
// explicit conversions keep Go from fusing a product into the sum.
func (c codec[T]) canon(xa, xb T, cv, sv float64, inverse bool) (ya, yb T) {
	if c.kind == kF64 {
		a, b := float64(xa), float64(xb)
		if inverse {
			return T(float64(a*cv) + float64(b*sv)), T(float64(b*cv) - float64(a*sv))
		}
		return T(float64(a*cv) - float64(b*sv)), T(float64(b*cv) + float64(a*sv))
	}
	a, b := c.toF32(xa), c.toF32(xb)
	c32, s32 := float32(cv), float32(sv)
	var r, q float32
	if inverse {
		r, q = float32(a*c32)+float32(b*s32), float32(b*c32)-float32(a*s32)
	} else {
		r, q = float32(a*c32)-float32(b*s32), float32(b*c32)+float32(a*s32)
	}
	return c.fromF32(r), c.fromF32(q)
}

// bf16ToF32 widens bfloat16 bits exactly: they are the top half of a float32.
func bf16ToF32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// f32ToBF16 narrows to bfloat16 with round-to-nearest-even; a NaN stays a
// NaN (its quiet bit is set so that dropping the low payload bits cannot
// turn it into an infinity).
func f32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x0040
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func (f format) width() uint      { return 1 + f.expBits + f.mantBits }
func (f format) mantMask() uint64 { return 1<<f.mantBits - 1 }
func (f format) expMax() uint64   { return 1<<f.expBits - 1 }
func (f format) bias() int        { return 1<<(f.expBits-1) - 1 }

func (f format) isNaN(b uint64) bool {
	return (b>>f.mantBits)&f.expMax() == f.expMax() && b&f.mantMask() != 0
}

func (f format) isFinite(b uint64) bool { return (b>>f.mantBits)&f.expMax() != f.expMax() }

// compose builds the bits of ±1.m·2^e (or the subnormal/special encodings
// when biased exponent be is 0 or expMax).
func (f format) compose(neg bool, be, m uint64) uint64 {
	b := be<<f.mantBits | m&f.mantMask()
	if neg {
		b |= 1 << (f.mantBits + f.expBits)
	}
	return b
}

// mix is splitmix64's finaliser: it turns a counter or a small number
// drawn by rapid into well-spread bits.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// special maps random bits r to a bit pattern that mixes the special
// classes: ±0, ±smallest subnormal, ±random subnormal, ±largest subnormal,
// ±smallest normal, ±Inf, NaN with a random payload (quiet or signaling),
// ±largest finite, ±huge, ±tiny normal, fully random bits, and (half of the
// time) random normals within 2^±16 of 1. r = 0 gives +0. With finite set it
// never returns an infinity or a NaN.
func (f format) special(r uint64, finite bool) uint64 {
	class, rest := r%22, r/22
	neg := rest&1 == 1
	h := mix(rest >> 1)
	m := h & f.mantMask()
	m1 := max(m, 1)
	em := f.expMax()
	bias := uint64(f.bias())
	quarter := max(bias/2, 1)
	switch class {
	case 0:
		return f.compose(neg, 0, 0)
	case 1:
		return f.compose(neg, 0, 1)
	case 2:
		return f.compose(neg, 0, m1)
	case 3:
		return f.compose(neg, 0, f.mantMask())
	case 4:
		return f.compose(neg, 1, 0)
	case 5:
		if !finite {
			return f.compose(neg, em, 0)
		}
	case 6:
		if !finite {
			return f.compose(neg, em, m1)
		}
	case 7:
		return f.compose(neg, em-1, f.mantMask())
	case 8:
		return f.compose(neg, em-1-below(h, quarter), m)
	case 9:
		return f.compose(neg, 1+below(h, quarter), m)
	case 10:
		b := h >> (64 - f.width())
		if !finite || f.isFinite(b) {
			return b
		}
	}
	spread := min(uint64(16), bias-1)
	be := bias - spread + below(h, 2*spread+1)
	return f.compose(neg, be, m)
}

// below maps the top bits of h to [0, n) without a division.
func below(h, n uint64) uint64 {
	hi, _ := bits.Mul64(h, n)
	return hi
}
