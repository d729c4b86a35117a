package rt

// Step is one layer's attention-prep step for Prep: a decode token or a
// prefill, its tokens' queries, keys and values, where the keys and values
// go, and by which slots.
type Step struct {
	Q  []float32 // the queries: normalized (with a QK-norm) and turned in place
	QS Strides   // the queries' view: head h of token j at Q[j·QS.Token + h·QS.Head :]
	QW []float32 // the query norm's weights, as ApplyNormQK takes them; nil without weights
	K  []float32 // the keys: normalized, turned and stored into KCache; K is not modified
	KS Strides
	KW []float32 // the key norm's weights
	V  []float32 // the values, stored into VCache; nil with the zero VCache: no values
	VS Strides
	// KCache and VCache are the layer's caches (any cache types the package
	// has); their views have as many heads as KS and VS.
	KCache, VCache Cache
	// Slots[j] is token j's cache row; −1 stores neither its key nor its
	// value (padding), though its queries are prepared.
	Slots []int64
}

// Prep is the attention-prep pass of one layer in one call: for every token
// j, at its positions pos[j·Axes:(j+1)·Axes], the queries are normalized
// (with the Rotary's QK-norm, if it has one) and turned in place, as
// ApplyNormQK (or ApplyQK) does; the keys are normalized and turned the
// same way into a small float32 scratch buffer of a few heads, which stays
// in the L1 cache, and stored from there into s.KCache at row s.Slots[j]
// (without a norm, f32, f16 and bf16 caches take the turned keys straight
// from the kernel); the values are stored into s.VCache as Store stores
// them. With a Hadamard-rotated KCache (Cache.WithHadamard) the turned
// queries are multiplied by H as well, so that q·k is the score the keys
// before H give, up to rounding. The bits are those of ApplyNormQK (or
// ApplyQK) on the queries and on a copy of the keys, Rotary.Hadamard on
// the queries with such a KCache, then Store of the keys and values; the
// keys' float32 round trip through memory is what it saves.
//
// Every view, weight length, slot and position is checked as ApplyNormQK,
// ApplyStore and Store check them, and the queries must share no element
// with the keys or the values, and an f32 cache no element with any of
// them; a bad one panics before anything is written.
func (t *Table) Prep(s Step, pos []int32) {
	const fn = "Table.Prep"
	w := t.seq(fn, pos)
	if w.n != len(s.Slots) {
		panicLen(fn, len(pos), "len(s.Slots)", len(s.Slots), t.r.axes)
	}
	t.r.prep(fn, &w, &s)
}

// Prep is Table.Prep for the tokens of the step, token j at the positions
// Set gave it; pos is those positions.
func (b *Batch) Prep(s Step, pos []int32) {
	const fn = "Batch.Prep"
	w := b.walk(fn, pos)
	if w.n != len(s.Slots) {
		panicf("%s: len(s.Slots) = %d: want b.Len() = %d, a slot per token", fn, len(s.Slots), w.n)
	}
	b.t.r.prep(fn, &w, &s)
}

// CacheRows is Rows with the calls that write caches, which a Table and a
// Batch also share: an engine's attention prep, written once against
// CacheRows, serves a prefill (a *Table) and a decode step (a *Batch).
type CacheRows interface {
	Rows
	ApplyStore(c Cache, slots []int64, src []float32, ss Strides, pos []int32)
	Prep(s Step, pos []int32)
}

var (
	_ CacheRows = (*Table)(nil)
	_ CacheRows = (*Batch)(nil)
)

