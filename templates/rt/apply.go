package rt

import (
	"sync"
	"unsafe"
)

// elemBytes and compBytes are the sizes of an element and of a table value.
const (
	elemBytes = int(unsafe.Sizeof(elem(0)))
	compBytes = int(unsafe.Sizeof(comp(0)))
)

// Apply turns every head in x in place by position pos, as a text token
// (every axis at pos): x ← A·R_pos·x. len(x) must be a multiple of HeadDim
// and t.Start() <= pos < t.Start()+t.Len().
func (t *Table) Apply(x []elem, pos int) {
	t.apply("Table.Apply", x, pos, false)
}

// ApplyInverse applies the transpose, the backward pass: x ← A·R_posᵀ·x. It
// undoes Apply when A = 1.
func (t *Table) ApplyInverse(x []elem, pos int) {
	t.apply("Table.ApplyInverse", x, pos, true)
}

func (t *Table) apply(fn string, x []elem, pos int, inverse bool) {
	t.checkNil(fn)
	r := t.r
	h := r.heads(fn, len(x))
	t.checkPos(fn, pos)
	r.rot(inverse)(x, r.hd, h, t.row(pos))
}

// rot returns the active forward kernel, or the inverse one.
func (r *Rotary) rot(inverse bool) rotKernel {
	if inverse {
		return r.kern().inv
	}
	return r.kern().fwd
}

// ApplySeq is Apply for a sequence: token j of x, len(x)/tokens values
// holding a whole number of heads, turns by its positions
// pos[j·Axes:(j+1)·Axes] (a 1-D model: pos[j]). Every position is checked
// before x is touched.
func (t *Table) ApplySeq(x []elem, pos []int32) {
	const fn = "Table.ApplySeq"
	w := t.seq(fn, pos)
	t.r.applySeq(fn, &w, x, false)
}

// ApplyInverseSeq is ApplyInverse for a sequence, as ApplySeq.
func (t *Table) ApplyInverseSeq(x []elem, pos []int32) {
	const fn = "Table.ApplyInverseSeq"
	w := t.seq(fn, pos)
	t.r.applySeq(fn, &w, x, true)
}

// ApplySeq turns token j of x, len(x)/b.Len() values holding a whole number
// of heads, by the positions of token j; pos is the positions Set was given.
func (b *Batch) ApplySeq(x []elem, pos []int32) {
	const fn = "Batch.ApplySeq"
	w := b.walk(fn, pos)
	b.t.r.applySeq(fn, &w, x, false)
}

// ApplyInverseSeq is ApplySeq's backward pass (A·R_posᵀ); pos is the
// positions Set was given.
func (b *Batch) ApplyInverseSeq(x []elem, pos []int32) {
	const fn = "Batch.ApplyInverseSeq"
	w := b.walk(fn, pos)
	b.t.r.applySeq(fn, &w, x, true)
}

func (r *Rotary) applySeq(fn string, w *walk, x []elem, inverse bool) {
	n := r.seqLen(fn, "x", len(x), w.n, w.word)
	kern := r.rot(inverse)
	for j := range w.n {
		kern(x[j*n:(j+1)*n], r.hd, n/r.hd, w.row(j))
	}
	w.done()
}

// ParallelMin is the number of bytes of x per goroutine from which
// ApplySeqParallel and ApplyInverseSeqParallel split x. Measured on a 2-vCPU
// Xeon (ropegen's BENCHMARKS.md) with 32 heads of 128 float32 per token, one
// goroutine rotates 20–25 GB/s while x fits in the cache (up to 32 MiB
// there) and 8–9 GB/s beyond it, where two reach 15–17 GB/s (1.7–1.9×);
// splitting an x of 32 MiB or less was 20–50% slower. A machine with a
// larger cache would want a larger value.
const ParallelMin = 20 << 20

// ApplySeqParallel is ApplySeq with the tokens split into at most workers
// runs of whole tokens, rotated concurrently, one goroutine a run (the last
// on the calling goroutine): min(workers, tokens, ⌊bytes of x /
// ParallelMin⌋) runs of ⌈tokens/runs⌉ tokens, the last run shorter if need
// be. So an x of fewer than 2·ParallelMin bytes, or workers <= 1, is
// rotated serially. It gives the bits of ApplySeq.
func (t *Table) ApplySeqParallel(x []elem, pos []int32, workers int) {
	const fn = "Table.ApplySeqParallel"
	w := t.seq(fn, pos)
	t.r.seqParallel(fn, &w, x, workers, false)
}

