package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// CacheElem is the element type of a KV cache: float32 for f32, uint16 for
// f16 and bf16 bits, uint8 for e4m3 bytes and for the bytes of q8_0 blocks.
type CacheElem interface{ ~uint8 | ~uint16 | ~float32 }

// Cache describes the KV-cache forms of one cache type of a package
// (docs/contract.md §11) to Run, Bench and CacheExhaustive: a *Cache[float32]
// (f32), *Cache[uint16] (f16, bf16) or *Cache[uint8] (e4m3, q8_0), in
// Kernel.Caches. Each function calls the package's form of the same name on
// the table given with a cache view of dst (c, src) of that type, converting
// Strides; scale is the e4m3 view's and ignored by the others.
type Cache[C CacheElem] struct {
	// DType is the cache type: "f32", "f16", "bf16", "e4m3" or "q8_0".
	DType string
	// CacheHead is the package's CacheHead: the elements one cached head
	// takes (HeadDim, or for q8_0 the HeadDim/32·34 bytes of its blocks).
	CacheHead  int
	ApplyStore func(tab Table[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides, pos []int32)
	Store      func(dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides)
	Load       func(dst []float32, scale float32, ds Strides, src []C, ss Strides, slots []int64)
	Shift      func(tab Table[float32], c []C, scale float32, cs Strides, slots []int64, delta []int32)
	// BatchApplyStore calls a Batch's ApplyStore (docs/contract.md §12):
	// token j at the position the Batch's Set gave it. Optional.
	BatchApplyStore func(b Batch[float32], dst []C, scale float32, ds Strides, slots []int64, src []float32, ss Strides)
	// Prep calls the table's Prep (docs/contract.md §13) with the step p,
	// its caches of this type; BatchPrep a Batch's. Optional: with them,
	// Run checks Prep against the Kernel's ApplyNormQK (ApplyQK without a
	// Norm) and Store, and RunNorm against its Norm's.
	Prep      func(tab Table[float32], p PrepStep[C], pos []int32)
	BatchPrep func(b Batch[float32], p PrepStep[C])
}

// cacheOp is one of the four cache forms.
type cacheOp int

const (
	opStore cacheOp = iota
	opApplyStore
	opLoad
	opShift
)

var cacheOpNames = [...]string{"Store", "ApplyStore", "Load", "Shift"}

func (o cacheOp) String() string { return cacheOpNames[o] }

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
}

func (c *cacheCall) String() string {
	s := fmt.Sprintf("%v on %s (cache %+v, %d rows, len %d; tokens %+v, len %d) slots %v", c.op, c.layout, c.cv, c.rows, c.nc, c.xv, c.nx, c.slots)
	switch c.op {
	case opApplyStore:
		s += fmt.Sprintf(" pos %v", c.pos)
	case opShift:
		s += fmt.Sprintf(" delta %v", c.delta)
	}
	if c.scale != 1 {
		s += fmt.Sprintf(" scale %v", c.scale)
	}
	return s
}

// cacheSuite is the suite of one package's cache forms.
type cacheSuite[C CacheElem] struct {
	s      *suite[float32]
	c      *Cache[C]
	ref    cacheRef
	shiftN int // values of a head Shift reads and writes
}

// runCache runs the cache checks when the package has cache forms.
func runCache[T Elem](t *testing.T, s *suite[T]) {
	if len(s.k.Caches) == 0 {
		t.Skip("no cache forms")
	}
	sf, ok := any(s).(*suite[float32])
	if !ok {
		t.Fatalf("Kernel.Caches is set for DType %q: the cache forms take float32", s.k.DType)
	}
	for _, c := range s.k.Caches {
		t.Run(c.cacheType(), func(t *testing.T) { c.run(t, sf) })
	}
}

// CacheForms is the cache forms of one cache type of a package: a
// *Cache[C] (Kernel.Caches lists one per cache type). Run checks them,
// Bench measures them and CacheExhaustive stores every float32 through
// them.
type CacheForms interface {
	cacheType() string
	run(t *testing.T, s *suite[float32])
	bench(b *testing.B, s *suite[float32], named bool, backends []Backend, restore func(), input func(int) []float32)
	exhaustive(t tb, k Kernel[float32], stride uint64)
	prep(t *testing.T, s *suite[float32])
	fuzzPrep(s *suite[float32], hdr, vals []byte) string
}

