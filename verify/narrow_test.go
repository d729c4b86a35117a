package verify

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
)

// roundQuantum rounds v to a multiple of 2^(e−mant), e = max(⌊log2 |v|⌋,
// minExp), ties to even: the value a binary format with mant fraction bits
// and smallest normal exponent minExp stores for v, before overflow. It is
// written apart from the conversions NarrowExhaustive expects, in float64,
// where the scaling by a power of two and the rounding to an integer are
// exact.
func roundQuantum(v float64, mant, minExp int) float64 {
	if v == 0 {
		return v
	}
	_, e := math.Frexp(math.Abs(v)) // |v| = f·2^e, f in [0.5, 1)
	q := math.Ldexp(1, max(e-1, minExp)-mant)
	return math.RoundToEven(v/q) * q
}

// fakeF16 narrows like IEEE binary16 without x448/float16's rounding:
// NaN becomes 0x7e01 (another payload than the reference's).
func fakeF16(x float32) uint16 {
	if x != x {
		return 0x7e01
	}
	r := roundQuantum(float64(x), 10, -14)
	if math.Abs(r) >= 65536 { // 65520 and up round to 2^16: overflow
		return uint16(math.Float32bits(x)>>16)&0x8000 | 0x7c00
	}
	// r is exact in binary16, so this conversion does not round.
	return f16Exact(float32(r))
}

// f16Exact encodes an f16-representable float32 by its fields.
func f16Exact(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := math.Abs(float64(f))
	if a == 0 {
		return sign
	}
	if a < 0x1p-14 { // subnormal: a = m·2^-24
		return sign | uint16(a*0x1p24)
	}
	fr, e := math.Frexp(a) // a = fr·2^e, fr in [0.5, 1)
	return sign | uint16(e-1+15)<<10 | uint16((fr*2-1)*1024)
}

// fakeBF16 narrows like bfloat16 without f32ToBF16: NaN becomes 0x7fc1.
func fakeBF16(x float32) uint16 {
	if x != x {
		return 0x7fc1
	}
	r := roundQuantum(float64(x), 7, -126)
	if math.Abs(r) >= 0x1p128 {
		return uint16(math.Float32bits(x)>>16)&0x8000 | 0x7f80
	}
	return uint16(math.Float32bits(float32(r)) >> 16) // exact: r has 8 significant bits
}

// fakeTo returns a rotate-and-narrow kernel for heads of hd values with
// pair first indices firsts, at position 0 with C = c: it narrows x·c at
// each first index with narrow, except that it corrupts the result for the
// bit pattern wrong (when wrongSet), and it reports every pattern it saw to
// seen.
func fakeTo(hd int, firsts []int, c float32, narrow func(float32) uint16, wrong uint32, wrongSet bool, seen func(uint32)) func(dst []uint16, src []float32) {
	return func(dst []uint16, src []float32) {
		for h := 0; h+hd <= len(src); h += hd {
			for _, a := range firsts {
				x := src[h+a]
				d := narrow(x * c)
				if wrongSet && math.Float32bits(x) == wrong {
					d ^= 1
				}
				dst[h+a] = d
				if seen != nil {
					seen(math.Float32bits(x))
				}
			}
		}
	}
}

func TestNarrowExhaustiveCorrectFake(t *testing.T) {
	for _, tc := range []struct {
		out    string
		narrow func(float32) uint16
		hd     int
		firsts []int
		attn   float64
	}{
		{"f16", fakeF16, 6, []int{0, 2, 4}, 1},
		{"bf16", fakeBF16, 8, []int{0, 1, 2}, 1}, // neox, RotaryDim 6 of 8
		{"f16", fakeF16, 4, []int{0, 2}, 1.25},
		{"bf16", fakeBF16, 4, []int{0, 1}, 0.75},
	} {
		t.Run(fmt.Sprintf("%s/hd%d/A%v", tc.out, tc.hd, tc.attn), func(t *testing.T) {
			// Every multiple of the stride below 2^32, and nothing else,
			// must reach the kernel.
			var mu sync.Mutex
			hit := make([]bool, (1<<32-1)/narrowStride+1)
			var stray uint32
			strays := 0
			seen := func(u uint32) {
				mu.Lock()
				defer mu.Unlock()
				if u%narrowStride != 0 {
					strays++
					stray = u
					return
				}
				hit[u/narrowStride] = true
			}
			n := Narrowing{OutDType: tc.out, HeadDim: tc.hd, Firsts: tc.firsts, AttentionFactor: tc.attn,
				Backends: []NarrowBackend{{Name: "fake", To: fakeTo(tc.hd, tc.firsts, float32(tc.attn), tc.narrow, 0, false, seen)}}}
			r := record(t.Name(), func(t tb) { narrowExhaustive(t, n, narrowStride) })
			if r.Failed() || r.skipped {
				t.Fatalf("a correct narrowing failed or skipped:\n%s", r.text())
			}
			if strays > 0 {
				t.Errorf("%d values off the stride reached the kernel, e.g. %#08x", strays, stray)
			}
			for i, h := range hit {
				if !h {
					t.Fatalf("the bit pattern %#08x (%d·%d) never reached the kernel", uint32(i*narrowStride), i, narrowStride)
				}
			}
			if !strings.Contains(r.text(), "fake: every float32 tested (stride 4099)") {
				t.Errorf("log lacks the backend's summary:\n%s", r.text())
			}
		})
	}
}

