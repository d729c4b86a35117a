package rt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// bigPi is π to 125 decimal places (about 415 bits): TestMachinPi checks
// machinPi against it.
const bigPi = "3.1415926535897932384626433832795028841971693993751058209749445923078164062862089986280348253421170679821480865132823066470938"

const refPrec = 320

// piPrec is the precision of machinPi: enough to reduce any finite float64
// (up to 2¹⁰²⁴) and keep 400 bits of the remainder.
const piPrec = 1500

// machinPi is π to piPrec bits by Machin's formula
// π = 16·atan(1/5) − 4·atan(1/239), each arctangent by its series.
var machinPi = func() *big.Float {
	const prec = piPrec + 64
	atanInv := func(n int64) *big.Float {
		nf := new(big.Float).SetPrec(prec).SetInt64(n)
		n2 := new(big.Float).SetPrec(prec).Mul(nf, nf)
		p := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), nf) // n^−(2k+1)
		sum, t := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec)
		for k := int64(0); p.MantExp(nil) > -prec-8; k++ {
			t.Quo(p, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			p.Quo(p, n2)
		}
		return sum
	}
	a := atanInv(5)
	a.Mul(a, new(big.Float).SetInt64(16))
	b := atanInv(239)
	b.Mul(b, new(big.Float).SetInt64(4))
	return new(big.Float).SetPrec(piPrec).Sub(a, b)
}()

// halfPi is π/2 to piPrec bits.
var halfPi = new(big.Float).SetPrec(piPrec).Quo(machinPi, new(big.Float).SetInt64(2))

