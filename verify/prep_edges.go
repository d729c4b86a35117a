package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// prepCallOf is Prep call c on the memory st, for the drivers: the queries
// changed in place (in a fused call the queries', keys' and values' buffer),
// the keys and values only read, the caches written, the weights, slots and
// positions only read.
func (cs *cacheSuite[C]) prepCallOf(c *prepCall, st prepState) *call {
	q := newBuf("q", st.q, inPlace)
	k, v := newBuf("k", st.k, reads), newBuf("v", st.v, reads)
	kc, vc := newBuf("the key cache", elemsOf[C](st.kc), writes), newBuf("the value cache", elemsOf[C](st.vc), writes)
	qw, kw := newIndex("q's weights", to32(c.qw)), newIndex("k's weights", to32(c.kw))
	slots, pos := newIndex("slots", c.slots), newIndex("pos", c.pos)
	cl := &call{what: c.String(), args: []arg{q, kc, qw, kw, slots, pos}}
	if !c.fused {
		cl.args = append(cl.args, k, v)
	}
	if !c.sharedCache {
		cl.args = append(cl.args, vc)
	}
	cl.run = func() {
		p := prepStep(c, prepState{q: q.cur, k: k.cur, v: v.cur}, kc.cur, vc.cur, slots.cur)
		p.QW, p.KW = qw.cur, kw.cur
		cs.c.Prep(cs.s.tab, p, pos.cur)
	}
	return cl
}

// prepEntries describes Prep to the drivers: the guard calls of
// guardPrepCalls, the edge calls of badPrepCalls.
func (cs *cacheSuite[C]) prepEntries() entryPoint {
	return entryPoint{
		name: "Prep",
		guard: func(r *rand.Rand) []*call {
			var calls []*call
			for _, c := range cs.guardPrepCalls(r) {
				calls = append(calls, cs.prepCallOf(c, cs.prepState(r, c)))
			}
			return calls
		},
		edges: func() []edgeCall {
			r := rand.New(rand.NewPCG(seed(), 0x707061))
			var es []edgeCall
			for _, b := range cs.badPrepCalls() {
				es = append(es, bad(cs.prepCallOf(b.c, cs.prepState(r, b.c)), b.what, panicWant{fn: "Prep", words: b.words}))
			}
			return es
		},
	}
}

// guardPrepCalls are Prep's guard calls: for 1…4 key heads (-short 1 and 3;
// with the Hadamard option 1)
// and twice as many query heads, every cache and token layout of the cache
// checks, every buffer exactly as long as its view needs, slots that
// include the first and the last row and a skipped token.
func (cs *cacheSuite[C]) guardPrepCalls(r *rand.Rand) []*prepCall {
	var calls []*prepCall
	hd, e := cs.s.hd, cs.ref.cacheHead
	const rows = 5
	slots := []int64{rows - 1, -1, 0, 2}
	for hk := 1; hk <= 4; hk++ {
		if testing.Short() && (hk%2 == 0 || cs.c.Hadamard && hk == 3) {
			continue // -short (as under qemu): 1 and 3 KV heads; with the Hadamard option 1
		}
		for i, l := range cs.layouts(hk, rows, len(slots)) {
			qv := cs.layouts(2*hk, rows, len(slots))[i%3].xv
			c := &prepCall{what: l.name, tokens: len(slots), rows: rows, slots: slices.Clone(slots), pos: cs.s.positions(r, len(slots)),
				qs: cs.s.fit(qv, len(slots)), ks: l.xv, vs: l.xv, kc: l.cv, vc: l.cv, kScale: cs.drawScale(r), vScale: cs.drawScale(r)}
			c.nq, c.nk, c.nv = extent(c.qs, len(slots), hd), extent(c.ks, len(slots), hd), extent(c.vs, len(slots), hd)
			c.nkc, c.nvc = extent(c.kc, rows, e), extent(c.vc, rows, e)
			if cs.s.k.Norm != nil {
				c.qw, c.kw = cs.s.drawWeights(r, cs.s.weightsLen(2*hk)), cs.s.drawWeights(r, cs.s.weightsLen(hk))
			}
			calls = append(calls, c)
		}
	}
	return calls
}

// checkPrepGuard makes Prep's guard calls (checkGuarded): each buffer (the
// queries, keys, values, both caches, the slots, the positions and the
// weights) flush against a guard page.
func checkPrepGuard[C CacheElem](t tb, cs *cacheSuite[C]) {
	checkGuarded(t, cs.s.backendsOrOnly(), 0x70677264, cs.prepEntries())
}

// checkPrepPanics makes Prep's bad calls on every backend (checkEdges):
// each must panic with a message naming Prep, the argument and its value,
// and leave every buffer as it was.
func checkPrepPanics[C CacheElem](t tb, cs *cacheSuite[C]) {
	checkEdges(t, cs.s.backendsOrOnly(), cs.prepEntries())
}

// prepBad is a Prep call that must panic, and the words its message must
// hold besides Prep.
type prepBad struct {
	what  string
	c     *prepCall
	words []string
}

// prepBase is the valid call badPrepCalls breaks: 3 tokens of 2 query
// heads and 1 key and value head into slots 1, 2, 3 of caches of 6 rows,
// weights of 1 with a norm.
func (cs *cacheSuite[C]) prepBase() *prepCall {
	s, hd, e := cs.s, cs.s.hd, cs.ref.cacheHead
	const hq, hk, rows, tokens = 2, 1, 6, 3
	c := &prepCall{what: "a bad call", tokens: tokens, rows: rows, slots: []int64{1, 2, 3}, pos: []int32{0, 1, 2},
		qs: Strides{hq, hd, hq * hd}, ks: Strides{hk, hd, hk * hd}, vs: Strides{hk, hd, hk * hd},
		kc: Strides{hk, e, hk * e}, vc: Strides{hk, e, hk * e}, kScale: 1, vScale: 1}
	c.nq, c.nk, c.nv = tokens*hq*hd, tokens*hk*hd, tokens*hk*hd
	c.nkc, c.nvc = rows*hk*e, rows*hk*e
	if s.k.Norm != nil {
		c.qw, c.kw = make([]float64, s.weightsLen(hq)), make([]float64, s.weightsLen(hk))
		for i := range c.qw {
			c.qw[i] = 1
		}
		for i := range c.kw {
			c.kw[i] = 1
		}
	}
	return c
}

