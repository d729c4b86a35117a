package verify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Strides mirrors a generated package's Strides (the two convert into each
// other): head h of token j of a view is x[j·Token + h·Head :][:HeadDim].
type Strides struct {
	Heads int // heads per token
	Head  int // from the start of one head to the start of the next
	Token int // from the start of one token's first head to the next token's
}

// Strided describes a package's strided entry points: views of
// heads placed by Strides, such as fused QKV rows or head-major caches.
// Each field calls the method of tab it is named after, converting the
// Strides to the package's: ApplyStrided(tab, x, s, pos) calls
// tab.ApplyStrided(x, pkg.Strides(s), pos). All three must be set.
type Strided[T Elem] struct {
	ApplyStrided        func(tab Table[T], x []T, s Strides, pos []int32)
	ApplyInverseStrided func(tab Table[T], x []T, s Strides, pos []int32)
	ApplyQK             func(tab Table[T], q []T, qs Strides, k []T, ks Strides, pos []int32)
}

// ---- strided calls ---------------------------------------------------------------

// sop is one strided entry point.
type sop int

const (
	opFwd sop = iota // ApplyStrided
	opInv            // ApplyInverseStrided
	opQK             // ApplyQK
)

var sopNames = [...]string{"ApplyStrided", "ApplyInverseStrided", "ApplyQK"}

func (o sop) String() string { return sopNames[o] }

// sview is one view of a strided call: its strides and where its slice lies
// in the buffer that holds it: buf[off : off+n].
type sview struct {
	s      Strides
	off, n int
}

// extent returns the number of elements a view of s over tokens tokens
// spans, from its first head's start to its last head's end (0 for no
// tokens).
func extent(s Strides, tokens, hd int) int {
	if tokens == 0 {
		return 0
	}
	return (tokens-1)*s.Token + (s.Heads-1)*s.Head + hd
}

// scall is one strided call and its buffers' shapes: a is x (ApplyStrided,
// ApplyInverseStrided) or q (ApplyQK) in a buffer of na elements; b is k
// (ApplyQK), in a's buffer when shared, else in a buffer of nb elements.
type scall struct {
	op     sop
	name   string // the layout, for messages
	pos    []int32
	a, b   sview
	shared bool
	na, nb int
}

func (c *scall) String() string {
	w := fmt.Sprintf("%v (%s) with %d tokens at %v: ", c.op, c.name, len(c.pos), c.pos)
	switch c.op {
	case opQK:
		where := fmt.Sprintf("in a second buffer of %d", c.nb)
		if c.shared {
			where = "in q's buffer"
		}
		return w + fmt.Sprintf("qs = %+v on buf[%d:%d] of %d, ks = %+v on buf[%d:%d] %s", c.a.s, c.a.off, c.a.off+c.a.n, c.na, c.b.s, c.b.off, c.b.off+c.b.n, where)
	}
	return w + fmt.Sprintf("s = %+v on buf[%d:%d] of %d", c.a.s, c.a.off, c.a.off+c.a.n, c.na)
}

// sbufs are the buffers of one strided call: a (x or q) and b (k, unless
// it shares a).
type sbufs[T Elem] struct {
	a, b []T
}

func (b sbufs[T]) clone() sbufs[T] {
	return sbufs[T]{slices.Clone(b.a), slices.Clone(b.b)}
}

// kbuf returns the buffer k's view lies in.
func kbufOf[T Elem](c *scall, b sbufs[T]) []T {
	if c.shared {
		return b.a
	}
	return b.b
}

// invokeStrided makes call c on the buffers b, on the active backend.
func (s *suite[T]) invokeStrided(c *scall, b sbufs[T]) {
	x := b.a[c.a.off : c.a.off+c.a.n]
	switch c.op {
	case opFwd:
		s.k.Strided.ApplyStrided(s.tab, x, c.a.s, c.pos)
	case opInv:
		s.k.Strided.ApplyInverseStrided(s.tab, x, c.a.s, c.pos)
	case opQK:
		k := kbufOf(c, b)
		s.k.Strided.ApplyQK(s.tab, x, c.a.s, k[c.b.off:c.b.off+c.b.n], c.b.s, c.pos)
	}
}

