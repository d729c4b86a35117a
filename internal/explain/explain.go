// Package explain writes what ropegen -explain prints and draws: a spec's
// plan as text (Write, WriteNotes) and as an SVG figure (WriteSVG). It is
// ropegen's, not an engine's: package spec, which engines import at run
// time, holds the numbers, and this package only shows them.
package explain

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ropegen/ropegen/spec"
)

// Write writes the plan for s in human-readable form: header lines with
// the spec, the scaling and its parameters, the attention factor and how it
// was derived, then a table with one row per pair i: θ_i after scaling, its
// wavelength 2π/θ_i in tokens, how many times lower than the unscaled θ_i
// it is, and where the pair falls in the scaling (the yarn ramp value r_i,
// the llama3 band with σ, the longrope factors; for longrope also θ_i and
// the wavelength with the long factors). The text depends only on s. An
// invalid spec returns Validate's error and writes nothing.
func Write(w io.Writer, s spec.Spec) error {
	sd, err := spec.Scale(s)
	if err != nil {
		return err
	}
	var b strings.Builder
	explainHeader(&b, s, sd)
	explainTable(&b, s, sd)
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteNotes is Write with notes about the model first, one
// "note: …" line each: what LoadHFConfigWith's HFInfo says of how the
// kernel sits in the model (which of two RoPEs it is; MLA's rotary part of
// a wider head). An invalid spec returns Validate's error and writes
// nothing.
func WriteNotes(w io.Writer, s spec.Spec, notes []string) error {
	var b strings.Builder
	for _, n := range notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if err := Write(&b, s); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// shortFloat formats f exactly, in the shortest form.
func shortFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func explainHeader(b *strings.Builder, s spec.Spec, sd *spec.Scaled) {
	sc := &s.Scaling
	r := s.Rotary()
	half := r / 2
	pair := "(2i, 2i+1)"
	if s.Layout == spec.NeoX {
		pair = fmt.Sprintf("(i, i+%d)", half)
	}
	fmt.Fprintf(b, "spec: dim %d, rotary-dim %d, base %s, layout %s, dtype %s", s.HeadDim, r, shortFloat(s.Base), s.Layout, s.DType)
	if len(s.Caches) > 0 {
		fmt.Fprintf(b, ", out-dtype %s", spec.CachesString(s.Caches))
	}
	if s.MaxPositions > 0 {
		fmt.Fprintf(b, ", max-positions %d", s.MaxPositions)
	}
	fmt.Fprintf(b, ", pkg %s\n", s.Package)
	if r < s.HeadDim {
		fmt.Fprintf(b, "pairs: %d, pair i = %s; values %d…%d pass through unrotated\n", half, pair, r, s.HeadDim-1)
	} else {
		fmt.Fprintf(b, "pairs: %d, pair i = %s\n", half, pair)
	}
	switch s.Axes {
	case spec.AxesVision:
		fmt.Fprintf(b, "θ⁰_i = base^(−2·(i mod %d)/%d): rows and columns each restart the frequencies\n", half/2, half)
	case spec.AxesPixtral:
		fmt.Fprintf(b, "θ⁰_i = base^(−2j/%d) with j = 2·(i mod %d) for the row pairs (i < %d) and j = 2·(i mod %d) + 1 for the column pairs: rows take the even frequencies, columns the odd ones\n", r, half/2, half/2, half/2)
	default:
		b.WriteString("θ⁰_i = base^(−2i/rotary-dim)")
		if len(sc.FreqFactors) > 0 {
			b.WriteString(" / f_i, f_i = -freq-factors[i] (ggml freq_factors)")
		}
		b.WriteString("\n")
	}
	if axis, axes := s.AxisMap(); axes > 1 {
		fmt.Fprintf(b, "axes: %s, %d positions per token; pair i turns by the position on axis a_i: ", s.Axes, axes)
		for lo := 0; lo < len(axis); {
			hi := lo
			for hi+1 < len(axis) && axis[hi+1] == axis[lo] {
				hi++
			}
			if lo > 0 {
				b.WriteString(", ")
			}
			if lo == hi {
				fmt.Fprintf(b, "%d axis %d", lo, axis[lo])
			} else {
				fmt.Fprintf(b, "%d…%d axis %d", lo, hi, axis[lo])
			}
			lo = hi + 1
		}
		b.WriteString("\n")
	}

	l := shortFloat(float64(sc.OrigCtx))
	switch sd.Type {
	case spec.ScalingNone:
		b.WriteString("scaling: none: θ_i = θ⁰_i\n")
	case spec.ScalingDynamic:
		fmt.Fprintf(b, "scaling: dynamic, factor %s, orig-ctx %s: θ_i = θ⁰_i for tables of at most %s positions; NewTable(n) for n > %s takes the base %s·((%s·n/%s) − %s)^(%d/%d)\n",
			shortFloat(sc.Factor), l, l, l, shortFloat(s.Base), shortFloat(sc.Factor), l, shortFloat(sc.Factor-1), r, r-2)
	case spec.ScalingLinear:
		fmt.Fprintf(b, "scaling: linear, factor %s: θ_i = θ⁰_i/%s\n", shortFloat(sc.Factor), shortFloat(sc.Factor))
	case spec.ScalingProportional:
		f := sc.Factor
		if f == 0 {
			f = 1
		}
		fmt.Fprintf(b, "scaling: proportional, rope-angles %d, factor %s: θ_i = θ⁰_i/%s for i < %d; θ_i = 0 (cos 1, sin 0: the pair does not turn) for i ≥ %d\n", sc.RopeAngles, shortFloat(f), shortFloat(f), sc.RopeAngles, sc.RopeAngles)
	case spec.ScalingNTK:
		fmt.Fprintf(b, "scaling: ntk, factor %s: base %s·%s^(%d/%d) = %s\n", shortFloat(sc.Factor), shortFloat(s.Base), shortFloat(sc.Factor), r, r-2, shortFloat(sd.NTKBase))
	case spec.ScalingYaRN:
		fast, slow := sc.Betas()
		fmt.Fprintf(b, "scaling: yarn, factor %s, orig-ctx %s, beta-fast %s, beta-slow %s, truncate %t\n", shortFloat(sc.Factor), l, shortFloat(fast), shortFloat(slow), sc.Truncate)
		fmt.Fprintf(b, "yarn ramp: lo %s, hi %s; r_i = clamp((i − lo)/(hi − lo), 0, 1); θ_i = (θ⁰_i/s)·r_i + θ⁰_i·(1 − r_i): r 0 extrapolates (θ⁰_i), r 1 interpolates (θ⁰_i/s)\n", shortFloat(sd.Lo), shortFloat(sd.Hi))
	case spec.ScalingLlama3:
		fmt.Fprintf(b, "scaling: llama3, factor %s, orig-ctx %s, low-freq-factor %s, high-freq-factor %s\n", shortFloat(sc.Factor), l, shortFloat(sc.LowFreqFactor), shortFloat(sc.HighFreqFactor))
		if sc.LowFreqFactor == sc.HighFreqFactor {
			// transformers' _compute_llama3_parameters: the medium band is
			// wavelengths neither below L/hf nor above L/lf, empty but for
			// exactly L/lf when the factors are equal (where its σ is 0/0;
			// ropegen keeps θ⁰_i there).
			fmt.Fprintf(b, "llama3 bands: high (θ⁰_i) where wavelength ≤ L/high-freq-factor = %s; low (θ⁰_i/s) where wavelength > L/low-freq-factor = %s; no mid band: the factors are equal\n",
				shortFloat(float64(sc.OrigCtx)/sc.HighFreqFactor), shortFloat(float64(sc.OrigCtx)/sc.LowFreqFactor))
			break
		}
		fmt.Fprintf(b, "llama3 bands: high (θ⁰_i) where wavelength < L/high-freq-factor = %s; low (θ⁰_i/s) where wavelength > L/low-freq-factor = %s; mid between: (1 − σ)·θ⁰_i/s + σ·θ⁰_i, σ = (L/wavelength − %s)/(%s − %s)\n",
			shortFloat(float64(sc.OrigCtx)/sc.HighFreqFactor), shortFloat(float64(sc.OrigCtx)/sc.LowFreqFactor), shortFloat(sc.LowFreqFactor), shortFloat(sc.HighFreqFactor), shortFloat(sc.LowFreqFactor))
	case spec.ScalingLongRoPE:
		factor := "unset"
		if sc.Factor != 0 {
			factor = shortFloat(sc.Factor)
		}
		fmt.Fprintf(b, "scaling: longrope, factor %s, orig-ctx %s: θ_i = θ⁰_i/short_i for positions below %s, θ_i = θ⁰_i/long_i past them\n", factor, l, l)
	}

	how := ""
	switch {
	case sc.AttnFactor != 0:
		how = "given (-attn-factor)"
	case sd.Type == spec.ScalingYaRN && sc.MScale != 0 && sc.MScaleAllDim != 0:
		how = fmt.Sprintf("g(s, mscale %s)/g(s, mscale_all_dim %s), g(s, m) = 0.1·m·ln s + 1", shortFloat(sc.MScale), shortFloat(sc.MScaleAllDim))
	case sd.Type == spec.ScalingYaRN && sc.Factor > 1:
		how = "0.1·ln s + 1"
	case sd.Type == spec.ScalingLongRoPE && sc.Factor > 1:
		how = "sqrt(1 + ln s/ln L)"
	case sd.Type == spec.ScalingYaRN || sd.Type == spec.ScalingLongRoPE:
		how = "1 for s ≤ 1"
	default:
		how = "always 1 for scaling " + sd.Type
	}
	fmt.Fprintf(b, "attention factor: %s (%s), folded into cos and sin\n", shortFloat(sd.Attn), how)
	if f := s.QKScale; f != 0 {
		fmt.Fprintf(b, "q·k scale: %s, not 1/sqrt(dim): the attention multiplies q·k by it (Runtime.QKScale); no kernel of this package applies it\n", shortFloat(f))
	}
	explainNorm(b, s)
	b.WriteString("\n")
}

func explainTable(b *strings.Builder, s spec.Spec, sd *spec.Scaled) {
	sc := &s.Scaling
	wave := func(t float64) float64 { return 2 * math.Pi / t }
	if sd.Type == spec.ScalingLongRoPE {
		fmt.Fprintf(b, "%5s  %16s  %14s  %16s  %14s  %s\n", "i", "θ_i short", "wavelength", "θ_i long", "wavelength", "factors")
		for i, t := range sd.Freqs {
			fmt.Fprintf(b, "%5d  %16.9e  %14.6g  %16.9e  %14.6g  short %s, long %s\n",
				i, t, wave(t), sd.Long[i], wave(sd.Long[i]), shortFloat(sc.ShortFactor[i]), shortFloat(sc.LongFactor[i]))
		}
		return
	}
	fmt.Fprintf(b, "%5s  %16s  %14s  %12s  %s\n", "i", "θ_i", "wavelength", "θ⁰_i/θ_i", "band")
	for i, t := range sd.Freqs {
		band := ""
		switch sd.Type {
		case spec.ScalingNone:
			band = "none"
		case spec.ScalingDynamic:
			band = "dynamic: θ⁰_i up to orig-ctx"
		case spec.ScalingLinear:
			band = "linear: θ⁰_i/s"
		case spec.ScalingProportional:
			band = "proportional: θ⁰_i/s"
			if i >= sc.RopeAngles {
				band = "proportional: θ = 0, does not turn"
			}
		case spec.ScalingNTK:
			band = "ntk: scaled base"
		case spec.ScalingYaRN:
			r := sd.Ramp[i]
			switch r {
			case 0:
				band = "yarn r 0: extrapolated (θ⁰_i)"
			case 1:
				band = "yarn r 1: interpolated (θ⁰_i/s)"
			default:
				band = fmt.Sprintf("yarn r %.6f: ramp", r)
			}
		case spec.ScalingLlama3:
			switch sd.Band[i] {
			case spec.BandHigh:
				band = "llama3 high: unchanged (θ⁰_i)"
			case spec.BandLow:
				band = "llama3 low: θ⁰_i/s"
			default:
				band = fmt.Sprintf("llama3 mid: σ %.6f", sd.Sigma[i])
			}
		}
		if len(sc.FreqFactors) > 0 {
			band += ", f_i " + shortFloat(sc.FreqFactors[i])
		}
		if axis, axes := s.AxisMap(); axes > 1 {
			band += fmt.Sprintf(", axis %d", axis[i])
		}
		fmt.Fprintf(b, "%5d  %16.9e  %14.6g  %12.6g  %s\n", i, t, wave(t), sd.Theta0[i]/t, band)
	}
}

// wave is the wavelength 2π/θ in tokens.
func wave(theta float64) float64 { return 2 * math.Pi / theta }

// explainNorm writes -explain's line about the QK-norm of s, if it has one.
func explainNorm(b *strings.Builder, s spec.Spec) {
	n := s.QKNorm
	if !n.Enabled() {
		b.WriteString("qk-norm: none (no ApplyNormQK)\n")
		return
	}
	over := fmt.Sprintf("each head (n = HeadDim = %d values), weights of HeadDim values", s.HeadDim)
	if n.Token() {
		over = "each token's heads as one vector (n = Heads·HeadDim values), weights of Heads·HeadDim values"
	}
	if n.Kind == spec.NormL2 {
		over = strings.Replace(over, ", weights of HeadDim values", ", no weights", 1)
		over = strings.Replace(over, ", weights of Heads·HeadDim values", ", no weights", 1)
	}
	when := "before the rotation: ApplyNormQK rotates the normalized vector"
	if n.After {
		when = "after the rotation: ApplyNormQK normalizes the rotated vector"
	}
	fmt.Fprintf(b, "qk-norm: %s over %s, ε %s, %s; r = 1/sqrt(Σx_j²/n + ε) in float64, %s\n",
		n.Kind, over, shortFloat(n.Epsilon()), when, spec.NormFormula(n.Kind))
}
