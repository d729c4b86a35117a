package verify

import "math"

// sbad is one bad strided call for stridedEdges: its call (views over
// buffers of special values), the fields its panic must name as words, the
// bad value (one of values) and what it is.
type sbad struct {
	c      *scall
	fields []string
	values []int
	what   string
}

// one is a call of op on a single view st over a buffer of n values.
func one(op sop, st Strides, n int, pos []int32) *scall {
	return &scall{op: op, name: "edge", pos: pos, a: sview{s: st, n: n}, na: n}
}

// two is ApplyQK on q (view qs, nq values) and k (ks, nk) in two buffers.
func two(qs, ks Strides, nq, nk int, pos []int32) *scall {
	return &scall{op: opQK, name: "edge", pos: pos, a: sview{s: qs, n: nq}, b: sview{s: ks, n: nk}, na: nq, nb: nk}
}

// shared is ApplyQK on one buffer of n values, q at qoff and k at koff.
func shared(qs, ks Strides, n, qoff, koff int, pos []int32) *scall {
	return &scall{op: opQK, name: "edge", pos: pos, a: sview{s: qs, off: qoff, n: n - qoff}, b: sview{s: ks, off: koff, n: n - koff}, shared: true, na: n}
}

// ps returns its arguments as positions.
func ps(v ...int) []int32 {
	out := make([]int32, len(v))
	for i, p := range v {
		out[i] = int32(p)
	}
	return out
}

// edgeBufs returns buffers of special values for c; an empty one is nil.
func (s *suite[T]) edgeBufs(c *scall, salt uint64) sbufs[T] {
	var b sbufs[T]
	if c.na > 0 {
		b.a = s.specialsOf(c.na, salt)
	}
	if c.op == opQK && !c.shared && c.nb > 0 {
		b.b = s.specialsOf(c.nb, salt+1<<30)
	}
	return b
}

// stridedEdges are the argument checks of the strided entry points: a field
// of a view (Heads, Head, Token) that is 0 or negative, also with no
// positions; heads that overlap (Head < HeadDim with more than one head; a
// token-major Token too small; a head-major Head too small; one head per
// token with Token < HeadDim); a view reaching one element past its slice;
// a bad position; for ApplyQK a q head overlapping a k head in one buffer
// (partly, wholly, k before q). Each must panic naming the method, the
// field and its value, saying what was expected, before any buffer
// changes. Valid edge cases must not panic: no positions (nil slices, or
// slices shorter than the view, which must then stay as they were), views
// that fit exactly, one token with Token 1, one head with Head 1, q's heads
// right next to k's.
func (s *suite[T]) stridedEdges() []edgeCall {
	var es []edgeCall
	for i, b := range append(s.stridedBad(opFwd), append(s.stridedBad(opInv), s.qkBad()...)...) {
		sc := s.stridedCall(b.c, s.edgeBufs(b.c, uint64(i)<<32))
		es = append(es, bad(sc, b.what, panicWant{fn: "Table." + b.c.op.String(), fields: b.fields, values: b.values, expect: true}))
	}
	for i, c := range s.stridedValid() {
		sc := s.stridedCall(c.c, s.edgeBufs(c.c, uint64(i)<<40))
		es = append(es, valid(sc, c.why, c.same))
	}
	return es
}

