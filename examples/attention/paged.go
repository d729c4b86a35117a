package attention

import (
	"fmt"

	"github.com/ropegen/ropegen/generated/kv128f16"
	"github.com/ropegen/ropegen/generated/kv128q8"
)

// BlockSize is the rows of one block of a PagedCache.
const BlockSize = 16

// views is a cache view and a token view, as the generated packages'
// Strides: {Heads, Head, Token}.
type views struct{ heads, head, token int }

// kvFormat is what a PagedCache takes from a package generated with a
// cache type (-out-dtype): its four cache forms, for element type C, and
// the rotation of a query. The PagedCache calls nothing else.
type kvFormat[C any] struct {
	name       string
	cacheHead  int // CacheHead: elements of one cached head
	applyStore func(dst []C, ds views, slots []int64, src []float32, ss views, pos []int32)
	store      func(dst []C, ds views, slots []int64, src []float32, ss views)
	load       func(dst []float32, ds views, src []C, ss views, slots []int64)
	shift      func(c []C, cs views, slots []int64, delta []int32)
	rotate     func(q []float32, pos int) // the table's Apply
}

// PagedCache is one layer's key/value cache for causal multi-head softmax
// attention, in blocks of BlockSize rows, as vLLM and llama.cpp keep theirs:
// a block table maps the sequence's logical blocks to physical ones, taken
// from a free list (here handed out from the end of the cache down, so
// that they are not in order), and a token's cache row, its slot, is
// block·BlockSize + its index in the block. Keys and values are written
// and read only through the generated package's cache forms: ApplyStore
// rotates a token's key into its slot, Store writes its value, Load reads
// every slot of the sequence back as float32, and Shift moves keys in
// place for a context shift. Rows are token-major: slot s holds heads
// heads of CacheHead elements at s·heads·CacheHead.
//
// NewPagedF16 makes one over kv128f16 (f16 keys and values), NewPagedQ8
// over kv128q8 (ggml's q8_0 blocks). A PagedCache is not safe for
// concurrent use.
type PagedCache[C any] struct {
	f             kvFormat[C]
	heads         int
	keys, values  []C
	free          []int   // free physical blocks; the next is the last
	table         []int   // the block table: physical block of logical block i
	appended      int     // tokens ever appended: the next token's logical row
	slots         []int64 // the slot of each token in the cache, in order
	next          int32   // the next token's position
	q             []float32
	kbuf, vbuf    []float32
	scores        []float64 // the last Step's scores: [head][token]
	cv, tv        views
	maxPos, nBlks int
}

// NewPagedF16 returns an empty paged f16 cache of blocks blocks for heads
// heads, its keys rotated with table (every position used must lie below
// table.Len()). It panics if heads < 1 or blocks < 1.
func NewPagedF16(table *kv128f16.Table, heads, blocks int) *PagedCache[uint16] {
	s := func(v views) kv128f16.Strides { return kv128f16.Strides{Heads: v.heads, Head: v.head, Token: v.token} }
	return newPaged(kvFormat[uint16]{
		name: "kv128f16", cacheHead: kv128f16.CacheHead,
		applyStore: func(dst []uint16, ds views, slots []int64, src []float32, ss views, pos []int32) {
			table.ApplyStore(kv128f16.F16Cache(dst, s(ds)), slots, src, s(ss), pos)
		},
		store: func(dst []uint16, ds views, slots []int64, src []float32, ss views) {
			kv128f16.Store(kv128f16.F16Cache(dst, s(ds)), slots, src, s(ss))
		},
		load: func(dst []float32, ds views, src []uint16, ss views, slots []int64) {
			kv128f16.Load(dst, s(ds), kv128f16.F16Cache(src, s(ss)), slots)
		},
		shift: func(c []uint16, cs views, slots []int64, delta []int32) {
			table.Shift(kv128f16.F16Cache(c, s(cs)), slots, delta)
		},
		rotate: table.Apply,
	}, heads, blocks, table.Len())
}

// NewPagedQ8 is NewPagedF16 for a q8_0 cache (kv128q8): every head of a key
// or value is four blocks of 32 int8 and an f16 scale, 136 bytes.
func NewPagedQ8(table *kv128q8.Table, heads, blocks int) *PagedCache[uint8] {
	s := func(v views) kv128q8.Strides { return kv128q8.Strides{Heads: v.heads, Head: v.head, Token: v.token} }
	return newPaged(kvFormat[uint8]{
		name: "kv128q8", cacheHead: kv128q8.CacheHead,
		applyStore: func(dst []uint8, ds views, slots []int64, src []float32, ss views, pos []int32) {
			table.ApplyStore(kv128q8.Q80Cache(dst, s(ds)), slots, src, s(ss), pos)
		},
		store: func(dst []uint8, ds views, slots []int64, src []float32, ss views) {
			kv128q8.Store(kv128q8.Q80Cache(dst, s(ds)), slots, src, s(ss))
		},
		load: func(dst []float32, ds views, src []uint8, ss views, slots []int64) {
			kv128q8.Load(dst, s(ds), kv128q8.Q80Cache(src, s(ss)), slots)
		},
		shift: func(c []uint8, cs views, slots []int64, delta []int32) {
			table.Shift(kv128q8.Q80Cache(c, s(cs)), slots, delta)
		},
		rotate: table.Apply,
	}, heads, blocks, table.Len())
}

