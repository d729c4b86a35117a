package verify

import (
	"fmt"
	"math/rand/v2"
)

// guardLayouts are the single views the strided guard calls place flush against
// guard pages: each slice is exactly the view's extent, so its first head
// starts at the slice's first element and its last head ends at the last.
func (s *suite[T]) guardLayouts() []slayout {
	hd := s.hd
	extra := max(1, hd/2)
	return []slayout{
		{"contiguous", Strides{3, hd, 3 * hd}, 2, 0, 0},
		{"fused QKV at q", Strides{3, hd, 5 * hd}, 2, 0, 0},
		{"head-major", Strides{2, 3*hd + 1, hd}, 3, 0, 0},
		{"MLA rope part", Strides{2, hd + extra, 2 * (hd + extra)}, 2, 0, 0},
		{"odd strides", Strides{3, hd + 1, 3*hd + 4}, 2, 0, 0},
		{"odd head stride, 5 heads", Strides{5, hd + 3, 5 * (hd + 3)}, 1, 0, 0},
		{"1 head", Strides{1, hd, hd}, 1, 0, 0},
		{"1 token, Token 1", Strides{2, hd, 1}, 1, 0, 0},
	}
}

// guardCalls returns the calls the strided guard check makes: on each guard
// layout ApplyStrided, ApplyInverseStrided, ApplyQK with k in a second
// buffer (one contiguous head per token); and ApplyQK on fused q and k rows
// (no v), whose q slice starts at the buffer's first element and whose k
// slice ends at its last. Every view has offset 0 and no slack.
func (s *suite[T]) guardCalls(r *rand.Rand) []*scall {
	hd := s.hd
	var cs []*scall
	for _, l := range s.guardLayouts() {
		pos := s.positions(r, l.tokens)
		v, n := s.view(l.s, l.tokens, 0, 0, 0)
		cs = append(cs, &scall{op: opFwd, name: l.name, pos: pos, a: v, na: n}, &scall{op: opInv, name: l.name, pos: pos, a: v, na: n})
		k, nk := s.view(Strides{1, hd, hd}, l.tokens, 0, 0, 0)
		cs = append(cs, &scall{op: opQK, name: l.name + " / k: contiguous", pos: pos, a: v, b: k, na: n, nb: nk})
	}
	// Consecutive positions: head-major views and single heads are then
	// walked head by head along the run, with a table row per token.
	for _, l := range []slayout{
		{"head-major, consecutive positions", Strides{2, 5*hd + 1, hd}, 5, 0, 0},
		{"1 head, consecutive positions", Strides{1, hd, hd}, 5, 0, 0},
	} {
		pos := s.run(r, l.tokens, false)
		v, n := s.view(l.s, l.tokens, 0, 0, 0)
		cs = append(cs, &scall{op: opFwd, name: l.name, pos: pos, a: v, na: n}, &scall{op: opInv, name: l.name, pos: pos, a: v, na: n})
	}
	for _, hk := range []int{1, 2} {
		const hq, tokens = 3, 2
		row := (hq + hk) * hd
		n := tokens * row
		cs = append(cs, &scall{op: opQK, name: fmt.Sprintf("fused %d q + %d k heads", hq, hk), pos: s.positions(r, tokens),
			a: sview{s: Strides{hq, hd, row}, n: n}, b: sview{s: Strides{hk, hd, row}, off: hq * hd, n: n - hq*hd}, shared: true, na: n})
	}
	return cs
}

// stridedCall is strided call c on the buffers in: a (x, or q) and b (k,
// unless it shares a), changed in place, and the positions, only read.
func (s *suite[T]) stridedCall(c *scall, in sbufs[T]) *call {
	views := c.bufViews()
	name := map[sop]string{opFwd: "x's buffer", opInv: "x's buffer", opQK: "q's buffer"}[c.op]
	a := newBuf(name, in.a, inPlace).describing(func(i int) string { return s.describe(c, i, views["a"]) })
	b := newBuf("k's buffer", in.b, inPlace).describing(func(i int) string { return s.describe(c, i, views["b"]) })
	p := newIndex("pos", c.pos)
	sc := &call{what: c.String(), args: []arg{a, p}}
	if c.op == opQK && !c.shared {
		sc.args = append(sc.args, b)
	}
	sc.run = func() {
		gc := *c
		gc.pos = p.cur
		s.invokeStrided(&gc, sbufs[T]{a.cur, b.cur})
	}
	return sc
}

// stridedEntries describes ApplyStrided, ApplyInverseStrided and ApplyQK to
// the drivers.
func (s *suite[T]) stridedEntries() entryPoint {
	return entryPoint{
		name: "ApplyStrided, ApplyInverseStrided and ApplyQK",
		guard: func(r *rand.Rand) []*call {
			var cs []*call
			for _, c := range s.guardCalls(r) {
				cs = append(cs, s.stridedCall(c, s.fillStrided(c, r.Uint64(), false, func() uint64 { return s.c.f.special(r.Uint64(), false) })))
			}
			return cs
		},
		edges: s.stridedEdges,
		bench: func(r *rand.Rand) []benchGroup { return s.stridedBench(s.benchInput(r)) },
	}
}

// checkStridedGuard runs the strided guard calls (checkGuarded): on each
// guard layout ApplyStrided, ApplyInverseStrided, and ApplyQK with k in a
// second buffer, and ApplyQK on fused q and k rows.
func checkStridedGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkGuarded(t, s.backendsOrOnly(), 0x7367756172, s.stridedEntries())
}
