package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
// empty when fused) and the caches' bytes (vc empty when the caches share
// kc).
type prepState struct {
	q, k, v []float32
	kc, vc  []byte
	// kb and vb mark the first byte of every block of the key and value
	// caches that the call writes, which are compared by the format's Same
	// (a NaN's payload may come out of Prep's fused path other than out of
	// the separate calls).
	kb, vb []bool
}

func (st prepState) clone() prepState {
	return prepState{slices.Clone(st.q), slices.Clone(st.k), slices.Clone(st.v), slices.Clone(st.kc), slices.Clone(st.vc), st.kb, st.vb}
}

// markBlocks marks in b the first byte of every block the heads of view cv
// take in cache rows slots, the cache starting at element off.
func (cs *cacheSuite[C]) markBlocks(b []bool, off int, cv Strides, heads int, slots []int64) {
	r := cs.ref
	for _, slot := range slots {
		if slot < 0 {
			continue
		}
		for h := range heads {
			at := (off + head(cv, int(slot), h)) * r.eb
			for k := 0; k < r.bytesOf(cs.s.hd); k += r.blockBytes {
				if at+k < len(b) {
					b[at+k] = true
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
	st.kc = make([]byte, c.nkc*cs.ref.eb)
	if !c.sharedCache {
		st.vc = make([]byte, c.nvc*cs.ref.eb)
	}
	cs.fillCache(r, st.kc)
	cs.fillCache(r, st.vc)
	st.kb = make([]bool, len(st.kc))
	cs.markBlocks(st.kb, 0, c.kc, c.ks.Heads, c.slots)
	switch {
	case c.noValues:
	case c.sharedCache:
		cs.markBlocks(st.kb, c.vco, c.vc, c.vs.Heads, c.slots)
	default:
		st.vb = make([]bool, len(st.vc))
		cs.markBlocks(st.vb, 0, c.vc, c.vs.Heads, c.slots)
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
	kc, vc := elemsOf[C](got.kc), elemsOf[C](got.vc)
	cs.c.Prep(cs.s.tab, prepStep(c, got, kc, vc, c.slots), c.pos)
	got.kc, got.vc = memOf(kc), memOf(vc)
	return got
}

// separate makes c as the separate calls that define Prep's bits:
// ApplyNormQK (ApplyQK without a norm) on the queries and on a copy of the
// keys (and with the Hadamard option Rows on the queries), then Store of
// the keys' copy and of the values. It returns the
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
	if cs.c.Hadamard { // the keys' cache is Hadamard-rotated: the queries are multiplied by H too
		cs.c.Rows(q, c.qs, c.tokens)
	}
	for j := range c.tokens {
		for h := range c.qs.Heads {
			o := c.qo + head(c.qs, j, h)
			copy(want.q[o:o+hd], work.q[o:o+hd])
		}
	}
	kc := elemsOf[C](want.kc)
	cs.c.Store(kc, c.kScale, c.kc, c.slots, k, c.ks)
	if !c.noValues {
		_, vb := c.bufs(st)
		vc := elemsOf[C](want.vc)
		if c.sharedCache {
			vc = kc[c.vco:]
		}
		cs.c.Store(vc, c.vScale, c.vc, c.slots, vb[c.vo:], c.vs)
		if !c.sharedCache {
			want.vc = memOf(vc)
		}
	}
	want.kc = memOf(kc)
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
	kb, vb := want.kb, want.vb
	if kb == nil {
		kb, vb = got.kb, got.vb
	}
	if d := cs.compareCache(got.kc, want.kc, kb); d != "" {
		return "the key cache: " + d
	}
	if d := cs.compareCache(got.vc, want.vc, vb); d != "" {
		return "the value cache: " + d
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
		if cs.c.Hadamard {
			calls = 15 // under qemu: the option's Prep path is the type's but for H
		}
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
			kc, vc := elemsOf[C](got.kc), elemsOf[C](got.vc)
			cs.c.BatchPrep(bt, prepStep(c, got, kc, vc, c.slots))
			got.kc, got.vc = memOf(kc), memOf(vc)
			want := st.clone()
			wkc, wvc := elemsOf[C](want.kc), elemsOf[C](want.vc)
			for j, p := range c.pos {
				tab := k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), int(p), 1)
				one := prepStep(c, want, wkc, wvc, c.slots[j:j+1])
				one.Q, one.K = one.Q[j*c.qs.Token:], one.K[j*c.ks.Token:]
				if one.V != nil {
					one.V = one.V[j*c.vs.Token:]
				}
				cs.c.Prep(tab, one, c.pos[j:j+1])
			}
			want.kc, want.vc = memOf(wkc), memOf(wvc)
			if d := cs.comparePrep(got, want); d != "" {
				t.Fatalf("backend %s: Batch.Prep of %v: %s; Table.Prep token by token differs (seed %d)", be.Name, c, d, sd)
			}
		}
	}
	t.Logf("Batch.Prep = Table.Prep token by token on %d backends (seed %d)", len(bs), sd)
}
