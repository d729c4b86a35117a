package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// PrepStep is one call of a package's Prep (docs/contract.md §13) in
// verify's terms: the queries, keys and values with their views and the
// QK-norm's weights (nil without), the key and value caches (of the
// Cache's type) with their views and e4m3 scales (1 for the other types),
// and the slots. V and VCache nil: a step without values.
type PrepStep[C CacheElem] struct {
	Q      []float32
	QS     Strides
	QW     []float32
	K      []float32
	KS     Strides
	KW     []float32
	V      []float32
	VS     Strides
	KCache []C
	KC     Strides
	KScale float32
	VCache []C
	VC     Strides
	VScale float32
	Slots  []int64
}

// prepCall is one Prep call verify makes. The queries are in buffer q at
// qo; the keys and values in buffers k and v at ko and vo, or with fused in
// q's buffer (one row per token: the queries' heads, the keys', the
// values'). The values' cache is its own buffer, or with sharedCache the
// keys' at vco.
type prepCall struct {
	what        string
	tokens      int
	fused       bool
	noValues    bool
	sharedCache bool
	qs, ks, vs  Strides
	qo, ko, vo  int
	nq, nk, nv  int
	kc, vc      Strides
	vco         int
	nkc, nvc    int
	rows        int
	slots       []int64
	pos         []int32
	kScale      float32
	vScale      float32
	qw, kw      []float64
}

func (c *prepCall) String() string {
	s := fmt.Sprintf("Prep (%s): %d tokens, q %+v (len %d), k %+v", c.what, c.tokens, c.qs, c.nq, c.ks)
	if !c.noValues {
		s += fmt.Sprintf(", v %+v", c.vs)
	}
	s += fmt.Sprintf("; caches k %+v (len %d), v %+v (len %d); slots %v pos %v", c.kc, c.nkc, c.vc, c.nvc, c.slots, c.pos)
	if c.kScale != 1 || c.vScale != 1 {
		s += fmt.Sprintf(" scales %v, %v", c.kScale, c.vScale)
	}
	return s
}

// prepState is the memory of a Prep call: the float32 buffers (k and v
// empty when fused) and the caches' elements as bits (vc empty when the
// caches share kc).
type prepState struct {
	q, k, v []float32
	kc, vc  []uint32
	// kd and vd mark, in a q8_0 cache, the first byte of every block's
	// f16 scale d that the call writes (nil for other types): a NaN d
	// may keep another payload on another path.
	kd, vd []bool
}

func (st prepState) clone() prepState {
	return prepState{slices.Clone(st.q), slices.Clone(st.k), slices.Clone(st.v), slices.Clone(st.kc), slices.Clone(st.vc), st.kd, st.vd}
}

// markScales marks in d the first byte of every q8_0 block the heads of
// view cv take in cache rows slots, the cache starting at off.
func markScales(d []bool, off int, cv Strides, heads, hd int, slots []int64) {
	for _, slot := range slots {
		if slot < 0 {
			continue
		}
		for h := range heads {
			for b := range hd / 32 {
				if i := off + head(cv, int(slot), h) + q8Bytes*b; i < len(d) {
					d[i] = true
				}
			}
		}
	}
}

// bufs returns the buffers holding the keys and the values.
func (c *prepCall) bufs(st prepState) (k, v []float32) {
	if c.fused {
		return st.q, st.q
	}
	return st.k, st.v
}

// drawPrep draws a Prep call: 1…9 query heads, a divisor of them as key
// heads (grouped-query attention), 0…rows tokens (often one, a decode
// step), the caches' and tokens' layouts of the cache checks, q, k and v in
// three buffers or as the rows of one (fused QKV), sometimes no values, the
// slots of slotPattern.
func (cs *cacheSuite[C]) drawPrep(r *rand.Rand) *prepCall {
	rows := 1 + r.IntN(16)
	tokens := r.IntN(rows + 1)
	if r.IntN(3) == 0 {
		tokens = 1
	}
	return cs.drawPrepSized(r, rows, tokens)
}

