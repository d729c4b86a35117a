// Package hfref is Hugging Face transformers' RoPE, transcribed from its
// Python into float64 Go for ropegen's tests: the expected frequencies,
// attention factors, pairings and axes that spec and gen are checked
// against. It shares no code with spec or gen, on purpose: a test that
// compared ropegen with itself would prove nothing. torch's float32
// tensors become float64; the formulas keep transformers' own form and
// order of operations.
package hfref

import "math"

// Rope is a RoPE configuration in Hugging Face's own terms, the input of
// the reference implementation below. Zero values mean "None" where
// transformers treats a key as optional.
type Rope struct {
	Dim          int     // rotary dim: int(head_dim * partial_rotary_factor)
	Base         float64 // rope_theta
	RopeType     string  // "default", "linear", "ntk", "yarn", "llama3", "longrope"
	Factor       float64
	MaxPos       int // max_position_embeddings (longrope and yarn factor when missing)
	OrigMax      int // original_max_position_embeddings
	AttnFactor   float64
	BetaFast     float64
	BetaSlow     float64
	MScale       float64
	MScaleAllDim float64
	Truncate     bool
	LowFreq      float64
	HighFreq     float64
	Short, Long  []float64
	FreqFactors  []float64 // ggml's freq_factors: θ_i/f_i, before the scaling
	Partial      float64   // proportional: partial_rotary_factor (0: 1); Dim is then the head dim
}

// The reference: transformers' modeling_rope_utils, transcribed line by line
// into float64 Go (torch's float32 tensors become float64), so that it
// shares no code with freq.go. freq_factors follow ggml: they divide the
// default inverse frequencies.

func Arange(dim int) []float64 { // torch.arange(0, dim, 2)
	a := make([]float64, 0, dim/2)
	for j := 0; j < dim; j += 2 {
		a = append(a, float64(j))
	}
	return a
}

// DefaultInvFreq is _compute_default_rope_parameters:
// inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim)).
func DefaultInvFreq(base float64, dim int, ff []float64) []float64 {
	ar := Arange(dim)
	inv := make([]float64, len(ar))
	for j, a := range ar {
		inv[j] = 1.0 / math.Pow(base, a/float64(dim))
		if ff != nil {
			inv[j] /= ff[j]
		}
	}
	return inv
}

func GetMScale(scale, mscale float64) float64 {
	if scale <= 1 {
		return 1.0
	}
	return 0.1*mscale*math.Log(scale) + 1.0
}

