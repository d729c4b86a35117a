package gen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ropegen/ropegen/spec"
)

// NormPlan is a plan's QK-norm (docs/contract.md §10): what ApplyNormQK
// computes, as every emitter reads it. For one normed vector x of n values
// (a head, or with Token a token's heads one after another), in the compute
// type C with float64 for the scale:
//
//	s_k = Σ fl64(x_j²) over j ≡ k (mod 8), in increasing j
//	ss  = ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7))
//	r   = C( 1 / sqrt( fl64(ss/n) + Eps ) )        each float64 op rounded
//	y_j = fl(fl(x_j·r)·w_j)   (rms; gemma: w_j → fl(1 + w_j); l2: fl(x_j·r))
//
// then the rotation of y (docs/contract.md §5), values past RotaryDim
// passing through. With After the rotation comes first and the norm takes
// the rotated vector, kept in C. f16 and bf16 values widen exactly and
// narrow once, at the end. For C = float32 every square is exact in
// float64, so the sum can neither overflow nor lose a small value.
type NormPlan struct {
	Kind     string  // spec.NormRMS, spec.NormGemma or spec.NormL2, as a string
	Eps      float64 // ε
	Token    bool    // a token's heads are normed as one vector
	After    bool    // normalize the rotated vector
	Weighted bool    // rms and gemma multiply by weights; l2 does not
}

// newNormPlan returns the NormPlan of s, or nil when s has no QK-norm.
func newNormPlan(s spec.Spec) *NormPlan {
	n := s.QKNorm
	if !n.Enabled() {
		return nil
	}
	return &NormPlan{Kind: string(n.Kind), Eps: n.Epsilon(), Token: n.Token(), After: n.After, Weighted: n.Weighted()}
}

// normRoundings returns c_y, the roundings after r of one normed value: x·r,
// then ·w (rms), or 1+w and ·(1+w) (gemma).
func (n *NormPlan) normRoundings() int {
	switch spec.NormKind(n.Kind) {
	case spec.NormRMS:
		return 2
	case spec.NormGemma:
		return 3
	}
	return 1
}

// NormBound is the error bound of ApplyNormQK against exact arithmetic, in
// units u of the compute type (docs/contract.md §10): for value j of a
// normed vector of n values,
//
//	|y_j − y_ref_j| ≤ K·u·m_j  (+ one ulp of |y_ref_j| in the storage type for f16 and bf16)
//
// with K Rotated for the rotated values and Pass for those past RotaryDim,
// and the scale m_j, for pair (a, b) holding j, y* the exact normed vector
// and r* its exact scale (w'_j = w_j for rms, 1 + w_j for gemma, 1 for l2):
//
//	before: m_j = A·(|y*_a| + |y*_b|)          rotated;   |y*_j|            passing through
//	after:  m_j = r*·|w'_j|·A·(|x_a| + |x_b|)   rotated;   r*·|w'_j|·|x_j|   passing through
//
// Derivation. r's relative error c_r: float32 compute, 1 (its rounding to
// float32; the float64 steps add (⌈n/8⌉+4)·2⁻⁵³, far below 2⁻²⁴); float64
// compute, ⌈n/8⌉+4: each s_k sums at most ⌈n/8⌉ squares, each rounded,
// with as many rounded additions, the tree three more, then ss/n, +ε,
// sqrt (halving what it takes in) and 1/q one each. Then c_y roundings per
// value (normRoundings). The rotation adds docs/contract.md §6's 4 (the
// table's rounding, two products, one sum, relative to A·(|y_a|+|y_b|)),
// and before the rotation |(A·R·(y − y*))_j| ≤ A·(|y_a − y*_a| + |y_b −
// y*_b|). After it, the rotated vector z is off by at most 4·u·A·(|x_a| +
// |x_b|) per value, which moves ‖z‖ by at most 4√2·u·‖A·R·x‖ and r by at
// most 6·u relatively. One u more covers the second-order terms and the
// float64 reference's own error for float32 compute.
func (p *Plan) NormBound(n int) (rotated, pass int) {
	nb := p.Norm
	cr := 1
	if p.computeType() == "float64" {
		cr = (n+spec.NormLanes-1)/spec.NormLanes + 4
	}
	pass = cr + nb.normRoundings() + 1
	if nb.After {
		pass += 6
	}
	return pass + 4, pass
}

