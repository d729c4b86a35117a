package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// cacheCallOf is the cache call c on the memory st, for the drivers: the
// cache (read by Load, written by the stores, changed in place by Shift),
// the float32 tokens (read by the stores, written by Load; Shift takes
// none), the slots and the positions or deltas, only read. names label the
// cache and the tokens.
func (cs *cacheSuite[C]) cacheCallOf(c *cacheCall, st cacheState, names ...string) *call {
	if len(names) == 0 {
		names = []string{"cache", "tokens"}
	}
	cacheMode, tokMode := map[cacheOp]access{opStore: writes, opApplyStore: writes, opLoad: reads, opShift: inPlace}[c.op], reads
	if c.op == opLoad {
		tokMode = writes
	}
	ca, xa := newBuf(names[0], elemsOf[C](st.cache), cacheMode), newBuf(names[1], st.x, tokMode)
	sa := newIndex("slots", c.slots)
	cl := &call{what: c.String(), args: []arg{ca, sa}}
	if c.op != opShift {
		cl.args = append(cl.args, xa)
	}
	var pa *buf[int32]
	switch c.op {
	case opApplyStore:
		pa = newIndex("pos", c.pos)
		cl.args = append(cl.args, pa)
	case opShift:
		pa = newIndex("delta", c.delta)
		cl.args = append(cl.args, pa)
	}
	cl.run = func() {
		gc := *c
		gc.slots = sa.cur
		if pa != nil {
			gc.pos, gc.delta = pa.cur, pa.cur
		}
		cs.invoke(&gc, ca.cur, xa.cur)
	}
	return cl
}

// cacheEntries describes the cache forms of one type to the drivers: the
// guard calls of guardCacheCalls, the edge calls of badCacheCalls.
func (cs *cacheSuite[C]) cacheEntries() entryPoint {
	return entryPoint{
		name: "the " + cs.ref.dtype + " cache forms",
		guard: func(r *rand.Rand) []*call {
			var calls []*call
			for _, c := range cs.guardCacheCalls(r) {
				calls = append(calls, cs.cacheCallOf(c, cs.state(r, c)))
			}
			return calls
		},
		edges: func() []edgeCall {
			r := rand.New(rand.NewPCG(seed(), 0x7061))
			var es []edgeCall
			for op := range cacheOp(4) {
				for _, b := range cs.badCacheCalls(op) {
					es = append(es, bad(cs.cacheCallOf(b.c, cs.state(r, b.c)), b.what, panicWant{fn: op.String(), words: b.words}))
				}
			}
			return es
		},
	}
}

// guardCacheCalls are the cache guard calls: every form on token-major and
// head-major caches, with and without gaps, whose slice ends exactly at
// the end of its last row, with slots that include the first and the last
// row (and a skipped token), for 1…9 heads.
func (cs *cacheSuite[C]) guardCacheCalls(r *rand.Rand) []*cacheCall {
	var calls []*cacheCall
	e, hd := cs.ref.cacheHead, cs.s.hd
	for heads := 1; heads <= 9; heads++ {
		const rows = 5
		slots := []int64{rows - 1, -1, 0, 2}
		for _, l := range cs.layouts(heads, rows, len(slots)) {
			for op := range cacheOp(4) {
				c := &cacheCall{op: op, layout: l.name, cv: l.cv, rows: rows, xv: l.xv, slots: slices.Clone(slots), scale: cs.drawScale(r)}
				c.nc = extent(c.cv, rows, e)
				c.nx = extent(c.xv, len(slots), hd)
				switch op {
				case opApplyStore:
					c.pos = cs.s.positions(r, len(slots))
				case opShift:
					c.delta = []int32{3, 5, -7, 1 << 20}
				}
				calls = append(calls, c)
			}
		}
	}
	return calls
}

// checkCacheGuard makes the cache guard calls (checkGuarded): each buffer
// (the cache, the float32 tokens, the slots, the positions or deltas)
// flush against a guard page.
func checkCacheGuard[C CacheElem](t tb, cs *cacheSuite[C]) {
	checkGuarded(t, cs.s.backendsOrOnly(), 0x6367756172, cs.cacheEntries())
}