func (r *Rotary) prep(fn string, w *walk, s *Step) {
	ko := r.cacheOp(fn, "s.KCache", &s.KCache)
	values := s.V != nil || s.VCache.kind != 0
	var vo cacheOp
	if values {
		vo = r.cacheOp(fn, "s.VCache", &s.VCache)
	}
	r.checkTokens(fn, "s.QS", s.QS, len(s.Q), w.n, w.word)
	r.checkTokens(fn, "s.KS", s.KS, len(s.K), w.n, w.word)
	if values {
		r.checkTokens(fn, "s.VS", s.VS, len(s.V), w.n, w.word)
	}
	if d, ok := sharedOffset(fn, "s.Q", "s.K", s.Q, s.K); ok {
		checkApart(fn, "s.Q", "s.QS", s.QS, "s.K", "s.KS", s.KS, d, w.n, r.hd)
	}
	if d, ok := sharedOffset(fn, "s.Q", "s.V", s.Q, s.V); ok && values {
		checkApart(fn, "s.Q", "s.QS", s.QS, "s.V", "s.VS", s.VS, d, w.n, r.hd)
	}
	checkHeads(fn, "s.KCache", s.KCache.s, "s.KS", s.KS)
	if values {
		checkHeads(fn, "s.VCache", s.VCache.s, "s.VS", s.VS)
	}
	if r.nv >= 0 {
		r.checkWeights(fn, "s.QW", len(s.QW), "s.QS", s.QS)
		r.checkWeights(fn, "s.KW", len(s.KW), "s.KS", s.KS)
	} else if len(s.QW)+len(s.KW) != 0 {
		panicf("%s: len(s.QW) = %d, len(s.KW) = %d: want no weights: the Rotary has no QK-norm", fn, len(s.QW), len(s.KW))
	}
	ko.check(fn, "s.KCache", "s.Slots", s.Slots)
	if values {
		vo.check(fn, "s.VCache", "s.Slots", s.Slots)
		checkCachesApart(fn, &ko, &vo, s.Slots)
	}
	for _, c := range [2]*Cache{&s.KCache, &s.VCache} {
		if c.kind == cacheF32 && (sameMemory(c.f32, s.Q) || sameMemory(c.f32, s.K) || sameMemory(c.f32, s.V)) {
			panicf("%s: an f32 cache shares memory with s.Q, s.K or s.V: want the caches apart from the step's vectors", fn)
		}
	}

	k := r.kern()
	var norm normKernel
	group := 0 // heads a token-scope norm takes at once: all of a token's
	if r.nv >= 0 {
		norm = k.norm[r.nv]
		if r.nv%4/normToken == 1 {
			group = s.KS.Heads
		}
	}
	buf, sp := r.scratch(group)
	if group == 0 {
		group = len(sp) / r.hd
	}
	eps, hd := r.p.NormEps, r.hd
	kc := s.KCache.s
	for j := range w.n {
		row := w.row(j)
		q := s.Q[j*s.QS.Token:]
		if norm != nil {
			norm(q, s.QS.Head, s.QS.Heads, row, s.QW, eps)
		} else {
			k.fwd(q, s.QS.Head, s.QS.Heads, row)
		}
		if ko.had != nil {
			ko.had(q, s.QS.Head, s.QS.Heads)
		}
		slot := s.Slots[j]
		if slot < 0 {
			continue
		}
		src := s.K[j*s.KS.Token:]
		if norm == nil {
			ko.storeRotated(int(slot)*kc.Token, kc.Head, src, s.KS.Head, s.KS.Heads, headSeq{0, 1}, row, sp)
			continue
		}
		for h := 0; h < s.KS.Heads; h += group {
			m := min(group, s.KS.Heads-h)
			for i := range m {
				copy(sp[i*hd:][:hd], src[(h+i)*s.KS.Head:][:hd])
			}
			norm(sp, hd, m, row, s.KW, eps)
			if ko.had != nil {
				ko.had(sp, hd, m)
			}
			ko.store(int(slot)*kc.Token+h*kc.Head, kc.Head, sp, hd, m, headSeq{h, 1}, false)
		}
	}
	w.done()
	if values {
		cacheWalk(s.Slots, nil, s.VCache.s, s.VS, func(_, cOff, cs, xOff, xs, n int, hs headSeq) {
			vo.put(cOff, cs, s.V[xOff:], xs, n, hs, sp)
		})
	}
	scratchPool.Put(buf)
}

// checkCachesApart panics if the caches of a and b, of one type and sharing
// memory, have a head of the rows slots names in common (a cache of keys
// and values side by side in one buffer is fine; overlapping rows are
// not).
func checkCachesApart(fn string, a, b *cacheOp, slots []int64) {
	ca, cb := a.c, b.c
	if ca.kind != cb.kind {
		return
	}
	var delta int
	var ok bool
	switch ca.kind {
	case cacheF32:
		delta, ok = sharedOffset(fn, "s.KCache", "s.VCache", ca.f32, cb.f32)
	case cacheF16, cacheBF16:
		delta, ok = sharedOffset(fn, "s.KCache", "s.VCache", ca.u16, cb.u16)
	default:
		delta, ok = sharedOffset(fn, "s.KCache", "s.VCache", ca.u8, cb.u8)
	}
	if !ok {
		return
	}
	var hs []int
	for _, s := range slots {
		for h := 0; s >= 0 && h < ca.s.Heads; h++ {
			hs = append(hs, int(s)*ca.s.Token+h*ca.s.Head, delta+int(s)*cb.s.Token+h*cb.s.Head)
		}
	}
	if i, j, found := overlap(hs, a.head); found {
		panicView(fn, "s.KCache and s.VCache share their buffer and a key row's head overlaps a value row's (the heads at %d and %d, %d elements each): want the rows of the slots apart", i, j, a.head)
	}
}
