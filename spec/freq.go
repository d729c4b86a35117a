package spec

import (
	"math"

	"github.com/ropegen/ropegen/templates/exact"
)

// Frequencies returns θ_i for i = 0 … RotaryDim/2−1 after scaling, the long
// set for longrope (nil otherwise), and the attention factor A. It is the
// only place in ropegen that computes frequencies (docs/contract.md §3).
//
// The default frequencies are θ_i = Base^(−2i/RotaryDim), computed in that
// form (Hugging Face writes 1/Base^(2i/RotaryDim), which can differ in the
// last bit). FreqFactors, when given, divide them first, as ggml's
// freq_factors do; then the scaling type applies:
//
//   - none: θ_i.
//   - linear: θ_i/s.
//   - ntk: the default formula with base·s^(R/(R−2)) for base (then
//     FreqFactors).
//   - yarn: (θ_i/s)·r_i + θ_i·(1−r_i) with the ramp r_i of docs/contract.md §3;
//     A = AttnFactor, else g(s, MScale)/g(s, MScaleAllDim) when both are
//     set, else g(s, 1), where g(s, m) = 0.1·m·ln s + 1 for s > 1 and 1
//     otherwise.
//   - llama3: θ_i where the wavelength 2π/θ_i is below OrigCtx/HighFreqFactor,
//     θ_i/s above OrigCtx/LowFreqFactor, and in between
//     (1−σ)·θ_i/s + σ·θ_i with σ = (OrigCtx/wavelength − LowFreqFactor) /
//     (HighFreqFactor − LowFreqFactor). With equal factors the middle band
//     is empty (a wavelength of exactly OrigCtx/LowFreqFactor keeps θ_i).
//   - longrope: θ_i/ShortFactor[i], and long θ_i/LongFactor[i]; A =
//     AttnFactor, else sqrt(1 + ln s/ln OrigCtx) for s > 1, else 1.
//   - proportional: θ_i/s for i < RopeAngles (s = 1 when Factor is 0), 0
//     for the other pairs, which therefore do not turn.
//
// A is 1 unless stated. Every formula is evaluated in float64, with powers
// and logarithms correctly rounded (exactPow, exactLn) and no fused
// multiply-add, so the results are the same on every machine. An invalid
// spec returns Validate's error.
func Frequencies(s Spec) (freqs, long []float64, attn float64, err error) {
	var sd *Scaled
	if err := s.validate(&sd); err != nil {
		return nil, nil, 0, err
	}
	return sd.Freqs, sd.Long, sd.Attn, nil
}

// Scale validates s and returns its frequencies with the intermediate values
// of its scaling scheme. An invalid spec returns Validate's error.
func Scale(s Spec) (*Scaled, error) {
	var sd *Scaled
	if err := s.validate(&sd); err != nil {
		return nil, err
	}
	return sd, nil
}

// The llama3 bands of a pair (Scaled.Band).
const (
	BandHigh = iota // wavelength < L/high_freq_factor: unchanged
	BandMid         // smoothed
	BandLow         // wavelength > L/low_freq_factor: θ/s
)

// Scaled is docs/contract.md §3 evaluated for a spec, with the intermediate
// values ropegen -explain prints and draws (internal/explain).
type Scaled struct {
	Type    string    // the scaling type (Scaling.Kind)
	Attn    float64   // the attention factor A
	Theta0  []float64 // θ_i before scaling: base^(−2i/R), divided by FreqFactors if given
	Freqs   []float64 // θ_i after scaling
	Long    []float64 // longrope: θ_i with the long factors
	NTKBase float64   // ntk: the scaled base
	Lo, Hi  float64   // yarn: the ramp bounds as used (clamped, +0.001 when equal)
	Ramp    []float64 // yarn: r_i
	Band    []int     // llama3: BandHigh, BandMid or BandLow
	Sigma   []float64 // llama3: σ_i (meaningful in the mid band)
}

// ntkBase is the base of static NTK-aware scaling: base·s^(R/(R−2)).
func ntkBase(base, factor float64, r int) float64 {
	return base * exact.Pow(factor, float64(r)/float64(r-2))
}

// defaultFreqs returns base^(−2i/r) for i < r/2, each divided by ff[i] when
// ff is not empty.
func defaultFreqs(base float64, r int, ff []float64) []float64 {
	f := make([]float64, r/2)
	pow := exact.PowOf(base) // exactPow(base, ·), ln base computed once
	for i := range f {
		f[i] = pow(-float64(2*i) / float64(r))
		if len(ff) > 0 {
			f[i] /= ff[i]
		}
	}
	return f
}

// YaRNMScale is g(s, m) of docs/contract.md §3 (Hugging Face's get_mscale).
func YaRNMScale(s, m float64) float64 {
	if s <= 1 {
		return 1
	}
	return float64(0.1*m*exact.Ln(s)) + 1
}

// LongRoPEAttn is longrope's attention factor for the factor s > 1:
// sqrt(1 + ln s/ln L) (Hugging Face's _compute_longrope_parameters).
func LongRoPEAttn(s float64, origCtx int) float64 {
	return math.Sqrt(1 + exact.Ln(s)/exact.Ln(float64(origCtx)))
}

