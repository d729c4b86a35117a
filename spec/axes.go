package spec

import (
	"fmt"
	"strings"

	"github.com/ropegen/ropegen/templates/exact"
)

// Multi-axis schemes: the values of Spec.Axes (docs/contract.md §9). A
// multi-axis token has a position on each of several axes (time, height,
// width) and pair i turns by the position on its axis a_i.
const (
	AxesNone        = ""                  // 1-D RoPE: one position per token
	AxesMRoPE       = "mrope"             // sectioned M-RoPE (Qwen2-VL, Qwen2.5-VL): Sections[0] pairs on axis 0, then Sections[1] on axis 1, …
	AxesInterleaved = "mrope-interleaved" // interleaved M-RoPE (Qwen3-VL): axes 1 and 2 take every third pair
	AxesVision      = "vision"            // 2-D vision RoPE (Qwen2-VL's vision encoder, ggml's vision mode): rows, then columns
	// AxesERNIE is ERNIE-4.5-VL's 3-D RoPE: Sections are (height, width,
	// time) with height = width; pairs below height+width alternate height
	// (even) and width (odd), the rest are time.
	AxesERNIE = "mrope-ernie"
	// AxesPixtral is Pixtral's 2-D vision RoPE: the first half of the pairs
	// rows, the second half columns, rows with the even frequencies
	// base^(−2·2k/R) and columns the odd ones base^(−2(2k+1)/R).
	AxesPixtral = "pixtral"
)

// AxesSchemes lists the multi-axis schemes as the -axes flag documents them.
var AxesSchemes = []string{"none", AxesMRoPE, AxesInterleaved, AxesERNIE, AxesVision, AxesPixtral}

// validateAxes checks Spec.Axes and Spec.Sections against the rest of s,
// which is valid.
func (s Spec) validateAxes() error {
	half := s.Rotary() / 2
	sum := 0
	for _, v := range s.Sections {
		sum += v
	}
	switch s.Axes {
	case AxesNone, "none":
		if len(s.Sections) > 0 {
			return specErr("mrope-section", shown(SectionsString(s.Sections)), "only -axes %s, %s and %s take sections", AxesMRoPE, AxesInterleaved, AxesERNIE)
		}
		return nil
	case AxesMRoPE, AxesInterleaved, AxesERNIE:
		order := "time, height, width"
		if s.Axes == AxesERNIE {
			order = "height, width, time"
		}
		bad := len(s.Sections) != 3 || sum != half
		for _, v := range s.Sections {
			bad = bad || v < 0
		}
		if bad {
			return specErr("mrope-section", shown(SectionsString(s.Sections)), "want three pair counts (%s), each >= 0, summing to RotaryDim/2 = %d", order, half)
		}
		if s.Axes == AxesERNIE && s.Sections[0] != s.Sections[1] {
			return specErr("mrope-section", shown(SectionsString(s.Sections)), "-axes %s alternates height and width pairs: want equal height and width counts", AxesERNIE)
		}
	case AxesVision, AxesPixtral:
		if len(s.Sections) > 0 {
			return specErr("mrope-section", shown(SectionsString(s.Sections)), "-axes %s splits the pairs in halves and takes no sections", s.Axes)
		}
		if half%2 != 0 {
			return specErr("rotary-dim", s.Rotary(), "-axes %s needs RotaryDim/2 even (rows and columns get half the pairs each)", s.Axes)
		}
		if t := s.Scaling.Kind(); t != ScalingNone {
			return specErr("scaling", t, "-axes %s takes no scaling", s.Axes)
		}
		if ff := s.Scaling.FreqFactors; len(ff) > 0 {
			return specErr("freq-factors", shown(listValue(ff)), "-axes %s takes no per-pair factors", s.Axes)
		}
	default:
		return specErr("axes", s.Axes, "axes must be one of %s", quoteAll(AxesSchemes))
	}
	switch t := s.Scaling.Kind(); t {
	case ScalingLongRoPE, ScalingDynamic:
		return specErr("scaling", t, "multi-axis RoPE takes one set of frequencies: not %s", t)
	case ScalingProportional:
		return specErr("scaling", t, "multi-axis RoPE with proportional scaling is no model's: not supported")
	}
	return nil
}

func SectionsString(v []int) string {
	if len(v) == 0 {
		return `""`
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ",")
}

// AxisNames names the axes of s's scheme, axis 0 first.
func (s Spec) AxisNames() []string {
	if s.Axes == AxesVision || s.Axes == AxesPixtral {
		return []string{"row", "column"}
	}
	return []string{"time", "height", "width"}
}