// drawPrepSized is drawPrep for a cache of rows rows and tokens tokens.
func (cs *cacheSuite[C]) drawPrepSized(r *rand.Rand, rows, tokens int) *prepCall {
	s, hd, e := cs.s, cs.s.hd, cs.ref.cacheHead
	hq := 1 + r.IntN(9)
	var divs []int
	for d := 1; d <= hq; d++ {
		if hq%d == 0 {
			divs = append(divs, d)
		}
	}
	hk := divs[r.IntN(len(divs))]
	ls := cs.layouts(hk, rows, tokens)
	lk, lv := ls[r.IntN(len(ls))], ls[r.IntN(len(ls))]
	slots, what := slotPattern(r, rows, tokens)
	c := &prepCall{what: lk.name + ", " + what, tokens: tokens, rows: rows, slots: slots, pos: s.positions(r, tokens),
		kc: lk.cv, vc: lv.cv, kScale: cs.drawScale(r), vScale: cs.drawScale(r), noValues: r.IntN(6) == 0}
	c.nkc = extent(c.kc, rows, e) + r.IntN(2)
	c.nvc = extent(c.vc, rows, e) + r.IntN(2)
	if r.IntN(4) == 0 {
		c.fused = true
		c.what = "fused QKV rows, " + what
		row := (hq+2*hk)*hd + r.IntN(3)
		c.qs, c.ks = Strides{hq, hd, row}, Strides{hk, hd, row}
		c.vs = c.ks
		c.ko, c.vo = hq*hd, (hq+hk)*hd
		c.nq = max(tokens, 1) * row // a row even for no tokens: K and V start in it
	} else {
		qv := cs.layouts(hq, rows, tokens)[r.IntN(3)].xv // the token views of the first cache layout
		c.qs, c.ks, c.vs = s.fit(qv, tokens), lk.xv, lv.xv
		c.qo = r.IntN(3)
		c.nq = c.qo + extent(c.qs, tokens, hd) + r.IntN(3)
		c.nk = extent(c.ks, tokens, hd) + r.IntN(3)
		c.nv = extent(c.vs, tokens, hd) + r.IntN(3)
	}
	if s.k.Norm != nil {
		c.qw, c.kw = s.drawWeights(r, s.weightsLen(hq)), s.drawWeights(r, s.weightsLen(hk))
	}
	return c
}

// prepState draws the memory of c: random caches (any bits) and values for
// the norm and the rotation (specials too; for e4m3 often near the scale).
func (cs *cacheSuite[C]) prepState(r *rand.Rand, c *prepCall) prepState {
	st := prepState{q: make([]float32, c.nq), k: make([]float32, c.nk), v: make([]float32, c.nv)}
	for _, b := range [][]float32{st.q, st.k, st.v} {
		if cs.s.k.Norm != nil {
			copy(b, cs.s.normValues(r, len(b)))
		} else {
			for i := range b {
				b[i] = cs.s.c.fromBits(cs.s.c.f.special(r.Uint64(), false))
			}
		}
		if cs.ref.scaled && r.IntN(2) == 0 {
			for i := range b {
				b[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(20)-10)) * c.kScale
			}
		}
	}
	mask := uint32(1)<<(8*cs.ref.size()) - 1
	st.kc = make([]uint32, c.nkc)
	if !c.sharedCache {
		st.vc = make([]uint32, c.nvc)
	}
	for _, b := range [][]uint32{st.kc, st.vc} {
		for i := range b {
			b[i] = r.Uint32() & mask
		}
	}
	if cs.ref.blocks {
		hd := cs.s.hd
		st.kd = make([]bool, len(st.kc))
		markScales(st.kd, 0, c.kc, c.ks.Heads, hd, c.slots)
		switch {
		case c.noValues:
		case c.sharedCache:
			markScales(st.kd, c.vco, c.vc, c.vs.Heads, hd, c.slots)
		default:
			st.vd = make([]bool, len(st.vc))
			markScales(st.vd, 0, c.vc, c.vs.Heads, hd, c.slots)
		}
	}
	return st
}