// ApplyInverseSeqParallel is ApplyInverseSeq split as ApplySeqParallel
// splits ApplySeq, with the bits of ApplyInverseSeq.
func (t *Table) ApplyInverseSeqParallel(x []elem, pos []int32, workers int) {
	const fn = "Table.ApplyInverseSeqParallel"
	w := t.seq(fn, pos)
	t.r.seqParallel(fn, &w, x, workers, true)
}

// seqParallel turns the tokens of w in x in up to workers concurrent runs
// of at least ParallelMin bytes, each run with a walk of its own.
func (r *Rotary) seqParallel(fn string, w *walk, x []elem, workers int, inverse bool) {
	n := r.seqLen(fn, "x", len(x), w.n, w.word)
	kern := r.rot(inverse)
	runs := min(workers, w.n, len(x)*elemBytes/ParallelMin)
	per := w.n
	if runs > 1 {
		per = (w.n + runs - 1) / runs
	}
	run := func(w walk, from, to int) {
		for j := from; j < to; j++ {
			kern(x[j*n:(j+1)*n], r.hd, n/r.hd, w.row(j))
		}
		w.done()
	}
	var wg sync.WaitGroup
	for lo := 0; lo < w.n; lo += per {
		hi := min(lo+per, w.n)
		if hi == w.n {
			run(*w, lo, hi)
			break
		}
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			run(*w, from, to)
		}(lo, hi)
	}
	wg.Wait()
}

// ApplyStrided is Apply for heads inside a larger buffer (x ← A·R_pos·x):
// for every token j and every h < s.Heads it turns the head x[j·s.Token +
// h·s.Head :][:HeadDim] by the positions of token j, in place. Only the
// rotary values of those heads are read and written; every other element
// of x keeps its bits. The result is bit for bit that of copying each head
// out, calling Apply on it and copying it back. A field of s that is not
// positive, heads that overlap, a view that reaches past len(x) and a
// position outside the table panic before x is touched.
func (t *Table) ApplyStrided(x []elem, s Strides, pos []int32) {
	const fn = "Table.ApplyStrided"
	w := t.seq(fn, pos)
	t.r.applyStrided(fn, &w, x, s, false)
}

// ApplyInverseStrided is ApplyInverse for heads inside a larger buffer (x ←
// A·R_posᵀ·x), as ApplyStrided.
func (t *Table) ApplyInverseStrided(x []elem, s Strides, pos []int32) {
	const fn = "Table.ApplyInverseStrided"
	w := t.seq(fn, pos)
	t.r.applyStrided(fn, &w, x, s, true)
}

// ApplyStrided turns the heads of token j of the view s of x by the
// positions of token j, as Table.ApplyStrided does; pos is the positions
// Set was given.
func (b *Batch) ApplyStrided(x []elem, s Strides, pos []int32) {
	const fn = "Batch.ApplyStrided"
	w := b.walk(fn, pos)
	b.t.r.applyStrided(fn, &w, x, s, false)
}

// ApplyInverseStrided is ApplyStrided's backward pass; pos is the positions
// Set was given.
func (b *Batch) ApplyInverseStrided(x []elem, s Strides, pos []int32) {
	const fn = "Batch.ApplyInverseStrided"
	w := b.walk(fn, pos)
	b.t.r.applyStrided(fn, &w, x, s, true)
}

func (r *Rotary) applyStrided(fn string, w *walk, x []elem, s Strides, inverse bool) {
	if !smallView(s, len(x), w.n, r.hd) {
		checkView(fn, "s", s, len(x), w.n, r.hd, w.word)
	}
	k := r.kern()
	if inverse {
		r.strided(w, k.inv, k.invRows, x, s)
	} else {
		r.strided(w, k.fwd, k.fwdRows, x, s)
	}
	w.done()
}

// strided applies kern to the view s of x, token by token: one call per
// token over its s.Heads heads. With rows (a backend's fwdRows or invRows)
// and a view that keeps a head's tokens closer together than a token's
// heads (a head-major cache: s.Token < s.Head), or of one head, it walks
// head by head instead along every run of tokens whose rows follow one
// another (consecutive positions), up to runMax tokens: each call then
// streams through one head's consecutive tokens rather than touching every
// head, s.Head apart, for one token. Heads are disjoint, so the order
// changes no bit.
func (r *Rotary) strided(w *walk, kern rotKernel, rows rowsKernel, x []elem, s Strides) {
	if rows == nil || s.Heads > 1 && s.Token >= s.Head {
		for j := range w.n {
			kern(x[j*s.Token:], s.Head, s.Heads, w.row(j))
		}
		return
	}
	for j := 0; j < w.n; {
		rs, m := w.run(j, r.runMax)
		if m == 1 {
			kern(x[j*s.Token:], s.Head, s.Heads, w.row(j))
		} else {
			for h := range s.Heads {
				rows(x[j*s.Token+h*s.Head:], s.Token, m, rs)
			}
		}
		j += m
	}
}