func (c *Cache[C]) cacheType() string                   { return c.DType }
func (c *Cache[C]) run(t *testing.T, s *suite[float32]) { runCacheOf(t, s, c) }
func (c *Cache[C]) prep(t *testing.T, s *suite[float32]) {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		t.Fatalf("verify: invalid Cache: %v", err)
	}
	runPrep(t, cs)
}

func newCacheSuite[C CacheElem](s *suite[float32], c *Cache[C]) (*cacheSuite[C], error) {
	ref, err := newCacheRef(c.DType, s.hd)
	if err != nil {
		return nil, err
	}
	var z C
	if want, got := ref.size(), int(unsafe.Sizeof(z)); got != want {
		return nil, fmt.Errorf("cache DType %q takes %d-byte elements, the Cache has %d", c.DType, want, got)
	}
	if c.CacheHead != ref.cacheHead {
		return nil, fmt.Errorf("Cache.CacheHead = %d: want %d for %s and HeadDim %d", c.CacheHead, ref.cacheHead, c.DType, s.hd)
	}
	if c.ApplyStore == nil || c.Store == nil || c.Load == nil || c.Shift == nil {
		return nil, fmt.Errorf("Cache needs ApplyStore, Store, Load and Shift")
	}
	cs := &cacheSuite[C]{s: s, c: c, ref: ref, shiftN: s.rd}
	if ref.blocks {
		cs.shiftN = (s.rd + q8Block - 1) / q8Block * q8Block
	}
	return cs, nil
}

func runCacheOf[C CacheElem](t *testing.T, s *suite[float32], c *Cache[C]) {
	cs, err := newCacheSuite(s, c)
	if err != nil {
		t.Fatalf("verify: invalid Cache: %v", err)
	}
	t.Logf("cache %s: CacheHead %d, Shift touches %d values of a head", c.DType, c.CacheHead, cs.shiftN)
	t.Run("bits", func(t *testing.T) { checkCacheBits(t, cs) })
	t.Run("load-all", func(t *testing.T) { checkCacheLoadAll(t, cs) })
	if cs.ref.blocks {
		t.Run("q8-blocks", func(t *testing.T) { checkQ8Blocks(t, cs) })
	}
	t.Run("shift-far", func(t *testing.T) { checkShiftFar(t, cs) })
	t.Run("guard", func(t *testing.T) { checkCacheGuard(t, cs) })
	t.Run("panics", func(t *testing.T) { checkCachePanics(t, cs) })
	t.Run("batch", func(t *testing.T) { checkCacheBatch(t, cs) })
	runPrep(t, cs)
}

// checkCacheBatch checks Batch.ApplyStore, a decode step's keys stored at
// scattered positions, on every backend against Table.ApplyStore token by
// token on one-position range tables, with a skipped (−1) slot among them.
func checkCacheBatch[C CacheElem](t tb, cs *cacheSuite[C]) {
	t.Helper()
	s, k := cs.s, &cs.s.k
	if cs.c.BatchApplyStore == nil || k.Runtime == nil || k.Runtime.NewBatch == nil {
		t.Logf("the kernel describes no Batch.ApplyStore")
		return
	}
	defer s.restore()
	rng := rand.New(rand.NewPCG(seed(), 21))
	const heads, rows = 2, 16
	hd, ch := s.hd, cs.c.CacheHead
	ds := Strides{Heads: heads, Head: ch, Token: heads * ch}
	ss := Strides{Heads: heads, Head: hd, Token: heads * hd}
	for _, be := range s.backendsOrOnly() {
		be.Use()
		pos := []int32{5, 1 << 29, 131071, 700_000, 0}
		slots := []int64{3, 11, -1, 0, 7}
		b := k.Runtime.NewBatch(k.Freqs, k.AttentionFactor, k.axisMap(), len(pos))
		b.Set(pos)
		src := make([]float32, len(pos)*heads*hd)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		scale := cs.drawScale(rng)
		got, want := make([]C, rows*heads*ch), make([]C, rows*heads*ch)
		cs.c.BatchApplyStore(b, got, scale, ds, slots, src, ss)
		for j, p := range pos {
			tab := k.Runtime.NewTableRange(k.Freqs, k.AttentionFactor, k.axisMap(), int(p), 1)
			cs.c.ApplyStore(tab, want, scale, ds, slots[j:j+1], src[j*heads*hd:(j+1)*heads*hd], ss, pos[j:j+1])
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("backend %s: Batch.ApplyStore at %v into slots %v: cache element %d (row %d) is %#x, Table.ApplyStore token by token gives %#x", be.Name, pos, slots, i, i/(heads*ch), got[i], want[i])
			}
		}
	}
}