func Reference(p Rope) (inv, long []float64, attn float64) {
	dim, base := p.Dim, p.Base
	switch p.RopeType {
	case "default":
		return DefaultInvFreq(base, dim, p.FreqFactors), nil, 1
	case "linear":
		inv = DefaultInvFreq(base, dim, p.FreqFactors)
		for j := range inv {
			inv[j] /= p.Factor
		}
		return inv, nil, 1
	case "ntk":
		base = base * math.Pow(p.Factor, float64(dim)/float64(dim-2))
		return DefaultInvFreq(base, dim, p.FreqFactors), nil, 1
	case "yarn":
		factor := p.Factor
		orig := p.OrigMax
		if factor == 0 {
			factor = float64(p.MaxPos) / float64(orig)
		}
		attn = p.AttnFactor
		if attn == 0 {
			if p.MScale != 0 && p.MScaleAllDim != 0 {
				attn = GetMScale(factor, p.MScale) / GetMScale(factor, p.MScaleAllDim)
			} else {
				attn = GetMScale(factor, 1)
			}
		}
		betaFast, betaSlow := p.BetaFast, p.BetaSlow
		if betaFast == 0 {
			betaFast = 32
		}
		if betaSlow == 0 {
			betaSlow = 1
		}
		findCorrectionDim := func(numRotations float64, dim int, base float64, maxPos int) float64 {
			return (float64(dim) * math.Log(float64(maxPos)/(numRotations*2*math.Pi))) / (2 * math.Log(base))
		}
		findCorrectionRange := func(lowRot, highRot float64, dim int, base float64, maxPos int, truncate bool) (float64, float64) {
			low := findCorrectionDim(lowRot, dim, base, maxPos)
			high := findCorrectionDim(highRot, dim, base, maxPos)
			if truncate {
				low = math.Floor(low)
				high = math.Ceil(high)
			}
			return math.Max(low, 0), math.Min(high, float64(dim-1))
		}
		linearRampFactor := func(lo, hi float64, n int) []float64 {
			if lo == hi {
				hi += 0.001
			}
			ramp := make([]float64, n)
			for j := range ramp {
				ramp[j] = math.Min(math.Max((float64(j)-lo)/(hi-lo), 0), 1)
			}
			return ramp
		}
		ar := Arange(dim)
		low, high := findCorrectionRange(betaFast, betaSlow, dim, base, orig, p.Truncate)
		ramp := linearRampFactor(low, high, dim/2)
		inv = make([]float64, len(ar))
		for j, a := range ar {
			posFreq := math.Pow(base, a/float64(dim))
			extrapolation := 1.0 / posFreq
			interpolation := 1.0 / (factor * posFreq)
			if p.FreqFactors != nil {
				extrapolation /= p.FreqFactors[j]
				interpolation /= p.FreqFactors[j]
			}
			extrapolationFactor := 1 - ramp[j]
			inv[j] = interpolation*(1-extrapolationFactor) + extrapolation*extrapolationFactor
		}
		return inv, nil, attn
	case "llama3":
		inv = DefaultInvFreq(base, dim, p.FreqFactors)
		oldContextLen := float64(p.OrigMax)
		lowFreqWavelen := oldContextLen / p.LowFreq
		highFreqWavelen := oldContextLen / p.HighFreq
		out := make([]float64, len(inv))
		for j, f := range inv {
			wavelen := 2 * math.Pi / f
			llama := f
			if wavelen > lowFreqWavelen { // torch.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
				llama = f / p.Factor
			}
			smoothFactor := (oldContextLen/wavelen - p.LowFreq) / (p.HighFreq - p.LowFreq)
			smoothed := (1-smoothFactor)*llama/p.Factor + smoothFactor*llama
			isMedium := !(wavelen < highFreqWavelen) && !(wavelen > lowFreqWavelen)
			if isMedium {
				llama = smoothed
			}
			out[j] = llama
		}
		return out, nil, 1
	case "longrope":
		factor := p.Factor
		if factor == 0 {
			factor = float64(p.MaxPos) / float64(p.OrigMax)
		}
		attn = p.AttnFactor
		if attn == 0 {
			if factor <= 1.0 {
				attn = 1.0
			} else {
				attn = math.Sqrt(1 + math.Log(factor)/math.Log(float64(p.OrigMax)))
			}
		}
		ar := Arange(dim)
		inv = make([]float64, len(ar))
		long = make([]float64, len(ar))
		for j, a := range ar {
			shape := a / float64(dim)
			inv[j] = 1.0 / (p.Short[j] * math.Pow(base, shape))
			long[j] = 1.0 / (p.Long[j] * math.Pow(base, shape))
			if p.FreqFactors != nil {
				inv[j] /= p.FreqFactors[j]
				long[j] /= p.FreqFactors[j]
			}
		}
		return inv, long, attn
	case "proportional":
		// _compute_proportional_rope_parameters: head_dim/2 inverse
		// frequencies, the first int(rope_proportion * head_dim // 2) from
		// the default formula over head_dim, the rest zero, all /= factor.
		headDim := dim
		factor := p.Factor
		if factor == 0 {
			factor = 1.0
		}
		ropeProportion := p.Partial
		if ropeProportion == 0 {
			ropeProportion = 1.0
		}
		ropeAngles := int(math.Floor(ropeProportion * float64(headDim) / 2))
		inv = make([]float64, headDim/2)
		for j := 0; j < ropeAngles; j++ {
			inv[j] = 1.0 / math.Pow(base, float64(2*j)/float64(headDim))
			if p.FreqFactors != nil {
				inv[j] /= p.FreqFactors[j]
			}
		}
		for j := range inv {
			inv[j] /= factor
		}
		return inv, nil, 1
	}
	panic("hfReference: unknown rope type " + p.RopeType)
}

// ProportionalAngles is the number of pairs proportional RoPE turns:
// int(rope_proportion * head_dim // 2).
func ProportionalAngles(partial float64, headDim int) int {
	return int(math.Floor(partial * float64(headDim) / 2))
}

// HunYuanAlphaInvFreq is HunYuanDenseV1RotaryEmbedding with rope_type
// "dynamic" and an alpha: base = rope_theta * alpha ** (head_dim /
// (head_dim - 2)), inv_freq = 1 / base ** (arange(0, head_dim, 2) /
// head_dim).
func HunYuanAlphaInvFreq(ropeTheta, alpha float64, headDim int) []float64 {
	base := ropeTheta * math.Pow(alpha, float64(headDim)/float64(headDim-2))
	inv := make([]float64, 0, headDim/2)
	for j := 0; j < headDim; j += 2 {
		inv = append(inv, 1.0/math.Pow(base, float64(j)/float64(headDim)))
	}
	return inv
}

// PixtralAngles is the angle transformers applies to each of the head_dim
// values of a Pixtral patch at (row, col): PixtralRotaryEmbedding's
// inv_freq row for the patch, cat((freqs_h(row), freqs_w(col))) with
// freqs_h = row·freqs[::2] and freqs_w = col·freqs[1::2], then cat with
// itself (rotate_half's layout).
func PixtralAngles(base float64, dim int, row, col float64) []float64 {
	freqs := DefaultInvFreq(base, dim, nil)
	var half []float64
	for j := 0; j < len(freqs); j += 2 {
		half = append(half, row*freqs[j])
	}
	for j := 1; j < len(freqs); j += 2 {
		half = append(half, col*freqs[j])
	}
	return append(half, half...)
}

