package spec

// Params is a valid Spec resolved into numbers: the shape a kernel is
// generated for (head and rotary dims, pair layout, number of axes) and the
// data its tables are built from (frequencies, attention factor, axis map).
// Runtime returns the part a generated package takes at run time, which
// converts to the package's Params: the shape picks the package's kernels,
// the rest is data.
type Params struct {
	Spec      Spec
	HeadDim   int
	RotaryDim int       // the effective rotary dim: Spec.RotaryDim, or HeadDim when that is 0
	Freqs     []float64 // θ_i after scaling, RotaryDim/2 values
	LongFreqs []float64 // longrope: θ_i with the long factors; nil otherwise
	Attn      float64   // the attention factor A, folded into cos and sin
	// Axes is the number of positions a token has: 1 for 1-D RoPE, 2 or 3
	// for multi-axis RoPE, where pair i turns by the token's position on
	// axis Axis[i] (nil for 1-D).
	Axes int
	Axis []uint8
}

// Resolve validates s and computes its Params.
func Resolve(s Spec) (*Params, error) {
	freqs, long, attn, err := Frequencies(s)
	if err != nil {
		return nil, err
	}
	axis, axes := s.AxisMap()
	return &Params{
		Spec:      s,
		HeadDim:   s.HeadDim,
		RotaryDim: s.Rotary(),
		Freqs:     freqs,
		LongFreqs: long,
		Attn:      attn,
		Axes:      axes,
		Axis:      axis,
	}, nil
}

// Half returns the number of pairs, RotaryDim/2.
func (p *Params) Half() int { return p.RotaryDim / 2 }

// Pair returns the indices (a, b) of pair i within a head
// (docs/contract.md §2): (2i, 2i+1) interleaved, (i, i+RotaryDim/2) neox.
func (p *Params) Pair(i int) (a, b int) {
	if p.Spec.Layout == NeoX {
		return i, i + p.RotaryDim/2
	}
	return 2 * i, 2*i + 1
}
