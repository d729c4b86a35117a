package gen

import (
	"encoding/binary"
	"errors"
	"go/scanner"
	"go/token"
	"io/fs"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/asm/amd64"
)

// bigPi is π to 125 decimal places (about 415 bits).
const bigPi = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679821480865132823066470938"

const refPrec = 320

// halfPi is π/2 to 420 bits.
var halfPi = func() *big.Float {
	pi, _, err := big.ParseFloat(bigPi, 10, 420, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return pi.Quo(pi, big.NewFloat(2))
}()

// refSincos returns sin x and cos x to about 2⁻³⁰⁰ relative, in big.Float:
// x − k·π/2 with 415 bits of π, then Taylor series.
func refSincos(x float64) (sin, cos *big.Float) {
	nf := func() *big.Float { return new(big.Float).SetPrec(refPrec) }
	bx := new(big.Float).SetPrec(420).SetFloat64(x)
	q := new(big.Float).SetPrec(420).Quo(bx, halfPi)
	kf, _ := q.Float64()
	k := math.Round(kf)
	r := new(big.Float).SetPrec(420).Mul(halfPi, big.NewFloat(k))
	r.Sub(bx, r)
	r2 := nf().Mul(r, r)
	// sin r = Σ (−1)^n r^(2n+1)/(2n+1)!, cos r = Σ (−1)^n r^(2n)/(2n)!
	s, c := nf().Set(r), nf().SetInt64(1)
	ts, tc := nf().Set(r), nf().SetInt64(1)
	eps := new(big.Float).SetMantExp(big.NewFloat(1), -refPrec)
	for n := 1; ; n++ {
		ts.Mul(ts, r2)
		ts.Quo(ts, big.NewFloat(float64((2*n)*(2*n+1))))
		ts.Neg(ts)
		tc.Mul(tc, r2)
		tc.Quo(tc, big.NewFloat(float64((2*n-1)*(2*n))))
		tc.Neg(tc)
		s.Add(s, ts)
		c.Add(c, tc)
		if new(big.Float).Abs(tc).Cmp(eps) < 0 && new(big.Float).Abs(ts).Cmp(new(big.Float).Mul(eps, new(big.Float).Abs(s))) <= 0 {
			break
		}
	}
	switch int64(k) & 3 {
	case 0:
		return s, c
	case 1:
		return c, s.Neg(s)
	case 2:
		return s.Neg(s), c.Neg(c)
	}
	return c.Neg(c), s
}

// sincos1 returns sin x and cos x from sincos (x·1 is exact).
func sincos1(x float64) (sin, cos float64) {
	var s, c [1]float64
	sincos(s[:], c[:], x, []float64{1})
	return s[0], c[0]
}

// ulpErr returns |got − exact| in units of the float64 ulp at |exact|.
func ulpErr(got float64, exact *big.Float) float64 {
	e, _ := exact.Float64()
	if e == 0 {
		if got == 0 {
			return 0
		}
		return math.Inf(1)
	}
	ulp := math.Nextafter(math.Abs(e), math.Inf(1)) - math.Abs(e)
	d := new(big.Float).SetPrec(refPrec).Sub(new(big.Float).SetFloat64(got), exact)
	df, _ := d.Float64()
	return math.Abs(df) / ulp
}

// TestSincosSource checks that the source copied into the generated packages
// is this file's sincos.
func TestSincosSource(t *testing.T) {
	src := sincosSource()
	if !strings.HasPrefix(src, "// sincosMax is") || !strings.Contains(src, "func sincos(sin, cos []float64, pos float64, freqs []float64) {") || !strings.HasSuffix(src, "}") {
		t.Fatalf("sincosSource() does not hold sincos:\n%s", src)
	}
}

// TestSincosUlps compares sincos and math.Sincos with the exact values on
// random angles below 2²⁴ and 2³¹ and on the float64 values nearest to
// multiples of π/2 (where the reduction cancels most): sincos must be within
// 3 float64 ulps of the exact value. (Its worst cases, about 2.3 ulps, are a
// half-ulp rounding of the reduced angle r just above a power of two carried
// into a result just below one; math.Sincos, whose reduction is shorter, is
// off by up to 10¹⁰ ulps next to multiples of π/2 beyond 2²⁹.)
func TestSincosUlps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 3000
	if testing.Short() {
		n = 300
	}
	var xs []float64
	for range n {
		xs = append(xs, rng.Float64()*(1<<24), rng.Float64()*sincosMax, rng.Float64()*4, math.Ldexp(rng.Float64(), -rng.IntN(40)))
		k := float64(rng.IntN(1 << 30))
		xs = append(xs, k*(math.Pi/2), math.Nextafter(k*(math.Pi/2), 0), math.Nextafter(k*(math.Pi/2), math.Inf(1)))
	}
	xs = append(xs, 0, 1, math.Pi/4, math.Pi/2, math.Pi, 1<<24-1, sincosMax-1, sincosMax)
	var worst, worstM [2]float64
	var at, atM [2]float64
	for _, x := range xs {
		s, c := sincos1(x)
		ms, mc := math.Sincos(x)
		es, ec := refSincos(x)
		for i, v := range [2]struct {
			got, m float64
			e      *big.Float
		}{{s, ms, es}, {c, mc, ec}} {
			u := ulpErr(v.got, v.e)
			if u > worst[i] {
				worst[i], at[i] = u, x
			}
			if u := ulpErr(v.m, v.e); u > worstM[i] {
				worstM[i], atM[i] = u, x
			}
		}
	}
	t.Logf("%d angles: sincos within %.3g ulp (sin, at %v) and %.3g ulp (cos, at %v); math.Sincos within %.3g (at %v) and %.3g (at %v)",
		len(xs), worst[0], at[0], worst[1], at[1], worstM[0], atM[0], worstM[1], atM[1])
	if worst[0] > 3 || worst[1] > 3 {
		t.Errorf("sincos error %.3g (sin, x = %v), %.3g (cos, x = %v) float64 ulps: want <= 3", worst[0], at[0], worst[1], at[1])
	}
}

