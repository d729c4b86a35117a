package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	refcodec "github.com/ropegen/ropegen/verify/codec"
)

// The checks of Rotary.Hadamard (Cache.Rows of a Cache with Hadamard):
// rows of heads multiplied by H in place (docs/contract.md §15), against
// verify/codec's Hadamard head by head.

// rowsCall is one call of Rows on x (len(x) values, view xs) for n rows.
func (cs *cacheSuite[C]) rowsCall(x []float32, xs Strides, n int) *call {
	xa := newBuf("x", x, inPlace)
	cl := &call{what: fmt.Sprintf("Rotary.Hadamard(x len %d, %+v, n %d)", len(x), xs, n), args: []arg{xa}}
	cl.run = func() { cs.c.Rows(xa.cur, xs, n) }
	return cl
}

// rowsDraw draws a call's rows: a view of 1…9 heads from the suite's token
// views, 0…5 rows, a slice that ends at the last head or a little after,
// values rich in special ones.
func (cs *cacheSuite[C]) rowsDraw(r *rand.Rand, tail bool) ([]float32, Strides, int) {
	hd := cs.s.hd
	heads, n := 1+r.IntN(9), r.IntN(6)
	ls := cs.layouts(heads, 1, n)
	xs := ls[r.IntN(len(ls))].xv
	x := make([]float32, extent(xs, n, hd))
	if tail {
		x = make([]float32, len(x)+r.IntN(3))
	}
	for i := range x {
		x[i] = cs.s.c.fromBits(cs.s.c.f.special(r.Uint64(), false))
		if r.IntN(2) == 0 {
			x[i] = float32(r.NormFloat64())
		}
	}
	return x, xs, n
}

// checkHadamardRows calls Rows on every backend with drawn rows and
// compares each result with verify/codec's Hadamard of every head (bits;
// two NaNs alike, as docs/contract.md §5 has it), every other value
// unchanged, and each backend's bits with the previous one's.
func checkHadamardRows[C CacheElem](t tb, cs *cacheSuite[C]) {
	bs := cs.s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x68616461))
	calls := 200
	if testing.Short() {
		calls = 40
	}
	hd := cs.s.hd
	for range calls {
		x, xs, n := cs.rowsDraw(r, true)
		want := slices.Clone(x)
		for j := range n {
			for h := range xs.Heads {
				refcodec.Hadamard(want[head(xs, j, h):][:hd])
			}
		}
		var last []float32
		for bi, b := range bs {
			b.Use()
			got := slices.Clone(x)
			if msg, panicked := catch(func() { cs.c.Rows(got, xs, n) }); panicked {
				t.Fatalf("backend %s: Rotary.Hadamard(%+v, n %d): panicked: %s (seed %d)", b.Name, xs, n, msg, sd)
			}
			if d := sameFloats(got, want); d != "" {
				t.Fatalf("backend %s: Rotary.Hadamard(%+v, n %d): %s (seed %d)", b.Name, xs, n, d, sd)
			}
			if bi > 0 {
				if d := sameFloats(got, last); d != "" {
					t.Fatalf("backend %s against %s: Rotary.Hadamard(%+v, n %d): %s (seed %d)", b.Name, bs[bi-1].Name, xs, n, d, sd)
				}
			}
			last = got
		}
	}
	t.Logf("%d calls of Rotary.Hadamard on %d backends equal verify/codec's Hadamard head by head (seed %d)", calls, len(bs), sd)
	checkGuarded(t, bs, 0x6861646172, cs.rowsEntries())
	checkEdges(t, bs, cs.rowsEntries())
}

// sameFloats returns "" if got has want's bits (two NaNs alike), else the
// first index that differs.
func sameFloats(got, want []float32) string {
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			return fmt.Sprintf("x[%d] = %v (%#08x): want %v (%#08x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
	return ""
}

// rowsEntries describes Rows to the drivers: guard calls of drawn rows
// whose slice ends at the last head, and bad calls (a negative n, more
// rows than x holds, of two rows of two heads with gaps) that must panic
// before writing.
func (cs *cacheSuite[C]) rowsEntries() entryPoint {
	return entryPoint{
		name: "Rotary.Hadamard",
		guard: func(r *rand.Rand) []*call {
			var calls []*call
			for range 8 {
				x, xs, n := cs.rowsDraw(r, false)
				calls = append(calls, cs.rowsCall(x, xs, n))
			}
			return calls
		},
		edges: func() []edgeCall {
			hd := cs.s.hd
			xs, n := Strides{Heads: 2, Head: hd + 1, Token: 2*hd + 3}, 2
			x := cs.s.specialsOf(extent(xs, n, hd), 0x6861)
			return []edgeCall{
				bad(cs.rowsCall(slices.Clone(x), xs, -1), "n = -1", panicWant{fn: "Hadamard", values: []int{-1}}),
				bad(cs.rowsCall(slices.Clone(x), xs, n+1), "one row more than x holds", panicWant{fn: "Hadamard", values: []int{n + 1}}),
			}
		},
	}
}