func newPaged[C any](f kvFormat[C], heads, blocks, maxPos int) *PagedCache[C] {
	if heads < 1 || blocks < 1 {
		panic(fmt.Sprintf("attention.NewPaged: heads = %d, blocks = %d: want both >= 1", heads, blocks))
	}
	row := heads * f.cacheHead
	c := &PagedCache[C]{
		f: f, heads: heads, maxPos: maxPos, nBlks: blocks,
		keys:   make([]C, blocks*BlockSize*row),
		values: make([]C, blocks*BlockSize*row),
		q:      make([]float32, heads*HeadDim),
		cv:     views{heads, f.cacheHead, row},
		tv:     views{heads, HeadDim, heads * HeadDim},
	}
	for b := range blocks {
		c.free = append(c.free, b) // the last block first
	}
	return c
}

// Len returns the number of tokens in the cache.
func (c *PagedCache[C]) Len() int { return len(c.slots) }

// Pos returns the position of the next token.
func (c *PagedCache[C]) Pos() int { return int(c.next) }

// Slots returns the cache row of every token, in order.
func (c *PagedCache[C]) Slots() []int64 { return c.slots }

// Step adds one token at position Pos() and returns its attention output,
// as Cache.Step does: q, k and v hold heads·HeadDim values each. The key is
// rotated into the token's slot by ApplyStore and the value stored by
// Store, the query rotated by the table's Apply; then Load reads every
// cached key and value back as float32 for the scores and the softmax
// (in float64). Step panics on a wrong length, when no free block is left,
// or at a position the table does not cover.
func (c *PagedCache[C]) Step(q, k, v []float32) []float32 {
	n := c.heads * HeadDim
	checkStep("PagedCache.Step", n, q, k, v)
	if int(c.next) >= c.maxPos {
		panic(fmt.Sprintf("attention.PagedCache.Step: position %d: want < %d (Table.Len)", c.next, c.maxPos))
	}
	// The token's slot: a new block from the free list every BlockSize tokens.
	if c.appended%BlockSize == 0 {
		if len(c.free) == 0 {
			panic(fmt.Sprintf("attention.PagedCache.Step: all %d blocks in use", c.nBlks))
		}
		c.table = append(c.table, c.free[len(c.free)-1])
		c.free = c.free[:len(c.free)-1]
	}
	slot := int64(c.table[c.appended/BlockSize]*BlockSize + c.appended%BlockSize)
	c.appended++
	pos := c.next
	c.next++
	one := []int64{slot}
	c.f.applyStore(c.keys, c.cv, one, k, c.tv, []int32{pos})
	c.f.store(c.values, c.cv, one, v, c.tv)
	c.slots = append(c.slots, slot)

	copy(c.q, q)
	c.f.rotate(c.q, int(pos))
	tokens := c.Len()
	c.kbuf = append(c.kbuf[:0], make([]float32, tokens*n)...)
	c.vbuf = append(c.vbuf[:0], make([]float32, tokens*n)...)
	c.f.load(c.kbuf, c.tv, c.keys, c.cv, c.slots)
	c.f.load(c.vbuf, c.tv, c.values, c.cv, c.slots)

	c.scores = append(c.scores[:0], make([]float64, c.heads*tokens)...)
	return attend(c.heads, tokens, c.scores, c.vbuf, func(h, j int) float64 {
		return dotF32(c.q[h*HeadDim:][:HeadDim], c.kbuf[j*n+h*HeadDim:][:HeadDim])
	})
}

// Scores returns the scores of head h from the last Step, one per cached
// token, before the softmax. The slice is valid until the next Step.
// Scores panics unless 0 <= h < heads.
func (c *PagedCache[C]) Scores(h int) []float64 {
	if h < 0 || h >= c.heads {
		panic(fmt.Sprintf("attention.PagedCache.Scores: h = %d: want 0 <= h < %d (heads)", h, c.heads))
	}
	tokens := len(c.scores) / c.heads
	return c.scores[h*tokens : (h+1)*tokens]
}

// Key returns the cached key of token j widened to float32 (all heads), as
// Load reads it.
func (c *PagedCache[C]) Key(j int) []float32 {
	y := make([]float32, c.heads*HeadDim)
	c.f.load(y, c.tv, c.keys, c.cv, c.slots[j:j+1])
	return y
}

// Shift makes room as llama.cpp's context shift does: it drops the tokens
// keep … keep+discard−1 and moves every later token back discard positions
// (the token at p goes to p − discard). The dropped tokens' rows are left
// as they are, no longer read; the later tokens' keys stay in their slots
// and are turned by −discard in the cache's type by the package's Shift
// (the attention factor is not applied again), their values untouched. The
// next token comes at Pos() − discard. Shift panics unless 0 <= keep and
// keep + discard <= Len(), discard >= 0.
func (c *PagedCache[C]) Shift(keep, discard int) {
	if keep < 0 || discard < 0 || keep+discard > c.Len() {
		panic(fmt.Sprintf("attention.PagedCache.Shift: keep = %d, discard = %d with %d tokens: want 0 <= keep, 0 <= discard, keep+discard <= Len()", keep, discard, c.Len()))
	}
	rest := c.slots[keep+discard:]
	delta := make([]int32, len(rest))
	for i := range delta {
		delta[i] = int32(-discard)
	}
	c.f.shift(c.keys, c.cv, rest, delta)
	c.slots = append(c.slots[:keep], rest...)
	c.next -= int32(discard)
}

// dotF32 returns Σ a_i·b_i in float64: each product of two float32 values
// is exact in float64.
func dotF32(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}
