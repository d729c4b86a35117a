package rt

import (
	"math"
	"math/bits"
	"sync"
)

// Table holds cos and sin for the positions [Start(), Start()+Len()) of one
// Rotary. It is read-only after it is built and safe for concurrent use.
// Its methods take absolute positions, Axes of them per token (token j's at
// pos[j·Axes:(j+1)·Axes]); a position outside the table, or a nil *Table,
// panics with a message before anything is written.
type Table struct {
	r       *Rotary
	rows    []comp    // n rows of rowLen values: row k is position start+k
	n       int       // the positions, Len(): a field, not a division on every call
	start   int       // the first position
	freqs   []float64 // the frequencies the rows are filled from
	maxFreq float64   // the largest of freqs: every angle is at most pos·maxFreq
}

// NewTable returns a table for the positions [0, n), with the frequencies
// TableFreqs(n) gives (longrope's long factors or dynamic NTK's frequencies
// for a table longer than OrigCtx, as Hugging Face uses for a sequence of n
// tokens). It panics if n is negative or an angle overflows.
func (r *Rotary) NewTable(n int) *Table {
	r.checkNil("Rotary.NewTable")
	if n < 0 {
		panicf("Rotary.NewTable: n = %d: want n >= 0", n)
	}
	return r.newTable("Rotary.NewTable", 0, n)
}

// NewTableRange returns a table for the positions [start, start+n) only:
// every entry point takes absolute positions in that range and gives the
// bits a table from 0 would give there, so a window of a long context needs
// rows for the window only. Its frequencies are TableFreqs(start+n). It
// panics if start or n is negative, start+n overflows, or an angle
// overflows.
func (r *Rotary) NewTableRange(start, n int) *Table {
	r.checkNil("Rotary.NewTableRange")
	// start+n < 0: the sum overflows (Go's ints wrap).
	if start < 0 || n < 0 || start+n < 0 {
		panicf("Rotary.NewTableRange: start = %d, n = %d: want start >= 0, n >= 0 and start+n without overflow", start, n)
	}
	return r.newTable("Rotary.NewTableRange", start, n)
}

// newTable builds the table of positions [start, start+n): fn names the
// caller in a panic.
func (r *Rotary) newTable(fn string, start, n int) *Table {
	freqs := r.tableFreqs(start + n)
	t := &Table{r: r, rows: make([]comp, n*r.rowLen), n: n, start: start, freqs: freqs, maxFreq: maxOf(freqs)}
	for i, v := range freqs {
		// Every angle must be finite (and so has a sine and a cosine).
		if n > 0 && math.IsInf(float64(float64(start+n-1)*v), 0) {
			name := "Freqs"
			switch {
			case r.p.LongFreqs != nil && &freqs[0] == &r.p.LongFreqs[0]:
				name = "LongFreqs"
			case &freqs[0] != &r.p.Freqs[0]:
				name = "the dynamic NTK frequencies"
			}
			panicf("%s: %s[%d] = %v: the angle at position %d overflows; want (start+n−1)·θ_i finite", fn, name, i, v, start+n-1)
		}
	}
	for k := range n {
		r.fill(t.rows[k*r.rowLen:][:r.rowLen], start+k, freqs, r.p.Attn, t.maxFreq)
	}
	return t
}

// Len returns the number of positions the table covers.
func (t *Table) Len() int {
	t.checkNil("Table.Len")
	return t.n
}

// Start returns the first position the table covers: 0 but for NewTableRange.
func (t *Table) Start() int {
	t.checkNil("Table.Start")
	return t.start
}

// Rotary returns the Rotary the table was built for.
func (t *Table) Rotary() *Rotary {
	t.checkNil("Table.Rotary")
	return t.r
}

// row returns the row of position pos, Start() <= pos < Start()+Len().
func (t *Table) row(pos int) *comp { return &t.rows[(pos-t.start)*t.r.rowLen] }

// rowsAt returns the rows of the m positions from pos on, consecutive.
func (t *Table) rowsAt(pos, m int) []comp {
	k := pos - t.start
	return t.rows[k*t.r.rowLen : (k+m)*t.r.rowLen]
}

// checkNil panics, naming fn, if t is nil.
func (t *Table) checkNil(fn string) {
	if t == nil {
		panicf("%s: t = nil: want a table from a Rotary's NewTable or NewTableRange", fn)
	}
}