// badPrepCalls are Prep's bad calls, each breaking one rule of prepBase,
// with the bad value in the last token where there is one (a Prep that
// checked token by token as it wrote would have written the first).
func (cs *cacheSuite[C]) badPrepCalls() []prepBad {
	return append(append(cs.badPrepSlots(), cs.badPrepViews()...), cs.badPrepScales()...)
}

// badPrepSlots breaks the slots and positions.
func (cs *cacheSuite[C]) badPrepSlots() []prepBad {
	s := cs.s
	const rows, tokens = 6, 3
	var bad []prepBad
	add := func(what string, change func(c *prepCall), words ...string) {
		c := cs.prepBase()
		change(c)
		bad = append(bad, prepBad{what, c, words})
	}
	add("a slot past the last row", func(c *prepCall) { c.slots[2] = rows }, fmt.Sprintf("s.Slots[2] = %d", rows))
	add("a slot below -1", func(c *prepCall) { c.slots[2] = -2 }, "s.Slots[2] = -2")
	add("a slot listed twice", func(c *prepCall) { c.slots[2] = 1 }, "s.Slots[2] = 1", "s.Slots[0]")
	add("fewer slots than tokens", func(c *prepCall) { c.slots = c.slots[:2] }, fmt.Sprintf("len(pos) = %d", s.posLen(tokens)), "len(s.Slots) = 2")
	add("a position past the table", func(c *prepCall) { c.pos[2] = int32(s.n) }, fmt.Sprintf("%s = %d", s.posAt(2), s.n))
	add("a negative position", func(c *prepCall) { c.pos[2] = -1 }, s.posAt(2)+" = -1")
	return bad
}

// badPrepViews breaks the buffers' lengths and views and the weights.
func (cs *cacheSuite[C]) badPrepViews() []prepBad {
	hd, e := cs.s.hd, cs.ref.cacheHead
	const hq, hk, rows, tokens = 2, 1, 6, 3
	var bad []prepBad
	add := func(what string, change func(c *prepCall), words ...string) {
		c := cs.prepBase()
		change(c)
		bad = append(bad, prepBad{what, c, words})
	}
	add("a query buffer one value short", func(c *prepCall) { c.nq-- }, "s.QS")
	add("a key buffer one value short", func(c *prepCall) { c.nk-- }, "s.KS")
	add("a value buffer one value short", func(c *prepCall) { c.nv-- }, "s.VS")
	add("query heads overlapping", func(c *prepCall) { c.qs.Head = hd - 1 }, "s.QS", "overlap")
	add("a key cache of other heads than the keys", func(c *prepCall) { c.kc.Heads, c.kc.Token = 2, 2*e }, "s.KCache.Heads = 2", "s.KS.Heads")
	add("a key cache one element short", func(c *prepCall) { c.slots[2], c.nkc = rows-1, c.nkc-1 }, fmt.Sprintf("s.Slots[2] = %d", rows-1), "s.KCache")
	add("a value cache one element short", func(c *prepCall) { c.slots[2], c.nvc = rows-1, c.nvc-1 }, fmt.Sprintf("s.Slots[2] = %d", rows-1), "s.VCache")
	add("keys overlapping the queries", func(c *prepCall) {
		c.fused, c.nq = true, tokens*(hq+2*hk)*hd
		c.qs.Token, c.ks.Token, c.vs.Token = (hq+2*hk)*hd, (hq+2*hk)*hd, (hq+2*hk)*hd
		c.ko, c.vo = hd, (hq+hk)*hd
	}, "s.Q", "s.K", "overlap")
	add("a value cache whose rows overlap the key cache's", func(c *prepCall) { c.sharedCache, c.vco, c.nkc = true, e, rows*hk*e+e }, "s.KCache and s.VCache")
	if cs.s.k.Norm != nil && cs.s.weighted() {
		add("query weights one short", func(c *prepCall) { c.qw = c.qw[:len(c.qw)-1] }, "s.QW")
		add("key weights one long", func(c *prepCall) { c.kw = append(c.kw, 1) }, "s.KW")
	} else {
		add("weights the norm does not take", func(c *prepCall) { c.qw = make([]float64, hd) }, "s.QW")
	}
	return bad
}

// badPrepScales breaks the scales of a format with a scale per call: zero,
// negative, NaN and infinite scales of either cache.
func (cs *cacheSuite[C]) badPrepScales() []prepBad {
	if !cs.ref.scaled {
		return nil
	}
	var bad []prepBad
	scale := "'s scale = " // with Cache.HeadScales, head 0's is the bad one
	if cs.c.HeadScales {
		scale = "'s scales[0] = "
	}
	for _, v := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
		c := cs.prepBase()
		c.kScale = v
		bad = append(bad, prepBad{fmt.Sprintf("key scale %v", v), c, []string{"s.KCache" + scale + fmt.Sprint(v)}})
		c = cs.prepBase()
		c.vScale = v
		bad = append(bad, prepBad{fmt.Sprintf("value scale %v", v), c, []string{"s.VCache" + scale + fmt.Sprint(v)}})
	}
	return bad
}
