package attention

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/generated/rope128"
)

// FeatureMap sets dst[i] = elu(x[i]) + 1, that is x+1 for x > 0 and e^x
// otherwise, rounded to float32: the positive feature map of Katharopoulos
// et al. (2020), "Transformers are RNNs", which RoFormer's linear attention
// takes for φ and ϕ. len(dst) must equal len(x).
func FeatureMap(dst, x []float32) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("attention.FeatureMap: len(dst) = %d: want len(x) = %d", len(dst), len(x)))
	}
	for i, v := range x {
		if v > 0 {
			dst[i] = v + 1
		} else {
			dst[i] = float32(math.Exp(float64(v)))
		}
	}
}

// CausalLinear returns causal linear attention with RoPE as RoFormer defines
// it (Su et al., arXiv:2104.09864, §3.3, eq. (19)) for one head:
//
//	out_t = Σ_{j≤t} (R_{p_t} φ(q_t))ᵀ (R_{p_j} ϕ(k_j)) v_j  /  Σ_{j≤t} φ(q_t)ᵀ ϕ(k_j)
//
// with φ = ϕ = FeatureMap. The rotation is in the numerator only: the
// denominator, a sum of products of non-negative features, stays positive,
// while rotated features can give negative numerator terms.
//
// q and k hold n tokens of HeadDim values, v holds n tokens of dv values
// (dv = len(v)/n >= 1), and token t is at position pos[t] (n = len(pos));
// token t attends to tokens 0…t. The result holds n tokens of dv values.
// The query's factor (R_{p_t} φ(q_t))ᵀ does not depend on j, so the numerator is
// (R_{p_t} φ(q_t))ᵀ S_t with the prefix sum S_t = Σ_{j≤t} (R_{p_j} ϕ(k_j)) v_jᵀ,
// a HeadDim×dv matrix, and the denominator φ(q_t)ᵀ z_t with
// z_t = Σ_{j≤t} ϕ(k_j): O(n·HeadDim·dv) work instead of O(n²·HeadDim·dv).
// The sums are kept in float64.
//
// The features are rotated with table.ApplySeq, or, if table is nil, token by
// token with rope128.Rotate (the same bits; any position >= 0).
// CausalLinear panics on inconsistent lengths or a position outside the table.
func CausalLinear(table *rope128.Table, q, k, v []float32, pos []int32) []float32 {
	n := len(pos)
	if len(q) != n*HeadDim {
		panic(fmt.Sprintf("attention.CausalLinear: len(q) = %d: want len(pos)·HeadDim = %d", len(q), n*HeadDim))
	}
	if len(k) != len(q) {
		panic(fmt.Sprintf("attention.CausalLinear: len(k) = %d: want len(q) = %d", len(k), len(q)))
	}
	if n == 0 {
		if len(v) != 0 {
			panic(fmt.Sprintf("attention.CausalLinear: len(v) = %d with len(pos) = 0: want 0", len(v)))
		}
		return nil
	}
	if len(v) == 0 || len(v)%n != 0 {
		panic(fmt.Sprintf("attention.CausalLinear: len(v) = %d: want a positive multiple of len(pos) = %d", len(v), n))
	}
	dv := len(v) / n
	fq, rq := features(table, q, pos)
	fk, rk := features(table, k, pos)

	out := make([]float32, n*dv)
	s := make([]float64, HeadDim*dv) // S_t, row i for feature i
	z := make([]float64, HeadDim)    // z_t
	num := make([]float64, dv)
	for t := range n {
		rkt, fkt, vt := rk[t*HeadDim:][:HeadDim], fk[t*HeadDim:][:HeadDim], v[t*dv:][:dv]
		for i, x := range rkt {
			row := s[i*dv:][:dv]
			for c, y := range vt {
				row[c] += float64(x) * float64(y) // exact product: no fusion question
			}
			z[i] += float64(fkt[i])
		}
		rqt, fqt := rq[t*HeadDim:][:HeadDim], fq[t*HeadDim:][:HeadDim]
		clear(num)
		var den float64
		for i, x := range rqt {
			row := s[i*dv:][:dv]
			for c := range num {
				num[c] += float64(float64(x) * row[c])
			}
			den += float64(float64(fqt[i]) * z[i])
		}
		for c := range num {
			out[t*dv+c] = float32(num[c] / den)
		}
	}
	return out
}

// features returns FeatureMap(x) and a copy of it with token t rotated by
// position pos[t]: with table.ApplySeq, or rope128.Rotate if table is nil.
func features(table *rope128.Table, x []float32, pos []int32) (f, rotated []float32) {
	f = make([]float32, len(x))
	FeatureMap(f, x)
	rotated = append([]float32(nil), f...)
	if table != nil {
		table.ApplySeq(rotated, pos)
		return f, rotated
	}
	for t, p := range pos {
		if p < 0 {
			panic(fmt.Sprintf("attention.CausalLinear: pos[%d] = %d: want pos >= 0", t, p))
		}
		rope128.Rotate(rotated[t*HeadDim:(t+1)*HeadDim], int(p))
	}
	return f, rotated
}