// ---- calls --------------------------------------------------------------------------

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
	}
	return c
}

// ---- the reference ------------------------------------------------------------------

// cacheState is the memory of one call: the cache as elements' bits held
// in uint32 and the float32 token buffer.
type cacheState struct {
	cache []uint32
	x     []float32
}

func (st cacheState) clone() cacheState {
	return cacheState{slices.Clone(st.cache), slices.Clone(st.x)}
}

// head returns the first element of head h of cache row (or token) j in
// view s.
func head(s Strides, j, h int) int { return j*s.Token + h*s.Head }

// expect computes what c does to st with the suite's references, and marks
// in written the elements of the buffer it writes (the cache, or for Load
// the token buffer) that are compared NaN-tolerantly (ref.firstDiff); the
// rest of both buffers must keep their bits.
func (cs *cacheSuite[C]) expect(c *cacheCall, st cacheState) (want cacheState, written []bool) {
	want = st.clone()
	hd, e := cs.s.hd, cs.ref.cacheHead
	if c.op == opLoad {
		written = make([]bool, len(st.x))
	} else {
		written = make([]bool, len(st.cache))
	}
	y := make([]float32, hd)
	q := make([]uint32, e)
	for j, slot := range c.slots {
		if slot < 0 {
			continue
		}
		for h := range c.cv.Heads {
			co := head(c.cv, int(slot), h)
			switch c.op {
			case opStore, opApplyStore:
				xo := head(c.xv, j, h)
				copy(y, st.x[xo:xo+hd])
				if c.op == opApplyStore {
					cs.s.tab.Apply(y, int(c.pos[j]))
				}
				cs.ref.quantize(q, y, hd, c.scale)
				copy(want.cache[co:co+e], q)
				for i := range e {
					written[co+i] = true
				}
			case opLoad:
				xo := head(c.xv, j, h)
				cs.ref.dequantize(want.x[xo:xo+hd], st.cache[co:co+e], hd, c.scale)
				for i := range hd {
					written[xo+i] = true
				}
			case opShift:
				d := c.delta[j]
				if d == 0 {
					continue
				}
				n := cs.shiftN
				cs.ref.dequantize(y, st.cache[co:co+e], n, c.scale)
				cs.rotateExact(y, d)
				cs.ref.quantize(q, y, n, c.scale)
				m := cs.ref.elems(n)
				copy(want.cache[co:co+m], q[:m])
				for i := range m {
					written[co+i] = true
				}
			}
		}
	}
	return want, written
}

// rotateExact rotates the rotary values of the head y by delta positions
// with A = 1 as the contract's arithmetic does (§5), with c = fl32(cos φ_i)
// and s = fl32(sin φ_i) of φ_i = |delta|·Freqs[i] correctly rounded:
// forward for delta > 0, backward (R_{|delta|}ᵀ) for delta < 0.
func (cs *cacheSuite[C]) rotateExact(y []float32, delta int32) {
	p := math.Abs(float64(delta))
	for i, th := range cs.s.k.Freqs {
		sn, cn := exactSincos(float64(p * th))
		a, b := cs.s.pa[i], cs.s.pb[i]
		ya, yb := cs.s.c.canon(y[a], y[b], float64(float32(cn)), float64(float32(sn)), delta < 0)
		y[a], y[b] = ya, yb
	}
}

// ---- running a call -----------------------------------------------------------------

// invoke runs c on st (its buffers as the package's types) with the table.
func (cs *cacheSuite[C]) invoke(c *cacheCall, cache []C, x []float32) {
	switch c.op {
	case opStore:
		cs.c.Store(cache, c.scale, c.cv, c.slots, x, c.xv)
	case opApplyStore:
		cs.c.ApplyStore(cs.s.tab, cache, c.scale, c.cv, c.slots, x, c.xv, c.pos)
	case opLoad:
		cs.c.Load(x, c.scale, c.xv, cache, c.cv, c.slots)
	case opShift:
		cs.c.Shift(cs.s.tab, cache, c.scale, c.cv, c.slots, c.delta)
	}
}

