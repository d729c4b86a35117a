package rt

// ApplyNormQK normalizes the heads of q and of k with the Rotary's QK-norm
// (its NormKind, NormScope, NormAfter and NormEps) and turns them, in one
// pass: for every token j, the qs.Heads heads of q and the ks.Heads heads of
// k by the positions of token j, as ApplyQK walks them. The package doc
// gives the arithmetic (docs/contract.md §10) and its error bound; every
// backend returns the same bits.
//
// qw holds the query norm's weights and kw the key norm's: HeadDim values
// shared by every head (NormScope "head"), or Heads·HeadDim values, head h's
// at w[h·HeadDim:] (NormScope "token"); nil for NormKind "l2", which has
// none. Every layer has its own, so they come with each call. A gemma norm
// multiplies each value by 1 + w, computed as fl(1 + w).
//
// A Rotary without a QK-norm (NormKind "") turns q and k as ApplyQK does,
// with qw and kw nil: an engine calls ApplyNormQK for every model, whether
// or not it normalizes q and k.
//
// Views, positions and the weights' lengths are checked as in ApplyQK, and a
// bad one panics before anything is written; q and k may share a buffer (a
// fused QKV projection) as long as no head of q overlaps a head of k.
func (t *Table) ApplyNormQK(q []elem, qs Strides, qw []comp, k []elem, ks Strides, kw []comp, pos []int32) {
	const fn = "Table.ApplyNormQK"
	w := t.seq(fn, pos)
	t.r.applyNormQK(fn, &w, q, qs, qw, k, ks, kw)
}

// ApplyNormQK normalizes and turns the queries and keys of token j by the
// positions of token j, as Table.ApplyNormQK does; pos must be the
// positions Set was given.
func (b *Batch) ApplyNormQK(q []elem, qs Strides, qw []comp, k []elem, ks Strides, kw []comp, pos []int32) {
	const fn = "Batch.ApplyNormQK"
	w := b.walk(fn, pos)
	b.t.r.applyNormQK(fn, &w, q, qs, qw, k, ks, kw)
}

func (r *Rotary) applyNormQK(fn string, w *walk, q []elem, qs Strides, qw []comp, k []elem, ks Strides, kw []comp) {
	if r.nv < 0 {
		if len(qw)+len(kw) != 0 {
			panicf("%s: len(qw) = %d, len(kw) = %d: want no weights: the Rotary has no QK-norm (NormKind \"\"), so q and k are only turned", fn, len(qw), len(kw))
		}
		r.applyQK(fn, w, q, qs, k, ks)
		return
	}
	r.checkQK(fn, w, q, qs, k, ks)
	r.checkWeights(fn, "qw", len(qw), "qs", qs)
	r.checkWeights(fn, "kw", len(kw), "ks", ks)
	norm, eps := r.kern().norm[r.nv], r.p.NormEps
	for j := range w.n {
		row := w.row(j)
		norm(q[j*qs.Token:], qs.Head, qs.Heads, row, qw, eps)
		norm(k[j*ks.Token:], ks.Head, ks.Heads, row, kw, eps)
	}
	w.done()
}