// TestMachinPi checks machinPi against the decimal digits of bigPi.
func TestMachinPi(t *testing.T) {
	pi, _, err := big.ParseFloat(bigPi, 10, 420, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	d := new(big.Float).SetPrec(piPrec).Sub(machinPi, pi)
	if d.Sign() != 0 && d.MantExp(nil) > -410 {
		t.Fatalf("machinPi − π (125 digits) = %g: want below 2⁻⁴¹⁰", d)
	}
}

// refSincos returns sin x and cos x to about 2⁻³⁰⁰ relative, in big.Float,
// for any finite x: r = x − k·π/2 with k = round(x·2/π) an integer of any
// size and π to piPrec bits (so r keeps 400 bits even for x near 2¹⁰²⁴),
// then Taylor series.
func refSincos(x float64) (sin, cos *big.Float) {
	nf := func() *big.Float { return new(big.Float).SetPrec(refPrec) }
	bx := new(big.Float).SetFloat64(x)
	prec := uint(max(bx.MantExp(nil), 0) + 420)
	if prec > piPrec {
		panic("refSincos: machinPi is too short")
	}
	q := new(big.Float).SetPrec(prec).Quo(bx, halfPi)
	q.Add(q, big.NewFloat(0.5))
	k, acc := q.Int(nil) // toward zero: floor for q >= 0
	if q.Sign() < 0 && acc != big.Exact {
		k.Sub(k, big.NewInt(1))
	}
	r := new(big.Float).SetPrec(prec).SetInt(k)
	r.Mul(r, halfPi)
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
	switch new(big.Int).And(k, big.NewInt(3)).Int64() {
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
func sincosSpecs() map[string]spec.Spec {
	llama := spec.DefaultSpec()
	llama.Base = 500000
	llama.Scaling = spec.Scaling{Type: spec.ScalingLlama3, Factor: 8, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4}
	yarn := spec.DefaultSpec()
	yarn.Base = 1000000
	yarn.Scaling = spec.Scaling{Type: spec.ScalingYaRN, Factor: 4, OrigCtx: 32768, Truncate: true}
	phi := spec.DefaultSpec()
	phi.HeadDim, phi.RotaryDim = 80, 32
	return map[string]spec.Spec{"default": spec.DefaultSpec(), "llama3": llama, "yarn": yarn, "phi2": phi}
}

// TestSincosFloat32 is docs/contract.md §4 for the float32 tables: over every
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
		freqs, _, attn, err := spec.Frequencies(s)
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

// TestSincosAcrossArchs checks that sincos and sincosDD return the same
// float64 bits on every architecture: the first run writes the bits of sin
// and cos for a fixed set of angles to the file $ROPEGEN_SINCOS_BITS, a
// later run (make arm64 runs it under qemu after an amd64 run) compares its
// own bits with them. The angles are pos·θ_i for the frequencies of four
// specs at positions 0…1023, 2^k−1, 2^k, 2^k+1 up to 2^40 and random
// positions below 2^24, for sincos (past sincosMax it calls sincosDD; it
// once called math.Sincos there, whose bits differ between amd64 and
// arm64: this test found cos(8589934593·θ_0) one ulp apart for the yarn
// spec) and for sincosDD; then, for sincosDD, random float64s of every
// binade and the values nearest to multiples of π/2 (hardAngles). The file
// starts with the θ_i of the run that wrote it: a comparing run checks its
// own spec.Frequencies against them (they once came from math.Pow and differed
// in the last bit), then uses the file's, so that a difference there does
// not hide one in sincos.
func TestSincosAcrossArchs(t *testing.T) {
	path := os.Getenv("ROPEGEN_SINCOS_BITS")
	if path == "" {
		t.Skip("SKIPPED: set ROPEGEN_SINCOS_BITS to a file path (make arm64 does, for amd64 and then arm64)")
	}
	var freqs []float64
	specs := sincosSpecs()
	for _, name := range []string{"default", "llama3", "yarn", "phi2"} {
		f, _, _, err := spec.Frequencies(specs[name])
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
	for k := 10; k <= 40; k++ {
		pos = append(pos, float64(int64(1)<<k-1), float64(int64(1)<<k), float64(int64(1)<<k+1))
	}
	pos = append(pos, 1<<24-1)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		pos = append(pos, float64(rng.IntN(1<<24)))
	}
	// Each record: which function, the angle (pos·θ for sincos), sin, cos.
	type rec struct {
		fn       string
		pos, th  float64
		sin, cos float64
	}
	var recs []rec
	s, c := make([]float64, len(freqs)), make([]float64, len(freqs))
	for _, p := range pos {
		sincos(s, c, p, freqs)
		for i, th := range freqs {
			recs = append(recs, rec{"sincos", p, th, s[i], c[i]})
		}
	}
	for _, p := range pos {
		for _, th := range freqs {
			x := float64(p * th)
			s, c := sincosDD(x)
			recs = append(recs, rec{"sincosDD", p, th, s, c})
		}
	}
	xs := hardAngles(4)
	for range 100000 {
		xs = append(xs, math.Ldexp(1+rng.Float64(), rng.IntN(2046)-1022))
	}
	for _, x := range xs {
		s, c := sincosDD(x)
		recs = append(recs, rec{"sincosDD", x, 1, s, c})
	}
	for _, r := range recs {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(r.sin))
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(r.cos))
	}
	if !exists {
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%s: wrote the bits of %d sines and cosines to %s", runtime.GOOS, runtime.GOARCH, len(recs), path)
		return
	}
	if len(want) != len(buf) {
		t.Fatalf("%s holds %d bytes, want %d: written by another version of this test?", path, len(want), len(buf))
	}
	bad := 0
	for i := 8 * len(freqs); i < len(buf); i += 8 {
		if g, w := binary.LittleEndian.Uint64(buf[i:]), binary.LittleEndian.Uint64(want[i:]); g != w {
			r := recs[(i-8*len(freqs))/16]
			if bad++; bad <= 10 {
				t.Errorf("%s: %s: %s(%v·%v) = %v (%#016x), the run that wrote %s got %v (%#016x)", runtime.GOARCH, r.fn,
					[2]string{"sin", "cos"}[(i-8*len(freqs))/8%2], r.pos, r.th, math.Float64frombits(g), g, path, math.Float64frombits(w), w)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%s: %d of %d values differ from those in %s", runtime.GOARCH, bad, 2*len(recs), path)
	}
	t.Logf("%s/%s: %d sines and cosines (sincos and sincosDD) bit-identical to those in %s", runtime.GOOS, runtime.GOARCH, len(recs), path)
}

// twoOverPi is 2/π to piPrec bits.
var twoOverPi = new(big.Float).SetPrec(piPrec).Quo(new(big.Float).SetPrec(piPrec).SetInt64(2), machinPi)

// TestSincosDDConstants recomputes sincosDD's constants from machinPi and
// refSincos: the words of 2/π (after a zero word), π/2 in two parts and
// the first in 26 + 23 bits, π/2 in six Cody–Waite parts, and the table of
// sin(j/64), cos(j/64) as a 26-bit head and a rounded tail.
func TestSincosDDConstants(t *testing.T) {
	f := new(big.Float).SetPrec(piPrec).Set(twoOverPi)
	two64 := new(big.Float).SetMantExp(big.NewFloat(1), 64)
	for i, got := range sincosDDTwoOverPi {
		if i == 0 {
			if got != 0 {
				t.Errorf("sincosDDTwoOverPi[0] = %#x, want 0", got)
			}
			continue
		}
		f.Mul(f, two64)
		w, _ := f.Uint64() // truncated: the next 64 bits
		f.Sub(f, new(big.Float).SetUint64(w))
		if got != w {
			t.Errorf("sincosDDTwoOverPi[%d] = %#016x, want %#016x", i, got, w)
		}
	}
	hp, _ := halfPi.Float64()
	hpl, _ := new(big.Float).SetPrec(piPrec).Sub(halfPi, new(big.Float).SetFloat64(hp)).Float64()
	if sincosDDPi2 != hp || sincosDDPi2L != hpl {
		t.Errorf("π/2 = %x + %x, want %x + %x", sincosDDPi2, sincosDDPi2L, hp, hpl)
	}
	if sincosDDPi2H+sincosDDPi2M != sincosDDPi2 || sigBits(sincosDDPi2H) > 26 || sigBits(sincosDDPi2M) > 26 {
		t.Errorf("sincosDDPi2H = %x (%d bits), sincosDDPi2M = %x (%d bits): want at most 26 bits each, summing to %x",
			sincosDDPi2H, sigBits(sincosDDPi2H), sincosDDPi2M, sigBits(sincosDDPi2M), sincosDDPi2)
	}
	// Cody–Waite: P1…P5 the leading 22 bits of what is left of π/2, P6
	// the rest rounded.
	rest := new(big.Float).SetPrec(piPrec).Set(halfPi)
	for i, got := range []float64{sincosDDP1, sincosDDP2, sincosDDP3, sincosDDP4, sincosDDP5, sincosDDP6} {
		w, _ := new(big.Float).SetPrec(22).SetMode(big.ToZero).Set(rest).Float64()
		if i == 5 {
			w, _ = rest.Float64()
		}
		if got != w {
			t.Errorf("sincosDDP%d = %x, want %x", i+1, got, w)
		}
		rest.Sub(rest, new(big.Float).SetFloat64(got))
	}
	if rest.MantExp(nil) > -167 {
		t.Errorf("π/2 − (sincosDDP1 + … + sincosDDP6) = %g: want below 2⁻¹⁶⁷", rest)
	}
	round26 := func(v *big.Float) float64 {
		r, _ := new(big.Float).SetPrec(26).SetMode(big.ToNearestEven).Set(v).Float64()
		return r
	}
	for j, row := range sincosDDTable {
		es, ec := refSincos(float64(j) / 64)
		for k, e := range []*big.Float{es, ec} {
			h := round26(e)
			l, _ := new(big.Float).SetPrec(refPrec).Sub(e, new(big.Float).SetFloat64(h)).Float64()
			if row[2*k] != h || row[2*k+1] != l {
				t.Errorf("sincosDDTable[%d][%d:%d] = %x, %x; want %x, %x", j, 2*k, 2*k+2, row[2*k], row[2*k+1], h, l)
			}
		}
	}
	if n := len(sincosDDTable); n-1 != int(math.Round(64*math.Pi/4)) {
		t.Errorf("sincosDDTable has %d rows, want j = 0…round(64·π/4) = 50", n)
	}
}

// sigBits returns the number of significant bits of v.
func sigBits(v float64) int {
	if v == 0 {
		return 0
	}
	m := math.Float64bits(v)&(1<<52-1) | 1<<52
	return 53 - bits.TrailingZeros64(m)
}

// hardAngles returns, for every step-th binade [2^e, 2^(e+1)) from e = −1
// to 1023, float64 values x nearest to a multiple of π/2 (those where the
// reduction of x cancels the most): with x = m·2^(e−52) and β the fraction
// of 2^(e−52)·2/π, the m in [2⁵², 2⁵³) that make ‖m·β‖ small are multiples
// of the denominators of β's convergents and its semiconvergents; it keeps,
// per binade, the two with the smallest ‖m·β‖.
func hardAngles(step int) []float64 {
	lo, hi := new(big.Int).Lsh(big.NewInt(1), 52), new(big.Int).Lsh(big.NewInt(1), 53)
	var xs []float64
	for e := -1; e <= 1023; e += step {
		prec := uint(max(e, 0) + 300)
		alpha := new(big.Float).SetPrec(prec).SetMantExp(twoOverPi, e-52)
		ai, _ := alpha.Int(nil)
		beta := new(big.Float).SetPrec(prec).Sub(alpha, new(big.Float).SetInt(ai))
		// frac(m·β) distance to the nearest integer, as a float64.
		dist := func(m *big.Int) float64 {
			p := new(big.Float).SetPrec(prec).SetInt(m)
			p.Mul(p, beta)
			pi, _ := p.Int(nil)
			p.Sub(p, new(big.Float).SetInt(pi))
			d, _ := p.Float64()
			return min(d, 1-d)
		}
		var cands []*big.Int
		inRange := func(m *big.Int) bool { return m.Cmp(lo) >= 0 && m.Cmp(hi) < 0 }
		qPrev, q := big.NewInt(0), big.NewInt(1)
		x := new(big.Float).SetPrec(prec).Set(beta)
		for q.Cmp(hi) < 0 && x.Sign() != 0 {
			x.Quo(new(big.Float).SetPrec(prec).SetInt64(1), x)
			a, _ := x.Int(nil)
			x.Sub(x, new(big.Float).SetInt(a))
			// Multiples of q from 2⁵² on, then semiconvergents qPrev + t·q.
			c := new(big.Int).Add(lo, new(big.Int).Sub(q, big.NewInt(1)))
			c.Quo(c, q)
			for range 2 {
				if m := new(big.Int).Mul(c, q); inRange(m) {
					cands = append(cands, m)
				}
				c.Add(c, big.NewInt(1))
			}
			tt := new(big.Int).Sub(lo, qPrev)
			tt.Add(tt, new(big.Int).Sub(q, big.NewInt(1)))
			tt.Quo(tt, q)
			if tt.Sign() > 0 && tt.Cmp(a) <= 0 {
				if m := new(big.Int).Add(qPrev, new(big.Int).Mul(tt, q)); inRange(m) {
					cands = append(cands, m)
				}
			}
			qPrev, q = q, new(big.Int).Add(new(big.Int).Mul(a, q), qPrev)
		}
		slices.SortFunc(cands, func(a, b *big.Int) int { return cmpFloat(dist(a), dist(b)) })
		cands = slices.CompactFunc(cands, func(a, b *big.Int) bool { return a.Cmp(b) == 0 })
		for _, m := range cands[:min(2, len(cands))] {
			xs = append(xs, math.Ldexp(float64(m.Int64()), e-52))
		}
	}
	return xs
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSincosDDUlps compares sincosDD with the exact values (refSincos, 320
// bits), through both of its reductions (below and beyond 2³¹), on random
// angles of every size, the angles pos·θ of real frequency
// sets and of θ up to 200 with pos < 2²⁴, the float64 values nearest to
// multiples of π/2 below 2⁴⁰ and in every binade (hardAngles, and Muller's
// worst case 6381956970095103·2⁷⁹⁷), tiny and subnormal angles. sincosDD's
// unrounded result is within about 2⁻⁶⁴ relative of the exact value (the
// largest terms: the rounding of b² in cos b − 1, about 2⁻¹⁵·2⁻⁵², and of
// the sums and the reduction, each below 2⁻⁶⁷), so every result must be
// within 0.5 + 2⁻¹¹ ulp of the exact value (the test allows 2⁻¹⁰), and at
// most a fraction 2⁻¹⁰ of them (the chance that the exact value lies within
// 2⁻⁶⁴ relative of a midpoint) may differ from the correctly rounded value;
// the counts are logged, with math.Sincos's beside them.
func TestSincosDDUlps(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	n, step := 4000, 1
	if testing.Short() {
		n, step = 400, 16
	}
	var xs []float64
	for range n {
		xs = append(xs, rng.Float64()*math.Pi/4, rng.Float64()*8, rng.Float64()*(1<<24), rng.Float64()*(1<<40),
			math.Ldexp(1+rng.Float64(), rng.IntN(2046)-1022), math.Ldexp(rng.Float64(), -rng.IntN(1070)))
		k := float64(rng.Int64N(1 << 40))
		kx, _ := new(big.Float).SetPrec(piPrec).Mul(halfPi, new(big.Float).SetFloat64(k)).Float64()
		xs = append(xs, kx, math.Nextafter(kx, 0), math.Nextafter(kx, math.Inf(1)))
		th := math.Ldexp(1+rng.Float64(), -rng.IntN(24)) * 200 / 2
		xs = append(xs, float64(float64(rng.IntN(1<<24))*th))
	}
	specs := sincosSpecs()
	for _, name := range []string{"default", "llama3", "yarn", "phi2"} {
		freqs, _, _, err := spec.Frequencies(specs[name])
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range freqs {
			for _, p := range []int{1, 17, 4095, 131071, 1<<24 - 1, rng.IntN(1 << 24)} {
				xs = append(xs, float64(float64(p)*th))
			}
		}
	}
	hard := hardAngles(step)
	xs = append(xs, hard...)
	xs = append(xs, 0x1.6ac5b262ca1ffp+849, // 6381956970095103·2⁷⁹⁷ (Muller, Elementary Functions)
		0, math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-600, math.Pi/4, math.Nextafter(math.Pi/4, 0), 1, math.Pi/2, math.Pi, 1<<24-1, 1<<31, 1<<40, math.MaxFloat64)

	var worst, worstM [2]float64
	var at [2]float64
	var wrong, wrongM, total int
	minR := math.Inf(1)
	for _, x := range xs {
		s, c := sincosDD(x)
		ms, mc := math.Sincos(x)
		es, ec := refSincos(x)
		for i, v := range [2]struct {
			got, m float64
			e      *big.Float
		}{{s, ms, es}, {c, mc, ec}} {
			total++
			if u := ulpErr(v.got, v.e); u > worst[i] {
				worst[i], at[i] = u, x
			}
			if u := ulpErr(v.m, v.e); u > worstM[i] {
				worstM[i] = u
			}
			r, _ := v.e.Float64()
			if v.got != r {
				wrong++
			}
			if v.m != r {
				wrongM++
			}
		}
		// |r| for the angles next to multiples of π/2: the smaller of |sin|, |cos|.
		ef, _ := es.Float64()
		cf, _ := ec.Float64()
		if x >= math.Pi/4 {
			minR = min(minR, math.Abs(ef), math.Abs(cf))
		}
	}
	t.Logf("%d angles (%d from hardAngles, the closest to a multiple of π/2 %.3g = 2^%.1f away): sincosDD within %.6f ulp (sin, at %v) and %.6f ulp (cos, at %v), %d of %d values not correctly rounded; math.Sincos within %.3g and %.3g ulp, %d not correctly rounded",
		len(xs), len(hard), minR, math.Log2(minR), worst[0], at[0], worst[1], at[1], wrong, total, worstM[0], worstM[1], wrongM)
	if lim := 0.5 + 0x1p-10; worst[0] > lim || worst[1] > lim {
		t.Errorf("sincosDD error %.6f (sin, x = %v), %.6f (cos, x = %v) ulps: want <= 0.5 + 2⁻¹⁰", worst[0], at[0], worst[1], at[1])
	}
	if wrong > total>>10 {
		t.Errorf("sincosDD: %d of %d values not correctly rounded: want at most 2⁻¹⁰ of them", wrong, total)
	}
	if minR > 0x1p-60 {
		t.Errorf("the angles come no closer than %g to a multiple of π/2: want Muller's case, 2^-61", minR)
	}
}

// TestSincosDDSpecial checks sincosDD's symmetry and special arguments
// bit for bit: sin(−x) = −sin x and cos(−x) = cos x, (±0, 1) at ±0, (x, 1)
// below 2⁻²⁷ (where sin x = x and cos x = 1 correctly rounded), NaN (with
// math.NaN's bits) at ±Inf and NaN; and that sincos gives sincosDD's bits
// from sincosMax on.
func TestSincosDDSpecial(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		x := math.Ldexp(1+rng.Float64(), rng.IntN(2046)-1022)
		s, c := sincosDD(x)
		ns, nc := sincosDD(-x)
		if math.Float64bits(ns) != math.Float64bits(-s) || math.Float64bits(nc) != math.Float64bits(c) {
			t.Fatalf("sincosDD(%v) = %v, %v; sincosDD(−x) = %v, %v", x, s, c, ns, nc)
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), math.SmallestNonzeroFloat64, -0x1p-1030, 0x1p-1022, 0x1.fffffp-28, -0x1p-40} {
		s, c := sincosDD(x)
		if math.Float64bits(s) != math.Float64bits(x) || c != 1 {
			t.Errorf("sincosDD(%v) = %v, %v: want %v, 1", x, s, c, x)
		}
	}
	nan := math.Float64bits(math.NaN())
	for _, x := range []float64{math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN()} {
		s, c := sincosDD(x)
		if math.Float64bits(s) != nan || math.Float64bits(c) != nan {
			t.Errorf("sincosDD(%v) = %#x, %#x: want NaN %#x", x, math.Float64bits(s), math.Float64bits(c), nan)
		}
	}
	var xs []float64
	for range 2000 {
		xs = append(xs, sincosMax+rng.Float64()*(1<<40))
	}
	xs = append(xs, sincosMax, math.Inf(1), math.NaN())
	for _, x := range xs {
		s, c := sincos1(x)
		ws, wc := sincosDD(x)
		if math.Float64bits(s) != math.Float64bits(ws) || math.Float64bits(c) != math.Float64bits(wc) {
			t.Fatalf("sincos(%v) = %v, %v; sincosDD gives %v, %v", x, s, c, ws, wc)
		}
	}
}

// TestSincosNoFMA compiles the source that the generated packages get
// (sincos.go as package templates copies it, in a package of its own) for every
// architecture whose Go compiler fuses a product into the next sum or
// difference, and requires sincos, sincosDD and sincosDDReduce to contain
// no fused multiply-add instruction: a product without its float64()
// conversion shows up here even where it changes too few results for
// TestSincosAcrossArchs to see (a dropped conversion in sincosDD's
// double-double tail changes about one result in a million). A control
// function, a*b + c, must fuse on each of them, so that the check is seen
// to work.
func TestSincosNoFMA(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: compiles sincos for six architectures")
	}
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module sincosfma\n\ngo 1.24\n"), 0o644))
	// The nonce keeps go build from answering from its cache, which would
	// print no listing.
	src, err := templates.Copy("rt/sincos.go", &templates.Data{Package: "p"})
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "p.go"), src, 0o644))
	control := fmt.Sprintf("package p\n\nconst nonce = %d\n\nfunc control(a, b, c float64) float64 { return a*b + c }\n", time.Now().UnixNano())
	must(t, os.WriteFile(filepath.Join(dir, "control.go"), []byte(control), 0o644))
	fused := regexp.MustCompile(`\sV?FN?M(ADD|SUB)\w*\s`)
	header := regexp.MustCompile(`^sincosfma\.(\w+) STEXT`)
	for _, env := range [][]string{{"GOARCH=arm64"}, {"GOARCH=ppc64le"}, {"GOARCH=s390x"}, {"GOARCH=riscv64"}, {"GOARCH=loong64"}, {"GOARCH=amd64", "GOAMD64=v3"}} {
		out := goCmd(t, dir, env, "build", "-gcflags=-S", ".")
		fn := ""
		count := map[string]int{}
		for _, l := range strings.Split(out, "\n") {
			if m := header.FindStringSubmatch(l); m != nil {
				fn = m[1]
				count[fn] += 0
			} else if fused.MatchString(l) {
				count[fn]++
				if fn == "sincos" || fn == "sincosDD" || fn == "sincosDDReduce" {
					t.Errorf("%v: %s has a fused multiply-add: %s", env, fn, strings.TrimSpace(l))
				}
			}
		}
		for _, fn := range []string{"sincos", "sincosDD", "sincosDDReduce"} {
			if _, ok := count[fn]; !ok {
				t.Errorf("%v: no listing of %s in go build -gcflags=-S:\n%s", env, fn, out)
			}
		}
		if count["control"] == 0 {
			t.Errorf("%v: a*b + c did not fuse: the check cannot see a fused multiply-add", env)
		}
	}
}

// goCmd runs go with args in dir, env added to the environment, and
// returns its output; it fails t if go fails.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
