package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
)

// guardCacheCalls are the calls checkCacheGuard makes: every form on
// token-major and head-major caches, with and without gaps, whose slice
// ends exactly at the end of its last row, with slots that include the
// first and the last row (and a skipped token), for 1…9 heads.
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

// checkCacheGuard makes every guardCacheCalls call on every backend with
// each buffer (the cache, the float32 tokens, the slots, the positions or
// deltas) flush against a PROT_NONE page, once with the page right after
// the buffers and once right before them. A read or write past either end
// of a buffer faults, which fails the check; the canary around each buffer
// must come back unchanged, and the result must be the same call's bits on
// ordinary memory.
func checkCacheGuard[C CacheElem](t tb, cs *cacheSuite[C]) {
	if !guardSupported {
		t.Skipf("SKIPPED: guard pages (mmap, mprotect PROT_NONE) are only implemented on linux, not %s", runtime.GOOS)
	}
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x6367756172))
	calls := cs.guardCacheCalls(r)
	maxC, maxX := 1, 1
	for _, c := range calls {
		maxC, maxX = max(maxC, c.nc), max(maxX, c.nx)
	}
	n := 0
	for _, atEnd := range []bool{true, false} {
		side := guardSide(atEnd)
		cg := mustGuarded[C](t, maxC, atEnd)
		defer cg.free()
		xg := mustGuarded[float32](t, maxX, atEnd)
		defer xg.free()
		sg := mustGuarded[int64](t, 8, atEnd)
		defer sg.free()
		pg := mustGuarded[int32](t, 8, atEnd)
		defer pg.free()
		for _, b := range bs {
			b.Use()
			for _, c := range calls {
				st := cs.state(r, c)
				wantC, wantX := toElems[C](st.cache), slices.Clone(st.x)
				cs.invoke(c, wantC, wantX)

				gc := *c
				cache, x := cg.slice(c.nc), xg.slice(c.nx)
				copy(cache, toElems[C](st.cache))
				copy(x, st.x)
				gc.slots = sg.slice(len(c.slots))
				copy(gc.slots, c.slots)
				ns := len(c.pos) + len(c.delta)
				if c.pos != nil {
					gc.pos = pg.slice(ns)
					copy(gc.pos, c.pos)
				}
				if c.delta != nil {
					gc.delta = pg.slice(ns)
					copy(gc.delta, c.delta)
				}
				what := fmt.Sprintf("backend %s: %v, on buffers %s", b.Name, c, side)
				addr, faulted, msg, panicked := faultCall(func() { cs.invoke(&gc, cache, x) })
				n++
				switch {
				case faulted:
					where := faultWhere(cg.locate("cache", addr, c.nc), xg.locate("tokens", addr, c.nx),
						sg.locate("slots", addr, len(c.slots)), pg.locate("pos or delta", addr, ns))
					t.Fatalf("guard: %s: memory fault at %#x (%s): %s", what, addr, where, msg)
				case panicked:
					t.Fatalf("guard: %s: panicked: %s", what, msg)
				}
				for _, ck := range []struct {
					name string
					f    func() string
				}{
					{"cache", func() string { return cg.checkCanary(c.nc) }},
					{"tokens", func() string { return xg.checkCanary(c.nx) }},
					{"slots", func() string { return sg.checkCanary(len(c.slots)) }},
					{"pos or delta", func() string { return pg.checkCanary(ns) }},
				} {
					if d := ck.f(); d != "" {
						t.Fatalf("guard: %s: %s: %s", what, ck.name, d)
					}
				}
				if !slices.Equal(gc.slots, c.slots) {
					t.Fatalf("guard: %s: slots changed to %v", what, gc.slots)
				}
				if !slices.Equal(fromElems(cache), fromElems(wantC)) {
					t.Fatalf("guard: %s: the cache differs from the same call on ordinary memory", what)
				}
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(wantX[i]) {
						t.Fatalf("guard: %s: token value %d = %#08x, but %#08x on ordinary memory", what, i, math.Float32bits(x[i]), math.Float32bits(wantX[i]))
					}
				}
				cg.reset(c.nc)
				xg.reset(c.nx)
				sg.reset(len(c.slots))
				pg.reset(ns)
			}
		}
	}
	t.Logf("guard: %d cache calls on buffers flush against PROT_NONE pages (%d backends × both ends × %d calls; seed %d): no fault, canaries intact, same bits as on ordinary memory",
		n, len(bs), len(calls), sd)
}

// badCacheCall is a call that must panic before it writes anything, and
// the words its message must hold.
type badCacheCall struct {
	what  string
	c     *cacheCall
	words []string
}

// badCacheCalls are, for op, the calls checkCachePanics makes: each breaks
// one rule, with the bad value in the last token so that a form that
// checked token by token, as it wrote, would have written the first.
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
		bad = append(bad, badCacheCall{what, c, append([]string{op.String()}, words...)})
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

// checkCachePanics makes every badCacheCalls call of every form on every
// backend: each must panic with a message naming the form, the argument and
// its value, and leave every buffer as it was.
func checkCachePanics[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	r := rand.New(rand.NewPCG(seed(), 0x7061))
	n := 0
	for _, b := range bs {
		b.Use()
		for op := range cacheOp(4) {
			for _, bc := range cs.badCacheCalls(op) {
				c := bc.c
				st := cs.state(r, c)
				cache, x := toElems[C](st.cache), slices.Clone(st.x)
				msg, panicked := catch(func() { cs.invoke(c, cache, x) })
				n++
				if !panicked {
					t.Fatalf("backend %s: %v with %s: did not panic", b.Name, op, bc.what)
				}
				for _, w := range bc.words {
					if !strings.Contains(msg, w) {
						t.Fatalf("backend %s: %v with %s: panicked with %q, which does not say %q", b.Name, op, bc.what, msg, w)
					}
				}
				if !slices.Equal(fromElems(cache), st.cache) {
					t.Fatalf("backend %s: %v with %s: panicked (%q) after writing to the cache", b.Name, op, bc.what, msg)
				}
				for i := range x {
					if math.Float32bits(x[i]) != math.Float32bits(st.x[i]) {
						t.Fatalf("backend %s: %v with %s: panicked (%q) after writing token value %d", b.Name, op, bc.what, msg, i)
					}
				}
			}
		}
	}
	t.Logf("%d bad calls panicked naming the form, the argument and the value, with nothing written", n)
}
