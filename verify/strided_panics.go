package verify

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// spCase is one bad strided call: it must panic with a message naming the
// method (fn, e.g. "Table.ApplyStrided"), every one of fields (a field such
// as "s.Head" or "pos[1]", or a view such as "qs"), one of values, and what
// was expected, and leave every buffer of the call as it was.
type spCase struct {
	fn     string
	fields []string
	values []int
	what   string
	call   func()
	same   func() string // "" or what the call changed
}

// specialBufs returns a function that gives n values (special ones, NaNs
// with payloads among them; every call new ones) and a check that they
// keep their bits.
func (s *suite[T]) specialBufs() func(n int) ([]T, func() string) {
	salt := uint64(0)
	return func(n int) ([]T, func() string) {
		x := make([]T, n)
		for i := range x {
			salt++
			x[i] = s.c.fromBits(s.c.f.special(mix(salt), false))
		}
		orig := slices.Clone(x)
		return x, func() string {
			for i := range x {
				if s.c.bits(x[i]) != s.c.bits(orig[i]) {
					return fmt.Sprintf("element %d of %d changed: %s -> %s", i, len(x), s.c.show(orig[i]), s.c.show(x[i]))
				}
			}
			return ""
		}
	}
}

// bothSame joins two checks of unchanged buffers: a's change if any, else
// b's.
func bothSame(a, b func() string) func() string {
	return func() string {
		if d := a(); d != "" {
			return d
		}
		return b()
	}
}