// eachHead calls f with the token and head index and the buffer index of
// the first element of every head of view v over tokens tokens.
func eachHead(v sview, tokens int, f func(j, h, at int)) {
	for j := range tokens {
		for h := range v.s.Heads {
			f(j, h, v.off+j*v.s.Token+h*v.s.Head)
		}
	}
}

// wantStrided returns what c must leave in buffers in, computed the way the
// contract defines it: every head copied out, rotated by the table's Apply
// (ApplyInverse) at its token's position on the active backend, and its
// rotary values copied back. It also returns which elements of a and b the
// call writes; every other element must keep its bits.
func (s *suite[T]) wantStrided(c *scall, in sbufs[T]) (want sbufs[T], wa, wb []bool) {
	want = in.clone()
	hd := s.hd
	tmp := make([]T, hd)
	wa = make([]bool, len(in.a))
	if !c.shared {
		wb = make([]bool, len(in.b))
	}
	rotate := func(buf []T, mask []bool, v sview, inverse bool) {
		eachHead(v, len(c.pos), func(j, h, at int) {
			copy(tmp, buf[at:at+hd])
			if inverse {
				s.tab.ApplyInverse(tmp, int(c.pos[j]))
			} else {
				s.tab.Apply(tmp, int(c.pos[j]))
			}
			for d := range hd {
				if s.partner[d] >= 0 {
					buf[at+d] = tmp[d]
					mask[at+d] = true
				}
			}
		})
	}
	switch c.op {
	case opFwd, opInv:
		rotate(want.a, wa, c.a, c.op == opInv)
	case opQK:
		rotate(want.a, wa, c.a, false)
		if c.shared {
			rotate(want.a, wa, c.b, false)
		} else {
			rotate(want.b, wb, c.b, false)
		}
	}
	return want, wa, wb
}

// canary returns the bits of the value an element that no call may write
// starts with: a signaling NaN with a payload from i and a sign (every
// eighth one a special value from format.special, finite or not), so that
// a stray store, or a load and store through a float register that quiets
// the NaN, changes its bits.
func canary(f format, i uint64) uint64 {
	h := mix(i ^ 0x63616e617279)
	if h%8 == 0 {
		return f.special(h>>3, false)
	}
	quiet := uint64(1) << (f.mantBits - 1)
	return f.compose(h>>63 == 1, f.expMax(), 1+(h>>3)%(quiet-1))
}

// fillStrided returns buffers for c: the elements the call reads (the
// rotary values of a's and b's heads, or with whole all HeadDim values of
// them, for ApplyNormQK) hold values drawn by val (a's heads first, then
// b's), every other element a canary.
func (s *suite[T]) fillStrided(c *scall, salt uint64, whole bool, val func() uint64) sbufs[T] {
	var b sbufs[T]
	b.a = make([]T, c.na)
	for i := range b.a {
		b.a[i] = s.c.fromBits(canary(s.c.f, salt+uint64(i)))
	}
	if c.op == opQK && !c.shared {
		b.b = make([]T, c.nb)
		for i := range b.b {
			b.b[i] = s.c.fromBits(canary(s.c.f, salt+uint64(c.na+i)))
		}
	}
	fill := func(buf []T, v sview, all bool) {
		eachHead(v, len(c.pos), func(_, _, at int) {
			for d := range s.hd {
				if all || s.partner[d] >= 0 {
					buf[at+d] = s.c.fromBits(val())
				}
			}
		})
	}
	fill(b.a, c.a, whole)
	if c.op == opQK {
		fill(kbufOf(c, b), c.b, whole)
	}
	return b
}

