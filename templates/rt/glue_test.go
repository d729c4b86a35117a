package rt

import (
	"github.com/ropegen/ropegen/verify"
)

// The glue between a package and ropegen's verify suite: kernelOf describes
// a Rotary to verify through the package's API. ropegen copies this file
// (and glue_norm_test.go, glue_cache_test.go where the package has those
// forms) into the tests of every package it writes; rt's own tests run the
// suite through it on their reference kernels.

// kernelOf describes the model r to verify: base and scaling say what its
// frequencies are (verify checks Freqs against base^(−2i/R) when scaling is
// "none"), and every entry point, table and batch is r's. A multi-axis
// model's tables and batches are handed to verify as text tables and
// batches (textTable, verifyBatch), which verify drives with one position
// per token; the Axes family's ApplySeq and ApplyInverseSeq reach the
// tables' own forms, Axes positions per token.
func kernelOf(r *Rotary, base float64, scaling string) verify.Kernel[elem] {
	p := r.Params()
	k := verify.Kernel[elem]{
		DType:           dtypeName,
		HeadDim:         p.HeadDim,
		RotaryDim:       p.RotaryDim,
		Layout:          p.Layout,
		Base:            base,
		Scaling:         scaling,
		Freqs:           p.Freqs,
		AttentionFactor: p.Attn,
		LongFreqs:       p.LongFreqs,
		NewTable:        func(n int) verify.Table[elem] { return wrapTable(r.NewTable(n)) },
		Rotate:          r.Rotate,
		RotateInverse:   r.RotateInverse,
		ParallelMin:     ParallelMin,
		DynamicFactor:   p.DynamicFactor,
	}
	if p.LongFreqs != nil || p.DynamicFactor != 0 {
		k.OrigCtx = p.OrigCtx
	}
	if p.Axes > 1 {
		k.Axes = &verify.Axes[elem]{
			N:    p.Axes,
			Axis: p.Axis,
			ApplySeq: func(t verify.Table[elem], x []elem, pos []int32) {
				tableOf(t).ApplySeq(x, pos)
			},
			ApplyInverseSeq: func(t verify.Table[elem], x []elem, pos []int32) {
				tableOf(t).ApplyInverseSeq(x, pos)
			},
		}
	}
	k.Strided = &verify.Strided[elem]{
		ApplyStrided: func(t verify.Table[elem], x []elem, s verify.Strides, pos []int32) {
			tableOf(t).ApplyStrided(x, Strides(s), textPos(t, pos))
		},
		ApplyInverseStrided: func(t verify.Table[elem], x []elem, s verify.Strides, pos []int32) {
			tableOf(t).ApplyInverseStrided(x, Strides(s), textPos(t, pos))
		},
		ApplyQK: func(t verify.Table[elem], q []elem, qs verify.Strides, kk []elem, ks verify.Strides, pos []int32) {
			tableOf(t).ApplyQK(q, Strides(qs), kk, Strides(ks), textPos(t, pos))
		},
	}
	// A model of r's shape with the frequencies, factor and axis map given
	// (nil: r's own), and no longrope or dynamic NTK: a table of any length
	// uses them.
	with := func(freqs []float64, attn float64, axis []uint8) *Rotary {
		q := p
		q.Freqs, q.Attn, q.LongFreqs, q.DynamicFactor, q.DynamicBase = freqs, attn, nil, 0, 0
		if axis != nil {
			q.Axis = axis
		}
		m, err := New(q)
		if err != nil {
			panic(err)
		}
		return m
	}
	k.Runtime = &verify.Runtime[elem]{
		NewTableParams: func(freqs []float64, attn float64, axis []uint8, n int) verify.Table[elem] {
			return wrapTable(with(freqs, attn, axis).NewTable(n))
		},
		NewTableRange: func(freqs []float64, attn float64, axis []uint8, start, n int) verify.Table[elem] {
			return wrapTable(with(freqs, attn, axis).NewTableRange(start, n))
		},
		TableParams: func(n int) ([]float64, float64) { return r.TableFreqs(n), p.Attn },
		NilTable:    wrapTable(nil),
		NewBatch: func(freqs []float64, attn float64, axis []uint8, capacity int) verify.Batch[elem] {
			return wrapBatch(with(freqs, attn, axis).NewBatch(capacity))
		},
		BatchApplyQK: func(b verify.Batch[elem], q []elem, qs verify.Strides, kk []elem, ks verify.Strides) {
			batchOf(b).ApplyQK(q, Strides(qs), kk, Strides(ks), batchOf(b).Pos())
		},
		BatchApplyStrided: func(b verify.Batch[elem], x []elem, s verify.Strides) {
			batchOf(b).ApplyStrided(x, Strides(s), batchOf(b).Pos())
		},
	}
	for i := range backends {
		b := &backends[i]
		k.Backends = append(k.Backends, verify.Backend{Name: b.name, Use: func() { active = b }})
	}
	return k
}

