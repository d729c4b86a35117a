package spec

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"pgregory.net/rapid"
)

// relClose reports whether got is within tol of want, relatively.
func relClose(got, want, tol float64) bool {
	return got == want || math.Abs(got-want) <= tol*math.Abs(want)
}

const refTol = 1e-12

// fataler is what the checks need of *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func compareFreqs(t fataler, name string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d frequencies, want %d", name, len(got), len(want))
	}
	for i := range want {
		if !relClose(got[i], want[i], refTol) {
			t.Fatalf("%s: θ_%d = %.17g, Hugging Face reference %.17g (rel. diff %.3g)", name, i, got[i], want[i], math.Abs(got[i]-want[i])/want[i])
		}
	}
}

// checkAgainstHF compares Frequencies(s) with the reference for p.
func checkAgainstHF(t fataler, s Spec, p hfref.Rope) {
	t.Helper()
	freqs, long, attn, err := Frequencies(s)
	if err != nil {
		t.Fatalf("Frequencies(%+v): %v", s, err)
	}
	wantInv, wantLong, wantAttn := hfref.Reference(p)
	compareFreqs(t, "freqs", freqs, wantInv)
	if (long == nil) != (wantLong == nil) {
		t.Fatalf("long = %v, want nil: %v", long, wantLong == nil)
	}
	if wantLong != nil {
		compareFreqs(t, "long", long, wantLong)
	}
	if !relClose(attn, wantAttn, refTol) {
		t.Fatalf("attention factor %.17g, Hugging Face reference %.17g", attn, wantAttn)
	}
	for i, f := range freqs {
		if s.Scaling.Kind() == ScalingProportional && i >= s.Scaling.RopeAngles {
			if f != 0 {
				t.Fatalf("θ_%d = %g, want 0 (proportional: pairs past %d do not turn)", i, f, s.Scaling.RopeAngles)
			}
			continue
		}
		if !finitePos(f) {
			t.Fatalf("θ_%d = %g", i, f)
		}
	}
}

// hfCase is a testdata config with what it must load as, written out by
// hand from the published config (not from LoadHFConfig).
type hfCase struct {
	file    string
	headDim int
	rotary  int // effective rotary dim
	base    float64
	layout  Layout
	rope    hfref.Rope // dim and base are filled in from above
}

