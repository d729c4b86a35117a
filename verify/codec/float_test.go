package codec

import (
	"math"
	"math/big"
	"sort"
	"testing"

	"github.com/x448/float16"
)

// patterns calls fn on float32 bit patterns spread over all 2³²: every
// multiple of a prime stride plus the ±0, ±Inf, NaN and the extremes of
// each binade's mantissa.
func patterns(fn func(u uint32)) {
	for u := uint64(0); u < 1<<32; u += 7919 {
		fn(uint32(u))
	}
	for e := uint32(0); e < 256; e++ {
		for _, m := range []uint32{0, 1, 2, 0x3ff, 0x400, 0x7ff, 0x800, 0xfff, 0x1000, 0x7fff, 0x8000, 0xffff, 0x10000, 0x7fffff, 0x7ffffe, 0x400000, 0x400001} {
			fn(e<<23 | m)
			fn(1<<31 | e<<23 | m)
		}
	}
}

// TestF16AgainstX448 checks the f16 conversions against
// github.com/x448/float16: every float32 pattern of patterns narrowed
// (nearest even; NaN as NaN) and all 65536 halves widened.
func TestF16AgainstX448(t *testing.T) {
	bad := 0
	patterns(func(u uint32) {
		f := math.Float32frombits(u)
		got, want := f32to16(f), float16.Fromfloat32(f).Bits()
		if got != want && !(got&0x7fff > 0x7c00 && want&0x7fff > 0x7c00) {
			if bad++; bad <= 5 {
				t.Errorf("f32to16(%#08x) = %#04x, x448 gives %#04x", u, got, want)
			}
		}
	})
	for h := 0; h < 1<<16; h++ {
		got, want := f16to32(uint16(h)), float16.Frombits(uint16(h)).Float32()
		if !sameBits(got, want) {
			t.Fatalf("f16to32(%#04x) = %#08x, x448 gives %#08x", h, math.Float32bits(got), math.Float32bits(want))
		}
	}
	// A NaN keeps its sign and the top of its payload, quieted.
	if h := f32to16(math.Float32frombits(0xff812345)); h != 0xfe00|0x812345>>13&0x3ff {
		t.Errorf("f32to16(0xff812345) = %#04x", h)
	}
}

// TestBF16 checks bfloat16 narrowing against the nearest of the two
// bfloat16 neighbours in float64, ties to the even one (the pattern above
// the largest finite value counting as 2¹²⁸), and exact widening.
func TestBF16(t *testing.T) {
	value := func(h uint32) float64 { // h·2¹⁶ as a float32 pattern, Inf as 2¹²⁸
		if h&0x7fff == 0x7f80 {
			return math.Copysign(math.Ldexp(1, 128), float64(math.Float32frombits(h<<16)))
		}
		return float64(math.Float32frombits(h << 16))
	}
	bad := 0
	patterns(func(u uint32) {
		f := math.Float32frombits(u)
		got := f32tobf16(f)
		if f != f {
			if got&0x7fff <= 0x7f80 || got&0x8000 != uint16(u>>16)&0x8000 {
				t.Errorf("f32tobf16(NaN %#08x) = %#04x", u, got)
			}
			return
		}
		lo := u >> 16
		want := lo
		if u&0xffff != 0 && u&0x7fffffff < 0x7f800000 {
			dl, dh := math.Abs(float64(f)-value(lo)), math.Abs(value(lo+1)-float64(f))
			if dh < dl || (dh == dl && lo&1 == 1) {
				want = lo + 1
			}
		}
		if uint32(got) != want {
			if bad++; bad <= 5 {
				t.Errorf("f32tobf16(%#08x) = %#04x, want %#04x", u, got, want)
			}
		}
		if got&0x7fff <= 0x7f80 && math.Float32bits(bf16to32(got)) != uint32(got)<<16 {
			t.Errorf("bf16to32(%#04x) not exact", got)
		}
	})
}

// fp8Spec is an OCP 8-bit float format (OCP 8-bit Floating Point
// Specification (OFP8) rev. 1.0): e exponent bits of the given bias, m
// mantissa bits.
type fp8Spec struct {
	name      string
	e, m      int
	bias      int
	infNaN    bool    // e5m2: IEEE-like; e4m3fn: only S.1111.111 is NaN, no Inf
	maxFinite float64 // 448 or 57344
	satFrom   float64 // magnitudes from here on saturate to maxFinite
	narrow    func(float32) uint8
	widen     func(uint8) float32
}