// toElems returns the cache elements whose bits u holds.
func toElems[C CacheElem](u []uint32) []C {
	out := make([]C, len(u))
	for i, v := range u {
		out[i] = elemOf[C](v)
	}
	return out
}

// fromElems returns the bits of the cache elements c.
func fromElems[C CacheElem](c []C) []uint32 {
	out := make([]uint32, len(c))
	for i, v := range c {
		out[i] = bitsOf(v)
	}
	return out
}

// elemOf is the cache element of the bits v.
func elemOf[C CacheElem](v uint32) C {
	var z C
	switch any(z).(type) {
	case float32:
		return any(math.Float32frombits(v)).(C)
	case uint16:
		return any(uint16(v)).(C)
	}
	return any(uint8(v)).(C)
}

// bitsOf is the bits of the cache element v.
func bitsOf[C CacheElem](v C) uint32 {
	switch x := any(v).(type) {
	case float32:
		return math.Float32bits(x)
	case uint16:
		return uint32(x)
	}
	return uint32(any(v).(uint8))
}

// state draws the memory of c: random cache elements (any bits: NaNs,
// infinities, any q8_0 scale) and float32 values rich in special ones.
func (cs *cacheSuite[C]) state(r *rand.Rand, c *cacheCall) cacheState {
	st := cacheState{cache: make([]uint32, c.nc), x: make([]float32, c.nx)}
	mask := uint32(1)<<(8*cs.ref.size()) - 1
	for i := range st.cache {
		st.cache[i] = r.Uint32() & mask
		switch {
		case r.IntN(4) != 0:
		case cs.ref.dtype == "f32": // infinities, signaling NaNs, subnormals…
			st.cache[i] = uint32(formats[kF32].special(r.Uint64(), false))
		case cs.ref.dtype == "f16":
			st.cache[i] = uint32(formats[kF16].special(r.Uint64(), false))
		case cs.ref.dtype == "bf16":
			st.cache[i] = uint32(formats[kBF16].special(r.Uint64(), false))
		}
	}
	for i := range st.x {
		st.x[i] = cs.s.c.fromBits(cs.s.c.f.special(r.Uint64(), false))
		if cs.ref.scaled && r.IntN(2) == 0 { // values near the scaled range
			st.x[i] = float32(math.Ldexp(r.Float64()-0.5, r.IntN(20)-10)) * c.scale
		}
	}
	return st
}

// compare checks got against want: the written elements with
// ref.firstDiff (NaN-tolerant), every other element bit for bit. It returns
// "" or what differs.
func (cs *cacheSuite[C]) compare(c *cacheCall, got, want cacheState, written []bool) string {
	if c.op == opLoad {
		for i := range got.x {
			g, w := got.x[i], want.x[i]
			if math.Float32bits(g) == math.Float32bits(w) || written[i] && g != g && w != w {
				continue
			}
			return fmt.Sprintf("dst[%d] = %v (%#08x), want %v (%#08x)%s", i, g, math.Float32bits(g), w, math.Float32bits(w), map[bool]string{true: "", false: ": outside the rows it reads into"}[written[i]])
		}
		if i := slices.Compare(got.cache, want.cache); i != 0 {
			return "changed the cache it reads"
		}
		return ""
	}
	for i := 0; i < len(got.cache); {
		if !written[i] {
			if got.cache[i] != want.cache[i] {
				return fmt.Sprintf("cache element %d = %#x, want %#x (not part of a row it writes)", i, got.cache[i], want.cache[i])
			}
			i++
			continue
		}
		// A run of written elements: one cached head (or its shifted part).
		j := i
		for j < len(got.cache) && written[j] {
			j++
		}
		for k := i; k < j; k += cs.ref.cacheHead {
			n := min(cs.ref.cacheHead, j-k)
			if d := cs.ref.firstDiff(got.cache[k:k+n], want.cache[k:k+n], n); d >= 0 {
				return fmt.Sprintf("cache element %d (element %d of a head) = %#x, want %#x", k+d, d, got.cache[k+d], want.cache[k+d])
			}
		}
		i = j
	}
	for i := range got.x {
		if math.Float32bits(got.x[i]) != math.Float32bits(want.x[i]) {
			return fmt.Sprintf("changed src[%d]", i)
		}
	}
	return ""
}

