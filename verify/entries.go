package verify

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// The six entry points of docs/contract.md §7 as the drivers see them:
// Apply, ApplyInverse, Rotate and RotateInverse take x and one position;
// ApplySeq and ApplyInverseSeq take x and a position per token.

// gform is one way of calling the kernel that Fuzz and checkConcurrent use:
// one of the six entry points.
type gform struct {
	name string
	e    entry
	seq  bool // takes a slice of positions
}

// forms returns every way k can be called: the six entry points.
func (s *suite[T]) forms() []gform {
	var fs []gform
	for _, e := range allEntries() {
		fs = append(fs, gform{name: e.String(), e: e, seq: e.seq()})
	}
	return fs
}

// invoke runs form f on x at pos, or at seq for the Seq forms.
func (s *suite[T]) invoke(f gform, x []T, pos int, seq []int32) {
	s.call(f.e, x, pos, seq)
}

// guardMaxHeads and guardMaxTokens bound the shapes the guard calls take:
// heads 1…guardMaxHeads per token, 1…guardMaxTokens tokens for the Seq
// forms.
const (
	guardMaxHeads  = 9
	guardMaxTokens = 3
)

// entryCall is the call of entry point e on x at pos (seq for the Seq
// forms): x changed in place, the positions only read.
func (s *suite[T]) entryCall(e entry, x []T, pos int, seq []int32) *call {
	xa := newBuf("x", x, inPlace).describing(s.headIndex)
	c := &call{args: []arg{xa}}
	if e.seq() {
		pa := newIndex("pos", seq)
		c.args = append(c.args, pa)
		c.what = fmt.Sprintf("%v(x of %d values, pos %v)", e, len(x), seq)
		c.run = func() { s.call(e, xa.cur, 0, pa.cur) }
		return c
	}
	c.what = fmt.Sprintf("%v(x of %d values, %d)", e, len(x), pos)
	c.run = func() { s.call(e, xa.cur, pos, nil) }
	return c
}

// headIndex describes element i of a vector of heads.
func (s *suite[T]) headIndex(i int) string {
	return fmt.Sprintf("head %d, index %d", i/s.hd, i%s.hd)
}

// specialsOf returns n values that mix the special classes, from salt.
func (s *suite[T]) specialsOf(n int, salt uint64) []T {
	x := make([]T, n)
	for i := range x {
		x[i] = s.c.fromBits(s.c.f.special(mix(salt+uint64(i)), false))
	}
	return x
}

// baseEntries describes the six entry points to the drivers.
func (s *suite[T]) baseEntries() entryPoint {
	return entryPoint{name: "the six entry points", guard: s.baseGuardCalls, edges: s.baseEdges,
		bench: func(r *rand.Rand) []benchGroup { return s.baseBench(s.benchInput(r)) }}
}

// baseGuardCalls are every entry point with 1…9 heads per token (the Seq
// forms with 1…3 tokens), on special values, at the table's last, first,
// second and middle positions in turn (Rotate: 2²⁴−1, 0, 1, 131071).
func (s *suite[T]) baseGuardCalls(r *rand.Rand) []*call {
	tablePos := []int{s.n - 1, 0, 1, s.n / 2}
	rotatePos := []int{maxRotatePos, 0, 1, 131071}
	var cs []*call
	for heads := 1; heads <= guardMaxHeads; heads++ {
		for _, e := range allEntries() {
			maxTok := 1
			if e.seq() {
				maxTok = guardMaxTokens
			}
			for tokens := 1; tokens <= maxTok; tokens++ {
				n := len(cs)
				pos := tablePos[n%len(tablePos)]
				if e.tableless() {
					pos = rotatePos[n%len(rotatePos)]
				}
				var seq []int32
				if e.seq() {
					for j := range tokens {
						seq = append(seq, int32(tablePos[(n+j)%len(tablePos)]))
					}
				}
				cs = append(cs, s.entryCall(e, s.specialsOf(heads*tokens*s.hd, r.Uint64()), pos, seq))
			}
		}
	}
	return cs
}