// stridedBad are the bad calls of ApplyStrided (op opFwd) or
// ApplyInverseStrided (opInv).
func (s *suite[T]) stridedBad(op sop) []sbad {
	hd, L := s.hd, s.n
	b := func(field string, values []int, what string, st Strides, n int, pos []int32) sbad {
		return sbad{one(op, st, n, pos), []string{field}, values, what}
	}
	return []sbad{
		b("s.Heads", []int{0}, "s.Heads = 0", Strides{0, hd, 2 * hd}, 4*hd, ps(0, 1)),
		b("s.Heads", []int{-1}, "s.Heads = -1", Strides{-1, hd, 2 * hd}, 4*hd, ps(0, 1)),
		b("s.Head", []int{0}, "s.Head = 0", Strides{2, 0, 2 * hd}, 4*hd, ps(0, 1)),
		b("s.Head", []int{-2}, "s.Head = -2", Strides{2, -2, 2 * hd}, 4*hd, ps(0, 1)),
		b("s.Token", []int{0}, "s.Token = 0", Strides{2, hd, 0}, 4*hd, ps(0, 1)),
		b("s.Token", []int{-3}, "s.Token = -3", Strides{2, hd, -3}, 4*hd, ps(0, 1)),
		b("s.Heads", []int{0}, "s.Heads = 0 and no positions", Strides{0, hd, hd}, 0, nil),
		b("s.Token", []int{-1}, "s.Token = -1 and no positions", Strides{2, hd, -1}, 4*hd, ps()),
		b("s.Head", []int{hd - 1}, "two heads HeadDim−1 apart", Strides{2, hd - 1, 2 * hd}, 2*hd, ps(7)),
		b("s.Token", []int{2*hd - 1}, "token-major, Token one short of two heads", Strides{2, hd, 2*hd - 1}, 4*hd-1, ps(0, 1)),
		b("s.Head", []int{3*hd - 1}, "head-major over 3 tokens, Head one short", Strides{2, 3*hd - 1, hd}, 6*hd-1, ps(0, 1, 2)),
		b("s.Token", []int{hd - 1}, "one head per token, Token HeadDim−1", Strides{1, hd, hd - 1}, 2*hd-1, ps(0, 1)),
		b("s", []int{4*hd - 1, 4 * hd}, "a view one element past len(x)", Strides{2, hd, 2 * hd}, 4*hd-1, ps(0, 1)),
		b("s", []int{6 * hd, 6*hd + 1}, "a head-major view one element past len(x)", Strides{2, 3*hd + 1, hd}, 6*hd, ps(0, 1, 2)),
		b(s.posAt(1), []int{L}, "pos[1] = Len()", Strides{2, hd, 2 * hd}, 4*hd, ps(0, L)),
		b(s.posAt(0), []int{-1}, "pos[0] = -1", Strides{2, hd, 2 * hd}, 2*hd, ps(-1)),
		b(s.posAt(2), []int{math.MinInt32}, "pos[2] = MinInt32", Strides{1, hd, hd}, 3*hd, ps(3, 1, math.MinInt32)),
	}
}