// prepStep is c's PrepStep on the buffers of st, with the caches' elements
// kc and vc (vc unused with sharedCache) and the given slots.
func prepStep[C CacheElem](c *prepCall, st prepState, kc, vc []C, slots []int64) PrepStep[C] {
	kb, vb := c.bufs(st)
	p := PrepStep[C]{
		Q: st.q[c.qo:], QS: c.qs, QW: to32(c.qw),
		K: kb[c.ko:], KS: c.ks, KW: to32(c.kw),
		KCache: kc, KC: c.kc, KScale: c.kScale,
		Slots: slots,
	}
	if !c.noValues {
		p.V, p.VS, p.VCache, p.VC, p.VScale = vb[c.vo:], c.vs, vc, c.vc, c.vScale
		if c.sharedCache {
			p.VCache = kc[c.vco:]
		}
	}
	return p
}

// prep makes c on a copy of st with the package's Prep on the suite's
// table and returns the memory it leaves.
func (cs *cacheSuite[C]) prep(c *prepCall, st prepState) prepState {
	got := st.clone()
	kc, vc := toElems[C](got.kc), toElems[C](got.vc)
	cs.c.Prep(cs.s.tab, prepStep(c, got, kc, vc, c.slots), c.pos)
	got.kc, got.vc = fromElems(kc), fromElems(vc)
	return got
}

// separate makes c as the separate calls that define Prep's bits:
// ApplyNormQK (ApplyQK without a norm) on the queries and on a copy of the
// keys, then Store of the keys' copy and of the values. It returns the
// memory Prep must leave: the queries turned, the keys and values as they
// were, the caches written.
func (cs *cacheSuite[C]) separate(c *prepCall, st prepState) prepState {
	s, hd := cs.s, cs.s.hd
	want, work := st.clone(), st.clone()
	kb, _ := c.bufs(work)
	q, k := work.q[c.qo:], kb[c.ko:]
	if s.k.Norm != nil {
		s.applyNorm(q, c.qs, c.qw, k, c.ks, c.kw, c.pos)
	} else {
		s.k.Strided.ApplyQK(s.tab, q, c.qs, k, c.ks, c.pos)
	}
	for j := range c.tokens {
		for h := range c.qs.Heads {
			o := c.qo + head(c.qs, j, h)
			copy(want.q[o:o+hd], work.q[o:o+hd])
		}
	}
	kc := toElems[C](want.kc)
	cs.c.Store(kc, c.kScale, c.kc, c.slots, k, c.ks)
	if !c.noValues {
		_, vb := c.bufs(st)
		vc := toElems[C](want.vc)
		if c.sharedCache {
			vc = kc[c.vco:]
		}
		cs.c.Store(vc, c.vScale, c.vc, c.slots, vb[c.vo:], c.vs)
		if !c.sharedCache {
			want.vc = fromElems(vc)
		}
	}
	want.kc = fromElems(kc)
	return want
}

// comparePrep returns "" if got has want's bits, else what differs: every
// float32 bit for bit; every cache element too, but that two NaNs of an
// f32, f16, bf16 or e4m3 cache match (a NaN's payload may come out of
// Prep's fused path other than out of the separate calls).
func (cs *cacheSuite[C]) comparePrep(got, want prepState) string {
	for _, b := range []struct {
		name      string
		got, want []float32
	}{{"the queries' buffer", got.q, want.q}, {"the keys' buffer", got.k, want.k}, {"the values' buffer", got.v, want.v}} {
		for i := range b.got {
			if math.Float32bits(b.got[i]) != math.Float32bits(b.want[i]) {
				return fmt.Sprintf("%s[%d] = %v (%#08x), the separate calls leave %v (%#08x)", b.name, i, b.got[i], math.Float32bits(b.got[i]), b.want[i], math.Float32bits(b.want[i]))
			}
		}
	}
	kd, vd := want.kd, want.vd
	if kd == nil {
		kd, vd = got.kd, got.vd
	}
	for _, b := range []struct {
		name      string
		got, want []uint32
		d         []bool
	}{{"the key cache", got.kc, want.kc, kd}, {"the value cache", got.vc, want.vc, vd}} {
		for i := range b.got {
			if b.got[i] == b.want[i] {
				continue
			}
			if !cs.ref.blocks {
				if cs.ref.firstDiff(b.got[i:i+1], b.want[i:i+1], 1) < 0 {
					continue // two NaNs
				}
			} else if j := i - 1; b.d != nil && (b.d[i] || j >= 0 && b.d[j]) {
				if b.d[i] {
					j = i
				}
				if j+1 < len(b.got) && cs.ref.firstDiff(b.got[j:j+2], b.want[j:j+2], 1) < 0 {
					continue // two NaN scales d
				}
			}
			return fmt.Sprintf("%s element %d = %#x, the separate calls store %#x", b.name, i, b.got[i], b.want[i])
		}
	}
	return ""
}