// describe says where element i of a buffer holding views vs lies: in which
// head of which view, at which index, or in no head.
func (s *suite[T]) describe(c *scall, i int, views map[string]sview) string {
	for _, name := range []string{"x", "q", "k"} {
		v, ok := views[name]
		if !ok {
			continue
		}
		var where string
		eachHead(v, len(c.pos), func(j, h, at int) {
			if where == "" && i >= at && i < at+s.hd {
				d := i - at
				where = fmt.Sprintf("%s's token %d (pos %d), head %d, index %d", name, j, c.pos[j], h, d)
				if s.partner[d] < 0 {
					where += fmt.Sprintf(" (>= RotaryDim %d)", s.rd)
				}
			}
		})
		if where != "" {
			return where
		}
	}
	return "an element in no head of the call"
}

// bufViews names the views that lie in each buffer of c: "a" and "b".
func (c *scall) bufViews() map[string]map[string]sview {
	m := map[string]map[string]sview{}
	switch c.op {
	case opFwd, opInv:
		m["a"] = map[string]sview{"x": c.a}
	case opQK:
		if c.shared {
			m["a"] = map[string]sview{"q": c.a, "k": c.b}
		} else {
			m["a"] = map[string]sview{"q": c.a}
			m["b"] = map[string]sview{"k": c.b}
		}
	}
	return m
}

// diffStrided compares got with want: elements in mask (the values the call
// writes) must have the same bits, NaN payloads aside; every other element
// must keep its exact bits. It returns "" or what differs.
func (s *suite[T]) diffStrided(c *scall, got, want, in sbufs[T], wa, wb []bool) string {
	views := c.bufViews()
	check := func(buf string, g, w, x []T, mask []bool) string {
		for i := range g {
			if mask[i] {
				if !s.c.same(g[i], w[i]) {
					return fmt.Sprintf("%s[%d], %s: %s, but copying the head out, calling %s and copying it back gives %s (input %s)",
						buf, i, s.describe(c, i, views[bufKey(buf)]), s.c.show(g[i]), s.plainName(c.op), s.c.show(w[i]), s.c.show(x[i]))
				}
			} else if s.c.bits(g[i]) != s.c.bits(w[i]) {
				return fmt.Sprintf("%s[%d], %s, which the call must leave alone, changed: %s -> %s",
					buf, i, s.describe(c, i, views[bufKey(buf)]), s.c.show(x[i]), s.c.show(g[i]))
			}
		}
		return ""
	}
	bufName := map[sop]string{opFwd: "x's buffer", opInv: "x's buffer", opQK: "q's buffer"}[c.op]
	if d := check(bufName, got.a, want.a, in.a, wa); d != "" {
		return d
	}
	if c.op == opQK && !c.shared {
		if d := check("k's buffer", got.b, want.b, in.b, wb); d != "" {
			return d
		}
	}
	return ""
}

// bufKey maps a buffer's name in messages to its key in bufViews.
func bufKey(buf string) string {
	if buf == "k's buffer" {
		return "b"
	}
	return "a"
}

func (s *suite[T]) plainName(o sop) string {
	if o == opInv {
		return "ApplyInverse"
	}
	return "Apply"
}

// firstDiffBufs compares two results of c, NaN payloads aside: "" or where
// they differ.
func (s *suite[T]) firstDiffBufs(c *scall, got, want sbufs[T]) string {
	views := c.bufViews()
	if i := s.firstDiff(got.a, want.a); i >= 0 {
		return fmt.Sprintf("buffer a [%d], %s: %s vs %s", i, s.describe(c, i, views["a"]), s.c.show(got.a[i]), s.c.show(want.a[i]))
	}
	if i := s.firstDiff(got.b, want.b); i >= 0 {
		return fmt.Sprintf("k's buffer[%d], %s: %s vs %s", i, s.describe(c, i, views["b"]), s.c.show(got.b[i]), s.c.show(want.b[i]))
	}
	return ""
}

// ---- layouts ---------------------------------------------------------------------

// view places strides s over tokens tokens in a buffer: off elements
// before the view's slice, the slice (the view's extent plus slack) and
// post elements after it. It returns the view and the buffer length.
func (s *suite[T]) view(st Strides, tokens, off, slack, post int) (sview, int) {
	n := extent(st, tokens, s.hd) + slack
	return sview{s: st, off: off, n: n}, off + n + post
}