// AxesDescription says in words what the axes of s's scheme are, for a
// generated package's documentation.
func (s Spec) AxesDescription() string {
	names := strings.Join(s.AxisNames(), ", ")
	switch s.Axes {
	case AxesVision:
		return names
	case AxesPixtral:
		return names + "; Pixtral's 2-D RoPE: rows take the even frequencies, columns the odd ones"
	case AxesInterleaved:
		return fmt.Sprintf("%s; interleaved M-RoPE, sections %s", names, SectionsString(s.Sections))
	case AxesERNIE:
		return fmt.Sprintf("%s; ERNIE-4.5-VL's 3-D RoPE, sections %s (height, width, time): pairs below %d alternate height and width, the rest are time", names, SectionsString(s.Sections), s.Sections[0]+s.Sections[1])
	}
	return fmt.Sprintf("%s; M-RoPE, sections %s", names, SectionsString(s.Sections))
}

// FreqsLabel names how a package's Freqs are made, for package verify's
// Kernel.Scaling: the scaling type, or, for unscaled frequencies that are
// not base^(−2i/RotaryDim), what makes them differ ("freq-factors", or the
// axes scheme), so that verify does not recompute them as if they were.
func (s Spec) FreqsLabel() string {
	sc := s.Scaling.Kind()
	switch {
	case sc != ScalingNone:
		return sc
	case len(s.Scaling.FreqFactors) > 0:
		return "freq-factors"
	case s.Axes == AxesVision || s.Axes == AxesPixtral:
		return s.Axes
	}
	return sc
}

// AxisMap returns a_i, the axis of every pair, and the number of axes: nil
// and 1 for 1-D RoPE.
func (s Spec) AxisMap() (axis []uint8, axes int) {
	half := s.Rotary() / 2
	switch s.Axes {
	case AxesMRoPE:
		axis = make([]uint8, 0, half)
		for a, n := range s.Sections {
			for range n {
				axis = append(axis, uint8(a))
			}
		}
		return axis, 3
	case AxesInterleaved:
		// Hugging Face's apply_interleaved_mrope (Qwen3-VL): start from the
		// time axis, then give axis 1 the pairs 1, 4, … below 3·s_1 and axis
		// 2 the pairs 2, 5, … below 3·s_2.
		axis = make([]uint8, half)
		for i := range axis {
			switch {
			case i%3 == 1 && i < 3*s.Sections[1]:
				axis[i] = 1
			case i%3 == 2 && i < 3*s.Sections[2]:
				axis[i] = 2
			}
		}
		return axis, 3
	case AxesERNIE:
		// Ernie4_5_VLMoeTextRotaryEmbedding.recomposition_to_3d: height and
		// width interleaved (stack, flatten) over the first
		// Sections[0]+Sections[1] pairs, then time.
		axis = make([]uint8, half)
		hw := s.Sections[0] + s.Sections[1]
		for i := range hw {
			axis[i] = uint8(1 + i%2)
		}
		return axis, 3
	case AxesVision, AxesPixtral:
		axis = make([]uint8, half)
		for i := half / 2; i < half; i++ {
			axis[i] = 1
		}
		return axis, 2
	}
	return nil, 1
}

// pixtralFreqs returns Pixtral's 2-D frequencies: over R = RotaryDim the
// default θ_j = base^(−2j/R), j = 0 … R/2−1; the row pairs (the first half)
// take the even j and the column pairs the odd j
// (PixtralRotaryEmbedding: freqs[::2] for h, freqs[1::2] for w).
func pixtralFreqs(base float64, r int) []float64 {
	half := r / 2
	f := make([]float64, half)
	pow := exact.PowOf(base)
	for i := range f {
		j := 2*(i%(half/2)) + i/(half/2)
		f[i] = pow(-float64(2*j) / float64(r))
	}
	return f
}

// visionFreqs returns the 2-D vision frequencies: each half of the pairs
// restarts θ = base^(−2k/H), k = 0 … H/2−1, over H = RotaryDim/2 (Hugging
// Face's VisionRotaryEmbedding with dim = head_dim/2, whose row and column
// angles are concatenated).
func visionFreqs(base float64, r int) []float64 {
	half := r / 2
	f := make([]float64, half)
	pow := exact.PowOf(base) // exactPow(base, ·), ln base computed once
	for i := range f {
		f[i] = pow(-float64(2*(i%(half/2))) / float64(half))
	}
	return f
}

// checkDynamic checks dynamic NTK's parameters: a factor s >= 1 and the
// original context L, from which NewTable(n) with n > L takes the base
// base·((s·n/L) − (s − 1))^(R/(R−2)) (Hugging Face's
// _compute_dynamic_ntk_parameters).
func (s Spec) checkDynamic() error {
	sc := &s.Scaling
	if err := checkFactor(sc, ScalingDynamic); err != nil {
		return err
	}
	if sc.Factor < 1 {
		return specErr("factor", sc.Factor, "scaling dynamic needs a factor >= 1")
	}
	if err := checkOrigCtx(sc, ScalingDynamic); err != nil {
		return err
	}
	if len(sc.FreqFactors) > 0 {
		return specErr("freq-factors", listValue(sc.FreqFactors), "scaling dynamic takes no per-pair factors")
	}
	if s.Rotary() < 4 {
		return specErr("rotary-dim", s.Rotary(), "scaling dynamic needs RotaryDim >= 4 (its exponent is R/(R−2))")
	}
	return nil
}