// sincosSpecs are the specs whose frequencies the sincos tests use.
func sincosSpecs() map[string]Spec {
	llama := DefaultSpec()
	llama.Base = 500000
	llama.Scaling = Scaling{Type: ScalingLlama3, Factor: 8, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	yarn := DefaultSpec()
	yarn.Base = 1000000
	yarn.Scaling = Scaling{Type: ScalingYaRN, Factor: 4, OrigCtx: 32768, Truncate: true}
	phi := DefaultSpec()
	phi.HeadDim, phi.RotaryDim = 80, 32
	return map[string]Spec{"default": DefaultSpec(), "llama3": llama, "yarn": yarn, "phi2": phi}
}

// TestSincosFloat32 is ROPE.md §4 for the float32 tables: over every
// frequency of a few specs and many positions below 2²⁴ (all of 0…8191, the
// powers of two and their neighbours, 2²⁴−1, and random ones), the table
// values float32(A·cos φ) and float32(A·sin φ) from sincos must equal those
// from math.Sincos, or differ only where the exact value lies within
// 2⁻⁴⁰ (relative) of the midpoint between the two float32 candidates; there
// the exact value decides which of the two is correctly rounded, and the
// count of each is logged.
func TestSincosFloat32(t *testing.T) {
	specs := sincosSpecs()

	var pos []int
	for p := range 8192 {
		pos = append(pos, p)
	}
	for e := 13; e <= 24; e++ {
		pos = append(pos, 1<<e-1, 1<<e, 1<<e+1)
	}
	pos = append(pos, 131071, 1<<24-2)
	rng := rand.New(rand.NewPCG(3, 4))
	nr := 100000
	if testing.Short() {
		nr = 5000
	}
	for range nr {
		pos = append(pos, rng.IntN(1<<24))
	}
	slices.Sort(pos)
	pos = slices.Compact(pos)
	if pos[len(pos)-1] >= 1<<24 {
		pos = pos[:len(pos)-1] // 2²⁴ itself is past the promise
	}

	for _, name := range []string{"default", "llama3", "yarn", "phi2"} {
		s := specs[name]
		freqs, _, attn, err := Frequencies(s)
		if err != nil {
			t.Fatal(err)
		}
		var values, mismatches, oursRight, mathRight int
		var worstD float64
		sins, coss := make([]float64, len(freqs)), make([]float64, len(freqs))
		for _, p := range pos {
			sincos(sins, coss, float64(p), freqs)
			for j, th := range freqs {
				x := float64(p) * th
				s1, c1 := sins[j], coss[j]
				s2, c2 := math.Sincos(x)
				for i, v := range [2][2]float64{{c1, c2}, {s1, s2}} {
					values++
					a, b := float32(attn*v[0]), float32(attn*v[1])
					if a == b {
						continue
					}
					mismatches++
					es, ec := refSincos(x)
					exact := ec
					if i == 1 {
						exact = es
					}
					exact.Mul(exact, new(big.Float).SetFloat64(attn))
					mid := (float64(a) + float64(b)) / 2 // exact: adjacent float32s
					if math.Nextafter32(a, b) != b {
						t.Fatalf("%s: pos %d, θ %v: float32 values %v and %v are not neighbours", name, p, th, a, b)
					}
					d := new(big.Float).SetPrec(refPrec).Sub(exact, new(big.Float).SetFloat64(mid))
					df, _ := d.Float64()
					rel := math.Abs(df / mid)
					worstD = max(worstD, rel)
					ef, _ := exact.Float64()
					if float32(ef) == a {
						oursRight++
					} else {
						mathRight++
					}
					if rel > 0x1p-40 {
						t.Errorf("%s: pos %d, θ %v (%s): float32 %v from sincos, %v from math.Sincos, exact value %g is %.3g (relative) from the rounding boundary",
							name, p, th, [2]string{"cos", "sin"}[i], a, b, ef, rel)
					}
				}
			}
		}
		t.Logf("%s (A = %v): %d positions × %d frequencies, %d float32 values: %d differ from math.Sincos's, all within %.3g (relative) of a rounding boundary; sincos rounds correctly in %d of them, math.Sincos in %d",
			name, attn, len(pos), len(freqs), values, mismatches, worstD, oursRight, mathRight)
	}
}

// TestFillConstants checks that the amd64 fill kernels use the constants of
// sincos: every float literal of sincosSource but sincosMax is one of
// amd64.FillConsts, and every FillConsts value but 2/π and 1 (an expression
// and an integer literal there) is one of its float literals. (That the
// kernels give sincos's bits is checked by the verify suite, which compares
// Rotate on every backend with the pure Go one.)
func TestFillConstants(t *testing.T) {
	src := []byte(sincosSource())
	fs := token.NewFileSet()
	var sc scanner.Scanner
	sc.Init(fs.AddFile("sincos", -1, len(src)), src, nil, 0)
	lits := map[float64]bool{}
	for {
		_, tok, lit := sc.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.FLOAT {
			v, err := strconv.ParseFloat(lit, 64)
			if err != nil {
				t.Fatal(err)
			}
			lits[math.Abs(v)] = true
		}
	}
	delete(lits, sincosMax) // the Go wrappers check it, not the kernels
	want := map[float64]bool{}
	for _, v := range amd64.FillConsts {
		if v != 2/math.Pi && v != 1 {
			want[math.Abs(v)] = true
		}
	}
	for v := range lits {
		if !want[v] {
			t.Errorf("sincos has the constant %v; amd64.FillConsts does not", v)
		}
	}
	for v := range want {
		if !lits[v] {
			t.Errorf("amd64.FillConsts has %v; sincos does not", v)
		}
	}
}

// TestSincosAcrossArchs checks that sincos returns the same float64 bits on
// every architecture: the first run writes the bits of sin and cos for a
// fixed set of angles to the file $ROPEGEN_SINCOS_BITS, a later run (make
// arm64 runs it under qemu after an amd64 run) compares its own bits with
// them. The angles are pos·θ_i for the frequencies of four specs at
// positions 0…1023, 2^k−1, 2^k, 2^k+1 below 2^24 and random positions below
// 2^24: angles below sincosMax. (Past it sincos calls math.Sincos, whose
// bits differ between amd64 and arm64: this test found cos(8589934593·θ_0)
// one ulp apart for the yarn spec.) The file starts with the θ_i of the
// run that wrote it: a comparing run checks its own Frequencies against
// them (they once came from math.Pow and differed in the last bit), then
// uses the file's, so that a difference there does not hide one in sincos.
func TestSincosAcrossArchs(t *testing.T) {
	path := os.Getenv("ROPEGEN_SINCOS_BITS")
	if path == "" {
		t.Skip("SKIPPED: set ROPEGEN_SINCOS_BITS to a file path (make arm64 does, for amd64 and then arm64)")
	}
	var freqs []float64
	specs := sincosSpecs()
	for _, name := range []string{"default", "llama3", "yarn", "phi2"} {
		f, _, _, err := Frequencies(specs[name])
		if err != nil {
			t.Fatal(err)
		}
		freqs = append(freqs, f...)
	}
	want, err := os.ReadFile(path)
	exists := err == nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	var buf []byte
	for i := range freqs {
		if exists && len(want) >= 8*len(freqs) {
			w := math.Float64frombits(binary.LittleEndian.Uint64(want[8*i:]))
			if freqs[i] != w {
				t.Errorf("%s: frequency %d of the four specs is %v, the run that wrote %s got %v", runtime.GOARCH, i, freqs[i], path, w)
			}
			freqs[i] = w
		}
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(freqs[i]))
	}
	var pos []float64
	for p := range 1024 {
		pos = append(pos, float64(p))
	}
	for k := 10; k < 24; k++ {
		pos = append(pos, float64(int64(1)<<k-1), float64(int64(1)<<k), float64(int64(1)<<k+1))
	}
	pos = append(pos, 1<<24-1)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		pos = append(pos, float64(rng.IntN(1<<24)))
	}
	s, c := make([]float64, len(freqs)), make([]float64, len(freqs))
	for _, p := range pos {
		sincos(s, c, p, freqs)
		for i := range freqs {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(s[i]))
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(c[i]))
		}
	}
	n := (len(buf) - 8*len(freqs)) / 16
	if !exists {
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s: wrote the bits of %d sines and cosines to %s", runtime.GOOS, runtime.GOARCH, n, path)
		return
	}
	if len(want) != len(buf) {
		t.Fatalf("%s holds %d bytes, want %d: written by another version of this test?", path, len(want), len(buf))
	}
	for i := 8 * len(freqs); i < len(buf); i += 8 {
		if g, w := binary.LittleEndian.Uint64(buf[i:]), binary.LittleEndian.Uint64(want[i:]); g != w {
			n := (i - 8*len(freqs)) / 16
			p, th := pos[n/len(freqs)], freqs[n%len(freqs)]
			t.Fatalf("%s: %s(%v·%v) = %v (%#016x), the run that wrote %s got %v (%#016x)", runtime.GOARCH,
				[2]string{"sin", "cos"}[(i-8*len(freqs))/8%2], p, th, math.Float64frombits(g), g, path, math.Float64frombits(w), w)
		}
	}
	t.Logf("%s/%s: %d sines and cosines bit-identical to those in %s", runtime.GOOS, runtime.GOARCH, n, path)
}