// normDoc is the package doc's paragraphs on ApplyNormQK and Prep: the
// arithmetic of the package's QK-norms and their error bounds.
func (pk *pkg) normDoc() string {
	type variant struct {
		n NormPlan
		p *Plan
	}
	var vs []variant
	for _, sh := range pk.shapes {
		for _, n := range sh.norms {
			if !slices.ContainsFunc(vs, func(v variant) bool { return v.n.variant() == n.variant() }) {
				vs = append(vs, variant{n, sh.withNorm(n)})
			}
		}
	}
	if len(vs) == 0 {
		return ""
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].n.variant() < vs[j].n.variant() })
	var b strings.Builder
	b.WriteString("\n\n")
	if len(vs) == 1 && pk.def != nil {
		nb := vs[0].n
		over, n, weights := "each head", "HeadDim", "HeadDim weights"
		if nb.Token {
			over, n, weights = "a token's heads as one vector", "Heads·HeadDim", "Heads·HeadDim weights"
		}
		if !nb.Weighted {
			weights = "no weights"
		}
		when := "normalizes each query and key head before rotating it"
		if nb.After {
			when = "rotates each query and key head, then normalizes the rotated head"
		}
		if nb.Token {
			when = strings.Replace(strings.Replace(when, "each query and key head", "the query heads and the key heads of each token", 1), "rotated head", "rotated heads", 1)
		}
		b.WriteString(wrapDoc(fmt.Sprintf("ApplyNormQK %s, in one pass, and Prep does the same on its way to the caches: QK-norm %s over %s, ε = Params.NormEps (NormEps by default), %s. For a normed vector x of n = %s values it computes, in the compute type with float64 for r,", when, nb.Kind, over, weights, n)))
	} else {
		var names []string
		for _, v := range vs {
			names = append(names, v.n.name())
		}
		b.WriteString(wrapDoc(fmt.Sprintf("ApplyNormQK normalizes the query and key heads with the Rotary's QK-norm (Params.NormKind over NormScope, ε = NormEps, before the rotation or with NormAfter after it) and rotates them, in one pass, and Prep does the same on its way to the caches. This package has the norms %s (Shapes lists which shape has which; New refuses the others); a Rotary without one is only rotated, as by ApplyQK. For a normed vector x of n values (a head, or with scope token a token's heads one after another) it computes, in the compute type with float64 for r,", strings.Join(names, ", "))))
	}
	b.WriteString("\n\n")
	b.WriteString("\ts_k = Σ x_j² in float64 over j ≡ k (mod 8), in increasing j\n")
	b.WriteString("\tr   = fl(1/sqrt(fl(fl(((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)))/n) + ε))\n")
	var kinds []string
	for _, v := range vs {
		if !slices.Contains(kinds, v.n.Kind) {
			kinds = append(kinds, v.n.Kind)
		}
	}
	for _, k := range kinds {
		tag := ""
		if len(kinds) > 1 {
			tag = "   (" + k + ")"
		}
		fmt.Fprintf(&b, "\t%s%s\n", spec.NormFormula(spec.NormKind(k)), tag)
	}
	b.WriteString("\n")
	then := "and rotates y as above (with NormAfter: x is the head rotated as above, kept in the compute type)."
	if len(vs) == 1 {
		then = "and rotates y as above."
		if vs[0].n.After {
			then = "where x is the head rotated as above, kept in the compute type."
		}
	}
	if pk.dt.name == "f16" || pk.dt.name == "bf16" {
		then += " The values widen exactly and narrow once, at the end."
	}
	b.WriteString(wrapDoc(then + " Every backend returns the same bits. Against exact arithmetic, value j of a vector of n values satisfies"))
	b.WriteString("\n\n")
	p0 := vs[0].p
	ct := ""
	if p0.computeType() == "float64" {
		ct = "⌈n/8⌉+"
	}
	if len(vs) == 1 {
		// K without its ⌈n/8⌉ term (float64 compute), which is printed as such.
		rot, pass := p0.NormBound(0)
		fmt.Fprintf(&b, "\t|y_j − y_ref_j| ≤ K·%s·m_j%s,  K = %s%d (rotated values), %s%d (values past RotaryDim)\n\n", p0.unitRoundoff(), pk.dt.ulp, ct, rot, ct, pass)
	} else {
		fmt.Fprintf(&b, "\t|y_j − y_ref_j| ≤ K·%s·m_j%s\n\n", p0.unitRoundoff(), pk.dt.ulp)
		b.WriteString("with K, for rotated values and for values past RotaryDim,\n\n")
		for _, v := range vs {
			rot, pass := v.p.NormBound(0)
			fmt.Fprintf(&b, "\t%-18s %s%d, %s%d\n", v.n.name(), ct, rot, ct, pass)
		}
		b.WriteString("\n")
	}
	var before, after bool
	for _, v := range vs {
		before, after = before || !v.n.After, after || v.n.After
	}
	var m []string
	if before {
		m = append(m, "m_j = A·(|y*_a| + |y*_b|) for the pair (a, b) holding j (|y*_j| past RotaryDim), y* the exactly normalized vector")
	}
	if after {
		m = append(m, "after the rotation m_j = r*·|w'_j|·A·(|x_a| + |x_b|) (r*·|w'_j|·|x_j| past RotaryDim), r* the exact scale of the exactly rotated vector and w'_j the weight as applied (w_j, 1 + w_j, or 1)")
	}
	b.WriteString(wrapDoc("with " + strings.Join(m, "; ") + ". ropegen's docs/contract.md §10 derives K."))
	return b.String()
}

// name spells the norm as Params does: "rms/head", "l2/head/after", ….
func (n NormPlan) name() string {
	s := n.Kind + "/head"
	if n.Token {
		s = n.Kind + "/token"
	}
	if n.After {
		s += "/after"
	}
	return s
}

// wrapDoc wraps text into lines of at most 76 characters.
func wrapDoc(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		l := len([]rune(w))
		switch {
		case n == 0:
		case n+1+l > 76:
			b.WriteString("\n")
			n = 0
		default:
			b.WriteString(" ")
			n++
		}
		b.WriteString(w)
		n += l
	}
	return b.String()
}
