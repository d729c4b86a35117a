package spec

import (
	"errors"
	"strings"
	"testing"
)

// -explain names each pair's axis and the dynamic NTK base rule.
func TestExplainAxesAndDynamic(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Layout, s.Axes, s.Sections = 16, NeoX, AxesInterleaved, []int{4, 2, 2}
	text := explainText(t, s)
	wantContains(t, "interleaved M-RoPE", text,
		"axes: mrope-interleaved, 3 positions per token; pair i turns by the position on axis a_i: 0 axis 0, 1 axis 1, 2 axis 2, 3 axis 0, 4 axis 1, 5 axis 2, 6…7 axis 0\n",
		"none, axis 2\n")
	s.Axes, s.Sections, s.Layout = AxesVision, nil, Interleaved
	wantContains(t, "vision", explainText(t, s),
		"θ⁰_i = base^(−2·(i mod 4)/8): rows and columns each restart the frequencies\n",
		"axes: vision, 2 positions per token; pair i turns by the position on axis a_i: 0…3 axis 0, 4…7 axis 1\n")
	s = DefaultSpec()
	s.Scaling = Scaling{Type: ScalingDynamic, Factor: 2, OrigCtx: 4096, Truncate: true}
	wantContains(t, "dynamic", explainText(t, s),
		"scaling: dynamic, factor 2, orig-ctx 4096: θ_i = θ⁰_i for tables of at most 4096 positions; NewTable(n) for n > 4096 takes the base 10000·((2·n/4096) − 1)^(128/126)\n",
		"dynamic: θ⁰_i up to orig-ctx")
}

// Vision RoPE restarts the frequencies per half: per-pair factors would be
// ignored, so they are refused.
func TestVisionRefusesFreqFactors(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Axes = 8, AxesVision
	s.Scaling.FreqFactors = []float64{1, 2, 3, 4}
	err := s.Validate()
	if err == nil || err.Error() != "-freq-factors 4 values: -axes vision takes no per-pair factors" {
		t.Fatalf("Validate = %v", err)
	}
}

// -explain for the schemes of 2025–26: ERNIE-4.5-VL's alternating height
// and width, Pixtral's even and odd frequencies, proportional RoPE's pairs
// that do not turn.
func TestExplainNewSchemes(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Axes, s.Sections = 16, AxesERNIE, []int{3, 3, 2}
	wantContains(t, "mrope-ernie", explainText(t, s),
		"axes: mrope-ernie, 3 positions per token; pair i turns by the position on axis a_i: 0 axis 1, 1 axis 2, 2 axis 1, 3 axis 2, 4 axis 1, 5 axis 2, 6…7 axis 0\n")
	s = DefaultSpec()
	s.HeadDim, s.Axes, s.Layout = 16, AxesPixtral, NeoX
	wantContains(t, "pixtral", explainText(t, s),
		"θ⁰_i = base^(−2j/16) with j = 2·(i mod 4) for the row pairs (i < 4) and j = 2·(i mod 4) + 1 for the column pairs",
		"axes: pixtral, 2 positions per token; pair i turns by the position on axis a_i: 0…3 axis 0, 4…7 axis 1\n")
	s = DefaultSpec()
	s.HeadDim, s.Layout, s.Scaling = 16, NeoX, Scaling{Type: ScalingProportional, RopeAngles: 2, Factor: 2, Truncate: true}
	wantContains(t, "proportional", explainText(t, s),
		"scaling: proportional, rope-angles 2, factor 2: θ_i = θ⁰_i/2 for i < 2; θ_i = 0 (cos 1, sin 0: the pair does not turn) for i ≥ 2\n",
		"proportional: θ⁰_i/s\n", "proportional: θ = 0, does not turn\n")
}

// The new schemes' refusals name the flag and what is accepted.
func TestNewSchemesRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"ernie unequal", func(s *Spec) { s.Axes, s.Sections = AxesERNIE, []int{30, 20, 14} }, "-mrope-section 30,20,14: -axes mrope-ernie alternates height and width pairs: want equal height and width counts"},
		{"ernie sum", func(s *Spec) { s.Axes, s.Sections = AxesERNIE, []int{20, 20, 20} }, "-mrope-section 20,20,20: want three pair counts (height, width, time), each >= 0, summing to RotaryDim/2 = 64"},
		{"pixtral sections", func(s *Spec) { s.Axes, s.Sections = AxesPixtral, []int{32, 32} }, "-mrope-section 32,32: -axes pixtral splits the pairs in halves and takes no sections"},
		{"pixtral scaling", func(s *Spec) { s.Axes, s.Scaling = AxesPixtral, Scaling{Type: ScalingLinear, Factor: 2} }, `-scaling "linear": -axes pixtral takes no scaling`},
		{"pixtral odd", func(s *Spec) { s.HeadDim, s.Axes = 6, AxesPixtral }, "-rotary-dim 6: -axes pixtral needs RotaryDim/2 even"},
		{"proportional no angles", func(s *Spec) { s.Scaling = Scaling{Type: ScalingProportional} }, "-rope-angles 0: scaling proportional needs the number of pairs that turn: 1…64 (rotary dim / 2)"},
		{"proportional too many", func(s *Spec) { s.Scaling = Scaling{Type: ScalingProportional, RopeAngles: 65} }, "-rope-angles 65: scaling proportional needs the number of pairs that turn: 1…64"},
		{"proportional factor", func(s *Spec) { s.Scaling = Scaling{Type: ScalingProportional, RopeAngles: 4, Factor: -1} }, "-factor -1: factor must be finite and > 0 (0 means 1)"},
		{"rope-angles elsewhere", func(s *Spec) { s.Scaling = Scaling{Type: ScalingLinear, Factor: 2, RopeAngles: 4} }, "-rope-angles 4: scaling linear does not use -rope-angles (it is for proportional)"},
		{"proportional multi-axis", func(s *Spec) {
			s.Axes, s.Sections, s.Scaling = AxesMRoPE, []int{16, 24, 24}, Scaling{Type: ScalingProportional, RopeAngles: 4}
		}, `-scaling "proportional": multi-axis RoPE with proportional scaling is no model's: not supported`},
	} {
		s := DefaultSpec()
		c.mod(&s)
		err := s.Validate()
		var se *SpecError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want %q", c.name, err, c.want)
		}
	}
}
