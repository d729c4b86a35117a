/*
Package attention shows, in small runnable and tested code, how a model uses
packages that ropegen generates: causal softmax attention over a
half-precision KV cache whose keys kv128f16's ApplyStore rotates and narrows
in one pass (Cache); the same over a paged KV cache, in blocks of BlockSize
rows scattered through the cache, of f16 (kv128f16) or of ggml's q8_0
blocks (kv128q8), written, read back and shifted for a context shift only
through the generated cache forms ApplyStore, Store, Load and Shift
(PagedCache); and RoFormer's linear attention with RoPE in the numerator
only, computed with prefix sums (CausalLinear, on rope128).

The generated packages have the spec -dim 128 -base 10000 (interleaved
pairs, no scaling, attention factor A = 1); kv128f16 and kv128q8 add the
cache forms of their cache type (-out-dtype f16, q8_0). The package's tests check that attention scores depend on positions
only through m − n: moving a whole sequence by 10⁶ positions changes each
score by no more than a bound computed from the contract's per-pair
tolerance (docs/contract.md §6), and they log how far a float32-angle RoPE,
as Hugging Face and vLLM compute it, drifts at that shift. A context shift
of a PagedCache is checked against a fresh cache of the tokens it keeps:
each score within a bound derived the same way (paged_test.go).

# Positions past a table

A Table row is 2·128 float32 values, 1 KiB, so a table reaching position 10⁶
would take 1 GiB. NewCache and CausalLinear therefore accept a nil table and
then rotate with the package's Rotate, which computes the row for each call
and gives the same bits as Table.Apply. kv128f16 has ApplyStore only on a
Table, so a tableless Cache rotates a key with kv128f16.Rotate and then
narrows it with Store, which narrows without rotating. The tests check that
both ways store the same keys.
*/
package attention

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/generated/kv128f16"
)

// HeadDim is the length of one head vector, HeadDim of both generated
// packages this package uses.
const HeadDim = kv128f16.HeadDim

// Cache is one layer's key/value cache for causal multi-head softmax
// attention during decoding. Keys are stored rotated, as IEEE binary16 bits
// written by kv128f16's ApplyStore; values are stored as float32 (a model may
// store them in f16 too; they take no part in RoPE). Scores and the softmax
// are computed in float64: each product of a float32 query value and an f16
// key value widened exactly to float32 is exact in float64.
//
// A Cache is not safe for concurrent use.
type Cache struct {
	table  *kv128f16.Table // nil: rotate with kv128f16.Rotate
	heads  int
	start  int
	keys   []uint16  // rotated keys, f16 bits: [token][head][HeadDim]
	values []float32 // [token][head][HeadDim]
	q      []float32 // the rotated query of the last Step
	scores []float64 // the last Step's scores: [head][token]
	tmp    []float32 // a key rotated without a table
}

// NewCache returns an empty cache for heads heads whose first token is at
// position start. With a table, every position used must lie below
// table.Len(); with a nil table queries and keys are rotated without one
// (see the package documentation), at any position from 0 up (the
// contract's accuracy holds below 2²⁴).
// NewCache panics if heads < 1 or start < 0.
func NewCache(table *kv128f16.Table, heads, start int) *Cache {
	if heads < 1 {
		panic(fmt.Sprintf("attention.NewCache: heads = %d: want heads >= 1", heads))
	}
	if start < 0 {
		panic(fmt.Sprintf("attention.NewCache: start = %d: want start >= 0", start))
	}
	c := &Cache{table: table, heads: heads, start: start, q: make([]float32, heads*HeadDim)}
	if table == nil {
		c.tmp = make([]float32, heads*HeadDim)
	}
	return c
}

// Len returns the number of tokens in the cache.
func (c *Cache) Len() int {
	return len(c.values) / (c.heads * HeadDim)
}

// Pos returns the position of the next token: start + Len().
func (c *Cache) Pos() int {
	return c.start + c.Len()
}