// checkCacheBits draws calls of every form on every backend and compares
// each with the suite's references (cached values bit for bit, two NaNs
// alike; every element outside the rows written unchanged), and every
// backend's bits with the previous one's (NaN payloads aside, as
// docs/contract.md §5 has it).
func checkCacheBits[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x63616368))
	calls := 400
	if testing.Short() {
		calls = 60
	}
	counts := map[cacheOp]int{}
	for n := range calls {
		c := cs.drawCall(r, cacheOp(n%4))
		st := cs.state(r, c)
		want, written := cs.expect(c, st)
		var last cacheState
		for bi, b := range bs {
			b.Use()
			cache, x := toElems[C](st.cache), slices.Clone(st.x)
			if msg, panicked := catch(func() { cs.invoke(c, cache, x) }); panicked {
				t.Fatalf("backend %s: %v: panicked: %s (seed %d)", b.Name, c, msg, sd)
			}
			got := cacheState{fromElems(cache), x}
			if d := cs.compare(c, got, want, written); d != "" {
				t.Fatalf("backend %s: %v: %s (seed %d)", b.Name, c, d, sd)
			}
			if bi > 0 {
				if d := cs.compare(c, got, last, written); d != "" {
					t.Fatalf("backend %s against %s: %v: %s (seed %d)", b.Name, bs[bi-1].Name, c, d, sd)
				}
			}
			last = got
		}
		counts[c.op]++
	}
	t.Logf("%d calls (Store %d, ApplyStore %d, Load %d, Shift %d) on %d backends equal the references and each other (seed %d)",
		calls, counts[opStore], counts[opApplyStore], counts[opLoad], counts[opShift], len(bs), sd)
}

// checkCacheLoadAll loads every cache element value there is (all 2¹⁶ f16 or
// bf16 bit patterns, all 256 e4m3 bytes at several scales, q8_0 blocks with
// every int8 under every f16 scale) on every backend and compares it with
// the reference.
func checkCacheLoadAll[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	hd, e := cs.s.hd, cs.ref.cacheHead
	var cache []uint32
	switch cs.ref.dtype {
	case "f16", "bf16":
		for u := range 1 << 16 {
			cache = append(cache, uint32(u))
		}
	case "e4m3":
		for u := range 256 {
			cache = append(cache, uint32(u))
		}
	case "q8_0":
		for d := range 1 << 16 {
			cache = append(cache, uint32(d&0xff), uint32(d>>8))
			for j := range q8Block {
				cache = append(cache, uint32(uint8(int8(d*7+j*37))))
			}
		}
	}
	// Whole heads, the last one padded by repeating the start.
	for n0 := len(cache); len(cache)%e != 0; {
		cache = append(cache, cache[len(cache)%n0])
	}
	rows := len(cache) / e
	cv := Strides{1, e, e}
	xv := Strides{1, hd, hd}
	slots := make([]int64, rows)
	for j := range slots {
		slots[j] = int64(j)
	}
	scales := []float32{1}
	if cs.ref.scaled {
		scales = append(scales, 0.375, 3e-3, 7e30, math.MaxFloat32)
	}
	for _, scale := range scales {
		c := &cacheCall{op: opLoad, layout: "every element value", cv: cv, nc: len(cache), rows: rows, xv: xv, nx: rows * hd, slots: slots, scale: scale}
		st := cacheState{cache: cache, x: make([]float32, rows*hd)}
		want, written := cs.expect(c, st)
		for _, b := range bs {
			b.Use()
			x := make([]float32, rows*hd)
			cs.invoke(c, toElems[C](cache), x)
			if d := cs.compare(c, cacheState{cache, x}, want, written); d != "" {
				t.Fatalf("backend %s: Load of every %s value, scale %v: %s", b.Name, cs.ref.dtype, scale, d)
			}
		}
	}
	t.Logf("every %s value loads as the reference widens it on %d backends", cs.ref.dtype, len(bs))
}

// q8 block classes for checkQ8Blocks. "tied" comes first: a random block
// can hold a tie too, and a rounding mistake on ties must be reported as
// the tied class's.
var q8Classes = []string{"tied", "random", "all-zero", "subnormal", "tiny-d", "huge", "NaN", "Inf", "mixed"}