// runPrep runs the Prep checks of a cache type, when its Cache describes
// Prep, with the suite's QK-norm (none without Kernel.Norm).
func runPrep[C CacheElem](t *testing.T, cs *cacheSuite[C]) {
	if cs.c.Prep == nil {
		t.Log("the Cache describes no Prep")
		return
	}
	t.Run("prep", func(t *testing.T) { checkPrepBits(t, cs) })
	t.Run("prep-batch", func(t *testing.T) { checkPrepBatch(t, cs) })
	t.Run("prep-guard", func(t *testing.T) { checkPrepGuard(t, cs) })
	t.Run("prep-panics", func(t *testing.T) { checkPrepPanics(t, cs) })
}

// runPrepForms runs the Prep checks of every cache type of s's Kernel:
// RunNorm's, for a model whose QK-norm Run has not seen.
func runPrepForms[T Elem](t *testing.T, s *suite[T]) {
	sf, ok := any(s).(*suite[float32])
	if !ok || len(s.k.Caches) == 0 {
		return
	}
	for _, c := range s.k.Caches {
		t.Run(c.cacheType(), func(t *testing.T) { c.prep(t, sf) })
	}
}

// prepName says which separate calls Prep's bits are those of.
func (cs *cacheSuite[C]) prepName() string {
	if n := cs.s.k.Norm; n != nil {
		return fmt.Sprintf("ApplyNormQK (%s/%s%s, ε %v)", n.Kind, n.Scope, map[bool]string{true: "/after"}[n.After], n.Eps)
	}
	return "ApplyQK"
}

// checkPrepBits draws Prep calls and checks, on every backend, that each
// leaves the bits the separate calls leave: the queries normalized and
// turned as ApplyNormQK (ApplyQK) turns them, the keys and values as they
// were, the key cache holding Store of the keys ApplyNormQK turns, the
// value cache Store of the values, every other element of every buffer
// unchanged.
func checkPrepBits[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x70726570))
	calls := 120
	if testing.Short() {
		calls = 30
	}
	for range calls {
		c := cs.drawPrep(r)
		st := cs.prepState(r, c)
		for _, b := range bs {
			b.Use()
			want := cs.separate(c, st)
			var got prepState
			if msg, panicked := catch(func() { got = cs.prep(c, st) }); panicked {
				t.Fatalf("backend %s: %v: panicked: %s (seed %d)", b.Name, c, msg, sd)
			}
			if d := cs.comparePrep(got, want); d != "" {
				t.Fatalf("backend %s: %v: %s, with %s (seed %d)", b.Name, c, d, cs.prepName(), sd)
			}
		}
	}
	t.Logf("prep: %d calls on %d backends: the bits of %s and Store of the keys and of the values (seed %d)", calls, len(bs), cs.prepName(), sd)
}

// checkPrepBatch checks Batch.Prep, a decode step of tokens at scattered
// positions with a skipped (−1) slot among them, on every backend against
// Table.Prep token by token on one-position range tables.
func checkPrepBatch[C CacheElem](t tb, cs *cacheSuite[C]) {
	s, k := cs.s, &cs.s.k
	if cs.c.BatchPrep == nil || k.Runtime == nil || k.Runtime.NewBatch == nil {
		t.Logf("the kernel describes no Batch.Prep")
		return
	}
	bs := s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x627072))
	for _, be := range bs {
		be.Use()
		for range 4 {
			c := cs.drawPrepSized(r, 8, 5)
			c.pos = []int32{5, 1 << 29, 131071, 700_000, 0}
			c.slots = []int64{6, -1, 0, 7, 2}
			st := cs.prepState(r, c)
			bt := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), len(c.pos))
			bt.Set(c.pos)
			got := st.clone()
			kc, vc := toElems[C](got.kc), toElems[C](got.vc)
			cs.c.BatchPrep(bt, prepStep(c, got, kc, vc, c.slots))
			got.kc, got.vc = fromElems(kc), fromElems(vc)
			want := st.clone()
			wkc, wvc := toElems[C](want.kc), toElems[C](want.vc)
			for j, p := range c.pos {
				tab := k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), int(p), 1)
				one := prepStep(c, want, wkc, wvc, c.slots[j:j+1])
				one.Q, one.K = one.Q[j*c.qs.Token:], one.K[j*c.ks.Token:]
				if one.V != nil {
					one.V = one.V[j*c.vs.Token:]
				}
				cs.c.Prep(tab, one, c.pos[j:j+1])
			}
			want.kc, want.vc = fromElems(wkc), fromElems(wvc)
			if d := cs.comparePrep(got, want); d != "" {
				t.Fatalf("backend %s: Batch.Prep of %v: %s; Table.Prep token by token differs (seed %d)", be.Name, c, d, sd)
			}
		}
	}
	t.Logf("Batch.Prep = Table.Prep token by token on %d backends (seed %d)", len(bs), sd)
}