func hfCases(t testing.TB) []hfCase {
	// Phi-3's factor lists, read straight from the JSON.
	var phi3 struct {
		RopeScaling struct {
			Short []float64 `json:"short_factor"`
			Long  []float64 `json:"long_factor"`
		} `json:"rope_scaling"`
	}
	data, err := os.ReadFile(filepath.Join("testdata", "hf", "phi-3-mini-128k-instruct.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &phi3); err != nil {
		t.Fatal(err)
	}
	return []hfCase{
		{"llama-3.1-8b.json", 128, 128, 500000, NeoX,
			hfref.Rope{RopeType: "llama3", Factor: 8, LowFreq: 1, HighFreq: 4, OrigMax: 8192}},
		{"qwen2.5-7b-instruct-yarn.json", 128, 128, 1e6, NeoX,
			hfref.Rope{RopeType: "yarn", Factor: 4, OrigMax: 32768, Truncate: true}},
		{"phi-2.json", 80, 32, 10000, NeoX, hfref.Rope{RopeType: "default"}},
		{"mistral-7b-v0.3.json", 128, 128, 1e6, NeoX, hfref.Rope{RopeType: "default"}},
		{"gpt-j-6b.json", 256, 64, 10000, Interleaved, hfref.Rope{RopeType: "default"}},
		{"gpt-neox-20b.json", 96, 24, 10000, NeoX, hfref.Rope{RopeType: "default"}},
		{"phi-3-mini-128k-instruct.json", 96, 96, 10000, NeoX,
			hfref.Rope{RopeType: "longrope", MaxPos: 131072, OrigMax: 4096, Short: phi3.RopeScaling.Short, Long: phi3.RopeScaling.Long}},
		{"gpt-oss-20b-v5.json", 64, 64, 150000, NeoX,
			hfref.Rope{RopeType: "yarn", Factor: 32, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, Truncate: false}},
	}
}

func TestFrequenciesHFConfigs(t *testing.T) {
	for _, c := range hfCases(t) {
		t.Run(c.file, func(t *testing.T) {
			s, err := LoadHFConfig(filepath.Join("testdata", "hf", c.file))
			if err != nil {
				t.Fatal(err)
			}
			p := c.rope
			p.Dim, p.Base = c.rotary, c.base
			checkAgainstHF(t, s, p)
		})
	}
}

// Published values, as a check on the reference itself.
func TestFrequenciesKnownValues(t *testing.T) {
	load := func(name string) Spec {
		s, err := LoadHFConfig(filepath.Join("testdata", "hf", name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Phi-3-mini-128k: A = sqrt(1 + ln 32/ln 4096) = sqrt(17/12).
	_, long, attn, err := Frequencies(load("phi-3-mini-128k-instruct.json"))
	if err != nil || long == nil || !relClose(attn, math.Sqrt(17.0/12), 1e-15) {
		t.Errorf("phi-3: attn %v, long nil %v, err %v; want sqrt(17/12)", attn, long == nil, err)
	}
	// YaRN: A = 0.1·ln 4 + 1 for Qwen2.5, 0.1·ln 32 + 1 for gpt-oss.
	for name, want := range map[string]float64{
		"qwen2.5-7b-instruct-yarn.json": 0.1*math.Log(4) + 1,
		"gpt-oss-20b-v5.json":           0.1*math.Log(32) + 1,
	} {
		_, _, attn, err := Frequencies(load(name))
		if err != nil || !relClose(attn, want, 1e-15) {
			t.Errorf("%s: attn %v, err %v; want %v", name, attn, err, want)
		}
	}
	// Llama 3.1: pairs 0…28 unchanged (wavelength < 2048), 35… divided
	// by 8 (wavelength > 8192), in between smoothed.
	s := load("llama-3.1-8b.json")
	freqs, long, attn, err := Frequencies(s)
	if err != nil || long != nil || attn != 1 {
		t.Fatalf("llama 3.1: long %v attn %v err %v", long, attn, err)
	}
	for i, f := range freqs {
		theta := roundedPow(t, 500000, 2*i, 128)
		switch {
		case i <= 28 && f != theta:
			t.Errorf("llama 3.1 θ_%d = %g, want unchanged %g", i, f, theta)
		case i >= 35 && f != theta/8:
			t.Errorf("llama 3.1 θ_%d = %g, want θ/8 = %g", i, f, theta/8)
		case i > 28 && i < 35 && !(f < theta && f > theta/8):
			t.Errorf("llama 3.1 θ_%d = %g, want strictly between θ/8 and θ = %g", i, f, theta)
		}
	}
	// No scaling: exactly docs/contract.md's base^(−2i/R).
	freqs, long, attn, err = Frequencies(load("gpt-j-6b.json"))
	if err != nil || long != nil || attn != 1 {
		t.Fatalf("gpt-j: long %v attn %v err %v", long, attn, err)
	}
	for i, f := range freqs {
		if want := roundedPow(t, 10000, 2*i, 64); f != want {
			t.Errorf("gpt-j θ_%d = %v, want %v", i, f, want)
		}
	}
}

// YaRN's corner cases: the +0.001 rule when the bounds meet, bounds
// clamped to 0 and R−1, and a lower bound above the upper one.
func TestFrequenciesYaRNEdges(t *testing.T) {
	for _, c := range []struct {
		name     string
		orig     int
		fast     float64
		slow     float64
		truncate bool
		lo, hi   float64 // the bounds as used
	}{
		{"equal betas, untruncated", 4096, 4, 4, false, -1, -1},
		{"both bounds 0", 6, 32, 1, true, 0, 0.001},
		{"lower bound above R−1", 1 << 35, 32, 1, true, -1, 127},
		{"defaults", 4096, 0, 0, true, 20, 46},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSpec()
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 8, OrigCtx: c.orig, BetaFast: c.fast, BetaSlow: c.slow, Truncate: c.truncate}
			checkAgainstHF(t, s, hfref.Rope{Dim: 128, Base: 10000, RopeType: "yarn", Factor: 8, OrigMax: c.orig,
				BetaFast: c.fast, BetaSlow: c.slow, Truncate: c.truncate})
			sd, err := s.scale()
			if err != nil {
				t.Fatal(err)
			}
			if c.lo >= 0 && (sd.Lo != c.lo || sd.Hi != c.hi) {
				t.Errorf("ramp bounds %v, %v; want %v, %v", sd.Lo, sd.Hi, c.lo, c.hi)
			}
			if c.lo < 0 && c.fast == c.slow && sd.Hi-sd.Lo != 0.001 && !relClose(sd.Hi-sd.Lo, 0.001, 1e-9) {
				t.Errorf("ramp bounds %v, %v; want 0.001 apart", sd.Lo, sd.Hi)
			}
			if c.lo < 0 && c.fast != c.slow && !(sd.Lo > sd.Hi) {
				t.Errorf("ramp bounds %v, %v; want lo > hi", sd.Lo, sd.Hi)
			}
		})
	}
}

// llama3's band edges: a wavelength just below L/high_freq_factor keeps
// θ_i, one just above L/low_freq_factor gets θ_i/s, and σ runs from 0 to 1
// between.
func TestFrequenciesLlama3Edges(t *testing.T) {
	s := DefaultSpec()
	const l = 8192
	wave := func(i int) float64 { return 2 * math.Pi / math.Pow(10000, -float64(2*i)/128) }
	hf := l / (wave(20) * (1 + 1e-9)) // pair 20 just inside the high band
	lf := l / (wave(40) * (1 - 1e-9)) // pair 40 just inside the low band
	s.Scaling = Scaling{Type: ScalingLlama3, Factor: 8, OrigCtx: l, LowFreqFactor: lf, HighFreqFactor: hf}
	freqs, _, _, err := Frequencies(s)
	if err != nil {
		t.Fatal(err)
	}
	theta := func(i int) float64 { return roundedPow(t, 10000, 2*i, 128) }
	if freqs[20] != theta(20) {
		t.Errorf("θ_20 = %v, want unchanged %v", freqs[20], theta(20))
	}
	if freqs[40] != theta(40)/8 {
		t.Errorf("θ_40 = %v, want θ/8 = %v", freqs[40], theta(40)/8)
	}
	for _, i := range []int{21, 39} {
		if !(freqs[i] < theta(i) && freqs[i] > theta(i)/8) {
			t.Errorf("θ_%d = %v, want strictly between θ/8 and θ = %v", i, freqs[i], theta(i))
		}
	}
	// The bands as scale records them, for Explain.
	sd, err := s.scale()
	if err != nil {
		t.Fatal(err)
	}
	if sd.Band[20] != BandHigh || sd.Band[21] != BandMid || sd.Band[39] != BandMid || sd.Band[40] != BandLow {
		t.Errorf("bands %v", sd.Band)
	}
	checkAgainstHF(t, s, hfref.Rope{Dim: 128, Base: 10000, RopeType: "llama3", Factor: 8, OrigMax: l, LowFreq: lf, HighFreq: hf})
}

// TestFrequenciesRapid compares every scaling type with the reference on
// generated parameters.
func TestFrequenciesRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		typ := rapid.SampledFrom(ScalingTypes).Draw(t, "type")
		minRot := 1
		if typ == ScalingNTK {
			minRot = 2
		}
		rot := 2 * rapid.IntRange(minRot, 256).Draw(t, "pairs")
		head := rot + 2*rapid.IntRange(0, 16).Draw(t, "extra pairs")
		base := rapid.Float64Range(1.5, 1e7).Draw(t, "base")
		s := DefaultSpec()
		s.HeadDim, s.RotaryDim, s.Base = head, rot, base
		p := hfref.Rope{Dim: rot, Base: base, RopeType: typ}
		if typ == ScalingNone {
			p.RopeType = "default"
		}
		sc := &s.Scaling
		sc.Type = typ
		half := rot / 2
		list := func(name string, lo, hi float64) []float64 {
			return rapid.SliceOfN(rapid.Float64Range(lo, hi), half, half).Draw(t, name)
		}
		if typ == ScalingDynamic {
			// Frequencies gives a table of at most OrigCtx positions: the
			// default ones (checkDynamic in verify covers longer tables).
			p.RopeType = "default"
			rot = max(rot, 4)
			s.HeadDim, s.RotaryDim = max(head, rot), rot
			p.Dim = rot
			sc.Factor = rapid.Float64Range(1, 64).Draw(t, "factor")
			sc.OrigCtx = rapid.IntRange(1, 1<<20).Draw(t, "orig-ctx")
		} else if rapid.Bool().Draw(t, "freq factors") {
			sc.FreqFactors = list("freq-factors", 0.25, 4)
			p.FreqFactors = sc.FreqFactors
		}
		switch typ {
		case ScalingLinear, ScalingNTK:
			sc.Factor = rapid.Float64Range(1, 64).Draw(t, "factor")
			p.Factor = sc.Factor
		case ScalingYaRN:
			sc.Factor = rapid.Float64Range(0.5, 64).Draw(t, "factor")
			sc.OrigCtx = rapid.IntRange(1, 1<<20).Draw(t, "orig-ctx")
			sc.Truncate = rapid.Bool().Draw(t, "truncate")
			if rapid.Bool().Draw(t, "betas") {
				sc.BetaSlow = rapid.Float64Range(0.25, 8).Draw(t, "beta-slow")
				sc.BetaFast = sc.BetaSlow + rapid.Float64Range(0, 64).Draw(t, "beta-fast - beta-slow")
			}
			switch rapid.IntRange(0, 2).Draw(t, "attention") {
			case 1:
				sc.AttnFactor = rapid.Float64Range(0.5, 2).Draw(t, "attn-factor")
			case 2:
				sc.MScale = rapid.Float64Range(0.1, 2).Draw(t, "mscale")
				sc.MScaleAllDim = rapid.Float64Range(0.1, 2).Draw(t, "mscale-all-dim")
			}
			p.Factor, p.OrigMax, p.Truncate = sc.Factor, sc.OrigCtx, sc.Truncate
			p.BetaFast, p.BetaSlow, p.AttnFactor = sc.BetaFast, sc.BetaSlow, sc.AttnFactor
			p.MScale, p.MScaleAllDim = sc.MScale, sc.MScaleAllDim
		case ScalingLlama3:
			sc.Factor = rapid.Float64Range(1, 64).Draw(t, "factor")
			sc.OrigCtx = rapid.IntRange(1, 1<<20).Draw(t, "orig-ctx")
			sc.LowFreqFactor = rapid.Float64Range(0.25, 8).Draw(t, "low-freq-factor")
			sc.HighFreqFactor = sc.LowFreqFactor + rapid.Float64Range(0.01, 16).Draw(t, "high - low")
			p.Factor, p.OrigMax, p.LowFreq, p.HighFreq = sc.Factor, sc.OrigCtx, sc.LowFreqFactor, sc.HighFreqFactor
		case ScalingLongRoPE:
			sc.ShortFactor = list("short-factor", 1, 8)
			sc.LongFactor = list("long-factor", 1, 128)
			sc.OrigCtx = rapid.IntRange(2, 1<<20).Draw(t, "orig-ctx")
			if rapid.Bool().Draw(t, "given attention factor") {
				sc.AttnFactor = rapid.Float64Range(0.5, 2).Draw(t, "attn-factor")
			} else {
				sc.Factor = rapid.Float64Range(0.5, 64).Draw(t, "factor")
			}
			p.Short, p.Long, p.OrigMax, p.Factor, p.AttnFactor = sc.ShortFactor, sc.LongFactor, sc.OrigCtx, sc.Factor, sc.AttnFactor
			if p.Factor == 0 {
				p.Factor = 1 // unused: the attention factor is given
			}
		case ScalingProportional:
			// The kernel's head is the whole of it: rot values.
			p.Partial = rapid.Float64Range(0.01, 1).Draw(t, "partial_rotary_factor")
			if hfref.ProportionalAngles(p.Partial, rot) == 0 {
				p.Partial = 1
			}
			sc.RopeAngles = hfref.ProportionalAngles(p.Partial, rot)
			if rapid.Bool().Draw(t, "factor") {
				sc.Factor = rapid.Float64Range(0.5, 8).Draw(t, "factor")
				p.Factor = sc.Factor
			}
		}
		checkAgainstHF(t, s, p)
	})
}