func TestNarrowExhaustiveWrongFake(t *testing.T) {
	// One wrong bit pattern among the sampled ones (multiples of the
	// stride): an f16 subnormal, and a negative bf16 normal.
	for _, tc := range []struct {
		out    string
		narrow func(float32) uint16
		wrong  uint32
	}{
		{"f16", fakeF16, 4099 * 230000},
		{"bf16", fakeBF16, 4099 * 777777},
	} {
		t.Run(tc.out, func(t *testing.T) {
			firsts := []int{0, 1}
			n := Narrowing{OutDType: tc.out, HeadDim: 4, Firsts: firsts, AttentionFactor: 1,
				Backends: []NarrowBackend{
					{Name: "good", To: fakeTo(4, firsts, 1, tc.narrow, 0, false, nil)},
					{Name: "bad", To: fakeTo(4, firsts, 1, tc.narrow, tc.wrong, true, nil)},
				}}
			r := record(t.Name(), func(t tb) { narrowExhaustive(t, n, narrowStride) })
			if !r.Failed() {
				t.Fatalf("a narrowing wrong for %#08x passed:\n%s", tc.wrong, r.text())
			}
			want := fmt.Sprintf("bad: %s narrowing of %#08x", tc.out, tc.wrong)
			if len(r.errs) != 2 || !strings.Contains(r.errs[0], want) || !strings.Contains(r.errs[1], "bad: 1 mismatches") {
				t.Errorf("errors %q: want one naming %q, then bad: 1 mismatches", r.errs, want)
			}
		})
	}
	// A kernel that ignores the attention factor is wrong wherever x·A
	// narrows differently from x.
	firsts := []int{0, 1}
	n := Narrowing{OutDType: "f16", HeadDim: 2, Firsts: firsts[:1], AttentionFactor: 1.5,
		Backends: []NarrowBackend{{Name: "noA", To: fakeTo(2, firsts[:1], 1, fakeF16, 0, false, nil)}}}
	if r := record("noA", func(t tb) { narrowExhaustive(t, n, narrowStride) }); !r.Failed() {
		t.Errorf("a kernel ignoring A = 1.5 passed:\n%s", r.text())
	}
}

func TestNarrowExhaustiveBadInput(t *testing.T) {
	to := func([]uint16, []float32) {}
	for _, tc := range []struct {
		n    Narrowing
		want string
	}{
		{Narrowing{OutDType: "f16 ", HeadDim: 2, Firsts: []int{0}, AttentionFactor: 1}, `"f16 "`},
		{Narrowing{OutDType: "f32", HeadDim: 2, Firsts: []int{0}, AttentionFactor: 1}, `"f32"`},
		{Narrowing{OutDType: "f16", HeadDim: 2, Firsts: []int{2}, AttentionFactor: 1}, "holds 2"},
		{Narrowing{OutDType: "f16", HeadDim: 2, Firsts: nil, AttentionFactor: 1}, "0 pair indices"},
		{Narrowing{OutDType: "f16", HeadDim: 2, Firsts: []int{0}}, "AttentionFactor = 0"},
	} {
		tc.n.Backends = []NarrowBackend{{Name: "x", To: to}}
		r := record("bad", func(t tb) { narrowExhaustive(t, tc.n, narrowStride) })
		if !r.Failed() || !strings.Contains(r.text(), tc.want) {
			t.Errorf("%+v: failed %v with %q, want a failure naming %s", tc.n, r.Failed(), r.text(), tc.want)
		}
	}
	r := record("none", func(t tb) {
		narrowExhaustive(t, Narrowing{OutDType: "bf16", HeadDim: 2, Firsts: []int{0}, AttentionFactor: 1}, narrowStride)
	})
	if r.Failed() || !r.skipped || !strings.Contains(r.text(), "SKIPPED") {
		t.Errorf("no backends: failed %v, skipped %v, %q: want a SKIPPED skip", r.Failed(), r.skipped, r.text())
	}
}