// guardPrepCalls are the calls checkPrepGuard makes: for 1…4 key heads
// and twice as many query heads, every cache and token layout of the cache
// checks, every buffer exactly as long as its view needs, slots that
// include the first and the last row and a skipped token.
func (cs *cacheSuite[C]) guardPrepCalls(r *rand.Rand) []*prepCall {
	var calls []*prepCall
	hd, e := cs.s.hd, cs.ref.cacheHead
	const rows = 5
	slots := []int64{rows - 1, -1, 0, 2}
	for hk := 1; hk <= 4; hk++ {
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

// checkPrepGuard makes every guardPrepCalls call on every backend with each
// buffer (the queries, keys, values, both caches, the slots, the positions
// and the weights) flush against a PROT_NONE page, once right after it and
// once right before it: a read or write past either end faults, the canary
// around each buffer must come back unchanged, and the result must be the
// call's on ordinary memory.
func checkPrepGuard[C CacheElem](t tb, cs *cacheSuite[C]) {
	if !guardSupported {
		t.Skipf("SKIPPED: guard pages (mmap, mprotect PROT_NONE) are only implemented on linux, not %s", runtime.GOOS)
	}
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x70677264))
	calls := cs.guardPrepCalls(r)
	var maxQ, maxK, maxV, maxKC, maxVC, maxW = 1, 1, 1, 1, 1, 1
	for _, c := range calls {
		maxQ, maxK, maxV = max(maxQ, c.nq), max(maxK, c.nk), max(maxV, c.nv)
		maxKC, maxVC = max(maxKC, c.nkc), max(maxVC, c.nvc)
		maxW = max(maxW, len(c.qw), len(c.kw))
	}
	n := 0
	for _, atEnd := range []bool{true, false} {
		side := guardSide(atEnd)
		qg, kg, vg := mustGuarded[float32](t, maxQ, atEnd), mustGuarded[float32](t, maxK, atEnd), mustGuarded[float32](t, maxV, atEnd)
		kcg, vcg := mustGuarded[C](t, maxKC, atEnd), mustGuarded[C](t, maxVC, atEnd)
		qwg, kwg := mustGuarded[float32](t, maxW, atEnd), mustGuarded[float32](t, maxW, atEnd)
		sg, pg := mustGuarded[int64](t, 8, atEnd), mustGuarded[int32](t, 8, atEnd)
		for _, b := range bs {
			b.Use()
			for _, c := range calls {
				st := cs.prepState(r, c)
				want := cs.prep(c, st)
				q, k, v := qg.slice(c.nq), kg.slice(c.nk), vg.slice(c.nv)
				copy(q, st.q)
				copy(k, st.k)
				copy(v, st.v)
				kc, vc := kcg.slice(c.nkc), vcg.slice(c.nvc)
				copy(kc, toElems[C](st.kc))
				copy(vc, toElems[C](st.vc))
				slots := sg.slice(len(c.slots))
				copy(slots, c.slots)
				pos := pg.slice(len(c.pos))
				copy(pos, c.pos)
				p := prepStep(c, prepState{q: q, k: k, v: v}, kc, vc, slots)
				if c.qw != nil {
					p.QW, p.KW = qwg.slice(len(c.qw)), kwg.slice(len(c.kw))
					copy(p.QW, to32(c.qw))
					copy(p.KW, to32(c.kw))
				}
				what := fmt.Sprintf("backend %s: %v, on buffers %s", b.Name, c, side)
				addr, faulted, msg, panicked := faultCall(func() { cs.c.Prep(cs.s.tab, p, pos) })
				n++
				switch {
				case faulted:
					where := faultWhere(qg.locate("q", addr, c.nq), kg.locate("k", addr, c.nk), vg.locate("v", addr, c.nv),
						kcg.locate("the key cache", addr, c.nkc), vcg.locate("the value cache", addr, c.nvc),
						qwg.locate("q's weights", addr, len(c.qw)), kwg.locate("k's weights", addr, len(c.kw)),
						sg.locate("slots", addr, len(c.slots)), pg.locate("pos", addr, len(c.pos)))
					t.Fatalf("guard: %s: memory fault at %#x (%s): %s", what, addr, where, msg)
				case panicked:
					t.Fatalf("guard: %s: panicked: %s", what, msg)
				}
				for _, ck := range []struct {
					name string
					d    string
				}{
					{"q", qg.checkCanary(c.nq)}, {"k", kg.checkCanary(c.nk)}, {"v", vg.checkCanary(c.nv)},
					{"the key cache", kcg.checkCanary(c.nkc)}, {"the value cache", vcg.checkCanary(c.nvc)},
					{"q's weights", qwg.checkCanary(len(c.qw))}, {"k's weights", kwg.checkCanary(len(c.kw))},
					{"slots", sg.checkCanary(len(c.slots))}, {"pos", pg.checkCanary(len(c.pos))},
				} {
					if ck.d != "" {
						t.Fatalf("guard: %s: %s: %s", what, ck.name, ck.d)
					}
				}
				got := prepState{q: slices.Clone(q), k: slices.Clone(k), v: slices.Clone(v), kc: fromElems(kc), vc: fromElems(vc)}
				if d := cs.comparePrep(got, want); d != "" {
					t.Fatalf("guard: %s: %s differs from the same call on ordinary memory", what, d)
				}
				if !slices.Equal(slots, c.slots) || !slices.Equal(pos, c.pos) {
					t.Fatalf("guard: %s: the slots or positions changed", what)
				}
				qg.reset(c.nq)
				kg.reset(c.nk)
				vg.reset(c.nv)
				kcg.reset(c.nkc)
				vcg.reset(c.nvc)
				qwg.reset(len(c.qw))
				kwg.reset(len(c.kw))
				sg.reset(len(c.slots))
				pg.reset(len(c.pos))
			}
		}
		for _, g := range []interface{ free() }{qg, kg, vg, kcg, vcg, qwg, kwg, sg, pg} {
			g.free()
		}
	}
	t.Logf("guard: %d Prep calls on buffers flush against PROT_NONE pages (%d backends × both ends × %d calls; seed %d): no fault, canaries intact, same bits as on ordinary memory", n, len(bs), len(calls), sd)
}