// slayout is a single view to test: its strides over tokens tokens, at
// offset off in its buffer, its slice slack elements longer than the view.
type slayout struct {
	name   string
	s      Strides
	tokens int
	off    int
	slack  int
}

// namedLayouts returns the layouts the bits check always covers:
// contiguous with 1, 2, 3, 5 and 7 heads, fused QKV rows viewed at q or k
// (with a row gap, at odd offsets), head-major (exact, with capacity, with
// a token gap, 40 and 70 tokens: longer than a generated package's runMax
// for every head of 32 values or more), MLA-like wide heads viewed at their rope part, odd head
// strides, 1 token (also with Token 1), 1 head (also with Head 1), no
// tokens.
func (s *suite[T]) namedLayouts() []slayout {
	hd := s.hd
	extra := max(1, hd/2)
	var ls []slayout
	for _, h := range []int{1, 2, 3, 5, 7} {
		ls = append(ls, slayout{fmt.Sprintf("contiguous %d heads", h), Strides{h, hd, h * hd}, 3, 0, 0})
	}
	const hq, hkv = 5, 1
	fused := (hq + 2*hkv) * hd
	ls = append(ls,
		slayout{"fused QKV at q", Strides{hq, hd, fused}, 3, 0, 2 * hkv * hd},
		slayout{"fused QKV at k", Strides{hkv, hd, fused}, 3, hq * hd, hkv * hd},
		slayout{"fused QKV with a row gap, at q, odd offset", Strides{hq, hd, fused + 3}, 2, 1, 2*hkv*hd + 3},
		slayout{"fused 3+2·2 heads at k", Strides{2, hd, 7 * hd}, 3, 3 * hd, 2 * hd},
		slayout{"head-major exact", Strides{3, 4 * hd, hd}, 4, 0, 0},
		slayout{"head-major with capacity", Strides{3, 6*hd + 1, hd}, 4, 0, 2*hd + 1},
		slayout{"head-major with a token gap", Strides{2, 3 * (hd + 2), hd + 2}, 3, 3, 2},
		slayout{"head-major, 70 tokens", Strides{3, 70*hd + 5, hd}, 70, 1, 3},
		slayout{"head-major, 40 tokens with a gap", Strides{2, 40*(hd+1) + 2, hd + 1}, 40, 0, 1},
		slayout{"1 head, 70 tokens", Strides{1, hd, hd}, 70, 2, 0},
		slayout{"MLA rope part at the end of a wide head", Strides{3, hd + extra, 3 * (hd + extra)}, 2, extra, 0},
		slayout{"MLA rope part at the start of a wide head", Strides{5, hd + extra, 5 * (hd + extra)}, 2, 0, extra},
		slayout{"odd head stride HeadDim+1", Strides{3, hd + 1, 3 * (hd + 1)}, 3, 1, 0},
		slayout{"odd head stride HeadDim+3", Strides{7, hd + 3, 7*(hd+3) + 1}, 2, 3, 1},
		slayout{"1 token", Strides{3, hd, 3 * hd}, 1, 0, 0},
		slayout{"1 token, Token 1", Strides{2, hd, 1}, 1, 1, 0},
		slayout{"1 head", Strides{1, hd, hd}, 3, 0, 0},
		slayout{"1 head, Head 1, head-major", Strides{1, 1, hd + 1}, 3, 1, 0},
		slayout{"0 tokens", Strides{3, hd, 3 * hd}, 0, 2, 5},
	)
	return ls
}

