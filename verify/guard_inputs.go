package verify

import (
	"math"
	"regexp"
	"slices"
	"strconv"
)

// expectRE matches the part of a panic message that says what was expected.
var expectRE = regexp.MustCompile(`(?i)(want|must|expect|should|out of range|not a multiple|negative|invalid|>=|<=|≥|≤|<|>)`)

// inputCase is one bad call: it must panic with a message naming fn, the
// bad value and what was expected.
type inputCase struct {
	fn    string
	value int
	what  string
	call  func()
	after func() string // when set, checked after the panic: "" or what the call changed
}

// checkInputPanics extends checkPanics with the edge cases of docs/contract.md §7
// that are easy to get wrong: a position exactly Len(), the most negative
// position, less than one head, ApplySeq and ApplyInverseSeq with no
// positions but values, and NewTable(-1). A Seq call whose last position is
// bad must panic before touching x, as the generated packages document.
// Empty calls must be no-ops, and NewTable(0) must give a table that Apply
// at 0 rejects.
func checkInputPanics[T Elem](t tb, s *suite[T]) {
	t.Helper()
	hd, L := s.hd, s.n
	tab := s.tab
	mk := func(n int) []T { return make([]T, n) }
	// specials returns n special values and a check that x still holds them.
	specials := func(n int) ([]T, func() string) {
		x := make([]T, n)
		for i := range x {
			x[i] = s.c.fromBits(s.c.f.special(mix(uint64(i)+1), false))
		}
		orig := slices.Clone(x)
		return x, func() string {
			if i := s.firstDiff(x, orig); i >= 0 {
				return "x[" + strconv.Itoa(i) + "] changed before the panic: " + s.c.show(orig[i]) + " -> " + s.c.show(x[i])
			}
			return ""
		}
	}
	var cases []inputCase
	for _, f := range []struct {
		name  string
		fn    func([]T, int)
		table bool
	}{
		{"Apply", tab.Apply, true}, {"ApplyInverse", tab.ApplyInverse, true},
		{"Rotate", s.k.Rotate, false}, {"RotateInverse", s.k.RotateInverse, false},
	} {
		cases = append(cases,
			inputCase{f.name, hd - 1, "less than one head", func() { f.fn(mk(hd-1), 0) }, nil},
			inputCase{f.name, math.MinInt, "the most negative pos", func() { f.fn(mk(hd), math.MinInt) }, nil},
			inputCase{f.name, -1, "pos -1", func() { f.fn(mk(hd), -1) }, nil})
		if f.table {
			cases = append(cases, inputCase{f.name, L, "pos = Len()", func() { f.fn(mk(hd), L) }, nil})
		}
	}
	for _, f := range []struct {
		name string
		fn   func([]T, []int32)
	}{{"ApplySeq", tab.ApplySeq}, {"ApplyInverseSeq", tab.ApplyInverseSeq}} {
		x, unchanged := specials(2 * hd)
		cases = append(cases,
			inputCase{f.name, hd, "len(pos) = 0 with len(x) > 0", func() { f.fn(mk(hd), nil) }, nil},
			inputCase{f.name, hd, "len(pos) = 0 (non-nil) with len(x) > 0", func() { f.fn(mk(hd), []int32{}) }, nil},
			inputCase{f.name, 3 * hd, "len(x) not divisible by len(pos)·HeadDim", func() { f.fn(mk(3*hd), []int32{0, 1}) }, nil},
			inputCase{f.name, hd - 1, "less than one head for one position", func() { f.fn(mk(hd-1), []int32{0}) }, nil},
			inputCase{f.name, L, "pos = Len() in the slice", func() { f.fn(mk(2*hd), []int32{0, int32(L)}) }, nil},
			inputCase{f.name, math.MinInt32, "the most negative int32 in the slice", func() { f.fn(mk(hd), []int32{math.MinInt32}) }, nil},
			inputCase{f.name, -1, "a bad last position (x must be left alone)", func() { f.fn(x, []int32{1, -1}) }, unchanged})
	}
	cases = append(cases, inputCase{"NewTable", -1, "maxPos -1", func() { s.k.NewTable(-1) }, nil})
	for _, c := range cases {
		checkPanic(t, c.fn, c.what, c.value, c.call)
		if c.after != nil {
			if d := c.after(); d != "" {
				t.Errorf("%s with %s: %s", c.fn, c.what, d)
			}
		}
	}

	// No-ops and the empty table.
	noop := []struct {
		name string
		call func()
	}{
		{"ApplyInverseSeq([]T{}, []int32{})", func() { tab.ApplyInverseSeq(mk(0), []int32{}) }},
		{"RotateInverse([]T{}, 0)", func() { s.k.RotateInverse(mk(0), 0) }},
		{"Rotate(nil, 1<<40)", func() { s.k.Rotate(nil, 1<<40) }},
	}
	for _, c := range noop {
		if msg, panicked := catch(c.call); panicked {
			t.Errorf("%s panicked (%q); empty input must be a no-op", c.name, msg)
		}
	}
	var empty Table[T]
	if msg, panicked := catch(func() { empty = s.k.NewTable(0) }); panicked {
		t.Errorf("NewTable(0) panicked (%q); want an empty table", msg)
	} else if empty == nil {
		t.Errorf("NewTable(0) returned nil")
	} else if empty.Len() == 0 {
		msg, panicked := catch(func() { empty.Apply(mk(hd), 0) })
		switch {
		case !panicked:
			t.Errorf("Apply at pos 0 on NewTable(0) (Len 0) did not panic")
		case !wordRE("Apply").MatchString(msg) || !numRE(0).MatchString(msg):
			t.Errorf("Apply at pos 0 on NewTable(0) panicked with %q, which does not name Apply and the position 0", msg)
		}
	}
}