// q8Draw fills x (32 values) with a block of the named class.
func q8Draw(r *rand.Rand, class string, x []float32) {
	switch class {
	case "random":
		sc := math.Ldexp(1, r.IntN(60)-30)
		for j := range x {
			x[j] = float32(r.NormFloat64() * sc)
		}
	case "tied":
		// d = 2^e exactly (amax = 127·2^e), id = 2^−e: x·id is exactly k+0.5.
		e := r.IntN(40) - 20
		p := math.Ldexp(1, e)
		for j := range x {
			k := float64(r.IntN(254) - 127)
			x[j] = float32((k + 0.5) * p)
			if r.IntN(5) == 0 {
				x[j] = float32(k * p)
			}
		}
		x[r.IntN(len(x))] = float32(127 * p * float64(1-2*r.IntN(2)))
	case "all-zero":
		for j := range x {
			x[j] = float32(math.Copysign(0, float64(1-2*r.IntN(2))))
		}
	case "subnormal":
		for j := range x {
			x[j] = math.Float32frombits(uint32(r.IntN(1<<23)) | uint32(r.IntN(2))<<31)
		}
	case "tiny-d":
		// amax around 127·2⁻¹²⁶…2⁻¹¹⁵: d is subnormal or barely normal and 1/d may overflow.
		sc := math.Ldexp(1, r.IntN(14)-129)
		for j := range x {
			x[j] = float32(r.NormFloat64() * sc * 127)
		}
	case "huge":
		for j := range x {
			x[j] = float32(math.Ldexp(r.Float64()*2-1, 100+r.IntN(28)))
		}
	case "mixed": // one block in four NaN, Inf or subnormal: a fast group next to a slow one
		q8Draw(r, []string{"random", "random", "random", "NaN", "Inf", "subnormal", "tiny-d"}[r.IntN(7)], x)
	case "NaN", "Inf":
		q8Draw(r, "random", x)
		n := 1 + r.IntN(3)
		for range n {
			j := r.IntN(len(x))
			if r.IntN(3) == 0 {
				j = len(x) - 1
			}
			switch {
			case class == "NaN":
				x[j] = math.Float32frombits(0x7f800001 | uint32(r.IntN(1<<22))<<1 | uint32(r.IntN(2))<<31)
			default:
				x[j] = float32(math.Inf(1 - 2*r.IntN(2)))
			}
		}
	}
}

// checkQ8Blocks stores blocks of every class (random values, ties where
// x·id is exactly k + 1/2, all zeros, subnormals, scales d too small to
// invert, huge values whose d overflows f16, NaNs and infinities) with
// Store on every backend, each against ggml's reference (refQ8).
func checkQ8Blocks[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x7138))
	hd, e := cs.s.hd, cs.ref.cacheHead
	const heads = 64
	for _, class := range q8Classes {
		x := make([]float32, heads*hd)
		for b := 0; b < len(x); b += q8Block {
			q8Draw(r, class, x[b:b+q8Block])
		}
		c := &cacheCall{op: opStore, layout: class + " blocks", cv: Strides{heads, e, heads * e}, nc: heads * e, rows: 1, xv: Strides{heads, hd, heads * hd}, nx: len(x), slots: []int64{0}, scale: 1}
		st := cacheState{cache: make([]uint32, heads*e), x: x}
		want, written := cs.expect(c, st)
		for _, b := range bs {
			b.Use()
			cache := make([]C, heads*e)
			cs.invoke(c, cache, slices.Clone(x))
			if d := cs.compare(c, cacheState{fromElems(cache), x}, want, written); d != "" {
				t.Fatalf("backend %s: Store of %s q8_0 blocks: %s (seed %d)", b.Name, class, d, sd)
			}
		}
	}
	t.Logf("q8_0 blocks of every class (%v) store as ggml's reference on %d backends (seed %d)", q8Classes, len(bs), sd)
}

