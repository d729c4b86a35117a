package codec

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/x448/float16"
	"pgregory.net/rapid"
)

func TestRegistry(t *testing.T) {
	want := []string{"f32", "f16", "bf16", "e4m3", "e5m2", "e4m3_head", "e5m2_head",
		"q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "mxfp4", "nvfp4", "nvfp4_gs", "int8_per_token_head"}
	if len(Formats) != len(want) {
		t.Fatalf("%d formats, want %d", len(Formats), len(want))
	}
	for i, name := range want {
		f, ok := Lookup(name)
		if !ok || f.Name != name || Formats[i].Name != name {
			t.Fatalf("Lookup(%q) = %q, %v; Formats[%d] = %q", name, f.Name, ok, i, Formats[i].Name)
		}
		if f.Block <= 0 || f.Bytes <= 0 || f.enc == nil || f.dec == nil || f.Size(4*f.Block) != 4*f.Bytes {
			t.Errorf("%s: Block %d, Bytes %d", name, f.Block, f.Bytes)
		}
	}
	if _, ok := Lookup("q8"); ok {
		t.Error("Lookup(q8) found a format")
	}
	layouts := map[string][3]int{ // block, bytes, scale
		"q8_0": {32, 34, int(NoScale)}, "q4_0": {32, 18, 0}, "q4_1": {32, 20, 0}, "q5_0": {32, 22, 0},
		"q5_1": {32, 24, 0}, "iq4_nl": {32, 18, 0}, "mxfp4": {32, 17, 0}, "nvfp4": {64, 36, 0},
		"nvfp4_gs": {16, 9, int(TensorScale)}, "e4m3": {1, 1, int(TensorScale)}, "e5m2_head": {1, 1, int(HeadScale)},
		"int8_per_token_head": {1, 1, int(TokenHeadScale)}, "f16": {1, 2, 0}, "f32": {1, 4, 0},
	}
	for name, l := range layouts {
		f, _ := Lookup(name)
		if f.Block != l[0] || f.Bytes != l[1] || int(f.Scale) != l[2] {
			t.Errorf("%s: %d values in %d bytes, scale %v: want %v", name, f.Block, f.Bytes, f.Scale, l)
		}
	}
}

func mustPanic(t *testing.T, want string, fn func()) {
	t.Helper()
	defer func() {
		r := recover()
		if r == nil || !strings.Contains(fmt.Sprint(r), want) {
			t.Errorf("panic %v, want one mentioning %q", r, want)
		}
	}()
	fn()
}

func TestLengthPanics(t *testing.T) {
	mustPanic(t, "q4_0.Encode: 31 values into 18 bytes", func() { Q4_0.Encode(make([]byte, 18), make([]float32, 31), 0) })
	mustPanic(t, "q4_0.Encode: 32 values into 17 bytes", func() { Q4_0.Encode(make([]byte, 17), make([]float32, 32), 0) })
	mustPanic(t, "mxfp4.Decode: 18 bytes into 32 values", func() { MXFP4.Decode(make([]float32, 32), make([]byte, 18), 0) })
	mustPanic(t, "nvfp4_gs.Size: 15 values", func() { NVFP4GS.Size(15) })
	mustPanic(t, "int8_per_token_head.Encode: no values", func() { Int8PerTokenHead.Encode(nil, nil, 0) })
	mustPanic(t, "zero Format", func() { Format{}.Encode(nil, nil, 0) })
	mustPanic(t, "HadamardN: blocks of 3", func() { HadamardN(make([]float32, 6), 3) })
	mustPanic(t, "HadamardN: blocks of 4 over 6", func() { HadamardN(make([]float32, 6), 4) })
}

// genBlocks draws nb blocks of n values: uniform in [-1, 1] times 2^s,
// s from lo to hi, with one value of each block at ±2^s (so the block
// maximum is 2^s) and some exact zeros.
func genBlocks(t *rapid.T, n, nb, lo, hi int) []float32 {
	x := make([]float32, n*nb)
	for b := 0; b < nb; b++ {
		s := float32(math.Ldexp(1, rapid.IntRange(lo, hi).Draw(t, "exp")))
		for j := 0; j < n; j++ {
			if rapid.IntRange(0, 9).Draw(t, "zero") == 0 {
				continue
			}
			x[b*n+j] = rapid.Float32Range(-1, 1).Draw(t, "r") * s
		}
		x[b*n+rapid.IntRange(0, n-1).Draw(t, "peak")] = s * float32(1-2*rapid.IntRange(0, 1).Draw(t, "sign"))
	}
	return x
}

func roundTrip(f Format, x []float32, scale float32) ([]byte, []float32, float32) {
	b := make([]byte, f.Size(len(x)))
	s := f.Encode(b, x, scale)
	y := make([]float32, len(x))
	f.Decode(y, b, s)
	return b, y, s
}

func blockStats(x []float32) (amax, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range x {
		amax = math.Max(amax, math.Abs(float64(v)))
		lo, hi = math.Min(lo, float64(v)), math.Max(hi, float64(v))
	}
	return
}

const u16 = 0x1p-11 // f16's relative rounding, normal range

// TestRoundTripBounds checks every format's decoded values against a
// bound derived from its definition (in the format's comment), on random
// blocks from rapid.
func TestRoundTripBounds(t *testing.T) {
	check := func(t *rapid.T, f Format, i int, x, y float64, tol float64) {
		if !(math.Abs(y-x) <= tol) {
			t.Fatalf("%s: x[%d] = %g reads back as %g, %g away, bound %g", f.Name, i, x, y, math.Abs(y-x), tol)
		}
	}
	t.Run("f32,f16,bf16", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			x := rapid.SliceOfN(rapid.Float32(), 1, 64).Draw(t, "x")
			_, y, _ := roundTrip(F32, x, 0)
			for i := range x {
				if math.Float32bits(y[i]) != math.Float32bits(x[i]) {
					t.Fatalf("f32: %#08x reads back as %#08x", math.Float32bits(x[i]), math.Float32bits(y[i]))
				}
			}
			_, y, _ = roundTrip(F16, x, 0)
			for i := range x {
				if w := float16.Fromfloat32(x[i]).Float32(); !sameBits(y[i], w) {
					t.Fatalf("f16: %v reads back as %v, x448 gives %v", x[i], y[i], w)
				}
			}
			_, y, _ = roundTrip(BF16, x, 0)
			for i := range x {
				if a := math.Abs(float64(x[i])); a < math.MaxFloat32/2 && a > 0x1p-126 {
					check(t, BF16, i, float64(x[i]), float64(y[i]), a*0x1p-8)
				}
			}
		})
	})
	t.Run("fp8", func(t *testing.T) {
		for _, f := range []Format{E4M3, E5M2, E4M3Head, E5M2Head} {
			s8 := fp8Specs[0]
			if strings.HasPrefix(f.Name, "e5m2") {
				s8 = fp8Specs[1]
			}
			half := math.Ldexp(1, -s8.m-1)           // half an ulp, relative, normal range
			sub := math.Ldexp(1, 1-s8.bias-s8.m) / 2 // half the subnormal step
			rapid.Check(t, func(t *rapid.T) {
				s := float32(math.Ldexp(1+rapid.Float64Range(0, 1).Draw(t, "m"), rapid.IntRange(-8, 8).Draw(t, "e")))
				x := genBlocks(t, 8, 1, -14, 20)
				_, y, got := roundTrip(f, x, s)
				if got != s {
					t.Fatalf("%s: Encode returned scale %v, want %v", f.Name, got, s)
				}
				for i := range x {
					q := float64(x[i] / s)
					if math.Abs(q) >= s8.satFrom {
						if want := math.Copysign(s8.maxFinite, q) * float64(s); float64(y[i]) != float64(float32(want)) {
							t.Fatalf("%s: %v/%v saturates to %v, want %v", f.Name, x[i], s, y[i], want)
						}
						continue
					}
					tol := (half*math.Abs(q)+sub)*float64(s)*(1+0x1p-22) + 0x1p-23*(math.Abs(float64(x[i]))+math.Abs(float64(y[i])))
					check(t, f, i, float64(x[i]), float64(y[i]), tol)
				}
			})
		}
	})
	t.Run("ggml", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			x := genBlocks(t, 32, 2, 0, 12) // d stays a normal, finite f16
			for _, f := range []Format{Q8_0, Q4_0, Q5_0, Q4_1, Q5_1} {
				_, y, _ := roundTrip(f, x, 0)
				for b := 0; b < 2; b++ {
					xb, yb := x[32*b:32*b+32], y[32*b:32*b+32]
					a, lo, hi := blockStats(xb)
					r := hi - lo
					slop := 0x1p-18 * (a + r)
					tol := map[string]float64{
						"q8_0": a*(1.0/254+u16) + slop,
						"q4_0": a*(1.0/8+u16) + slop,
						"q5_0": a*(1.0/16+u16) + slop,
						"q4_1": r*(1.0/30+u16) + math.Abs(lo)*u16 + slop,
						"q5_1": r*(1.0/62+u16) + math.Abs(lo)*u16 + slop,
					}[f.Name]
					for i := range xb {
						check(t, f, 32*b+i, float64(xb[i]), float64(yb[i]), tol)
					}
				}
			}
			// mxfp4: s = 2^(e−127) from the stored e, e−127 ∈ {E−2, E−1},
			// |y − x| ≤ max(s, amax − 6s).
			b, y, _ := roundTrip(MXFP4, x, 0)
			for blk := 0; blk < 2; blk++ {
				a, _, _ := blockStats(x[32*blk : 32*blk+32])
				e := int(b[17*blk]) - 127
				E := math.Ilogb(a)
				if e != E-2 && !(e == E-1 && a >= math.Ldexp(1, E+1)*(1-0x1p-16)) {
					t.Fatalf("mxfp4: amax %g gets e-127 = %d, want %d", a, e, E-2)
				}
				s := math.Ldexp(1, e)
				for i := 32 * blk; i < 32*blk+32; i++ {
					check(t, MXFP4, i, float64(x[i]), float64(y[i]), math.Max(s, a-6*s)*(1+0x1p-20))
				}
			}
			// nvfp4 (ggml): per 16, S = the UE4M3 value (twice ue4m3to32),
			// |y − x| ≤ max(S, amax − 6S) (S = 0 flushes: amax).
			x64 := x[:64]
			b, y, _ = roundTrip(NVFP4, x64, 0)
			for s := 0; s < 4; s++ {
				a, _, _ := blockStats(x64[16*s : 16*s+16])
				S := 2 * float64(ue4m3to32(b[s]))
				for i := 16 * s; i < 16*s+16; i++ {
					check(t, NVFP4, i, float64(x64[i]), float64(y[i]), math.Max(S, a-6*S)*(1+0x1p-20))
				}
			}
		})
	})
	t.Run("iq4_nl", func(t *testing.T) {
		grid := kvaluesIQ4NL
		rapid.Check(t, func(t *rapid.T) {
			x := genBlocks(t, 32, 1, -4, 12)
			b, y, _ := roundTrip(IQ4NL, x, 0)
			var max float64
			for _, v := range x {
				if math.Abs(float64(v)) > math.Abs(max) {
					max = float64(v)
				}
			}
			id := -127 / max
			var sqx, sq2 float64
			for j, v := range x {
				l := b[2+j%16] >> (4 * (j / 16)) & 0xf
				// the nibble is a nearest grid point of x·id (ties either way)
				a := float64(v) * id
				best := math.Inf(1)
				for _, g := range grid {
					best = math.Min(best, math.Abs(a-float64(g)))
				}
				if d := math.Abs(a - float64(grid[l])); d > best*(1+0x1p-20)+0x1p-20 {
					t.Fatalf("iq4_nl: x[%d]·id = %g got grid %d, %g away; nearest is %g away", j, a, grid[l], d, best)
				}
				w, q := float64(v)*float64(v), float64(grid[l])
				sqx += w * q * float64(v)
				sq2 += w * q * q
				if y[j] != getF16(b)*float32(grid[l]) {
					t.Fatalf("iq4_nl: y[%d] = %v, want d·%d", j, y[j], grid[l])
				}
			}
			// d is the x²-weighted least-squares scale for those nibbles,
			// within f16 and float32 summation rounding.
			dls, d := sqx/sq2, float64(getF16(b))
			if math.Abs(d-dls) > math.Abs(dls)*(u16+0x1p-17) {
				t.Fatalf("iq4_nl: d = %g, least squares %g", d, dls)
			}
		})
	})
	t.Run("nvfp4_gs", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			x := genBlocks(t, 16, 4, -6, 6)
			a, _, _ := blockStats(x)
			g := float32(448 * 6 / a) // NVIDIA's recipe
			if rapid.Bool().Draw(t, "other g") {
				g *= float32(math.Ldexp(1, rapid.IntRange(-12, 3).Draw(t, "gexp")))
			}
			b, y, got := roundTrip(NVFP4GS, x, g)
			if got != g {
				t.Fatalf("nvfp4_gs: Encode returned %v, want g = %v", got, g)
			}
			for blk := 0; blk < 4; blk++ {
				ab, _, _ := blockStats(x[16*blk : 16*blk+16])
				S := float64(e4m3to32(b[9*blk+8])) / float64(g)
				for i := 16 * blk; i < 16*blk+16; i++ {
					tol := math.Max(S, ab-6*S)*(1+0x1p-20) + 0x1p-23*math.Abs(float64(y[i]))
					check(t, NVFP4GS, i, float64(x[i]), float64(y[i]), tol)
				}
			}
		})
	})
	t.Run("int8_per_token_head", func(t *testing.T) {
		rapid.Check(t, func(t *rapid.T) {
			n := rapid.IntRange(1, 256).Draw(t, "n")
			x := genBlocks(t, n, 1, -30, 30)
			b, y, s := roundTrip(Int8PerTokenHead, x, 123)
			a, _, _ := blockStats(x)
			if want := max(float32(a)/127, float32(1e-6)); s != want {
				t.Fatalf("int8: scale %v, want max(fl(%v/127), 1e-6) = %v", s, a, want)
			}
			for i := range x {
				if q := int8(b[i]); q < -127 {
					t.Fatalf("int8: q[%d] = %d", i, q)
				}
				check(t, Int8PerTokenHead, i, float64(x[i]), float64(y[i]), float64(s)/2*(1+0x1p-18)+0x1p-23*math.Abs(float64(x[i])))
			}
		})
	})
}

