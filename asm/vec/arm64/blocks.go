package arm64

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/neon"
	"github.com/ropegen/ropegen/asm/vec"
)

// value is a register of w values of e (float32 or float64).
type value struct {
	r vr
	w int
	e vec.Elem
}

// arr is v's arrangement: 4S, 2S (two or fewer float32), 2D.
func (v *value) arr() neon.Arrangement {
	switch {
	case v.e == vec.F64:
		return neon.A2D
	case v.w > 2:
		return neon.A4S
	}
	return neon.A2S
}

// goArr is v's arrangement as Go's assembler spells it.
func (v *value) goArr() string {
	return map[neon.Arrangement]string{neon.A4S: "S4", neon.A2S: "S2", neon.A2D: "D2"}[v.arr()]
}

func (t *Target) newValue(w int, e vec.Elem) *value { return &value{r: t.vreg(), w: w, e: e.Compute()} }

// lanes is how many values of e's compute type a register holds.
func lanes(e vec.Elem) int { return 16 / e.Compute().Size }

// block is w values (or pairs) from j.
type block struct{ j, w int }

// split cuts span units from start into blocks of lanes, then halves.
func split(start, span, lanes int) []block {
	var bs []block
	for j := 0; j < span; {
		w := lanes
		for w > span-j {
			w /= 2
		}
		bs = append(bs, block{start + j, w})
		j += w
	}
	return bs
}

// ---- cursors: post-indexed walks through the arrays of a head --------------------------

type cursor struct {
	r               string
	at, start, size int // element offsets from the pointer, element size
}

type cursorKey struct {
	p     *ptr
	store bool
	at    int
}

// walkScope is the cursors of a head (or of a chunk loop, whose cursors are
// set before the loop: mark, the line they go at).
type walkScope struct {
	cs    map[cursorKey]*cursor
	made  []*cursor // in the order made
	mark  int       // −1: at the first access
	owner int       // the register scope its cursors' registers belong to
}

// at is the post-indexed operand reading or writing n bytes at value j of
// a: a cursor standing there (the current walk scope's), or a new one.
func (t *Target) at(a vec.Arr, j, bytes int, store bool) string {
	s := t.walks[len(t.walks)-1]
	p, off := a.P.(*ptr), a.Off+j
	c, ok := s.cs[cursorKey{p, store, off}]
	if !ok {
		c = &cursor{r: t.gregIn(s.owner), at: off, start: off, size: a.Elem.Size}
		s.made = append(s.made, c)
		l := line{text: fmt.Sprintf("\tMOVD %s, %s", p.r, c.r)}
		if off != 0 {
			l.text = fmt.Sprintf("\tADD $%d, %s, %s", off*a.Elem.Size, p.r, c.r)
		}
		if s.mark < 0 {
			t.lines = append(t.lines, l)
		} else {
			t.lines = append(t.lines[:s.mark], append([]line{l}, t.lines[s.mark:]...)...)
			s.mark++
		}
	}
	delete(s.cs, cursorKey{p, store, off})
	c.at += bytes / a.Elem.Size
	s.cs[cursorKey{p, store, c.at}] = c
	return fmt.Sprintf("%d(%s)", bytes, c.r)
}

// ---- heads and blocks -------------------------------------------------------------------

type head struct{ t *Target }

func (h *head) Pairs(arrs []vec.Arr, body func(vec.Block)) {
	t := h.t
	s := t.f.Shape
	values := s.RotaryDim
	step := 2 * loopBlocks * lanes(t.f.C()) // values a chunk reads of each member's run
	if s.NeoX {
		step /= 2
	}
	h.run(split(0, s.Half(), lanes(t.f.C())), values, step, true, body)
}

func (h *head) Values(lo, hi int, arrs []vec.Arr, body func(vec.Block)) {
	h.run(split(lo, hi-lo, lanes(h.t.f.C())), hi-lo, loopBlocks*lanes(h.t.f.C()), false, body)
}