// randomLayout draws a valid single view: token-major (Head >= HeadDim,
// Token >= the heads' span) or head-major (Token >= HeadDim, Head >= the
// tokens' span), with gaps, an offset and slack up to a few elements or a
// head; heads 1, 2, 3, 5, 7 or 1…9, tokens 0…5.
func (s *suite[T]) randomLayout(r *rand.Rand) slayout {
	hd := s.hd
	heads := []int{1, 2, 3, 5, 7, 1 + r.IntN(9)}[r.IntN(6)]
	tokens := []int{0, 1, 2, 3, 1 + r.IntN(5)}[r.IntN(5)]
	gap := func() int {
		if r.IntN(3) == 0 {
			return r.IntN(hd + 4)
		}
		return r.IntN(4)
	}
	var st Strides
	name := "random token-major"
	if r.IntN(2) == 0 {
		st.Heads, st.Head = heads, hd+gap()
		st.Token = (heads-1)*st.Head + hd + gap()
	} else {
		name = "random head-major"
		st.Heads, st.Token = heads, hd+gap()
		st.Head = max(1, tokens-1)*st.Token + hd + gap()
	}
	return slayout{name, st, tokens, r.IntN(8), r.IntN(6)}
}

// positions draws n positions of the table, its edges often; every other
// time as a run of consecutive positions (a prefill's), broken now and then
// and restarted when it reaches the table's end: the runs a head-major walk
// takes head by head (runMax in a generated package) and their ends.
func (s *suite[T]) positions(r *rand.Rand, n int) []int32 {
	if r.IntN(2) == 0 {
		return s.run(r, n, true)
	}
	pos := make([]int32, n)
	for j := range pos {
		switch r.IntN(4) {
		case 0:
			pos[j] = int32([]int{0, 1, s.n - 1}[r.IntN(3)])
		default:
			pos[j] = int32(r.IntN(s.n))
		}
	}
	return pos
}

// run returns n positions counting up from a random one: with breaks,
// broken with probability 1/16 per token and where the table ends;
// without, unbroken if the table has n positions.
func (s *suite[T]) run(r *rand.Rand, n int, breaks bool) []int32 {
	pos := make([]int32, n)
	p := r.IntN(s.n)
	if !breaks {
		p = r.IntN(max(1, s.n-n+1))
	}
	for j := range pos {
		if p >= s.n || breaks && r.IntN(16) == 0 {
			p = []int{0, s.n - 2, r.IntN(s.n)}[r.IntN(3)]
		}
		pos[j] = int32(p)
		p++
	}
	return pos
}

// singleCall builds a call of op o (ApplyStrided or ApplyInverseStrided) on
// layout l.
func (s *suite[T]) singleCall(o sop, l slayout, pos []int32) *scall {
	v, n := s.view(l.s, l.tokens, l.off, l.slack, 3)
	return &scall{op: o, name: l.name, pos: pos, a: v, na: n}
}

// qkCalls returns ApplyQK calls for l as q: with k in a second buffer
// (layout lk), and in one buffer: k's heads between q's (fused QKV rows,
// q's slice running over k's heads), k's view after q's (q's slice running
// over it) and k's view before q's (k's slice running over q's). lk must
// fit l.tokens (see fit).
func (s *suite[T]) qkCalls(l, lk slayout, pos []int32) []*scall {
	hd := s.hd
	tokens := l.tokens
	var cs []*scall
	q, nq := s.view(l.s, tokens, l.off, l.slack, 2)
	k, nk := s.view(lk.s, tokens, lk.off, lk.slack, 2)
	cs = append(cs, &scall{op: opQK, name: l.name + " / k: " + lk.name, pos: pos, a: q, b: k, na: nq, nb: nk})

	// Fused: per token hq q heads, hk k heads and hk v heads, Head
	// HeadDim+g, and a row gap.
	hq, hk := l.s.Heads, lk.s.Heads
	head := hd + l.slack%3
	row := (hq+2*hk)*head + l.off%3
	na := l.off + max(tokens, 1)*row
	qf := sview{s: Strides{hq, head, row}, off: l.off, n: na - l.off}
	kf := sview{s: Strides{hk, head, row}, off: l.off + hq*head, n: na - l.off - hq*head}
	cs = append(cs, &scall{op: opQK, name: fmt.Sprintf("fused QKV %d+2·%d heads, Head %d, Token %d", hq, hk, head, row), pos: pos, a: qf, b: kf, shared: true, na: na})

	ext, extK := extent(l.s, tokens, hd), extent(lk.s, tokens, hd)
	kAfter := sview{s: lk.s, off: l.off + ext + lk.off, n: extK + lk.slack}
	na = kAfter.off + kAfter.n + 1
	cs = append(cs, &scall{op: opQK, name: l.name + ", then k: " + lk.name, pos: pos,
		a: sview{s: l.s, off: l.off, n: na - l.off}, b: kAfter, shared: true, na: na})
	qAfter := sview{s: l.s, off: lk.off + extK + l.off, n: ext + l.slack}
	na = qAfter.off + qAfter.n + 2
	cs = append(cs, &scall{op: opQK, name: "k: " + lk.name + ", then " + l.name, pos: pos,
		a: qAfter, b: sview{s: lk.s, off: lk.off, n: na - lk.off}, shared: true, na: na})
	return cs
}