// Whatever the parameters, a spec that validates has finite, positive
// frequencies and attention factor; one that does not is a *SpecError from
// Frequencies too.
func TestFrequenciesFiniteRapid(t *testing.T) {
	inRange := rapid.Float64Range(0.5, 4)
	anyFloat := rapid.OneOf(
		inRange, inRange, inRange, inRange, inRange,
		rapid.Float64(),
		rapid.Float64Range(-2, 70),
		rapid.SampledFrom([]float64{0, 1, math.Inf(1), math.NaN(), 1e-310, 1e308, -1}),
	)
	valid, runs := map[string]int{}, 0
	rapid.Check(t, func(t *rapid.T) {
		runs++
		s := DefaultSpec()
		s.HeadDim = 2 * rapid.IntRange(1, 64).Draw(t, "head pairs")
		s.RotaryDim = 2 * rapid.IntRange(0, s.HeadDim/2).Draw(t, "rotary pairs")
		s.Base = rapid.OneOf(rapid.Float64Range(1.0001, 1e6), rapid.Float64Range(1.0001, 1e6), rapid.Float64Range(1.0001, math.MaxFloat64)).Draw(t, "base")
		half := s.Rotary() / 2
		sc := &s.Scaling
		sc.Type = rapid.SampledFrom(append([]string{""}, ScalingTypes...)).Draw(t, "type")
		typ := sc.Kind()
		// Set the parameters the type uses, mostly, and now and then one
		// it does not.
		set := func(flag string) bool {
			for _, p := range scalingParams {
				if p.flag == flag && uses(p.users, typ) {
					return rapid.IntRange(0, 2).Draw(t, flag+" set") > 0
				}
			}
			// rapid favours the ends of a range: pick an inner value.
			return rapid.IntRange(0, 49).Draw(t, flag+" set") == 17
		}
		float := func(flag string, p *float64) {
			if set(flag) {
				*p = anyFloat.Draw(t, flag)
			}
		}
		elems := func(flag string) []float64 {
			n := rapid.SampledFrom([]int{half, half, half, 1}).Draw(t, flag+" length")
			if rapid.IntRange(0, 3).Draw(t, flag+" in range") > 0 {
				return rapid.SliceOfN(inRange, n, n).Draw(t, flag)
			}
			return rapid.SliceOfN(anyFloat, n, n).Draw(t, flag)
		}
		list := func(flag string, p *[]float64) {
			if set(flag) {
				*p = elems(flag)
			}
		}
		float("factor", &sc.Factor)
		if set("orig-ctx") {
			sc.OrigCtx = rapid.IntRange(-2, 1<<20).Draw(t, "orig-ctx")
		}
		float("beta-fast", &sc.BetaFast)
		float("beta-slow", &sc.BetaSlow)
		float("attn-factor", &sc.AttnFactor)
		float("mscale", &sc.MScale)
		float("mscale-all-dim", &sc.MScaleAllDim)
		float("low-freq-factor", &sc.LowFreqFactor)
		float("high-freq-factor", &sc.HighFreqFactor)
		list("short-factor", &sc.ShortFactor)
		list("long-factor", &sc.LongFactor)
		if set("rope-angles") {
			sc.RopeAngles = rapid.IntRange(-1, half+1).Draw(t, "rope-angles")
		}
		if rapid.IntRange(0, 3).Draw(t, "freq-factors set") == 0 {
			sc.FreqFactors = elems("freq-factors")
		}
		sc.Truncate = rapid.Bool().Draw(t, "truncate")

		freqs, long, attn, err := Frequencies(s)
		verr := s.Validate()
		if (err == nil) != (verr == nil) {
			t.Fatalf("Frequencies error %v, Validate error %v", err, verr)
		}
		if err != nil {
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is %T, want *SpecError", err, err)
			}
			return
		}
		valid[typ]++
		if len(freqs) != half {
			t.Fatalf("%d frequencies, want %d", len(freqs), half)
		}
		for i := range freqs {
			if typ == ScalingProportional && i >= sc.RopeAngles {
				if freqs[i] != 0 {
					t.Fatalf("θ_%d = %g, want 0 past rope-angles %d", i, freqs[i], sc.RopeAngles)
				}
				continue
			}
			if !finitePos(freqs[i]) || (long != nil && !finitePos(long[i])) {
				t.Fatalf("θ_%d = %g (long %v)", i, freqs[i], long)
			}
		}
		if (long != nil) != (typ == ScalingLongRoPE) {
			t.Fatalf("long = %v for scaling %q", long, sc.Type)
		}
		if !finitePos(attn) {
			t.Fatalf("attention factor %g", attn)
		}
	})
	for _, typ := range ScalingTypes {
		if runs >= 2000 && valid[typ] == 0 {
			t.Errorf("no valid spec generated for scaling %s: %v", typ, valid)
		}
	}
	t.Logf("valid specs by type: %v", valid)
}

