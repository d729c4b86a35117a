package spec

import (
	"math"
	"slices"
)

// Runtime is the part of Params a generated package takes at run time:
// one model's numbers as data. Its fields have the names, types and order
// of every generated package's Params, so Go converts between them:
// rope.Params(p.Runtime()). The package's New checks the values.
//
// Every slice is the Runtime's own copy: changing it changes no Params.
type Runtime struct {
	HeadDim   int       // values per head
	RotaryDim int       // leading values of a head that turn
	Layout    string    // "interleaved" or "neox"
	Freqs     []float64 // θ_i, RotaryDim/2 values, after scaling
	Attn      float64   // the attention factor A, folded into cos and sin
	Axes      int       // positions per token: 1, or the number of axes
	Axis      []uint8   // pair i's axis (RotaryDim/2 values) when Axes > 1; nil when Axes = 1
	LongFreqs []float64 // longrope: θ_i of tables longer than OrigCtx; nil otherwise
	OrigCtx   int       // longrope and dynamic NTK: L; 0 otherwise
	// DynamicFactor is dynamic NTK's s; 0 otherwise. A table of n >
	// OrigCtx positions takes θ_i = b^(−2i/R) with
	// b = DynamicBase·((s·n/L) − (s − 1))^(R/(R−2)) (docs/contract.md §3).
	DynamicFactor float64
	DynamicBase   float64 // dynamic NTK: the base longer tables' frequencies derive from; 0 otherwise
	NormKind      string  // QK-norm: "" (none), "rms", "gemma" or "l2"
	NormEps       float64 // ε, as the model's config gives it (the default applied); 0 without a norm
	NormScope     string  // "head" or "token"; "" without a norm
	NormAfter     bool    // normalize the rotated vector
	// QKScale is the whole factor by which the model's attention
	// multiplies q·k before the softmax: scores = QKScale·(q·k).
	// 1/sqrt(HeadDim) for most models; 1/sqrt(qk_nope_head_dim +
	// qk_rope_head_dim)·mscale² for MLA (1/sqrt(192)·(0.1·ln 40 + 1)² for
	// DeepSeek-V3, whose HeadDim here is the rotary part, 64);
	// 1/sqrt(query_pre_attn_scalar) for Gemma 2 and 3; attention_multiplier
	// for Granite; 1 for Gemma 3n and 4, whose q and k are normalized
	// (Spec.QKScale says where each comes from). A model whose attention
	// also scales queries by a factor that is not one number (Ministral
	// 3's llama_4_scaling_beta by position) has a note saying so.
	QKScale      float64
	MaxPositions int // max_position_embeddings; 0 when not known
}

// Runtime returns the run-time numbers of p for a generated package's New
// (docs/contract.md §3 for the frequencies, §10 for the norm): the shape,
// θ and A, the axis map, longrope's long set and dynamic NTK's parameters
// (what a table of n positions needs besides n), the QK-norm with its
// defaults applied (ε DefaultNormEps when Eps is 0, scope ScopeHead when
// Scope is ""), the attention's q·k scale (1/sqrt(HeadDim) when
// Spec.QKScale is 0) and the context length.
func (p *Params) Runtime() Runtime {
	s := &p.Spec
	r := Runtime{
		HeadDim:      p.HeadDim,
		RotaryDim:    p.RotaryDim,
		Layout:       string(s.Layout),
		Freqs:        slices.Clone(p.Freqs),
		Attn:         p.Attn,
		Axes:         p.Axes,
		QKScale:      1 / math.Sqrt(float64(p.HeadDim)),
		MaxPositions: s.MaxPositions,
	}
	if p.Axes > 1 {
		r.Axis = slices.Clone(p.Axis)
	}
	switch s.Scaling.Kind() {
	case ScalingLongRoPE:
		r.LongFreqs = slices.Clone(p.LongFreqs)
		r.OrigCtx = s.Scaling.OrigCtx
	case ScalingDynamic:
		r.OrigCtx = s.Scaling.OrigCtx
		r.DynamicFactor = s.Scaling.Factor
		r.DynamicBase = s.Base
	}
	if n := s.QKNorm; n.Enabled() {
		r.NormKind, r.NormEps, r.NormScope, r.NormAfter = string(n.Kind), n.Epsilon(), ScopeHead, n.After
		if n.Token() {
			r.NormScope = ScopeToken
		}
	}
	if s.QKScale != 0 {
		r.QKScale = s.QKScale
	}
	return r
}