// interleavedQK returns an ApplyQK call whose q and k heads alternate in one
// buffer: q's at even head slots, k's at odd ones, both views on the same
// memory.
func (s *suite[T]) interleavedQK(pos []int32) *scall {
	hd := s.hd
	st := Strides{2, 2 * hd, 4 * hd}
	na := 1 + max(len(pos), 1)*4*hd
	return &scall{op: opQK, name: "q and k heads interleaved", pos: pos,
		a: sview{s: st, off: 1, n: na - 1}, b: sview{s: st, off: 1 + hd, n: na - 1 - hd}, shared: true, na: na}
}

// viewOK reports whether no two heads of a view of st over tokens tokens
// share an element (every field positive).
func (s *suite[T]) viewOK(st Strides, tokens int) bool {
	if st.Heads <= 0 || st.Head <= 0 || st.Token <= 0 {
		return false
	}
	var hs []int
	eachHead(sview{s: st}, tokens, func(_, _, at int) { hs = append(hs, at) })
	slices.Sort(hs)
	for i := 1; i < len(hs); i++ {
		if hs[i]-hs[i-1] < s.hd {
			return false
		}
	}
	return true
}

// fit returns st, or if its heads overlap over tokens tokens, st with the
// stride between tokens (token-major) or between heads (head-major) grown
// until they do not.
func (s *suite[T]) fit(st Strides, tokens int) Strides {
	if s.viewOK(st, tokens) {
		return st
	}
	hd := s.hd
	if st.Token < st.Head || st.Heads == 1 {
		st.Token = max(st.Token, hd)
		st.Head = max(st.Head, max(0, tokens-1)*st.Token+hd)
	} else {
		st.Head = max(st.Head, hd)
		st.Token = max(st.Token, (st.Heads-1)*st.Head+hd)
	}
	return st
}

// ---- the checks ------------------------------------------------------------------

// stridedState reports whether k describes the strided entry points, and
// an error if it describes them only in part.
func (s *suite[T]) stridedState() (bool, error) {
	st := s.k.Strided
	if st == nil {
		return false, nil
	}
	n := 0
	for _, set := range []bool{st.ApplyStrided != nil, st.ApplyInverseStrided != nil, st.ApplyQK != nil} {
		if set {
			n++
		}
	}
	if n != 3 {
		return false, fmt.Errorf("Kernel.Strided sets %d of ApplyStrided, ApplyInverseStrided and ApplyQK: want all three", n)
	}
	return true, nil
}

// runStrided runs the strided checks as subtests bits, guard and panics of
// t, or logs that k has no strided entry points.
func runStrided[T Elem](t *testing.T, s *suite[T]) {
	t.Helper()
	ok, err := s.stridedState()
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if !ok {
		t.Log("Kernel has no strided entry points (ApplyStrided, ApplyInverseStrided, ApplyQK): nothing to check")
		return
	}
	t.Run("bits", func(t *testing.T) { checkStridedBits(t, s, stridedCases()) })
	t.Run("guard", func(t *testing.T) { checkStridedGuard(t, s) })
	t.Run("panics", func(t *testing.T) { checkStridedPanics(t, s) })
}