// roundedPow returns base^(−num/den) correctly rounded to float64, found
// without logarithms: θ is the correctly rounded value exactly when
// base^num·(θ − ulp/2)^den < 1 < base^num·(θ + ulp/2)^den, which big.Float
// evaluates exactly (integer base and powers). It searches the few float64
// values around math.Pow's result.
func roundedPow(t *testing.T, base float64, num, den int) float64 {
	t.Helper()
	powInto := func(x *big.Float, n int) *big.Float {
		r := new(big.Float).SetPrec(1 << 14).SetFloat64(1)
		for range n {
			r.Mul(r, x)
		}
		return r
	}
	bp := powInto(new(big.Float).SetPrec(1<<14).SetFloat64(base), num)
	straddles := func(th float64) bool {
		ulp := math.Nextafter(th, math.Inf(1)) - th
		lo := new(big.Float).SetPrec(1 << 14).SetFloat64(th)
		lo.Sub(lo, new(big.Float).SetFloat64(ulp/2))
		hi := new(big.Float).SetPrec(1 << 14).SetFloat64(th)
		hi.Add(hi, new(big.Float).SetFloat64(ulp/2))
		one := big.NewFloat(1)
		l, h := powInto(lo, den), powInto(hi, den)
		l.Mul(l, bp)
		h.Mul(h, bp)
		return l.Cmp(one) < 0 && h.Cmp(one) > 0
	}
	c := math.Pow(base, -float64(num)/float64(den))
	for range 8 {
		if straddles(c) {
			return c
		}
		c = math.Nextafter(c, 0)
	}
	c = math.Pow(base, -float64(num)/float64(den))
	for range 8 {
		c = math.Nextafter(c, math.Inf(1))
		if straddles(c) {
			return c
		}
	}
	t.Fatalf("no float64 within 8 ulps of math.Pow(%v, −%d/%d) is its correct rounding", base, num, den)
	return 0
}