// qkBad are the bad calls of ApplyQK.
func (s *suite[T]) qkBad() []sbad {
	hd, L := s.hd, s.n
	good := Strides{2, hd, 2 * hd}
	b := func(field string, values []int, what string, qs, ks Strides, nq, nk int, pos []int32) sbad {
		return sbad{two(qs, ks, nq, nk, pos), []string{field}, values, what}
	}
	sh := func(values []int, what string, qs, ks Strides, n, qoff, koff int, pos []int32) sbad {
		return sbad{shared(qs, ks, n, qoff, koff, pos), []string{"qs", "ks"}, values, what}
	}
	return []sbad{
		b("qs.Heads", []int{0}, "qs.Heads = 0", Strides{0, hd, 2 * hd}, good, 4*hd, 4*hd, ps(0, 1)),
		b("ks.Heads", []int{-1}, "ks.Heads = -1", good, Strides{-1, hd, 2 * hd}, 4*hd, 4*hd, ps(0, 1)),
		b("qs.Head", []int{0}, "qs.Head = 0", Strides{2, 0, 2 * hd}, good, 4*hd, 4*hd, ps(0, 1)),
		b("ks.Head", []int{-1}, "ks.Head = -1", good, Strides{2, -1, 2 * hd}, 4*hd, 4*hd, ps(0, 1)),
		b("qs.Token", []int{-5}, "qs.Token = -5", Strides{2, hd, -5}, good, 4*hd, 4*hd, ps(0, 1)),
		b("ks.Token", []int{0}, "ks.Token = 0", good, Strides{2, hd, 0}, 4*hd, 4*hd, ps(0, 1)),
		b("ks.Heads", []int{0}, "ks.Heads = 0 and no positions", good, Strides{0, hd, hd}, 0, 0, nil),
		b("qs.Head", []int{hd - 1}, "two q heads HeadDim−1 apart", Strides{2, hd - 1, 2 * hd}, good, 2*hd, 2*hd, ps(0)),
		b("ks.Token", []int{2*hd - 1}, "token-major k, Token one short", good, Strides{2, hd, 2*hd - 1}, 4*hd, 4*hd-1, ps(0, 1)),
		b("qs", []int{4*hd - 1, 4 * hd}, "q's view one element past len(q)", good, good, 4*hd-1, 4*hd, ps(0, 1)),
		b("ks", []int{4*hd - 1, 4 * hd}, "k's view one element past len(k)", good, good, 4*hd, 4*hd-1, ps(0, 1)),
		b(s.posAt(1), []int{L}, "pos[1] = Len()", good, good, 4*hd, 4*hd, ps(0, L)),
		sh([]int{2*hd - 1}, "a k head overlapping a q head by one element in one buffer", Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, 2*hd-1, ps(0, 1)),
		sh([]int{-1}, "q one element after k in one buffer", Strides{1, hd, 2 * hd}, Strides{1, hd, 2 * hd}, 4*hd, 1, 0, ps(5)),
		sh([]int{0}, "q and k the same view", Strides{2, hd, 2 * hd}, Strides{2, hd, 2 * hd}, 4*hd, 0, 0, ps(1, 2)),
		sh([]int{hd}, "k on q's second head", Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, hd, ps(0, 1)),
		{shared(Strides{2, hd, 4 * hd}, Strides{1, hd, 4 * hd}, 8*hd, 0, 2*hd, ps(1, L)), []string{s.posAt(1)}, []int{L}, "fused q and k, pos[1] = Len()"},
	}
}

// svalid is a valid strided edge call: it must not panic and, with same,
// must leave its buffers as they were.
type svalid struct {
	c    *scall
	same bool
	why  string
}

// stridedValid are the valid edge cases of the strided entry points.
func (s *suite[T]) stridedValid() []svalid {
	hd, L := s.hd, s.n
	const noPos = "with no positions nothing may change"
	const fits = "it is valid"
	var vs []svalid
	for _, op := range []sop{opFwd, opInv} {
		vs = append(vs,
			svalid{one(op, Strides{1, 1, 1}, 0, nil), true, noPos},
			svalid{one(op, Strides{3, hd, 3 * hd}, 3, ps()), true, noPos},
			svalid{one(op, Strides{2, hd, 2 * hd}, 4*hd, ps(0, L-1)), false, fits},
			svalid{one(op, Strides{2, 2 * hd, hd}, 4*hd, ps(L-1, 0)), false, fits},
			svalid{one(op, Strides{2, hd, 1}, 2*hd, ps(3)), false, fits},
			svalid{one(op, Strides{1, 1, hd}, 2*hd, ps(3, 4)), false, fits})
	}
	return append(vs,
		svalid{two(Strides{1, 1, 1}, Strides{1, 1, 1}, 0, 0, nil), true, noPos},
		svalid{shared(Strides{2, hd, 2 * hd}, Strides{2, hd, 2 * hd}, 5, 0, 0, nil), true, noPos},
		svalid{shared(Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, 2*hd, ps(0, 1)), false, "q's heads right before k's in one buffer are valid"},
		svalid{shared(Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, hd, 0, ps(0, 1)), false, "k's heads right before q's in one buffer are valid"})
}

// checkStridedPanics runs the strided edge calls (checkEdges).
func checkStridedPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	checkEdges(t, s.backendsOrOnly(), s.stridedEntries())
}