// stridedCases is how many random layouts checkStridedBits draws: 300, 30
// with -short.
func stridedCases() int {
	if testing.Short() {
		return 30
	}
	return 300
}

// backendsOrOnly returns k's backends, or one that does nothing when it
// lists none.
func (s *suite[T]) backendsOrOnly() []Backend {
	if len(s.k.Backends) == 0 {
		return []Backend{{Name: "(only)", Use: func() {}}}
	}
	return s.k.Backends
}

// checkStridedBits checks ApplyStrided, ApplyInverseStrided, ApplyQK (q and
// k in two buffers, and in one: fused QKV rows, k's view after q's and
// before it) on the named layouts (namedLayouts) and random ones: on every
// backend, the call must give, bit for bit (NaN payloads aside), what
// copying every head out, calling Apply (ApplyInverse) on it at its
// token's position and copying its rotary values back gives, and every
// other element of the buffers (gaps between heads, the values past
// RotaryDim, the elements before and after the slices, all holding
// canaries: signaling NaNs with distinct payloads) must keep its exact
// bits. Every backend must also give the last one's bits.
func checkStridedBits[T Elem](t tb, s *suite[T], random int) {
	t.Helper()
	bs := s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x737472696465))
	layouts := s.namedLayouts()
	named := len(layouts)
	for range random {
		layouts = append(layouts, s.randomLayout(r))
	}
	var calls []*scall
	for i, l := range layouts {
		pos := s.positions(r, l.tokens)
		if l.tokens >= 40 && i < named {
			// One unbroken run, to reach the walk's split at runMax.
			pos = s.run(r, l.tokens, false)
		}
		calls = append(calls, s.singleCall(opFwd, l, pos), s.singleCall(opInv, l, pos))
		lk := layouts[r.IntN(len(layouts))]
		if i < named {
			lk = layouts[(i+3)%named]
		}
		lk.tokens = l.tokens
		lk.s = s.fit(lk.s, l.tokens)
		calls = append(calls, s.qkCalls(l, lk, pos)...)
	}
	calls = append(calls, s.interleavedQK(s.positions(r, 3)))
	for ci, c := range calls {
		salt := r.Uint64()
		in := s.fillStrided(c, salt, false, func() uint64 { return s.c.f.special(r.Uint64(), false) })
		if msg := s.checkStridedCall(c, in, bs); msg != "" {
			t.Fatalf("%s (call %d, seed %d; rerun with -rapid.seed=%d)", msg, ci, sd, sd)
		}
	}
	t.Logf("strided: %d calls (%d named and %d random layouts) on %d backends: every result is the per-head copy's, canaries intact, backends agree (seed %d)",
		len(calls), named, random, len(bs), sd)
}

// checkStridedCall runs c on in on every backend, the last one first, and
// returns "" or what went wrong.
func (s *suite[T]) checkStridedCall(c *scall, in sbufs[T], bs []Backend) string {
	ref := bs[len(bs)-1]
	var refGot sbufs[T]
	for i := len(bs) - 1; i >= 0; i-- {
		b := bs[i]
		b.Use()
		got := in.clone()
		if msg, panicked := catch(func() { s.invokeStrided(c, got) }); panicked {
			return fmt.Sprintf("backend %s: %v panicked on a valid call: %s", b.Name, c, msg)
		}
		want, wa, wb := s.wantStrided(c, in)
		if d := s.diffStrided(c, got, want, in, wa, wb); d != "" {
			return fmt.Sprintf("backend %s: %v: %s", b.Name, c, d)
		}
		if i == len(bs)-1 {
			refGot = got
		} else if d := s.firstDiffBufs(c, got, refGot); d != "" {
			return fmt.Sprintf("backend %s differs from %s: %v: %s (%s vs %s)", b.Name, ref.Name, c, d, b.Name, ref.Name)
		}
	}
	return ""
}