// run emits body for each block, or past unrollMax values for the full
// blocks in a loop of loopBlocks a chunk, the cursors set before it.
func (h *head) run(bs []block, values, step int, pairs bool, body func(vec.Block)) {
	t := h.t
	each := func(b block) { t.scope(func() { body(&blk{t, b, pairs}) }) }
	l := lanes(t.f.C())
	full := 0
	for full < len(bs) && bs[full].w == l {
		full++
	}
	times := full / loopBlocks
	if values <= unrollMax || times < 2 {
		for _, b := range bs {
			each(b)
		}
		return
	}
	// The count and the chunk's cursors are the loop's: free after it.
	t.scope(func() {
		cnt := t.greg()
		t.op("MOVD $%d, %s", times, cnt)
		top := t.label("chunk")
		t.lab(top)
		s := t.walkScope(len(t.lines) - 1)
		t.scope(func() {
			for i := range loopBlocks {
				each(bs[i])
			}
			for _, c := range s.made {
				if d := c.start + step - c.at; d != 0 {
					t.op("ADD $%d, %s", d*c.size, c.r)
				}
			}
		})
		t.walks = t.walks[:len(t.walks)-1]
		t.op("SUBS $1, %s", cnt)
		t.br("BNE", top)
	})
	// The chunk's cursors went through every chunk; later blocks walk anew.
	for _, b := range bs[times*loopBlocks:] {
		each(b)
	}
}

// blk is a block of one head.
type blk struct {
	t     *Target
	b     block
	pairs bool
}

// members are the first values of the block's members, and whether they
// sit interleaved (a-lanes and b-lanes in one run).
func (k *blk) members() (js []int, inter bool) {
	s := k.t.f.Shape
	switch {
	case !k.pairs:
		return []int{k.b.j}, false
	case s.NeoX:
		return []int{k.b.j, k.b.j + s.Half()}, false
	}
	return []int{2 * k.b.j}, true
}

// Load: LD2 for a whole interleaved block, a run deinterleaved for its
// tail, each run alone otherwise.
func (k *blk) Load(a vec.Arr) []vec.V {
	t, w := k.t, k.b.w
	js, inter := k.members()
	if !inter {
		var vs []vec.V
		for _, j := range js {
			vs = append(vs, t.load(a, j, w))
		}
		return vs
	}
	x, y := t.newValue(w, a.Elem), t.newValue(w, a.Elem)
	t.deinterleave(a, js[0], w, x, y)
	return []vec.V{x, y}
}

// deinterleave reads the w pairs from value j of a into the members x and
// y (y nil: only x, the row's C): LD2 for a whole register, a run and
// UZP1, UZP2 for a tail.
func (t *Target) deinterleave(a vec.Arr, j, w int, x, y *value) {
	t.scope(func() {
		if w < lanes(a.Elem) {
			v := t.load(a, j, 2*w)
			t.vop("VUZP1 V%d.%s, V%d.%s, V%d.%s", v.r, v.goArr(), v.r, v.goArr(), x.r, v.goArr())
			if y != nil {
				t.vop("VUZP2 V%d.%s, V%d.%s, V%d.%s", v.r, v.goArr(), v.r, v.goArr(), y.r, v.goArr())
			}
			return
		}
		only := y == nil
		if only {
			y = &value{r: t.vreg()}
		}
		arr := x.goArr()
		if a.Elem.Size == 2 {
			arr = "H4"
		}
		t.group(x.r, y.r)
		t.vop("VLD2.P %s, [V%d.%s, V%d.%s]", t.at(a, j, 2*w*a.Elem.Size, false), x.r, arr, y.r, arr)
		if a.Elem.Size > 2 {
			return
		}
		for _, v := range []*value{x, y}[:map[bool]int{true: 1, false: 2}[only]] {
			*v = *t.widen(a.Elem, v)
		}
	})
}

