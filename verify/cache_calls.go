package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// cacheCall is one call of a cache form and everything needed to replay it:
// the cache view cv over a cache slice of nc elements holding rows rows,
// the float32 token view xv over a slice of nx values (src for the stores,
// dst for Load; unused by Shift), the slots and the positions or deltas.
type cacheCall struct {
	op     cacheOp
	layout string
	cv     Strides
	nc     int
	rows   int
	xv     Strides
	nx     int
	slots  []int64
	pos    []int32
	delta  []int32
	scale  float32
	orig   bool // Load of a Hadamard-rotated cache's Original view
}

func (c *cacheCall) String() string {
	s := fmt.Sprintf("%v on %s (cache %+v, %d rows, len %d; tokens %+v, len %d) slots %v", c.op, c.layout, c.cv, c.rows, c.nc, c.xv, c.nx, c.slots)
	switch c.op {
	case opApplyStore:
		s += fmt.Sprintf(" pos %v", c.pos)
	case opShift:
		s += fmt.Sprintf(" delta %v", c.delta)
	}
	if c.orig {
		s += " (Original: the heads multiplied by H again)"
	}
	if c.scale != 1 {
		s += fmt.Sprintf(" scale %v", c.scale)
	}
	return s
}

// cacheLayout is a cache view for heads heads of a cache of rows rows, and a
// token view for tokens tokens.
type cacheLayout struct {
	name string
	cv   Strides
	xv   Strides
}

// layouts returns the cache and token views the checks draw from, for
// heads heads, rows rows and tokens tokens: token-major and head-major
// caches, with and without gaps between heads and rows, and contiguous,
// fused-row and head-major token buffers.
func (cs *cacheSuite[C]) layouts(heads, rows, tokens int) []cacheLayout {
	e, d := cs.ref.cacheHead, cs.s.hd
	g := 1 + e/8
	tokenViews := []Strides{
		{heads, d, heads * d},
		{heads, d + 3, heads*(d+3) + 2*d + 1},
		{heads, max(tokens, 1)*d + 5, d},
	}
	caches := []cacheLayout{
		{"token-major", Strides{heads, e, heads * e}, Strides{}},
		{"token-major with gaps", Strides{heads, e + g, heads*(e+g) + 3}, Strides{}},
		{"head-major", Strides{heads, rows * e, e}, Strides{}},
		{"head-major with gaps", Strides{heads, rows*(e+1) + g, e + 1}, Strides{}},
	}
	var out []cacheLayout
	for i, c := range caches {
		for j, x := range tokenViews {
			if (i+j)%2 == 0 || j == 0 {
				c.xv = x
				c.name = fmt.Sprintf("%s cache, tokens %s", caches[i].name, []string{"contiguous", "with gaps", "head-major"}[j])
				out = append(out, c)
			}
		}
	}
	return out
}

// slotPattern draws tokens slots of a cache of rows rows: consecutive rows,
// a paged cache's blocks of 4 in shuffled order, distinct random rows; some
// tokens skipped (−1); the first and last rows often among them.
func slotPattern(r *rand.Rand, rows, tokens int) ([]int64, string) {
	slots := make([]int64, tokens)
	var what string
	switch r.IntN(4) {
	case 0:
		what = "consecutive"
		s0 := r.IntN(rows - tokens + 1)
		for j := range slots {
			slots[j] = int64(s0 + j)
		}
	case 1:
		what = "paged, blocks of 4"
		const block = 4
		blocks := r.Perm(rows / block)
		var all []int64
		for _, b := range blocks {
			for i := range block {
				all = append(all, int64(b*block+i))
			}
		}
		for i := rows / block * block; i < rows; i++ {
			all = append(all, int64(i))
		}
		copy(slots, all)
	case 2:
		what = "the last rows, reversed"
		for j := range slots {
			slots[j] = int64(rows - 1 - j)
		}
	default:
		what = "random rows"
		for j, v := range r.Perm(rows)[:tokens] {
			slots[j] = int64(v)
		}
	}
	if r.IntN(2) == 0 && tokens > 0 {
		what += ", some skipped"
		slots[r.IntN(tokens)] = -1
		for j := range slots {
			if r.IntN(3) == 0 {
				slots[j] = -1
			}
		}
	}
	return slots, what
}

// deltas draws tokens deltas: runs of equal deltas, zeros, negative ones,
// small and far ones.
func deltas(r *rand.Rand, tokens int) []int32 {
	d := make([]int32, tokens)
	cur := int32(0)
	for j := range d {
		if j == 0 || r.IntN(4) == 0 {
			switch r.IntN(8) {
			case 0, 6, 7: // a delta of 0 must leave its row alone
				cur = 0
			case 1:
				cur = int32(1 + r.IntN(8))
			case 2:
				cur = -int32(1 + r.IntN(8))
			case 3:
				cur = int32(r.IntN(1<<16)) - 1<<15
			case 4:
				cur = int32(r.IntN(1<<24)) - 1<<23
			default:
				cur = []int32{math.MaxInt32, -math.MaxInt32, 4096, -4096}[r.IntN(4)]
			}
		}
		d[j] = cur
	}
	return d
}

// drawScale draws a scale for an e4m3 cache (1 for the other types): mostly
// ordinary, sometimes extreme enough that x/scale overflows or vanishes.
func (cs *cacheSuite[C]) drawScale(r *rand.Rand) float32 {
	if !cs.ref.scaled {
		return 1
	}
	switch r.IntN(8) {
	case 0:
		return 1
	case 1:
		return []float32{1e-30, 3e30, 0x1p-126, math.MaxFloat32, math.SmallestNonzeroFloat32}[r.IntN(5)]
	}
	return float32(math.Ldexp(1+r.Float64(), r.IntN(24)-12))
}

// drawCall draws one call of op.
func (cs *cacheSuite[C]) drawCall(r *rand.Rand, op cacheOp) *cacheCall {
	heads := 1 + r.IntN(9)
	if r.IntN(4) == 0 {
		heads = 8
	}
	rows := 1 + r.IntN(24)
	tokens := r.IntN(rows + 1)
	if r.IntN(4) == 0 {
		tokens = min(1, rows)
	}
	ls := cs.layouts(heads, rows, tokens)
	l := ls[r.IntN(len(ls))]
	slots, what := slotPattern(r, rows, tokens)
	c := &cacheCall{op: op, layout: l.name + ", " + what, cv: l.cv, rows: rows, xv: l.xv, slots: slots, scale: cs.drawScale(r)}
	c.nc = extent(c.cv, rows, cs.ref.cacheHead) + r.IntN(2)*(c.cv.Token-1)/2 // sometimes a part row past the last
	c.nx = extent(c.xv, tokens, cs.s.hd) + r.IntN(3)
	switch op {
	case opApplyStore:
		c.pos = cs.s.positions(r, tokens)
	case opShift:
		c.delta = deltas(r, tokens)
	case opLoad:
		c.orig = cs.c.Hadamard && r.IntN(2) == 0
	}
	return c
}