// Step adds one token and returns its attention output. q, k and v hold the
// token's query, key and value, heads·HeadDim values each, head after head;
// they are not modified. At position p = Pos(), Step writes R_p·k into the
// cache narrowed to f16 (kv128f16's ApplyStore), appends v, rotates a copy of q
// to R_p·q, and for each head h returns
//
//	out_h = Σ_{j≤t} softmax_j(s_j)·v_{j,h},  s_j = (R_p·q_h)·(R_{p_j}·k_{j,h}) / √HeadDim
//
// over the t+1 cached tokens j, p_j = start + j, reading each key back
// widened exactly from f16. The result is a new slice of heads·HeadDim
// values. Step panics on a wrong length, or if a table is set and
// p >= table.Len().
func (c *Cache) Step(q, k, v []float32) []float32 {
	n := c.heads * HeadDim
	checkStep("Cache.Step", n, q, k, v)
	pos := c.Pos()
	if c.table != nil && pos >= c.table.Len() {
		panic(fmt.Sprintf("attention.Cache.Step: position %d: want < %d (Table.Len); use a longer table or a nil one", pos, c.table.Len()))
	}

	// The key, rotated and narrowed into the cache.
	c.keys = append(c.keys, make([]uint16, n)...)
	dst := c.keys[len(c.keys)-n:]
	token := kv128f16.Strides{Heads: c.heads, Head: HeadDim, Token: n}
	if c.table != nil {
		c.table.ApplyStore(kv128f16.F16Cache(dst, token), []int64{0}, k, token, []int32{int32(pos)})
	} else {
		copy(c.tmp, k)
		kv128f16.Rotate(c.tmp, pos)
		kv128f16.Store(kv128f16.F16Cache(dst, token), []int64{0}, c.tmp, token)
	}
	c.values = append(c.values, v...)

	// The query, rotated in float32.
	copy(c.q, q)
	if c.table != nil {
		c.table.Apply(c.q, pos)
	} else {
		kv128f16.Rotate(c.q, pos)
	}

	tokens := c.Len()
	c.scores = append(c.scores[:0], make([]float64, c.heads*tokens)...)
	return attend(c.heads, tokens, c.scores, c.values, func(h, j int) float64 {
		return dotF16(c.q[h*HeadDim:][:HeadDim], c.key(j, h))
	})
}

// checkStep panics unless q, k and v hold n values each; method names the
// Step that was called ("Cache.Step").
func checkStep(method string, n int, q, k, v []float32) {
	for _, a := range []struct {
		name string
		len  int
	}{{"q", len(q)}, {"k", len(k)}, {"v", len(v)}} {
		if a.len != n {
			panic(fmt.Sprintf("attention.%s: len(%s) = %d: want heads·HeadDim = %d", method, a.name, a.len, n))
		}
	}
}

// attend is the softmax attention of one query over tokens cached tokens,
// in float64, for Cache.Step and PagedCache.Step. dot(h, j) is the dot
// product of head h of the rotated query and of token j's rotated key. For
// each head h attend sets scores[h·tokens+j] to s_j = dot(h, j)/√HeadDim
// and returns out_h = Σ_j softmax_j(s)·v_{j,h}, values holding v as
// [token][head][HeadDim]. The result is a new slice of heads·HeadDim
// values.
func attend(heads, tokens int, scores []float64, values []float32, dot func(h, j int) float64) []float32 {
	n := heads * HeadDim
	out := make([]float32, n)
	scale := 1 / math.Sqrt(HeadDim)
	for h := range heads {
		s := scores[h*tokens : (h+1)*tokens]
		maxScore := math.Inf(-1)
		for j := range tokens {
			s[j] = scale * dot(h, j)
			maxScore = max(maxScore, s[j])
		}
		// softmax and the weighted sum of values, in float64
		acc := make([]float64, HeadDim)
		var sum float64
		for j := range tokens {
			w := math.Exp(s[j] - maxScore)
			sum += w
			for i, x := range values[j*n+h*HeadDim:][:HeadDim] {
				acc[i] += float64(w * float64(x))
			}
		}
		for i := range acc {
			out[h*HeadDim+i] = float32(acc[i] / sum)
		}
	}
	return out
}

// Scores returns the scores s_j of head h from the last Step, one per cached
// token, before the softmax: the dot product of the rotated query and the
// rotated f16 key, divided by √HeadDim. The slice is valid until the next
// Step. Scores panics unless 0 <= h < heads.
func (c *Cache) Scores(h int) []float64 {
	if h < 0 || h >= c.heads {
		panic(fmt.Sprintf("attention.Cache.Scores: h = %d: want 0 <= h < %d (heads)", h, c.heads))
	}
	tokens := len(c.scores) / c.heads
	return c.scores[h*tokens : (h+1)*tokens]
}

// key returns the f16 bits of head h of the cached key of token j.
func (c *Cache) key(j, h int) []uint16 {
	return c.keys[(j*c.heads+h)*HeadDim:][:HeadDim]
}

// dotF16 returns Σ q_i·k_i in float64, k_i widened from f16. Each product
// (24 by 11 significant bits) is exact in float64, so a fused multiply-add
// would give the same sum.
func dotF16(q []float32, k []uint16) float64 {
	var s float64
	for i, h := range k {
		s += float64(q[i]) * float64(f16ToFloat32(h))
	}
	return s
}

// f16ToFloat32 widens IEEE binary16 bits to float32, exactly: every binary16
// value is a float32 value. A NaN comes out quiet with its sign and payload,
// as x86's VCVTPH2PS gives it.
func f16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f && man != 0: // NaN
		return math.Float32frombits(sign | 0x7fc00000 | man<<13)
	case exp == 0x1f: // Inf
		return math.Float32frombits(sign | 0x7f800000)
	case exp != 0: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	}
	// zero or subnormal: man·2⁻²⁴, exact in float32
	f := float32(man) * 0x1p-24
	if sign != 0 {
		f = -f
	}
	return f
}