// textTable is a multi-axis model's *Table as verify drives it: one
// position per token, every token a text token (each axis at that
// position).
type textTable struct{ *Table }

// ApplySeq is the table's ApplySeq on text tokens at pos.
func (t textTable) ApplySeq(x []elem, pos []int32) { t.Table.ApplySeq(x, text(t.Table.r, pos)) }

// ApplyInverseSeq is the table's ApplyInverseSeq on text tokens at pos.
func (t textTable) ApplyInverseSeq(x []elem, pos []int32) {
	t.Table.ApplyInverseSeq(x, text(t.Table.r, pos))
}

// ApplySeqParallel is the table's ApplySeqParallel on text tokens at pos.
func (t textTable) ApplySeqParallel(x []elem, pos []int32, workers int) {
	t.Table.ApplySeqParallel(x, text(t.Table.r, pos), workers)
}

// ApplyInverseSeqParallel is the table's ApplyInverseSeqParallel on text
// tokens at pos.
func (t textTable) ApplyInverseSeqParallel(x []elem, pos []int32, workers int) {
	t.Table.ApplyInverseSeqParallel(x, text(t.Table.r, pos), workers)
}

// verifyBatch is a *Batch as verify drives it: its calls take the
// positions of the last Set, and a multi-axis model's tokens are text
// tokens, one position each.
type verifyBatch struct{ *Batch }

// Set is the batch's Set with text tokens at pos.
func (b verifyBatch) Set(pos []int32) { b.Batch.Set(text(b.Batch.t.r, pos)) }

// ApplySeq is the batch's ApplySeq at the positions of the last Set.
func (b verifyBatch) ApplySeq(x []elem) { b.Batch.ApplySeq(x, b.Pos()) }

// ApplyInverseSeq is the batch's ApplyInverseSeq at the positions of the
// last Set.
func (b verifyBatch) ApplyInverseSeq(x []elem) { b.Batch.ApplyInverseSeq(x, b.Pos()) }

// wrapTable returns t as verify drives it: itself, or a text table.
func wrapTable(t *Table) verify.Table[elem] {
	if t != nil && t.r.axes > 1 {
		return textTable{t}
	}
	return t
}

// wrapBatch returns b as verify drives it.
func wrapBatch(b *Batch) verify.Batch[elem] { return verifyBatch{b} }

// tableOf returns the *Table verify was given.
func tableOf(t verify.Table[elem]) *Table {
	if tt, ok := t.(textTable); ok {
		return tt.Table
	}
	return t.(*Table)
}

// batchOf returns the *Batch verify was given.
func batchOf(b verify.Batch[elem]) *Batch { return b.(verifyBatch).Batch }

// textPos returns pos as t's entry points take it: each position once per
// axis for a text table.
func textPos(t verify.Table[elem], pos []int32) []int32 {
	if tt, ok := t.(textTable); ok {
		return text(tt.Table.r, pos)
	}
	return pos
}

// text returns the positions of text tokens at pos for r: each Axes times.
func text(r *Rotary, pos []int32) []int32 {
	if r == nil || r.axes == 1 || pos == nil {
		return pos
	}
	out := make([]int32, 0, len(pos)*r.axes)
	for _, p := range pos {
		for range r.axes {
			out = append(out, p)
		}
	}
	return out
}