// TestInt8Rounding pins int8_per_token_head's rounding: halves away from
// zero through fl(v ± 0.5) and truncation.
func TestInt8Rounding(t *testing.T) {
	x := []float32{127, 2.5, -2.5, 0.5, -0.5, 1.49, -1.51, 0, float32(math.Copysign(0, -1)), float32(math.NaN())}
	b := make([]byte, len(x))
	if s := Int8PerTokenHead.Encode(b, x, 0); s != 1 {
		t.Fatalf("scale %v, want 1", s)
	}
	want := []int8{127, 3, -3, 1, -1, 1, -2, 0, 0, 0}
	for i := range want {
		if int8(b[i]) != want[i] {
			t.Errorf("x = %v stores %d, want %d", x[i], int8(b[i]), want[i])
		}
	}
	// All zeros: the 1e-6 floor.
	if s := Int8PerTokenHead.Encode(b[:3], []float32{0, 0, 0}, 0); s != float32(1e-6) {
		t.Errorf("zero head: scale %v, want 1e-6", s)
	}
}

// TestHadamardBound checks the transform against a float64 transform of
// the same block within the bound of the package doc, on random blocks of
// every size from 1 to 512, and the inverse within twice it.
func TestHadamardBound(t *testing.T) {
	u := 0x1p-24
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(0, 9).Draw(t, "k")
		n := 1 << k
		x := genBlocks(t, n, 1, -60, 60)
		for i := range x {
			if rapid.IntRange(0, 3).Draw(t, "wide") == 0 { // magnitudes far apart in one block
				x[i] *= float32(math.Ldexp(1, rapid.IntRange(-40, 0).Draw(t, "shift")))
			}
		}
		y64 := make([]float64, n)
		var l1 float64
		for i, v := range x {
			y64[i] = float64(v)
			l1 += math.Abs(float64(v))
		}
		for s := 1; s < n; s *= 2 {
			for i := range y64 {
				if i&s == 0 {
					y64[i], y64[i+s] = y64[i]+y64[i+s], y64[i]-y64[i+s]
				}
			}
		}
		rn := 1 / math.Sqrt(float64(n))
		m := float64(k + 2)
		if k%2 == 0 {
			m = float64(k + 1)
		}
		gamma := m * u / (1 - m*u)
		bound := gamma*l1*rn + 0x1p-150
		ref := (float64(k)+2)*0x1p-52*l1*rn + 0x1p-1070 // the float64 transform's own error
		y := append([]float32(nil), x...)
		HadamardN(y, n)
		var l1y float64
		for i := range y {
			if d := math.Abs(float64(y[i]) - y64[i]*rn); d > bound+ref {
				t.Fatalf("n = %d: y[%d] = %g, exact %g: %g away, bound %g", n, i, y[i], y64[i]*rn, d, bound)
			}
			l1y += math.Abs(float64(y[i]))
		}
		InverseHadamard(y)
		for i := range y {
			tol := gamma*l1y*rn + 0x1p-150 + math.Sqrt(float64(n))*(bound+ref) + 0x1p-150
			if d := math.Abs(float64(y[i]) - float64(x[i])); d > tol {
				t.Fatalf("n = %d: inverse gives x[%d] = %g back as %g, %g away, bound %g", n, i, x[i], y[i], d, tol)
			}
		}
	})
}