// runMaxOf is the most tokens the strided walk takes a head along in one
// kernel call, for rows of rowLen values: their table rows fill about 12
// KiB, which stay in the L1 cache from one head to the next. On a 32-head
// head-major prefill of HeadDim 128 (BENCHMARKS.md), 12 rows measured 107
// µs at AVX-512 and 145 µs at AVX2; 16 rows 105 and 162 µs; 32 rows 130 and
// 175 µs; 64 rows 250 and 231 µs.
func runMaxOf(rowLen int) int { return max(2, 12288/(rowLen*compBytes)) }

// ApplyQK turns the queries and the keys of a step in one call: for every
// token j, the qs.Heads heads of q and the ks.Heads heads of k (grouped-query
// attention: the counts may differ) by the positions of token j, as
// ApplyStrided(q, qs, pos) and ApplyStrided(k, ks, pos) would, with the
// same bits; token-major views in one pass over the table rows, and a fused
// row whose k heads follow its q heads in one kernel call per token. q and k
// may be two buffers or views of one (a fused QKV projection: q = x, k =
// x[Hq·HeadDim:], both with Token = (Hq+2·Hkv)·HeadDim), as long as no head
// of q overlaps a head of k; that, and everything ApplyStrided checks,
// panics before anything is touched.
func (t *Table) ApplyQK(q []elem, qs Strides, k []elem, ks Strides, pos []int32) {
	const fn = "Table.ApplyQK"
	// A decode step, one text token in a fused QKV row: applyQK's first
	// case, with its checks, without the walk.
	if len(pos) == 1 && t != nil && t.r.axes == 1 && uint(int(pos[0])-t.start) < uint(t.n) {
		if m, ok := adjacent(q, qs, k, ks, 1, t.r.hd); ok {
			t.r.kern().fwd(q, m.Head, m.Heads, t.row(int(pos[0])))
			return
		}
	}
	w := t.seq(fn, pos)
	t.r.applyQK(fn, &w, q, qs, k, ks)
}

// ApplyQK turns the queries and keys of token j by the positions of token
// j, as Table.ApplyQK does; pos is the positions Set was given.
func (b *Batch) ApplyQK(q []elem, qs Strides, k []elem, ks Strides, pos []int32) {
	const fn = "Batch.ApplyQK"
	w := b.walk(fn, pos)
	b.t.r.applyQK(fn, &w, q, qs, k, ks)
}

func (r *Rotary) applyQK(fn string, w *walk, q []elem, qs Strides, k []elem, ks Strides) {
	kern := r.kern()
	// A fused QKV row: k's heads continue q's, so they are one view.
	if m, ok := adjacent(q, qs, k, ks, w.n, r.hd); ok {
		for j := range w.n {
			kern.fwd(q[j*m.Token:], m.Head, m.Heads, w.row(j))
		}
		w.done()
		return
	}
	r.checkQK(fn, w, q, qs, k, ks)
	if kern.fwdRows != nil && (qs.Token < qs.Head || ks.Token < ks.Head) {
		// Head-major views: each walked head by head.
		r.strided(w, kern.fwd, kern.fwdRows, q, qs)
		r.strided(w, kern.fwd, kern.fwdRows, k, ks)
		w.done()
		return
	}
	for j := range w.n {
		row := w.row(j)
		kern.fwd(q[j*qs.Token:], qs.Head, qs.Heads, row)
		kern.fwd(k[j*ks.Token:], ks.Head, ks.Heads, row)
	}
	w.done()
}

// checkQK checks the q and k views of w's tokens: each inside its slice,
// its heads apart, and no head of q sharing an element with a head of k.
func (r *Rotary) checkQK(fn string, w *walk, q []elem, qs Strides, k []elem, ks Strides) {
	if !smallView(qs, len(q), w.n, r.hd) {
		checkView(fn, "qs", qs, len(q), w.n, r.hd, w.word)
	}
	if !smallView(ks, len(k), w.n, r.hd) {
		checkView(fn, "ks", ks, len(k), w.n, r.hd, w.word)
	}
	if d, ok := sharedOffset(fn, "q", "k", q, k); ok {
		checkApart(fn, "q", "qs", qs, "k", "ks", ks, d, w.n, r.hd)
	}
}
