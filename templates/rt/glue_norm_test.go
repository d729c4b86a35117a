package rt

import "github.com/ropegen/ropegen/verify"

// normOf describes r's QK-norm to verify, with the bound K the package doc
// states for it (K[0] rotated values, K[1] values past RotaryDim; kgroups:
// plus ⌈n/8⌉, float64 compute); nil for a model without one.
func normOf(r *Rotary, K [2]int, kgroups bool) *verify.Norm[elem] {
	p := r.Params()
	if p.NormKind == "" {
		return nil
	}
	n := &verify.Norm[elem]{Kind: p.NormKind, Eps: p.NormEps, Scope: p.NormScope, After: p.NormAfter, K: K, KGroups: kgroups}
	apply := func(t verify.Table[elem], q []elem, qs verify.Strides, qw []comp, k []elem, ks verify.Strides, kw []comp, pos []int32) {
		tableOf(t).ApplyNormQK(q, Strides(qs), qw, k, Strides(ks), kw, textPos(t, pos))
	}
	only := func(x []elem, stride, n int, w []comp) {
		r.kern().normOnly[r.nv](x, stride, n, nil, w, p.NormEps)
	}
	batch := func(b verify.Batch[elem], q []elem, qs verify.Strides, qw []comp, k []elem, ks verify.Strides, kw []comp) {
		batchOf(b).ApplyNormQK(q, Strides(qs), qw, k, Strides(ks), kw, batchOf(b).Pos())
	}
	// The weights are of the compute type: float32, or float64 in an f64 package.
	switch f := any(apply).(type) {
	case func(verify.Table[elem], []elem, verify.Strides, []float32, []elem, verify.Strides, []float32, []int32):
		n.ApplyNormQK32 = f
		n.NormOnly32 = any(only).(func([]elem, int, int, []float32))
		n.BatchApplyNormQK32 = any(batch).(func(verify.Batch[elem], []elem, verify.Strides, []float32, []elem, verify.Strides, []float32))
	case func(verify.Table[elem], []elem, verify.Strides, []float64, []elem, verify.Strides, []float64, []int32):
		n.ApplyNormQK64 = f
		n.NormOnly64 = any(only).(func([]elem, int, int, []float64))
		n.BatchApplyNormQK64 = any(batch).(func(verify.Batch[elem], []elem, verify.Strides, []float64, []elem, verify.Strides, []float64))
	}
	return n
}
