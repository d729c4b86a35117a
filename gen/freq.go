package gen

import "math"

// validateScaling checks s.Scaling against the rest of s.
func (s Spec) validateScaling() error {
	switch s.Scaling.Type {
	case "", "none":
		return nil
	}
	return specErr("scaling", s.Scaling.Type, "scaling must be none (others are not supported yet)")
}

// Frequencies returns θ_i for i = 0 … RotaryDim/2−1 after scaling, the long
// set for longrope (nil otherwise), and the attention factor A. It is the
// only place in ropegen that computes frequencies (ROPE.md §3).
func Frequencies(s Spec) (freqs, long []float64, attn float64, err error) {
	if err := s.Validate(); err != nil {
		return nil, nil, 0, err
	}
	r := s.rotary()
	freqs = make([]float64, r/2)
	for i := range freqs {
		freqs[i] = math.Pow(s.Base, -float64(2*i)/float64(r))
	}
	return freqs, nil, 1, nil
}