// ErnieVLAngles is the angle transformers applies to each of the head_dim
// values of an ERNIE-4.5-VL text token at positions (t, h, w):
// Ernie4_5_VLMoeTextRotaryEmbedding's inv_freq_3d (the first h+w
// frequencies pre-rotated: the even ones, then the odd ones), one angle row
// per axis, recomposition_to_3d (split by mrope_section, chunk i from axis
// (i+1) mod 3, height and width stacked and flattened, then time), and
// repeat_interleave(2) for the interleaved rotate_half_text.
func ErnieVLAngles(base float64, dim int, sections []int, pos [3]float64) []float64 {
	inv := DefaultInvFreq(base, dim, nil)
	hw, t := sections[0]+sections[1], sections[2]
	inv3d := make([]float64, len(inv))
	k := 0
	for j := 0; j < len(inv)-t; j += 2 {
		inv3d[k] = inv[j]
		k++
	}
	for j := 1; j < len(inv)-t; j += 2 {
		inv3d[k] = inv[j]
		k++
	}
	copy(inv3d[hw:], inv[len(inv)-t:])
	var freqs [3][]float64
	for a := range 3 {
		for _, f := range inv3d {
			freqs[a] = append(freqs[a], pos[a]*f)
		}
	}
	// split: chunk 0 = [0, s0), chunk 1 = [s0, s0+s1), chunk 2 = the rest.
	fh := freqs[1][:sections[0]]
	fw := freqs[2][sections[0]:hw]
	ft := freqs[0][hw:]
	var out []float64
	for i := range fh {
		out = append(out, fh[i], fh[i], fw[i], fw[i])
	}
	for _, f := range ft {
		out = append(out, f, f)
	}
	return out
}

// GLM4VAngles is the angle transformers applies to each of the rotary
// values of a GLM-4.1V/4.5V text token at positions (t, h, w): the default
// inverse frequencies over the rotary dim, one angle row per axis,
// apply_mrope (split by mrope_section, chunk i from axis i mod 3), cat with
// itself; GLM-4.1V's apply_rotary_pos_emb (interleaved) then takes the
// first half and repeat_interleave(2), GLM-4.5V's uses it as it is.
func GLM4VAngles(base float64, rot int, sections []int, pos [3]float64, interleaved bool) []float64 {
	inv := DefaultInvFreq(base, rot, nil)
	var half []float64
	start := 0
	for i, s := range sections {
		for j := start; j < start+s; j++ {
			half = append(half, pos[i%3]*inv[j])
		}
		start += s
	}
	if !interleaved {
		return append(append([]float64(nil), half...), half...)
	}
	var out []float64
	for _, f := range half {
		out = append(out, f, f)
	}
	return out
}

// DynamicNTKInvFreq is _compute_dynamic_ntk_parameters for a sequence of n
// tokens: base·((factor·n/L) − (factor − 1))^(dim/(dim−2)) for n > L, then
// the default inverse frequencies.
func DynamicNTKInvFreq(base float64, dim int, factor float64, l, n int) []float64 {
	seq := max(n, l)
	base = base * math.Pow((factor*float64(seq)/float64(l))-(factor-1), float64(dim)/float64(dim-2))
	return DefaultInvFreq(base, dim, nil)
}

// Pairs is the pairing of the family's rotation: rotate_half pairs i
// with i+R/2 (cos/sin cat((freqs, freqs))); rotate_every_two, complex
// multiplication of (x[2i], x[2i+1]) and Cohere's/GLM's x[..., ::2] pair
// neighbours.
func Pairs(layout string, rot int) [][2]int {
	p := make([][2]int, rot/2)
	for i := range p {
		if layout == "neox" {
			p[i] = [2]int{i, i + rot/2}
		} else {
			p[i] = [2]int{2 * i, 2*i + 1}
		}
	}
	return p
}

// Axis is the axis of pair i: Qwen2.5-VL's apply_multimodal_rotary_pos_emb
// splits cos/sin (cat((freqs, freqs))) into mrope_section·2 chunks and
// takes chunk k from axis k mod 3; Qwen3-VL's apply_interleaved_mrope starts
// from the time axis and gives axis d (1, 2) the indices d, d+3, … below
// 3·mrope_section[d].
func Axis(kind string, sections []int, i int) uint8 {
	switch kind {
	case "sections":
		end := 0
		for k, s := range sections {
			end += s
			if i < end {
				return uint8(k)
			}
		}
		panic("pair past the sections")
	case "interleaved":
		for _, d := range []int{1, 2} {
			if i%3 == d && i < 3*sections[d] {
				return uint8(d)
			}
		}
		return 0
	}
	panic("no M-RoPE")
}

// AngleTol is the relative tolerance on an angle p·θ_i. Both sides compute
// θ_i in float64 (ropegen with correctly rounded powers, the reference with
// math.Pow and the formula as transformers writes it: 1/base^(2i/R),
// products and quotients in its order), which differ by a few ulps, 2^−52
// each, amplified at most by the exponent ln(base)·2i/R < 20 of the power:
// well under 1e-12. The product by an integer position adds one rounding on
// each side.
const AngleTol = 1e-12