// scale evaluates docs/contract.md §3 for s, whose parameters validateScaling has
// checked. It fails, with a *SpecError, only when a frequency or the
// attention factor comes out zero, infinite or NaN.
func (s Spec) scale() (*Scaled, error) {
	sc := &s.Scaling
	r := s.Rotary()
	half := r / 2
	out := &Scaled{Type: sc.Kind(), Attn: 1}
	switch s.Axes {
	case AxesVision:
		out.Theta0 = visionFreqs(s.Base, r)
	case AxesPixtral:
		out.Theta0 = pixtralFreqs(s.Base, r)
	default:
		out.Theta0 = defaultFreqs(s.Base, r, sc.FreqFactors)
	}
	for i, t := range out.Theta0 {
		if !finitePos(t) {
			return nil, specErr("freq-factors", sc.FreqFactors[i], "value %d makes θ_%d = %g; frequencies must stay finite and > 0", i+1, i, t)
		}
	}
	factor := sc.Factor
	out.Freqs = make([]float64, half)
	switch out.Type {
	case ScalingNone, ScalingDynamic: // dynamic: the frequencies of a table of at most OrigCtx positions
		copy(out.Freqs, out.Theta0)
	case ScalingLinear:
		for i, t := range out.Theta0 {
			out.Freqs[i] = t / factor
		}
	case ScalingNTK:
		out.NTKBase = ntkBase(s.Base, factor, r)
		out.Freqs = defaultFreqs(out.NTKBase, r, sc.FreqFactors)
	case ScalingYaRN:
		s.yarn(out)
	case ScalingLlama3:
		llama3(sc, out)
	case ScalingProportional:
		f := factor
		if f == 0 {
			f = 1
		}
		for i, t := range out.Theta0 {
			if i < sc.RopeAngles {
				out.Freqs[i] = t / f
			}
		}
	case ScalingLongRoPE:
		out.Long = make([]float64, half)
		for i, t := range out.Theta0 {
			out.Freqs[i] = t / sc.ShortFactor[i]
			out.Long[i] = t / sc.LongFactor[i]
		}
		switch {
		case sc.AttnFactor != 0:
			out.Attn = sc.AttnFactor
		case factor > 1:
			out.Attn = LongRoPEAttn(factor, sc.OrigCtx)
		}
	}
	for i := range out.Freqs {
		if out.Type == ScalingProportional && i >= sc.RopeAngles {
			continue // θ = 0: this pair does not turn
		}
		if t := out.Freqs[i]; !finitePos(t) {
			if out.Type == ScalingLongRoPE {
				return nil, specErr("short-factor", sc.ShortFactor[i], "value %d makes θ_%d = %g; frequencies must stay finite and > 0", i+1, i, t)
			}
			return nil, specErr("factor", factor, "makes θ_%d = %g; frequencies must stay finite and > 0", i, t)
		}
		if out.Long != nil && !finitePos(out.Long[i]) {
			return nil, specErr("long-factor", sc.LongFactor[i], "value %d makes θ_%d = %g; frequencies must stay finite and > 0", i+1, i, out.Long[i])
		}
	}
	if !finitePos(out.Attn) {
		return nil, specErr("attn-factor", out.Attn, "the attention factor must come out finite and > 0")
	}
	return out, nil
}

// yarn fills in out for YaRN (docs/contract.md §3; Hugging Face's
// _compute_yarn_parameters).
func (s Spec) yarn(out *Scaled) {
	sc := &s.Scaling
	r := float64(s.Rotary())
	l := float64(sc.OrigCtx)
	factor := sc.Factor
	// cd is the pair index at which a wavelength fits rot times into L.
	cd := func(rot float64) float64 {
		return r * exact.Ln(l/(rot*2*math.Pi)) / (2 * exact.Ln(s.Base))
	}
	fast, slow := sc.Betas()
	lo, hi := cd(fast), cd(slow)
	if sc.Truncate {
		lo, hi = math.Floor(lo), math.Ceil(hi)
	}
	lo, hi = math.Max(lo, 0), math.Min(hi, r-1)
	if lo == hi {
		hi += 0.001
	}
	out.Lo, out.Hi = lo, hi
	out.Ramp = make([]float64, len(out.Theta0))
	for i, t := range out.Theta0 {
		ri := min(max((float64(i)-lo)/(hi-lo), 0), 1)
		out.Ramp[i] = ri
		out.Freqs[i] = float64((t/factor)*ri) + float64(t*(1-ri))
	}
	switch {
	case sc.AttnFactor != 0:
		out.Attn = sc.AttnFactor
	case sc.MScale != 0 && sc.MScaleAllDim != 0:
		out.Attn = YaRNMScale(factor, sc.MScale) / YaRNMScale(factor, sc.MScaleAllDim)
	default:
		out.Attn = YaRNMScale(factor, 1)
	}
}

// llama3 fills in out for Llama 3.1 scaling (docs/contract.md §3; Hugging Face's
// _compute_llama3_parameters).
func llama3(sc *Scaling, out *Scaled) {
	l := float64(sc.OrigCtx)
	lf, hf := sc.LowFreqFactor, sc.HighFreqFactor
	lowWave, highWave := l/lf, l/hf
	out.Band = make([]int, len(out.Theta0))
	out.Sigma = make([]float64, len(out.Theta0))
	for i, t := range out.Theta0 {
		wave := 2 * math.Pi / t
		switch {
		case wave < highWave:
			out.Band[i], out.Sigma[i] = BandHigh, 1
			out.Freqs[i] = t
		case wave > lowWave:
			out.Band[i], out.Sigma[i] = BandLow, 0
			out.Freqs[i] = t / sc.Factor
		case hf == lf:
			// Equal factors (Llama 4): the smooth band is empty. Only a
			// wavelength of exactly L/lf gets here, where σ would be 0/0
			// (Hugging Face computes NaN); it keeps θ_i, as the high band.
			out.Band[i], out.Sigma[i] = BandHigh, 1
			out.Freqs[i] = t
		default:
			sigma := (l/wave - lf) / (hf - lf)
			out.Band[i], out.Sigma[i] = BandMid, sigma
			out.Freqs[i] = (1-sigma)*t/sc.Factor + float64(sigma*t)
		}
	}
}