// baseEdges are the bad calls of docs/contract.md §7 and the edge cases that
// are easy to get wrong: a length that is not whole heads or less than one
// head, a negative position (the most negative too), a position at or past
// Len(), ApplySeq and ApplyInverseSeq with no positions but values or a
// length that does not split into the positions' tokens, a Seq call whose
// last position is bad (which must panic before touching x), and
// NewTable(-1). Each must panic naming the function (as a whole word:
// "Apply" does not match "ApplySeq"), the bad value and what was expected.
// Empty and nil slices must be no-ops.
func (s *suite[T]) baseEdges() []edgeCall {
	hd, L := s.hd, s.n
	var es []edgeCall
	salt := uint64(0)
	x := func(n int) []T { salt += 1 << 20; return s.specialsOf(n, salt) }
	badCall := func(e entry, what string, value int, x []T, pos int, seq []int32) {
		es = append(es, bad(s.entryCall(e, x, pos, seq), what, panicWant{fn: e.String(), values: []int{value}, expect: true}))
	}
	for _, e := range []entry{eApply, eApplyInverse, eRotate, eRotateInverse} {
		badCall(e, "len(x) not a multiple of HeadDim", 2*hd+1, x(2*hd+1), 0, nil)
		badCall(e, "less than one head", hd-1, x(hd-1), 0, nil)
		badCall(e, "negative pos", -3, x(hd), -3, nil)
		badCall(e, "pos -1", -1, x(hd), -1, nil)
		badCall(e, "the most negative pos", math.MinInt, x(hd), math.MinInt, nil)
		if !e.tableless() {
			badCall(e, "pos >= Len()", L+7, x(hd), L+7, nil)
			badCall(e, "pos = Len()", L, x(hd), L, nil)
		}
	}
	for _, e := range []entry{eApplySeq, eApplyInverseSeq} {
		badCall(e, "len(x) not divisible by len(pos)·HeadDim", 2*hd, x(2*hd), 0, []int32{1, 2, 3})
		badCall(e, "len(x) not divisible by len(pos)·HeadDim", 3*hd, x(3*hd), 0, []int32{0, 1})
		badCall(e, "len(x) not a multiple of HeadDim", 3*hd+1, x(3*hd+1), 0, []int32{1})
		badCall(e, "less than one head for one position", hd-1, x(hd-1), 0, []int32{0})
		badCall(e, "len(pos) = 0 with len(x) > 0", hd, x(hd), 0, nil)
		badCall(e, "len(pos) = 0 (non-nil) with len(x) > 0", hd, x(hd), 0, []int32{})
		badCall(e, "negative pos in the slice", -5, x(2*hd), 0, []int32{0, -5})
		badCall(e, "pos >= Len() in the slice", L+7, x(2*hd), 0, []int32{0, int32(L + 7)})
		badCall(e, "pos = Len() in the slice", L, x(2*hd), 0, []int32{0, int32(L)})
		badCall(e, "the most negative int32 in the slice", math.MinInt32, x(hd), 0, []int32{math.MinInt32})
		badCall(e, "a bad last position", -1, x(2*hd), 0, []int32{1, -1})
	}
	es = append(es, bad(&call{what: "NewTable(-1)", run: func() { s.k.NewTable(-1) }}, "maxPos -1",
		panicWant{fn: "NewTable", values: []int{-1}, expect: true}))
	const noop = "empty input must be a no-op"
	for _, c := range []struct {
		e   entry
		x   []T
		pos int
		seq []int32
	}{
		{eApply, nil, 0, nil}, {eApply, []T{}, 0, nil}, {eApplyInverse, nil, 0, nil},
		{eApplySeq, nil, 0, nil}, {eApplySeq, []T{}, 0, []int32{}}, {eApplyInverseSeq, nil, 0, nil},
		{eApplyInverseSeq, []T{}, 0, []int32{}}, {eRotate, nil, 0, nil}, {eRotate, []T{}, 0, nil},
		{eRotate, nil, 1 << 40, nil}, {eRotateInverse, nil, 0, nil}, {eRotateInverse, []T{}, 0, nil},
	} {
		es = append(es, valid(s.entryCall(c.e, c.x, c.pos, c.seq), noop, false))
	}
	return es
}

// checkEmptyTable checks that NewTable(0) gives a table, and that Apply at
// position 0 on it (if it is empty) panics naming Apply and the position.
func checkEmptyTable[T Elem](t tb, s *suite[T]) {
	t.Helper()
	var empty Table[T]
	msg, panicked := catch(func() { empty = s.k.NewTable(0) })
	switch {
	case panicked:
		t.Errorf("NewTable(0) panicked (%q); want an empty table", msg)
	case empty == nil:
		t.Errorf("NewTable(0) returned nil")
	case empty.Len() == 0:
		x := s.specialsOf(s.hd, 1)
		c := &call{what: "Apply at pos 0 on NewTable(0) (Len 0)", args: []arg{newBuf("x", x, inPlace)}}
		c.run = func() { empty.Apply(c.args[0].(*buf[T]).cur, 0) }
		if d := bad(c, "pos 0", panicWant{fn: "Apply", values: []int{0}}).check(); d != "" {
			t.Errorf("%s", d)
		}
	}
}