// checkPos panics unless t covers pos.
func (t *Table) checkPos(fn string, pos int) {
	t.checkNil(fn)
	if uint(pos-t.start) >= uint(t.n) {
		panicf("%s: pos = %d: want %d <= pos < %d (the table's positions)", fn, pos, t.start, t.start+t.n)
	}
}

// seq checks the positions of a sequence entry point and returns its
// walk: t not nil, len(pos) a multiple of Axes, and every position inside
// the table.
// The loop only compares: formatting a message happens in panicSeq, on the
// way to the panic.
func (t *Table) seq(fn string, pos []int32) walk {
	t.checkNil(fn)
	r := t.r
	tokens := len(pos)
	if r.axes != 1 {
		if len(pos)%r.axes != 0 {
			panicf("%s: len(pos) = %d: want a multiple of Axes = %d (every token's position on each axis)", fn, len(pos), r.axes)
		}
		tokens /= r.axes
	}
	s, n := t.start, uint(t.n)
	for j, p := range pos {
		if uint(int(p)-s) >= n {
			panicSeq(fn, j, int(p), s, s+int(n), r.axes)
		}
	}
	return walk{t: t, pos: pos, n: tokens, word: r.posWord}
}

func panicSeq(fn string, j, p, lo, hi, axes int) {
	if axes > 1 {
		panicf("%s: pos[%d] = %d (token %d, axis %d): want %d <= pos < %d (the table's positions)", fn, j, p, j/axes, j%axes, lo, hi)
	}
	panicf("%s: pos[%d] = %d: want %d <= pos < %d (the table's positions)", fn, j, p, lo, hi)
}

// walk is how an entry point finds the table row of each of its n tokens:
// a Table's rows by the tokens' positions (a token whose positions on the
// axes differ gets a row assembled from theirs, see mix), or a Batch's
// rows, row j token j's. word names the token count in messages.
type walk struct {
	t    *Table
	pos  []int32 // Axes per token; nil: row j is token j's (a Batch)
	n    int
	word string
	mix  *mixRow // the assembled row, taken on the first token that needs one
}

// row returns token j's row.
func (w *walk) row(j int) *comp {
	r := w.t.r
	if w.pos == nil {
		return &w.t.rows[j*r.rowLen]
	}
	if r.axes == 1 {
		return w.t.row(int(w.pos[j]))
	}
	return w.mixed(j)
}

// run returns the rows of tokens j, j+1, …, j+m−1, m > 1 of them, up to
// most, when they lie one after another in memory (consecutive positions of
// text tokens, or a Batch's tokens), else m = 1.
func (w *walk) run(j, most int) (rows []comp, m int) {
	r := w.t.r
	if w.pos == nil {
		m = min(most, w.n-j)
		return w.t.rows[j*r.rowLen : (j+m)*r.rowLen], m
	}
	p, ok := w.text(j)
	if !ok {
		return nil, 1
	}
	m = 1
	for j+m < w.n && m < most {
		q, ok := w.text(j + m)
		if !ok || int(q) != int(p)+m {
			break
		}
		m++
	}
	if m == 1 {
		return nil, 1
	}
	return w.t.rowsAt(int(p), m), m
}

// text returns token j's position and true if it is a text token: every
// axis at the same position.
func (w *walk) text(j int) (int32, bool) {
	a := w.t.r.axes
	p := w.pos[j*a : (j+1)*a]
	for _, q := range p[1:] {
		if q != p[0] {
			return 0, false
		}
	}
	return p[0], true
}

// done returns the walk's scratch row, if it took one.
func (w *walk) done() {
	if w.mix != nil {
		mixPool.Put(w.mix)
		w.mix = nil
	}
}

// fill writes row (rowLen values) for position pos from freqs, whose
// largest is maxFreq, and the attention factor attn: with the active
// backend's fill kernel where it has one and every angle is below sincosMax
// (it gives fillRow's bits), the rest with fillRow.
func (r *Rotary) fill(row []comp, pos int, freqs []float64, attn, maxFreq float64) {
	from := 0
	if f := r.kern().fill; f != nil && float64(float64(pos)*maxFreq) < sincosMax {
		from = f(&row[0], float64(pos), &freqs[0], attn)
	}
	if from < len(freqs) {
		fillRow(row, pos, freqs, attn, from, r.neox)
	}
}