// Store: ST2, ZIP1 and a run, or each run alone, as Load.
func (k *blk) Store(a vec.Arr, ys []vec.V) {
	t, w := k.t, k.b.w
	js, inter := k.members()
	if !inter {
		for i, j := range js {
			t.store(ys[i].(*value), a, j, w)
		}
		return
	}
	x, y := ys[0].(*value), ys[1].(*value)
	if w < lanes(a.Elem) {
		v := t.newValue(2*w, a.Elem)
		t.vop("VZIP1 V%d.%s, V%d.%s, V%d.%s", y.r, v.goArr(), x.r, v.goArr(), v.r, v.goArr())
		t.store(v, a, js[0], 2*w)
		return
	}
	arr := x.goArr()
	if a.Elem.Size == 2 {
		arr = "H4"
	}
	nx, ny := t.pair(t.narrow(a.Elem, x), t.narrow(a.Elem, y))
	t.vop("VST2.P [V%d.%s, V%d.%s], %s", nx, arr, ny, arr, t.at(a, js[0], 2*w*a.Elem.Size, true))
}

func (k *blk) Partners(xs []vec.V) []vec.V { return []vec.V{xs[1], xs[0]} }

// table is a block's C and S values.
type table struct {
	c, s []vec.V
	neg  []bool
}

// Table: the first members' C and both members' S, interleaved (S[a] and
// S[b] read as they are); neox the first half's C and S for both.
func (k *blk) Table(row vec.Arr) (c, s []vec.V, neg []bool) {
	tb, ok := k.t.pre[k.b.j]
	if !ok {
		tb = k.t.table(k, row)
	}
	return tb.c, tb.s, tb.neg
}

func (t *Target) table(k *blk, row vec.Arr) table {
	srow := row.At(t.f.Shape.RotaryDim)
	if t.f.Shape.NeoX {
		c, s := t.load(row, k.b.j, k.b.w), t.load(srow, k.b.j, k.b.w)
		return table{[]vec.V{c, c}, []vec.V{s, s}, []bool{false, true}}
	}
	c := t.newValue(k.b.w, row.Elem)
	t.deinterleave(row, 2*k.b.j, k.b.w, c, nil)
	return table{[]vec.V{c, c}, k.Load(srow), []bool{false, false}}
}

// preload keeps the row's first blocks in registers across heads, as
// many as fit with the constants, when a head's pairs are written out.
func (t *Target) preload(row vec.Arr) {
	if t.f.Shape.RotaryDim > unrollMax {
		return
	}
	per := 3 // registers a block: C, and S of each member (neox: C and S)
	if t.f.Shape.NeoX {
		per = 2
	}
	t.pre = map[int]table{}
	for i, b := range split(0, t.f.Shape.Half(), lanes(t.f.C())) {
		if (i+1)*per <= maxPreload-t.storeConsts() {
			t.pre[b.j] = t.table(&blk{t, b, true}, row)
		}
	}
}

// storeConsts is how many constant registers the function's conversions
// keep, and a temporary more, for each of the function's element and
// cache types: f16's widening one (f16Widen; it narrows by FCVTN), the
// minifloat family's seven of bf16's narrowing (it widens by a shift).
func (t *Target) storeConsts() int {
	n := 0
	for _, e := range []vec.Elem{t.f.X, t.f.Cache} {
		switch e {
		case vec.F16:
			n += 2
		case vec.BF16:
			n += 8
		}
	}
	if t.f.X == t.f.Cache {
		n /= 2
	}
	return n
}

// pair is x and y in consecutive registers: themselves, or copies when
// either is already in a group.
func (t *Target) pair(x, y vr) (vr, vr) {
	for _, g := range t.groups {
		for _, r := range g {
			if r == x || r == y {
				cx, cy := t.vreg(), t.vreg()
				t.vop("VORR V%d.B16, V%d.B16, V%d.B16", x, x, cx)
				t.vop("VORR V%d.B16, V%d.B16, V%d.B16", y, y, cy)
				t.group(cx, cy)
				return cx, cy
			}
		}
	}
	t.group(x, y)
	return x, y
}