// checkPanics runs the six entry points' edge calls on every backend and
// checks the empty table.
func checkPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkEdges(t, s.backendsOrOnly(), s.baseEntries())
	checkEmptyTable(t, s)
}

// checkGuard runs the six entry points' guard calls (checkGuarded).
func checkGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkGuarded(t, s.backendsOrOnly(), 0x6775617264, s.baseEntries())
}

// ---- benchmarks -------------------------------------------------------------------

// Benchmark shapes.
const (
	benchHeads     = 32   // heads per token
	benchDecodePos = 1000 // the decode position
	benchTokens    = 512  // prefill tokens, at positions 0..511
	benchLong      = 4096 // prefill4k tokens
)

// benchInput returns a source of benchmark inputs from r: values of
// magnitude 1/2…1, either sign, which rotations in place keep normal.
func (s *suite[T]) benchInput(r *rand.Rand) func(int) []T {
	return func(n int) []T {
		x := make([]T, n)
		for i := range x {
			x[i] = s.c.fromF64((1 + r.Float64()) * float64(1-2*r.IntN(2)) / 2)
		}
		return x
	}
}

// upTo returns the positions 0…n−1, each mod m.
func upTo(n, m int) []int32 {
	pos := make([]int32, n)
	for i := range pos {
		pos[i] = int32(i % m)
	}
	return pos
}

// baseBench is the six entry points' benchmark groups: decode (Apply on 32
// heads at one position, Rotate, the plain loop), prefill (ApplySeq on 512
// tokens of 32 heads, the plain loop token by token) and prefill4k
// (ApplySeq on 4096 tokens on the default backend, ApplySeqParallel with 2
// workers where the table has it).
func (s *suite[T]) baseBench(input func(int) []T) []benchGroup {
	bl := newBaseline(s, tableRows)
	tok := benchHeads * s.hd
	plain := func(x []T, pos []int32) *call {
		xa := newBuf("x", x, inPlace)
		return &call{what: "the plain loop", args: []arg{xa}, run: func() {
			for j, p := range pos {
				bl.apply(xa.cur[j*tok:(j+1)*tok], int(p))
			}
		}}
	}
	x0 := input(tok)
	decode := benchGroup{name: "decode", main: s.entryCall(eApply, x0, benchDecodePos, nil), extra: []timed{
		{name: "rotate", c: s.entryCall(eRotate, x0, benchDecodePos, nil)},
		{name: "baseline=plainloop", c: plain(x0, []int32{benchDecodePos})},
	}}
	x0 = input(benchTokens * tok)
	pos := upTo(benchTokens, s.n)
	prefill := benchGroup{name: "prefill", main: s.entryCall(eApplySeq, x0, 0, pos), extra: []timed{
		{name: "baseline=plainloop", c: plain(x0, pos)},
	}}
	x0 = input(benchLong * tok)
	pos = upTo(benchLong, s.n)
	long := benchGroup{name: "prefill4k", main: s.entryCall(eApplySeq, x0, 0, pos), only: true}
	if pt, ok := s.tab.(ParallelTable[T]); ok {
		xa := newBuf("x", x0, inPlace)
		par := &call{what: "ApplySeqParallel(x, pos, 2)", args: []arg{xa}, run: func() { pt.ApplySeqParallel(xa.cur, pos, 2) }}
		long.extra = append(long.extra, timed{name: "parallel=2", c: par})
		long.check = func() string { return sameResult(long.main, par) }
	}
	return []benchGroup{decode, prefill, long}
}

// sameResult makes calls a and b on fresh copies of their inputs and
// returns "" if their first args then hold the same bits, else where they
// differ.
func sameResult(a, b *call) string {
	a.fresh()
	b.fresh()
	a.run()
	b.run()
	x, y := a.args[0].data(), b.args[0].data()
	if len(x) != len(y) {
		return fmt.Sprintf("%s leaves %d bytes, %s %d", a.what, len(x), b.what, len(y))
	}
	for i := range x {
		if x[i] != y[i] {
			return fmt.Sprintf("%s and %s differ at byte %d of %s", a.what, b.what, i, a.args[0].label())
		}
	}
	return ""
}