// fillRow writes the values of pairs [from, len(freqs)) of the table row r
// of position pos: for pair i with indices (a, b) and c, s =
// attn·cos(pos·θ_i), attn·sin(pos·θ_i) computed in float64, C[a] = C[b] = c,
// S[a] = −s and S[b] = s, each rounded once to the compute type. float32
// rows take their sines and cosines from sincos, float64 rows from
// sincosDD (correctly rounded but in rare cases).
func fillRow(r []comp, pos int, freqs []float64, attn float64, from int, neox bool) {
	rd := 2 * len(freqs)
	r = r[:2*rd]
	var sin, cos [64]float64
	for lo := from; lo < len(freqs); lo += len(sin) {
		hi := min(lo+len(sin), len(freqs))
		if compBytes == 8 {
			for i := lo; i < hi; i++ {
				sin[i-lo], cos[i-lo] = sincosDD(float64(float64(pos) * freqs[i]))
			}
		} else {
			sincos(sin[:hi-lo], cos[:hi-lo], float64(pos), freqs[lo:hi])
		}
		for i := lo; i < hi; i++ {
			c, s := comp(attn*cos[i-lo]), comp(attn*sin[i-lo])
			a, b := 2*i, 2*i+1
			if neox {
				a, b = i, i+rd/2
			}
			r[a], r[b] = c, c
			r[rd+a], r[rd+b] = -s, s
		}
	}
}

// rowPool holds the rows Rotate, RotateInverse, Batch.Set and Shift fill:
// a row on their stack would move to the heap, as the kernels are called
// through function values. A row of the pool holds maxRowLen() values.
var rowPool = sync.Pool{New: func() any {
	r := make([]comp, maxRowLen())
	return &r
}}

// maxRowLen returns the longest row of the package's shapes.
func maxRowLen() int {
	m := 0
	for _, s := range shapeList {
		m = max(m, 2*s.RotaryDim)
	}
	return m
}

// Rotate turns every head in x in place by position pos without a table,
// computing cos and sin for this call, as a text token (every axis at pos):
// the bits of Table.Apply. len(x) must be a multiple of HeadDim and pos >=
// 0.
func (r *Rotary) Rotate(x []elem, pos int) {
	r.rotate("Rotary.Rotate", x, pos, false)
}

// RotateInverse is the tableless ApplyInverse: the bits of
// Table.ApplyInverse.
func (r *Rotary) RotateInverse(x []elem, pos int) {
	r.rotate("Rotary.RotateInverse", x, pos, true)
}

// rotate is Rotate (inverse: RotateInverse); fn names the caller.
func (r *Rotary) rotate(fn string, x []elem, pos int, inverse bool) {
	r.checkNil(fn)
	h := r.heads(fn, len(x))
	if pos < 0 {
		panicf("%s: pos = %d: want pos >= 0", fn, pos)
	}
	if len(x) == 0 {
		return
	}
	row := rowPool.Get().(*[]comp)
	rr := (*row)[:r.rowLen]
	r.fill(rr, pos, r.p.Freqs, r.p.Attn, r.maxFreq)
	k := r.kern()
	kern := k.fwd
	if inverse {
		kern = k.inv
	}
	kern(x, r.hd, h, &rr[0])
	rowPool.Put(row)
}

// heads returns the number of heads in n values, panicking, naming fn,
// unless n is a multiple of HeadDim: a shift for a HeadDim that is a power
// of two (a one-token call divides by nothing).
func (r *Rotary) heads(fn string, n int) int {
	h := 0
	if r.hdLog >= 0 {
		h = n >> r.hdLog
	} else {
		h = n / r.hd
	}
	if h*r.hd != n {
		panicf("%s: len(x) = %d: want a multiple of HeadDim (%d)", fn, n, r.hd)
	}
	return h
}

// log2 is log2(n) for a power of two n > 0, else −1.
func log2(n int) int {
	if n <= 0 || n&(n-1) != 0 {
		return -1
	}
	return bits.TrailingZeros(uint(n))
}

// seqLen returns the number of values per token, checking that n values
// split into tokens whole heads long; word names the token count.
func (r *Rotary) seqLen(fn, what string, n, tokens int, word string) int {
	if tokens == 0 {
		if n != 0 {
			panicf("%s: len(%s) = %d with %s = 0: want len(%s) = 0", fn, what, n, word, what)
		}
		return 0
	}
	if n%tokens != 0 || (n/tokens)%r.hd != 0 {
		panicf("%s: len(%s) = %d, %s = %d: want len(%s) = %s·k·HeadDim (HeadDim = %d) for a whole k", fn, what, n, word, tokens, what, word, r.hd)
	}
	return n / tokens
}