// checkShiftFar checks what a context shift promises beyond the bits: on a
// cache written by ApplyStore at positions p, Shift by delta gives the keys
// ApplyStore writes at p + delta, within the cache type's rounding. Per
// value with partner q, both quantizations (before and after the shift)
// and the stored error the rotation carries over from one value of the
// pair to the other are each at most one spacing of the cache type at
// |y_i| + |y_q| (which bounds both values of the pair at every angle), so
// the bound is 4 spacings there (q8_0: 4·d of the head's largest block),
// plus 16·2⁻²⁴ of the head's norm for the float32 rotations; values past
// RotaryDim of a per-value type must keep their bits. An attention factor
// applied a second time, or a rotation by a wrong angle, fails it.
func checkShiftFar[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	s := cs.s
	hd, e := s.hd, cs.ref.cacheHead
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x736869667466))
	const heads, tokens = 3, 16
	cv := Strides{heads, e, heads * e}
	xv := Strides{heads, hd, heads * hd}
	worst := 0.0
	for _, b := range bs {
		b.Use()
		for range 6 {
			x := make([]float32, tokens*heads*hd)
			for i := range x {
				x[i] = float32(r.NormFloat64())
			}
			scale := float32(1)
			if cs.ref.scaled {
				scale = 1.0 / 32 // values of a few units use e4m3's finer part
			}
			delta := int32(r.IntN(s.n/2)) + 1
			if r.IntN(2) == 0 {
				delta = -delta
			}
			pos := make([]int32, tokens)
			moved := make([]int32, tokens)
			slots := make([]int64, tokens)
			ds := make([]int32, tokens)
			for j := range pos {
				p := r.IntN(s.n)
				for p+int(delta) < 0 || p+int(delta) >= s.n {
					p = r.IntN(s.n)
				}
				pos[j], moved[j], slots[j], ds[j] = int32(p), int32(p+int(delta)), int64(j), delta
			}
			got := make([]C, tokens*heads*e)
			want := make([]C, len(got))
			cs.c.ApplyStore(s.tab, got, scale, cv, slots, x, xv, pos)
			cs.c.Shift(s.tab, got, scale, cv, slots, ds)
			cs.c.ApplyStore(s.tab, want, scale, cv, slots, x, xv, moved)
			yg, yw := make([]float32, len(x)), make([]float32, len(x))
			cs.c.Load(yg, scale, xv, got, cv, slots)
			cs.c.Load(yw, scale, xv, want, cv, slots)
			for k := 0; k < len(x); k += hd {
				var norm float64
				for _, v := range x[k : k+hd] {
					norm += float64(v) * float64(v)
				}
				norm = math.Sqrt(norm) * s.attn
				hg, hw := yg[k:k+hd], yw[k:k+hd]
				for i := range hd {
					g, w := float64(hg[i]), float64(hw[i])
					bound := 0.0
					if i < s.rd || cs.ref.blocks {
						m := max(math.Abs(g), math.Abs(w))
						if q := s.partner[i]; q >= 0 {
							m = max(math.Abs(g)+math.Abs(float64(hg[q])), math.Abs(w)+math.Abs(float64(hw[q])))
						}
						bound = 4*cs.spacing(m, hg, hw, scale) + 16*0x1p-24*norm
					}
					if d := math.Abs(g - w); !(d <= bound) {
						t.Fatalf("backend %s: ApplyStore at pos then Shift by %d: value %d of head %d = %v, ApplyStore at pos+%d gives %v: off by %g, bound %g (seed %d)",
							b.Name, delta, i, k/hd, g, delta, w, d, bound, sd)
					} else if bound > 0 {
						worst = max(worst, d/bound)
					}
				}
			}
		}
	}
	t.Logf("Shift by δ matches ApplyStore at p+δ within at most %.2f of the bound on %d backends (seed %d)", worst, len(bs), sd)
}

// spacing is the distance between consecutive cache values at magnitude
// v: the f16 or bf16 ulp, e4m3's times scale, or for q8_0 the largest d
// of the blocks of the two loaded heads a and b (amax/127, a little more
// for d's rounding to f16).
func (cs *cacheSuite[C]) spacing(v float64, a, b []float32, scale float32) float64 {
	switch cs.ref.dtype {
	case "f16":
		return codec[uint16]{kind: kF16, f: formats[kF16]}.storageULP(v)
	case "bf16":
		return codec[uint16]{kind: kBF16, f: formats[kBF16]}.storageULP(v)
	case "e4m3":
		x := v / float64(scale)
		if x < 0x1p-6 {
			return 0x1p-9 * float64(scale)
		}
		return math.Ldexp(1, int(math.Floor(math.Log2(x)))-3) * float64(scale)
	}
	var amax float64
	for _, y := range [][]float32{a, b} {
		for _, x := range y {
			amax = max(amax, math.Abs(float64(x)))
		}
	}
	return amax / 127 * (1 + 0x1p-10)
}
