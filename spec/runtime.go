package spec

// TEMPORARY (engine branch): the spec helper's branch adds Runtime with
// these fields (DESIGN section 3); the lead resolves the merge.

// Runtime is the part of Params a generated package takes at run time:
// convertible to any generated package's Params, rope.Params(p.Runtime()).
type Runtime struct {
	HeadDim       int       // values per head
	RotaryDim     int       // leading values of a head that turn
	Layout        string    // "interleaved" or "neox"
	Freqs         []float64 // θ_i, RotaryDim/2 values, after scaling
	Attn          float64   // the attention factor A, folded into cos and sin
	Axes          int       // positions per token: 1, or the number of axes
	Axis          []uint8   // pair i's axis (RotaryDim/2 values) when Axes > 1; nil when Axes = 1
	LongFreqs     []float64 // longrope: θ_i of tables longer than OrigCtx; nil otherwise
	OrigCtx       int       // longrope and dynamic NTK: L; 0 otherwise
	DynamicFactor float64   // dynamic NTK: s; 0 otherwise
	DynamicBase   float64   // dynamic NTK: the base longer tables' frequencies derive from; 0 otherwise
	NormKind      string    // QK-norm: "" (none), "rms", "gemma" or "l2"
	NormEps       float64   // ε, as the model's config gives it (the default applied)
	NormScope     string    // "head" or "token"; "" without a norm
	NormAfter     bool      // normalize the rotated vector
	SoftmaxScale  float64   // multiply the attention's 1/sqrt(d) by it: YaRN's mscale² for DeepSeek MLA; 1 otherwise
	MaxPositions  int       // max_position_embeddings; 0 when not known
}

// Runtime returns the numbers a generated package's New takes.
func (p *Params) Runtime() Runtime {
	s := p.Spec
	r := Runtime{
		HeadDim:      p.HeadDim,
		RotaryDim:    p.RotaryDim,
		Layout:       s.Layout,
		Freqs:        append([]float64(nil), p.Freqs...),
		Attn:         p.Attn,
		Axes:         p.Axes,
		SoftmaxScale: 1,
		MaxPositions: s.MaxPositions,
	}
	if r.Axes > 1 {
		r.Axis = append([]uint8(nil), p.Axis...)
	}
	if p.LongFreqs != nil {
		r.LongFreqs = append([]float64(nil), p.LongFreqs...)
		r.OrigCtx = s.Scaling.OrigCtx
	}
	if s.Scaling.Kind() == ScalingDynamic {
		r.OrigCtx, r.DynamicFactor, r.DynamicBase = s.Scaling.OrigCtx, s.Scaling.Factor, s.Base
	}
	if n := s.QKNorm; n.Enabled() {
		r.NormKind, r.NormEps, r.NormScope, r.NormAfter = n.Kind, n.Epsilon(), ScopeHead, n.After
		if n.Token() {
			r.NormScope = ScopeToken
		}
	}
	if sc := s.Scaling; sc.Kind() == ScalingYaRN && sc.MScaleAllDim != 0 && sc.Factor > 1 {
		m := YaRNMScale(sc.Factor, sc.MScaleAllDim)
		r.SoftmaxScale = m * m
	}
	return r
}