var fp8Specs = []fp8Spec{
	{"e4m3", 4, 3, 7, false, 448, 448, f32toe4m3, e4m3to32},
	{"e5m2", 5, 2, 15, true, 57344, 61440, f32toe5m2, e5m2to32},
}

// value is the format's value of code c by the spec's formula: NaN for
// the NaN codes, ±Inf for e5m2's infinities.
func (s fp8Spec) value(c uint8) float64 {
	sign := 1.0
	if c&0x80 != 0 {
		sign = -1
	}
	e := int(c>>s.m) & (1<<s.e - 1)
	m := float64(c & (1<<s.m - 1))
	top := 1<<s.e - 1
	switch {
	case s.infNaN && e == top && m == 0:
		return math.Inf(int(sign))
	case s.infNaN && e == top, !s.infNaN && e == top && int(m) == 1<<s.m-1:
		return math.NaN()
	case e == 0:
		return sign * math.Ldexp(m/float64(int(1)<<s.m), 1-s.bias)
	}
	return sign * math.Ldexp(1+m/float64(int(1)<<s.m), e-s.bias)
}

// TestFP8DecodeTable checks all 256 codes of e4m3 and e5m2 against the
// spec's formula.
func TestFP8DecodeTable(t *testing.T) {
	for _, s := range fp8Specs {
		for c := 0; c < 256; c++ {
			got, want := s.widen(uint8(c)), s.value(uint8(c))
			if want != want {
				if got == got {
					t.Errorf("%s code %#02x = %v, want NaN", s.name, c, got)
				}
				continue
			}
			if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
				t.Errorf("%s code %#02x = %v, want %v", s.name, c, got, want)
			}
		}
		if got := s.value(0x7e); s.name == "e4m3" && got != s.maxFinite {
			t.Errorf("e4m3 0x7e = %v", got)
		}
		if got := s.value(0x7b); s.name == "e5m2" && got != s.maxFinite {
			t.Errorf("e5m2 0x7b = %v", got)
		}
	}
}

// TestFP8Narrow checks that narrowing rounds to the nearest code of the
// spec's table, a tie to the even code (mantissa's last bit 0),
// saturating from satFrom on (Inf included), NaN to a NaN code of its
// sign, the sign of zero kept.
func TestFP8Narrow(t *testing.T) {
	for _, s := range fp8Specs {
		var mags []float64 // magnitudes of the finite codes 0…max, increasing
		var codes []uint8
		for c := 0; c < 0x80; c++ {
			if v := s.value(uint8(c)); !math.IsNaN(v) && !math.IsInf(v, 0) {
				mags, codes = append(mags, v), append(codes, uint8(c))
			}
		}
		want := func(f float32) uint8 {
			var sign uint8
			if math.Signbit(float64(f)) {
				sign = 0x80
			}
			a := math.Abs(float64(f))
			if a >= s.satFrom {
				return sign | codes[len(codes)-1]
			}
			k := sort.SearchFloat64s(mags, a)
			if k == len(mags) { // between max and satFrom: nearest is max
				return sign | codes[k-1]
			}
			if mags[k] == a || k == 0 {
				return sign | codes[k]
			}
			lo, hi := a-mags[k-1], mags[k]-a
			switch {
			case lo < hi:
				k--
			case lo == hi && codes[k-1]&1 == 0:
				k--
			}
			return sign | codes[k]
		}
		bad := 0
		patterns(func(u uint32) {
			f := math.Float32frombits(u)
			got := s.narrow(f)
			if f != f {
				if !math.IsNaN(s.value(got)) || got&0x80 != uint8(u>>24)&0x80 {
					t.Errorf("%s(NaN %#08x) = %#02x, want a NaN code of its sign", s.name, u, got)
				}
				return
			}
			if w := want(f); got != w {
				if bad++; bad <= 5 {
					t.Errorf("%s(%v = %#08x) = %#02x (%v), want %#02x (%v)", s.name, f, u, got, s.value(got), w, s.value(w))
				}
			}
		})
		// Saturation edges: just below, at and above satFrom; ±Inf.
		for _, v := range []float64{s.maxFinite, s.satFrom, math.Nextafter(s.satFrom, 0), math.Inf(1)} {
			for _, sg := range []float64{1, -1} {
				f := float32(sg * v)
				if got := s.narrow(f); got != want(f) || s.value(got) != sg*s.maxFinite {
					t.Errorf("%s(%v) = %v, want ±%v", s.name, f, s.value(got), s.maxFinite)
				}
			}
		}
	}
}