// checkCachePanics makes every badCacheCalls call of every form on every
// backend (checkEdges): each must panic with a message naming the form,
// the argument and its value, and leave every buffer as it was.
func checkCachePanics[C CacheElem](t tb, cs *cacheSuite[C]) {
	checkEdges(t, cs.s.backendsOrOnly(), cs.cacheEntries())
}

// badCacheCall is a call that must panic before it writes anything, and
// the words its message must hold besides the form's name.
type badCacheCall struct {
	what  string
	c     *cacheCall
	words []string
}

func (cs *cacheSuite[C]) badCacheCalls(op cacheOp) []badCacheCall {
	e, hd := cs.ref.cacheHead, cs.s.hd
	const heads, rows = 2, 6
	cv := Strides{heads, e, heads * e}
	xv := Strides{heads, hd, heads * hd}
	// The package's forms take the cache as one view, c, and the tokens'
	// buffer with its view ss (ds for Load).
	cacheView, tokView := "c", "ss"
	if op == opLoad {
		tokView = "ds"
	}
	base := func(slots ...int64) *cacheCall {
		c := &cacheCall{op: op, layout: "token-major", cv: cv, nc: rows * heads * e, rows: rows, xv: xv, nx: len(slots) * heads * hd, slots: slots, scale: 1}
		switch op {
		case opApplyStore:
			c.pos = make([]int32, len(slots))
			for j := range c.pos {
				c.pos[j] = int32(j)
			}
		case opShift:
			c.delta = make([]int32, len(slots))
			for j := range c.delta {
				c.delta[j] = int32(j + 1)
			}
		}
		return c
	}
	var bad []badCacheCall
	add := func(what string, c *cacheCall, words ...string) {
		bad = append(bad, badCacheCall{what, c, words})
	}
	c := base(1, 2, rows)
	add("a slot past the last row", c, fmt.Sprintf("slots[2] = %d", rows))
	c = base(1, 2, -2)
	add("a slot below -1", c, "slots[2] = -2")
	c = base(0, 4, 3, 4)
	add("a slot listed twice", c, "slots[3] = 4", "slots[1]")
	c = base(3, -1, 1, -1, 3)
	add("a slot listed twice among skips", c, "slots[4] = 3", "slots[0]")
	c = base(0, 5)
	c.nc--
	add("a cache one element short", c, "slots[1] = 5")
	c = base(0, 1)
	c.cv.Heads = 0
	add("a cache view of no heads", c, cacheView+".Heads = 0")
	c = base(0, 1)
	c.cv.Token = -c.cv.Token
	add("a negative row stride", c, cacheView+".Token = ")
	c = base(0, 1)
	c.cv.Head = e - 1
	c.cv.Token = heads*e + 1
	add("heads of a row overlapping", c, cacheView, "overlap")
	if op != opShift {
		c = base(0, 1)
		c.xv.Heads = heads + 1
		c.xv.Token = (heads + 1) * hd
		c.nx = 2 * c.xv.Token
		add("different head counts", c, "Heads")
		c = base(0, 1)
		c.nx--
		add("a token buffer one value short", c, tokView)
		c = base(0, 1)
		c.xv.Head = hd - 1
		add("token heads overlapping", c, tokView, "overlap")
	}
	switch op {
	case opApplyStore:
		c = base(0, 1, 2)
		c.pos = c.pos[:2]
		add("len(pos) != len(slots)", c, fmt.Sprintf("len(pos) = %d", cs.s.posLen(2)), "len(slots) = 3")
		c = base(0, 1, 2)
		c.pos[2] = int32(cs.s.n)
		add("a position past the table", c, fmt.Sprintf("%s = %d", cs.s.posAt(2), cs.s.n))
		c = base(0, 1, 2)
		c.pos[2] = -1
		add("a negative position", c, cs.s.posAt(2)+" = -1")
	case opShift:
		c = base(0, 1, 2)
		c.delta = c.delta[:1]
		add("len(delta) != len(slots)", c, "len(delta) = 1", "len(slots) = 3")
		c = base(0, 1, 2)
		c.delta[2] = math.MinInt32
		add("a delta of −2³¹", c, "delta[2] = -2147483648")
	}
	if cs.ref.scaled {
		for _, v := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
			c = base(0, 1)
			c.scale = v
			add(fmt.Sprintf("scale %v", v), c, "scale = "+fmt.Sprint(v))
		}
	}
	return bad
}