// badPrepCalls are the Prep calls checkPrepPanics makes, each breaking one
// rule, with the bad value in the last token where there is one (a Prep
// that checked token by token as it wrote would have written the first),
// and the words the panic must hold.
func (cs *cacheSuite[C]) badPrepCalls() []struct {
	what  string
	c     *prepCall
	words []string
} {
	s, hd, e := cs.s, cs.s.hd, cs.ref.cacheHead
	const hq, hk, rows, tokens = 2, 1, 6, 3
	base := func() *prepCall {
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
	var bad []struct {
		what  string
		c     *prepCall
		words []string
	}
	add := func(what string, c *prepCall, words ...string) {
		bad = append(bad, struct {
			what  string
			c     *prepCall
			words []string
		}{what, c, append([]string{"Prep"}, words...)})
	}
	c := base()
	c.slots[2] = rows
	add("a slot past the last row", c, fmt.Sprintf("s.Slots[2] = %d", rows))
	c = base()
	c.slots[2] = -2
	add("a slot below -1", c, "s.Slots[2] = -2")
	c = base()
	c.slots[2] = 1
	add("a slot listed twice", c, "s.Slots[2] = 1", "s.Slots[0]")
	c = base()
	c.slots = c.slots[:2]
	add("fewer slots than tokens", c, fmt.Sprintf("len(pos) = %d", s.posLen(tokens)), "len(s.Slots) = 2")
	c = base()
	c.pos[2] = int32(s.n)
	add("a position past the table", c, fmt.Sprintf("%s = %d", s.posAt(2), s.n))
	c = base()
	c.pos[2] = -1
	add("a negative position", c, s.posAt(2)+" = -1")
	c = base()
	c.nq--
	add("a query buffer one value short", c, "s.QS")
	c = base()
	c.nk--
	add("a key buffer one value short", c, "s.KS")
	c = base()
	c.nv--
	add("a value buffer one value short", c, "s.VS")
	c = base()
	c.qs.Head = hd - 1
	add("query heads overlapping", c, "s.QS", "overlap")
	c = base()
	c.kc.Heads, c.kc.Token = 2, 2*e
	add("a key cache of other heads than the keys", c, "s.KCache.Heads = 2", "s.KS.Heads")
	c = base()
	c.slots[2] = rows - 1
	c.nkc--
	add("a key cache one element short", c, fmt.Sprintf("s.Slots[2] = %d", rows-1), "s.KCache")
	c = base()
	c.slots[2] = rows - 1
	c.nvc--
	add("a value cache one element short", c, fmt.Sprintf("s.Slots[2] = %d", rows-1), "s.VCache")
	c = base()
	c.fused, c.nq = true, tokens*(hq+2*hk)*hd
	c.qs.Token, c.ks.Token, c.vs.Token = (hq+2*hk)*hd, (hq+2*hk)*hd, (hq+2*hk)*hd
	c.ko, c.vo = hd, (hq+hk)*hd
	add("keys overlapping the queries", c, "s.Q", "s.K", "overlap")
	c = base()
	c.sharedCache, c.vco, c.nkc = true, e, rows*hk*e+e
	add("a value cache whose rows overlap the key cache's", c, "s.KCache and s.VCache")
	if s.k.Norm != nil && s.weighted() {
		c = base()
		c.qw = c.qw[:len(c.qw)-1]
		add("query weights one short", c, "s.QW")
		c = base()
		c.kw = append(c.kw, 1)
		add("key weights one long", c, "s.KW")
	} else {
		c = base()
		c.qw = make([]float64, hd)
		add("weights the norm does not take", c, "s.QW")
	}
	if cs.ref.scaled {
		for _, v := range []float32{0, -1, float32(math.NaN()), float32(math.Inf(1))} {
			c = base()
			c.kScale = v
			add(fmt.Sprintf("key scale %v", v), c, "s.KCache's scale = "+fmt.Sprint(v))
			c = base()
			c.vScale = v
			add(fmt.Sprintf("value scale %v", v), c, "s.VCache's scale = "+fmt.Sprint(v))
		}
	}
	return bad
}

// checkPrepPanics makes every badPrepCalls call on every backend: each must
// panic with a message naming Prep, the argument and its value, and leave
// every buffer as it was.
func checkPrepPanics[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	r := rand.New(rand.NewPCG(seed(), 0x707061))
	n := 0
	for _, b := range bs {
		b.Use()
		for _, bc := range cs.badPrepCalls() {
			st := cs.prepState(r, bc.c)
			got := st.clone()
			kc, vc := toElems[C](got.kc), toElems[C](got.vc)
			msg, panicked := catch(func() { cs.c.Prep(cs.s.tab, prepStep(bc.c, got, kc, vc, bc.c.slots), bc.c.pos) })
			n++
			if !panicked {
				t.Fatalf("backend %s: Prep with %s: did not panic", b.Name, bc.what)
			}
			for _, w := range bc.words {
				if !strings.Contains(msg, w) {
					t.Fatalf("backend %s: Prep with %s: panicked with %q, which does not say %q", b.Name, bc.what, msg, w)
				}
			}
			got.kc, got.vc = fromElems(kc), fromElems(vc)
			if d := cs.comparePrep(got, st); d != "" {
				t.Fatalf("backend %s: Prep with %s: panicked (%q) after writing: %s", b.Name, bc.what, msg, d)
			}
		}
	}
	t.Logf("%d bad Prep calls panicked naming Prep, the argument and the value, with nothing written", n)
}