// checkStridedPanics checks the argument checks of the strided entry points:
// a field of a view (Heads, Head, Token) that is 0 or negative, also with
// no positions; heads that overlap (Head < HeadDim with more than one head;
// a token-major Token too small; a head-major Head too small; one head per
// token with Token < HeadDim); a view reaching one element past its slice;
// a bad position; for ApplyQK a q head overlapping a k head in one buffer
// (partly, wholly, k before q). Each must panic naming the method, the
// field and its value, saying what was expected, before any buffer changes.
// Valid edge cases must not panic: no positions (nil slices, or slices
// shorter than the view), views that fit exactly, one token with Token 1,
// one head with Head 1, q's heads right next to k's.
func checkStridedPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	hd, L := s.hd, s.n
	buf := s.specialBufs()
	p := func(ps ...int) []int32 {
		out := make([]int32, len(ps))
		for i, v := range ps {
			out[i] = int32(v)
		}
		return out
	}
	var cases []spCase

	// ApplyStrided and ApplyInverseStrided.
	for _, m := range []struct {
		name string
		fn   func(Table[T], []T, Strides, []int32)
	}{{"ApplyStrided", s.k.Strided.ApplyStrided}, {"ApplyInverseStrided", s.k.Strided.ApplyInverseStrided}} {
		fn := "Table." + m.name
		one := func(field string, values []int, what string, st Strides, n int, pos []int32) {
			x, same := buf(n)
			cases = append(cases, spCase{fn, []string{field}, values, what, func() { m.fn(s.tab, x, st, pos) }, same})
		}
		one("s.Heads", []int{0}, "s.Heads = 0", Strides{0, hd, 2 * hd}, 4*hd, p(0, 1))
		one("s.Heads", []int{-1}, "s.Heads = -1", Strides{-1, hd, 2 * hd}, 4*hd, p(0, 1))
		one("s.Head", []int{0}, "s.Head = 0", Strides{2, 0, 2 * hd}, 4*hd, p(0, 1))
		one("s.Head", []int{-2}, "s.Head = -2", Strides{2, -2, 2 * hd}, 4*hd, p(0, 1))
		one("s.Token", []int{0}, "s.Token = 0", Strides{2, hd, 0}, 4*hd, p(0, 1))
		one("s.Token", []int{-3}, "s.Token = -3", Strides{2, hd, -3}, 4*hd, p(0, 1))
		one("s.Heads", []int{0}, "s.Heads = 0 and no positions", Strides{0, hd, hd}, 0, nil)
		one("s.Token", []int{-1}, "s.Token = -1 and no positions", Strides{2, hd, -1}, 4*hd, p())
		one("s.Head", []int{hd - 1}, "two heads HeadDim−1 apart", Strides{2, hd - 1, 2 * hd}, 2*hd, p(7))
		one("s.Token", []int{2*hd - 1}, "token-major, Token one short of two heads", Strides{2, hd, 2*hd - 1}, 4*hd-1, p(0, 1))
		one("s.Head", []int{3*hd - 1}, "head-major over 3 tokens, Head one short", Strides{2, 3*hd - 1, hd}, 6*hd-1, p(0, 1, 2))
		one("s.Token", []int{hd - 1}, "one head per token, Token HeadDim−1", Strides{1, hd, hd - 1}, 2*hd-1, p(0, 1))
		one("s", []int{4*hd - 1, 4 * hd}, "a view one element past len(x)", Strides{2, hd, 2 * hd}, 4*hd-1, p(0, 1))
		one("s", []int{6 * hd, 6*hd + 1}, "a head-major view one element past len(x)", Strides{2, 3*hd + 1, hd}, 6*hd, p(0, 1, 2))
		one(s.posAt(1), []int{L}, "pos[1] = Len()", Strides{2, hd, 2 * hd}, 4*hd, p(0, L))
		one(s.posAt(0), []int{-1}, "pos[0] = -1", Strides{2, hd, 2 * hd}, 2*hd, p(-1))
		one(s.posAt(2), []int{math.MinInt32}, "pos[2] = MinInt32", Strides{1, hd, hd}, 3*hd, p(3, 1, math.MinInt32))
	}

	// ApplyQK.
	{
		fn := "Table.ApplyQK"
		two := func(fields []string, values []int, what string, qs, ks Strides, nq, nk int, pos []int32) {
			q, sq := buf(nq)
			k, sk := buf(nk)
			cases = append(cases, spCase{fn, fields, values, what, func() { s.k.Strided.ApplyQK(s.tab, q, qs, k, ks, pos) }, bothSame(sq, sk)})
		}
		good := Strides{2, hd, 2 * hd}
		two([]string{"qs.Heads"}, []int{0}, "qs.Heads = 0", Strides{0, hd, 2 * hd}, good, 4*hd, 4*hd, p(0, 1))
		two([]string{"ks.Heads"}, []int{-1}, "ks.Heads = -1", good, Strides{-1, hd, 2 * hd}, 4*hd, 4*hd, p(0, 1))
		two([]string{"qs.Head"}, []int{0}, "qs.Head = 0", Strides{2, 0, 2 * hd}, good, 4*hd, 4*hd, p(0, 1))
		two([]string{"ks.Head"}, []int{-1}, "ks.Head = -1", good, Strides{2, -1, 2 * hd}, 4*hd, 4*hd, p(0, 1))
		two([]string{"qs.Token"}, []int{-5}, "qs.Token = -5", Strides{2, hd, -5}, good, 4*hd, 4*hd, p(0, 1))
		two([]string{"ks.Token"}, []int{0}, "ks.Token = 0", good, Strides{2, hd, 0}, 4*hd, 4*hd, p(0, 1))
		two([]string{"ks.Heads"}, []int{0}, "ks.Heads = 0 and no positions", good, Strides{0, hd, hd}, 0, 0, nil)
		two([]string{"qs.Head"}, []int{hd - 1}, "two q heads HeadDim−1 apart", Strides{2, hd - 1, 2 * hd}, good, 2*hd, 2*hd, p(0))
		two([]string{"ks.Token"}, []int{2*hd - 1}, "token-major k, Token one short", good, Strides{2, hd, 2*hd - 1}, 4*hd, 4*hd-1, p(0, 1))
		two([]string{"qs"}, []int{4*hd - 1, 4 * hd}, "q's view one element past len(q)", good, good, 4*hd-1, 4*hd, p(0, 1))
		two([]string{"ks"}, []int{4*hd - 1, 4 * hd}, "k's view one element past len(k)", good, good, 4*hd, 4*hd-1, p(0, 1))
		two([]string{s.posAt(1)}, []int{L}, "pos[1] = Len()", good, good, 4*hd, 4*hd, p(0, L))
		shared := func(values []int, what string, qs, ks Strides, n, qoff, koff int, pos []int32) {
			b, same := buf(n)
			cases = append(cases, spCase{fn, []string{"qs", "ks"}, values, what, func() { s.k.Strided.ApplyQK(s.tab, b[qoff:], qs, b[koff:], ks, pos) }, same})
		}
		shared([]int{2*hd - 1}, "a k head overlapping a q head by one element in one buffer", Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, 2*hd-1, p(0, 1))
		shared([]int{-1}, "q one element after k in one buffer", Strides{1, hd, 2 * hd}, Strides{1, hd, 2 * hd}, 4*hd, 1, 0, p(5))
		shared([]int{0}, "q and k the same view", Strides{2, hd, 2 * hd}, Strides{2, hd, 2 * hd}, 4*hd, 0, 0, p(1, 2))
		shared([]int{hd}, "k on q's second head", Strides{2, hd, 3 * hd}, Strides{1, hd, 3 * hd}, 6*hd, 0, hd, p(0, 1))
		b, same := buf(8 * hd)
		cases = append(cases, spCase{fn, []string{s.posAt(1)}, []int{L}, "fused q and k, pos[1] = Len()",
			func() {
				s.k.Strided.ApplyQK(s.tab, b, Strides{2, hd, 4 * hd}, b[2*hd:], Strides{1, hd, 4 * hd}, p(1, L))
			}, same})
	}

	for _, c := range cases {
		msg, panicked := catch(c.call)
		var missing []string
		for _, f := range c.fields {
			if !wordRE(f).MatchString(msg) {
				missing = append(missing, f)
			}
		}
		hasValue := slices.ContainsFunc(c.values, func(v int) bool { return numRE(v).MatchString(msg) })
		switch {
		case !panicked:
			t.Errorf("%s with %s did not panic", c.fn, c.what)
		case !wordRE(c.fn).MatchString(msg):
			t.Errorf("%s with %s panicked with %q, which does not name %s", c.fn, c.what, msg, c.fn)
		case len(missing) > 0:
			t.Errorf("%s with %s panicked with %q, which does not name %s", c.fn, c.what, msg, strings.Join(missing, " and "))
		case !hasValue:
			t.Errorf("%s with %s panicked with %q, which does not contain the bad value (%s)", c.fn, c.what, msg, intsOr(c.values))
		case !expectRE.MatchString(msg):
			t.Errorf("%s with %s panicked with %q, which does not say what was expected", c.fn, c.what, msg)
		}
		if d := c.same(); d != "" {
			t.Errorf("%s with %s: %s", c.fn, c.what, d)
		}
	}

	// Valid edge cases: no panic; with no positions nothing changes.
	type okCase struct {
		name string
		call func()
		same func() string // when set, nothing may change
	}
	var oks []okCase
	add := func(name string, n int, unchanged bool, call func(x []T)) {
		x, same := buf(n)
		c := okCase{name: name, call: func() { call(x) }}
		if unchanged {
			c.same = same
		}
		oks = append(oks, c)
	}
	ok := func(name string, n int, call func(x []T)) { add(name, n, false, call) }
	okNoChange := func(name string, n int, call func(x []T)) { add(name, n, true, call) }
	for _, m := range []struct {
		name string
		fn   func(Table[T], []T, Strides, []int32)
	}{{"ApplyStrided", s.k.Strided.ApplyStrided}, {"ApplyInverseStrided", s.k.Strided.ApplyInverseStrided}} {
		okNoChange(m.name+"(nil, {1 1 1}, nil)", 0, func(x []T) { m.fn(s.tab, nil, Strides{1, 1, 1}, nil) })
		okNoChange(m.name+" with no positions and len(x) = 3 < the view", 3, func(x []T) { m.fn(s.tab, x, Strides{3, hd, 3 * hd}, []int32{}) })
		ok(m.name+" with a view that fits x exactly", 4*hd, func(x []T) { m.fn(s.tab, x, Strides{2, hd, 2 * hd}, p(0, L-1)) })
		ok(m.name+" head-major, exactly fitting", 4*hd, func(x []T) { m.fn(s.tab, x, Strides{2, 2 * hd, hd}, p(L-1, 0)) })
		ok(m.name+" with 1 token and Token 1", 2*hd, func(x []T) { m.fn(s.tab, x, Strides{2, hd, 1}, p(3)) })
		ok(m.name+" with 1 head and Head 1", 2*hd, func(x []T) { m.fn(s.tab, x, Strides{1, 1, hd}, p(3, 4)) })
	}
	okNoChange("ApplyQK(nil, {1 1 1}, nil, {1 1 1}, nil)", 0, func(x []T) { s.k.Strided.ApplyQK(s.tab, nil, Strides{1, 1, 1}, nil, Strides{1, 1, 1}, nil) })
	okNoChange("ApplyQK with no positions, q and k the same short slice", 5, func(x []T) { s.k.Strided.ApplyQK(s.tab, x, Strides{2, hd, 2 * hd}, x, Strides{2, hd, 2 * hd}, nil) })
	ok("ApplyQK with q's heads right before k's in one buffer", 6*hd, func(x []T) {
		s.k.Strided.ApplyQK(s.tab, x, Strides{2, hd, 3 * hd}, x[2*hd:], Strides{1, hd, 3 * hd}, p(0, 1))
	})
	ok("ApplyQK with k's heads right before q's in one buffer", 6*hd, func(x []T) {
		s.k.Strided.ApplyQK(s.tab, x[hd:], Strides{2, hd, 3 * hd}, x, Strides{1, hd, 3 * hd}, p(0, 1))
	})
	for _, c := range oks {
		if msg, panicked := catch(c.call); panicked {
			t.Errorf("%s panicked (%q); it is valid", c.name, msg)
			continue
		}
		if c.same != nil {
			if d := c.same(); d != "" {
				t.Errorf("%s: %s; with no positions nothing may change", c.name, d)
			}
		}
	}
}

// intsOr formats values as "a or b or c".
func intsOr(values []int) string {
	var ss []string
	for _, v := range values {
		ss = append(ss, fmt.Sprint(v))
	}
	return strings.Join(ss, " or ")
}
