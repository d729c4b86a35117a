package gen

import "github.com/ropegen/ropegen/spec"

// Plan is a validated spec.Spec reduced to the numbers every emitter needs: the
// spec's Params (shape, frequencies, attention factor, axis map) and the
// table geometry. It is the one description of a kernel that the pure-Go,
// amd64 and arm64 emitters share; none of them looks at the spec.Spec's strings
// again.
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
//
// Every backend runs the same kernels for multi-axis RoPE (Axes > 1): a
// token's table row is assembled from the rows of its positions, C and S of
// pair i from the row of its axis Axis[i].
type Plan struct {
	*spec.Params
	Half   int       // RotaryDim/2: the number of pairs
	RowLen int       // values per table row: 2·RotaryDim
	Norm   *NormPlan // the QK-norm ApplyNormQK fuses with the rotation; nil for none
}

// NewPlan validates s and computes its plan.
func NewPlan(s spec.Spec) (*Plan, error) {
	p, err := spec.Resolve(s)
	if err != nil {
		return nil, err
	}
	return &Plan{Params: p, Half: p.RotaryDim / 2, RowLen: 2 * p.RotaryDim, Norm: newNormPlan(s)}, nil
}
