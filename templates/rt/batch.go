package rt

import (
	"math"
	"slices"
)

// Batch holds the table rows of one step of batched decoding, where each
// token sits at its own positions, as the sequences of a batch do: Set fills
// one row per token, for any positions, and the methods turn token j of
// their input by the positions Set gave it. A table would need a row for
// every position up to the largest; a Batch holds one per token, filled
// once a step and used by every layer's calls. Its rows have Rotate's bits
// (Freqs, whatever the positions), which are Table.Apply's. Its methods
// take the arguments of the Table's, pos among them: the positions Set was
// given (b.Pos()), which they check, so that a Table and a Batch are both
// Rows. Set must not run concurrently with anything else on the Batch; the
// other methods may. A bad view, length or pos panics, naming the Batch
// method and the values its caller passed, before anything is written.
type Batch struct {
	t   Table   // rows: row j is token j's
	pos []int32 // the positions Set was given, Axes per token
	cap int     // the most tokens a step
}

// NewBatch returns a Batch for up to capacity tokens a step. It panics if
// capacity is negative.
func (r *Rotary) NewBatch(capacity int) *Batch {
	return r.newBatch("Rotary.NewBatch", capacity)
}

// newBatch is NewBatch; fn names the caller.
func (r *Rotary) newBatch(fn string, capacity int) *Batch {
	r.checkNil(fn)
	if capacity < 0 {
		panicf("%s: capacity = %d: want capacity >= 0", fn, capacity)
	}
	return &Batch{
		t:   Table{r: r, rows: make([]comp, 0, capacity*r.rowLen), freqs: r.p.Freqs, maxFreq: r.maxFreq},
		pos: make([]int32, 0, capacity*r.axes),
		cap: capacity,
	}
}

// Set fills the rows of the tokens of the next calls: token j at positions
// pos[j·Axes:(j+1)·Axes], one per axis (a 1-D model: pos[j]). It panics,
// before changing anything, if len(pos) is not a whole number of tokens, or
// more than the capacity, a position is negative, or an angle pos·θ_i
// overflows.
func (b *Batch) Set(pos []int32) {
	b.checkNil("Batch.Set")
	r := b.t.r
	if len(pos)%r.axes != 0 {
		panicf("Batch.Set: len(pos) = %d: want a multiple of Axes = %d (every token's position on each axis)", len(pos), r.axes)
	}
	n := len(pos) / r.axes
	if n > b.cap {
		panicf("Batch.Set: len(pos) = %d (%s): want at most the capacity, %s", len(pos), count(n, "token"), count(b.cap, "token"))
	}
	for j, p := range pos {
		if p < 0 || math.IsInf(float64(float64(p)*r.maxFreq), 0) {
			panicf("Batch.Set: pos[%d] = %d: want pos >= 0 with every angle pos·θ_i finite", j, p)
		}
	}
	b.t.rows, b.t.n = b.t.rows[:n*r.rowLen], n
	b.pos = append(b.pos[:0], pos...)
	var tmp *[]comp
	for j := range n {
		row := b.t.rows[j*r.rowLen : (j+1)*r.rowLen]
		p := pos[j*r.axes : (j+1)*r.axes]
		if !slices.ContainsFunc(p, func(q int32) bool { return q != p[0] }) {
			r.fill(row, int(p[0]), r.p.Freqs, r.p.Attn, r.maxFreq)
			continue
		}
		// A token of several positions: the row of each position, its
		// axis's values copied into row j.
		if tmp == nil {
			tmp = rowPool.Get().(*[]comp)
		}
		src := (*tmp)[:r.rowLen]
		for a, q := range p {
			r.fill(src, int(q), r.p.Freqs, r.p.Attn, r.maxFreq)
			r.mixAxis(row, src, a)
		}
	}
	if tmp != nil {
		rowPool.Put(tmp)
	}
}

// Len returns the number of tokens of the step: of the last Set.
func (b *Batch) Len() int {
	b.checkNil("Batch.Len")
	return b.t.n
}

// Pos returns the positions of the step, as Set was given them; the slice
// belongs to the Batch.
func (b *Batch) Pos() []int32 {
	b.checkNil("Batch.Pos")
	return b.pos
}

// Rotary returns the Rotary the Batch was made by.
func (b *Batch) Rotary() *Rotary {
	b.checkNil("Batch.Rotary")
	return b.t.r
}

// checkNil panics, naming fn, if b is nil.
func (b *Batch) checkNil(fn string) {
	if b == nil {
		panicf("%s: b = nil: want a Batch from a Rotary's NewBatch", fn)
	}
}

// walk is the walk of b's tokens for the method fn, whose caller passed
// pos: it panics unless pos holds the positions Set was given.
func (b *Batch) walk(fn string, pos []int32) walk {
	b.checkNil(fn)
	if !slices.Equal(pos, b.pos) {
		panicBatchPos(fn, pos, b.pos)
	}
	return walk{t: &b.t, n: b.t.n, word: "b.Len()"}
}

// panicBatchPos panics, naming fn, for the positions pos that differ from
// set, those Set was given.
func panicBatchPos(fn string, pos, set []int32) {
	if len(pos) != len(set) {
		panicf("%s: len(pos) = %d: want the positions Set was given (b.Pos()), %d of them", fn, len(pos), len(set))
	}
	i := 0
	for pos[i] == set[i] {
		i++
	}
	panicf("%s: pos[%d] = %d: want the positions Set was given (b.Pos()), where pos[%d] = %d", fn, i, pos[i], i, set[i])
}

// Rows is what a Table and a Batch both are: the calls that turn a step's
// tokens, each by its positions, Axes per token (token j's at
// pos[j·Axes:(j+1)·Axes]). A *Table takes any positions it covers (a
// prefill); a *Batch the positions its last Set was given (a decode step of
// sequences at different positions). Glue written against Rows serves both
// with the same calls, and gets their bits.
type Rows interface {
	ApplySeq(x []elem, pos []int32)
	ApplyInverseSeq(x []elem, pos []int32)
	ApplyStrided(x []elem, s Strides, pos []int32)
	ApplyInverseStrided(x []elem, s Strides, pos []int32)
	ApplyQK(q []elem, qs Strides, k []elem, ks Strides, pos []int32)
	ApplyNormQK(q []elem, qs Strides, qw []comp, k []elem, ks Strides, kw []comp, pos []int32)
	Rotary() *Rotary
}

var (
	_ Rows = (*Table)(nil)
	_ Rows = (*Batch)(nil)
)
