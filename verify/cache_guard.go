package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
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
		bench: func(r *rand.Rand) []benchGroup { return cs.cacheBench(cs.s.benchInput(r)) },
	}
}

// guardCacheCalls are the cache guard calls: every form on token-major and
// head-major caches, with and without gaps, whose slice ends exactly at
// the end of its last row, with slots that include the first and the last
// row (and a skipped token), for 1…9 heads (-short: 1, 2, 5 and 9, one,
// an even and an odd count and one past 8, as under qemu, where a guard
// call costs some ten times a native one; with the Hadamard option 2).
func (cs *cacheSuite[C]) guardCacheCalls(r *rand.Rand) []*cacheCall {
	var calls []*cacheCall
	e, hd := cs.ref.cacheHead, cs.s.hd
	for heads := 1; heads <= 9; heads++ {
		if testing.Short() && heads != 1 && heads != 2 && heads != 5 && heads != 9 {
			continue
		}
		if testing.Short() && cs.c.Hadamard && heads != 2 {
			continue // the option's walk is the type's; its heads go through the scratch buffer two at a time or more
		}
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
				if op == opLoad && cs.c.Hadamard {
					o := *c
					o.orig = true
					calls = append(calls, &o)
				}
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

// badCacheCalls are, for op, the calls checkCachePanics makes: each breaks
// one rule, with the bad value in the last token so that a form that
// checked token by token, as it wrote, would have written the first.
func (cs *cacheSuite[C]) badCacheCalls(op cacheOp) []badCacheCall {
	return append(append(cs.badCacheSlots(op), cs.badCacheViews(op)...), cs.badCacheArgs(op)...)
}

// cacheBase is the valid call of op the bad calls break: 2 heads, a cache
// of 6 token-major rows, the tokens at the given slots (ApplyStore at
// positions 0, 1, …; Shift by 1, 2, …), scale 1.
func (cs *cacheSuite[C]) cacheBase(op cacheOp, slots ...int64) *cacheCall {
	e, hd := cs.ref.cacheHead, cs.s.hd
	const heads, rows = 2, 6
	c := &cacheCall{op: op, layout: "token-major", cv: Strides{heads, e, heads * e}, nc: rows * heads * e, rows: rows,
		xv: Strides{heads, hd, heads * hd}, nx: len(slots) * heads * hd, slots: slots, scale: 1}
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

// badCacheSlots breaks the slots: past the last row, below -1, listed
// twice, and one short of the cache.
func (cs *cacheSuite[C]) badCacheSlots(op cacheOp) []badCacheCall {
	const rows = 6
	short := cs.cacheBase(op, 0, 5)
	short.nc--
	return []badCacheCall{
		{"a slot past the last row", cs.cacheBase(op, 1, 2, rows), []string{fmt.Sprintf("slots[2] = %d", rows)}},
		{"a slot below -1", cs.cacheBase(op, 1, 2, -2), []string{"slots[2] = -2"}},
		{"a slot listed twice", cs.cacheBase(op, 0, 4, 3, 4), []string{"slots[3] = 4", "slots[1]"}},
		{"a slot listed twice among skips", cs.cacheBase(op, 3, -1, 1, -1, 3), []string{"slots[4] = 3", "slots[0]"}},
		{"a cache one element short", short, []string{"slots[1] = 5"}},
	}
}

// badCacheViews breaks the cache's view and the tokens': no heads, a
// negative row stride, overlapping heads, different head counts, a token
// buffer one value short.
func (cs *cacheSuite[C]) badCacheViews(op cacheOp) []badCacheCall {
	e, hd := cs.ref.cacheHead, cs.s.hd
	const heads = 2
	// The package's forms take the cache as one view, c, and the tokens'
	// buffer with its view ss (ds for Load).
	tokView := "ss"
	if op == opLoad {
		tokView = "ds"
	}
	var bad []badCacheCall
	add := func(what string, change func(c *cacheCall), words ...string) {
		c := cs.cacheBase(op, 0, 1)
		change(c)
		bad = append(bad, badCacheCall{what, c, words})
	}
	add("a cache view of no heads", func(c *cacheCall) { c.cv.Heads = 0 }, "c.Heads = 0")
	add("a negative row stride", func(c *cacheCall) { c.cv.Token = -c.cv.Token }, "c.Token = ")
	add("heads of a row overlapping", func(c *cacheCall) { c.cv.Head, c.cv.Token = e-1, heads*e+1 }, "c", "overlap")
	if op == opShift {
		return bad
	}
	add("different head counts", func(c *cacheCall) {
		c.xv.Heads, c.xv.Token = heads+1, (heads+1)*hd
		c.nx = 2 * c.xv.Token
	}, "Heads")
	add("a token buffer one value short", func(c *cacheCall) { c.nx-- }, tokView)
	add("token heads overlapping", func(c *cacheCall) { c.xv.Head = hd - 1 }, tokView, "overlap")
	return bad
}

// badCacheArgs breaks what one form takes besides the views: ApplyStore's
// positions, Shift's deltas, a format's scale per call.
func (cs *cacheSuite[C]) badCacheArgs(op cacheOp) []badCacheCall {
	var bad []badCacheCall
	add := func(what string, change func(c *cacheCall), words ...string) {
		c := cs.cacheBase(op, 0, 1, 2)
		change(c)
		bad = append(bad, badCacheCall{what, c, words})
	}
	switch op {
	case opApplyStore:
		add("len(pos) != len(slots)", func(c *cacheCall) { c.pos = c.pos[:2] }, fmt.Sprintf("len(pos) = %d", cs.s.posLen(2)), "len(slots) = 3")
		add("a position past the table", func(c *cacheCall) { c.pos[2] = int32(cs.s.n) }, fmt.Sprintf("%s = %d", cs.s.posAt(2), cs.s.n))
		add("a negative position", func(c *cacheCall) { c.pos[2] = -1 }, cs.s.posAt(2)+" = -1")
	case opShift:
		add("len(delta) != len(slots)", func(c *cacheCall) { c.delta = c.delta[:1] }, "len(delta) = 1", "len(slots) = 3")
		add("a delta of −2³¹", func(c *cacheCall) { c.delta[2] = math.MinInt32 }, "delta[2] = -2147483648")
	}
	if cs.ref.scaled {
		for _, v := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
			c := cs.cacheBase(op, 0, 1)
			c.scale = v
			word := "scale = " + fmt.Sprint(v)
			if cs.c.HeadScales {
				word = "scales[0] = " + fmt.Sprint(v)
			}
			bad = append(bad, badCacheCall{fmt.Sprintf("scale %v", v), c, []string{word}})
		}
	}
	return bad
}