func TestHadamardBlocks(t *testing.T) {
	for d, want := range map[int]int{128: 128, 64: 64, 96: 32, 80: 16, 192: 64, 576: 64, 256: 256, 7: 1} {
		if got := HadamardBlock(d); got != want {
			t.Errorf("HadamardBlock(%d) = %d, want %d", d, got, want)
		}
	}
	x := make([]float32, 96)
	for i := range x {
		x[i] = float32(i%11) - 5
	}
	a, b := append([]float32(nil), x...), append([]float32(nil), x...)
	Hadamard(a)
	HadamardN(b, 32)
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			t.Fatalf("Hadamard of 96 values is not blocks of 32 at %d", i)
		}
	}
	// n = 2: (a+b, a−b)·fl32(1/√2); n = 4 with exact values.
	two := []float32{3, 1}
	HadamardN(two, 2)
	if two[0] != 4*invSqrt2 || two[1] != 2*invSqrt2 {
		t.Errorf("H2(3, 1) = %v", two)
	}
	four := []float32{1, 2, 3, 4}
	HadamardN(four, 4)
	for i, w := range []float32{5, -1, -2, 0} { // (1+2+3+4, 1−2+3−4, 1+2−3−4, 1−2−3+4)/2
		if four[i] != w {
			t.Errorf("H4(1, 2, 3, 4)[%d] = %v, want %v", i, four[i], w)
		}
	}
}