// TestE2M1 checks E2M1 narrowing against nearest-even on its table and
// saturation at 6.
func TestE2M1(t *testing.T) {
	mags := e2m1Values[:]
	for _, f := range []float32{0, 0.1, 0.25, 0.2500001, 0.5, 0.75, 0.7499999, 1, 1.25, 1.2500001, 1.75, 2, 2.5, 2.5000002, 3, 3.5, 3.4999998, 4, 5, 5.0000005, 6, 7, 1e30, float32(math.Inf(1))} {
		for _, v := range []float32{f, -f} {
			a := min(float64(abs(v)), 6) // saturation
			k, best := 0, math.Inf(1)
			for i, m := range mags {
				d := math.Abs(float64(m) - a)
				if d < best || (d == best && i&1 == 0) {
					k, best = i, d
				}
			}
			c := f32toe2m1(v)
			if int(c&7) != k || (c&8 != 0) != math.Signbit(float64(v)) {
				t.Errorf("e2m1(%v) = %#x, want magnitude index %d", v, c, k)
			}
			if e2m1to32(c) != float32(math.Copysign(float64(mags[k]), float64(v))) {
				t.Errorf("e2m1to32(%#x) = %v", c, e2m1to32(c))
			}
		}
	}
	if c := f32toe2m1(float32(math.NaN())); c != 0 {
		t.Errorf("e2m1(NaN) = %#x, want 0", c)
	}
}

// TestFloorLog2f checks floorLog2f against float64 logarithms, around the
// powers of two of every exponent (where the rounding can reach the next
// integer) and on a spread of patterns: a float64 log2 within 1e-12 of the
// float32 midpoint that decides is refused as inconclusive (none is), so
// its rounding to float32 is the correctly rounded one.
func TestFloorLog2f(t *testing.T) {
	check := func(a float32) {
		l := math.Log2(float64(a))
		r := float64(float32(l)) // correctly rounded unless l is near a midpoint
		n := math.Floor(l) + 1
		// the float32 midpoint between n and its neighbour toward n−1
		nb := float64(math.Nextafter32(float32(n), float32(n-1)))
		if mid := (n + nb) / 2; math.Abs(l-mid) < 1e-12*math.Max(1, math.Abs(mid)) {
			t.Fatalf("log2(%g): float64 too close to the midpoint %v to decide", a, mid)
		}
		if got, want := floorLog2f(a), int(math.Floor(r)); got != want {
			t.Errorf("floorLog2f(%g = %#08x) = %d, want %d (log2 = %.17g)", a, math.Float32bits(a), got, want, l)
		}
	}
	for e := -149; e <= 127; e++ {
		p := math.Ldexp(1, e)
		for w := 0; w < 300; w++ {
			a := float32(p)
			for range w {
				a = math.Nextafter32(a, 0)
			}
			if a > 0 {
				check(a)
				check(math.Nextafter32(float32(p), float32(math.Inf(1))))
			}
		}
	}
	patterns(func(u uint32) {
		if a := math.Float32frombits(u); a > 0 && !math.IsInf(float64(a), 0) && a == a {
			check(a)
		}
	})
	// The vectors' pow2_below: one step below 2^4, 2^24, 2^64, 2^-60 give
	// mxfp4 e = 129, 149, 189, 65.
	for _, c := range []struct {
		p float64
		e uint8
	}{{0x1p4, 129}, {0x1p24, 149}, {0x1p64, 189}, {0x1p-60, 65}} {
		a := math.Nextafter32(float32(c.p), 0)
		if e := mxfp4Exponent(a); e != c.e {
			t.Errorf("mxfp4 e of %g = %d, want %d", a, e, c.e)
		}
	}
}

// TestHadamardScale checks fl32(1/√n) against math/big.
func TestHadamardScale(t *testing.T) {
	for k := 0; k <= 20; k++ {
		n := 1 << k
		s := new(big.Float).SetPrec(200).SetInt64(int64(n))
		s.Sqrt(s)
		s.Quo(new(big.Float).SetPrec(200).SetInt64(1), s)
		want, _ := s.Float32() // nearest even
		if got := hadamardScale(n); got != want {
			t.Errorf("hadamardScale(%d) = %v, want %v", n, got, want)
		}
	}
}
