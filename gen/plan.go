package gen

// Plan is a validated Spec reduced to the numbers every emitter needs. It is
// the one description of a kernel that the pure-Go, amd64 and arm64 emitters
// share; none of them looks at the Spec's strings again.
//
// Table rows. A table holds one row of 2·RotaryDim values of the compute
// type per position: C[0:RotaryDim] then S[RotaryDim:2·RotaryDim]. For pair i
// with indices (a, b) and angle φ = p·θ_i:
//
//	C[a] = C[b] = A·cos φ
//	S[a] = −A·sin φ,  S[b] = +A·sin φ
//
// so that for every rotated index j with partner q(j) (the other index of its
// pair) the forward rotation is y_j = fl(fl(x_j·C[j]) + fl(x_q·S[j])) and the
// inverse y_j = fl(fl(x_j·C[j]) − fl(x_q·S[j])). Negation is exact and
// rounding symmetric, so this is bit for bit docs/contract.md §5's
// y_a = fl(fl(x_a·c) − fl(x_b·s)), y_b = fl(fl(x_b·c) + fl(x_a·s)).
// SIMD backends load C and S as vectors; the partner is x with adjacent lanes
// swapped (interleaved) or the other half of the rotary block (neox).
type Plan struct {
	Spec      Spec
	HeadDim   int
	RotaryDim int
	Half      int       // RotaryDim/2: the number of pairs
	Freqs     []float64 // θ_i after scaling
	LongFreqs []float64 // longrope: θ_i with the long factors; nil otherwise
	Attn      float64   // attention factor A, folded into the table
	RowLen    int       // values per table row: 2·RotaryDim
	// Axes is the number of positions a token has: 1 for 1-D RoPE, 2 or 3
	// for multi-axis RoPE, where pair i turns by the token's position on
	// axis Axis[i] (nil for 1-D). Every backend runs the same kernels: a
	// multi-axis token's table row is assembled from the rows of its
	// positions, C and S of pair i from the row of its axis.
	Axes int
	Axis []uint8
}

// NewPlan validates s and computes its plan.
func NewPlan(s Spec) (*Plan, error) {
	freqs, long, attn, err := Frequencies(s)
	if err != nil {
		return nil, err
	}
	r := s.rotary()
	axis, axes := s.axisOf()
	return &Plan{
		Spec:      s,
		HeadDim:   s.HeadDim,
		RotaryDim: r,
		Half:      r / 2,
		Freqs:     freqs,
		LongFreqs: long,
		Attn:      attn,
		RowLen:    2 * r,
		Axes:      axes,
		Axis:      axis,
	}, nil
}

// Pair returns the indices (a, b) of pair i within a head.
func (p *Plan) Pair(i int) (a, b int) {
	if p.Spec.Layout == NeoX {
		return i, i + p.Half
	}
	return 2 * i, 2*i + 1
}

// Partner returns the other index of the pair that rotated index j belongs
// to, and whether j is the pair's first (a) member.
func (p *Plan) Partner(j int) (q int, first bool) {
	if p.Spec.Layout == NeoX {
		if j < p.Half {
			return j + p.Half, true
		}
		return j - p.Half, false
	}
	return j ^ 1, j%2 == 0
}
