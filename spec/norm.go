package spec

import (
	"math"
	"slices"
)

// NormKind names a QK-norm (docs/contract.md §10), as the -qk-norm flag
// spells it. The empty string means NormNone.
type NormKind string

// The QK-norm kinds.
const (
	NormNone  NormKind = "none"
	NormRMS   NormKind = "rms"   // y = x·r·w (Qwen3, OLMo 2/3, HunYuan)
	NormGemma NormKind = "gemma" // y = x·r·(1+w) (Gemma 3, Qwen3-Next)
	NormL2    NormKind = "l2"    // y = x·r, no weights (Llama 4)
)

// NormKinds lists the QK-norm kinds in the order the -qk-norm flag documents
// them. A generated package numbers its norm kernels in this order, none
// aside (gen/package.go's variant, templates/rt/kernels.go's normVariant,
// asm/vec's NormVariant.Index: kind·4 + token·2 + after).
var NormKinds = []NormKind{NormNone, NormRMS, NormGemma, NormL2}

// QK-norm scopes: the values of QKNorm.Scope. The empty string means
// ScopeHead.
const (
	ScopeHead  = "head"  // every head normalized alone, HeadDim weights
	ScopeToken = "token" // a token's heads normalized as one vector, Heads·HeadDim weights (OLMo 2/3)
)

// DefaultNormEps is the ε of a QK-norm whose Eps is 0: Qwen3's and Gemma 3's
// rms_norm_eps.
const DefaultNormEps = 1e-6

// NormLanes is the number of partial sums of squares of the canonical
// arithmetic: value j of a normed vector goes to partial sum j mod NormLanes
// (docs/contract.md §10). A token-scope norm needs a HeadDim that is a
// multiple of it.
const NormLanes = 8

// QKNorm selects the normalization of queries and keys that a package's
// ApplyNormQK fuses with the rotation (docs/contract.md §10). The zero value
// is none: no ApplyNormQK.
type QKNorm struct {
	Kind  NormKind // NormNone (or ""), NormRMS, NormGemma or NormL2
	Eps   float64  // ε, added to the mean of the squares; 0 means DefaultNormEps
	Scope string   // ScopeHead (or "") or ScopeToken
	After bool     // normalize the rotated vector instead of rotating the normalized one (Llama 4, HunYuan)
}

// Enabled reports whether n asks for a norm.
func (n QKNorm) Enabled() bool { return n.Kind != "" && n.Kind != NormNone }

// Epsilon returns ε: Eps, or DefaultNormEps when Eps is 0.
func (n QKNorm) Epsilon() float64 {
	if n.Eps == 0 {
		return DefaultNormEps
	}
	return n.Eps
}

// Token reports whether a token's heads are normalized together.
func (n QKNorm) Token() bool { return n.Scope == ScopeToken }

// Weighted reports whether the norm multiplies by per-value weights (rms
// and gemma; l2 has none).
func (n QKNorm) Weighted() bool { return n.Kind == NormRMS || n.Kind == NormGemma }

// validateNorm checks s.QKNorm: a known kind, a finite ε ≥ 0, a known scope,
// and no norm parameter without a norm. A token-scope norm needs a head dim
// that is a whole number of NormLanes values: the partial sums of squares
// index a token's concatenated heads, and the SIMD kernels can keep every
// head's lanes on that indexing only then.
func (s Spec) validateNorm() error {
	n := s.QKNorm
	if !slices.Contains(NormKinds, n.Kind) && n.Kind != "" {
		return specErr("qk-norm", string(n.Kind), "qk-norm must be one of %s", quoteAll(NormKinds))
	}
	if math.IsNaN(n.Eps) || math.IsInf(n.Eps, 0) || n.Eps < 0 {
		return specErr("qk-norm-eps", n.Eps, "qk-norm-eps must be finite and ≥ 0 (0 means %g)", DefaultNormEps)
	}
	if n.Scope != "" && n.Scope != ScopeHead && n.Scope != ScopeToken {
		return specErr("qk-norm-scope", n.Scope, "qk-norm-scope must be %q or %q", ScopeHead, ScopeToken)
	}
	if !n.Enabled() {
		needs := "needs -qk-norm " + joinNames(NormKinds[1:], ", ")
		switch {
		case n.Eps != 0:
			return specErr("qk-norm-eps", n.Eps, "%s", needs)
		case n.Scope != "":
			return specErr("qk-norm-scope", n.Scope, "%s", needs)
		case n.After:
			return specErr("qk-norm-after", true, "%s", needs)
		}
		return nil
	}
	if n.Token() && s.HeadDim%NormLanes != 0 {
		return specErr("qk-norm-scope", n.Scope, "a token-scope norm needs -dim a multiple of %d (got %d): its %d partial sums of squares index a token's heads as one vector, by value index mod %d, and the SIMD kernels keep every head on that indexing only when each head is whole groups of %d",
			NormLanes, s.HeadDim, NormLanes, NormLanes, NormLanes)
	}
	return nil
}

// NormFormula is the per-value formula of kind, for messages and docs.
func NormFormula(kind NormKind) string {
	switch kind {
	case NormRMS:
		return "y_j = fl(fl(x_j·r)·w_j)"
	case NormGemma:
		return "y_j = fl(fl(x_j·r)·fl(1 + w_j))"
	case NormL2:
		return "y_j = fl(x_j·r)"
	}
	return ""
}
