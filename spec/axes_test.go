package spec

import (
	"errors"
	"strings"
	"testing"
)

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
