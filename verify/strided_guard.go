package verify

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
)

// guardLayouts are the single views checkStridedGuard places flush against
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

// guardCalls returns the calls checkStridedGuard makes: on each guard
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

// checkStridedGuard calls the strided entry points (guardCalls) on every
// backend on buffers flush against a PROT_NONE page, once with the page
// right after them and once right before; the second buffer of ApplyQK and
// the positions are placed the same way. A read or write past either end
// faults, which fails the check; the canary around each buffer must come
// back unchanged, and the result must equal the same call's on ordinary
// memory.
func checkStridedGuard[T Elem](t tb, s *suite[T]) {
	t.Helper()
	if !guardSupported {
		t.Skipf("SKIPPED: guard pages (mmap, mprotect PROT_NONE) are only implemented on linux, not %s", runtime.GOOS)
	}
	bs := s.backendsOrOnly()
	defer bs[0].Use()
	sd := seed()
	r := rand.New(rand.NewPCG(sd, 0x7367756172))
	calls := s.guardCalls(r)
	maxA, maxB, maxTok := 1, 1, 1
	for _, c := range calls {
		maxA, maxB, maxTok = max(maxA, c.na), max(maxB, c.nb), max(maxTok, len(c.pos))
	}
	n := 0
	for _, atEnd := range []bool{true, false} {
		side := guardSide(atEnd)
		ag := mustGuarded[T](t, maxA, atEnd)
		defer ag.free()
		bg := mustGuarded[T](t, maxB, atEnd)
		defer bg.free()
		pg := mustGuarded[int32](t, maxTok, atEnd)
		defer pg.free()
		for _, b := range bs {
			b.Use()
			for _, c := range calls {
				in := s.fillStrided(c, r.Uint64(), false, func() uint64 { return s.c.f.special(r.Uint64(), false) })
				want := in.clone()
				s.invokeStrided(c, want)

				var got sbufs[T]
				got.a = ag.slice(c.na)
				copy(got.a, in.a)
				hasB := c.op == opQK && !c.shared
				if hasB {
					got.b = bg.slice(c.nb)
					copy(got.b, in.b)
				}
				gc := *c
				gc.pos = pg.slice(len(c.pos))
				copy(gc.pos, c.pos)
				what := fmt.Sprintf("backend %s: %v, on buffers %s", b.Name, c, side)
				addr, faulted, msg, panicked := faultCall(func() { s.invokeStrided(&gc, got) })
				n++
				switch {
				case faulted:
					where := faultWhere(ag.locate("first buffer", addr, c.na), bg.locate("k's buffer", addr, c.nb),
						pg.locate("pos", addr, len(c.pos)))
					t.Fatalf("guard: %s: memory fault at %#x (%s): %s", what, addr, where, msg)
				case panicked:
					t.Fatalf("guard: %s: panicked: %s", what, msg)
				}
				if d := ag.checkCanary(c.na); d != "" {
					t.Fatalf("guard: %s: first buffer: %s", what, d)
				}
				if d := pg.checkCanary(len(c.pos)); d != "" {
					t.Fatalf("guard: %s: pos: %s", what, d)
				}
				if !slices.Equal(gc.pos, c.pos) {
					t.Fatalf("guard: %s: pos changed to %v", what, gc.pos)
				}
				if hasB {
					if d := bg.checkCanary(c.nb); d != "" {
						t.Fatalf("guard: %s: k's buffer: %s", what, d)
					}
				}
				if d := s.firstDiffBufs(c, got, want); d != "" {
					t.Fatalf("guard: %s: %s (guarded vs ordinary memory)", what, d)
				}
				ag.reset(c.na)
				pg.reset(len(c.pos))
				if hasB {
					bg.reset(c.nb)
				}
			}
		}
	}
	t.Logf("guard: %d strided calls on buffers flush against PROT_NONE pages (%d backends × both ends × %d calls; seed %d): no fault, canary intact, same bits as on ordinary memory",
		n, len(bs), len(calls), sd)
}
