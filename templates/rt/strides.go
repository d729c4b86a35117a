package rt

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"unsafe"
)

// Strides describes where heads sit inside a larger buffer, in elements of
// the slice: head h of token j is x[j·Token + h·Head :][:HeadDim]. A fused
// QKV projection [tokens][Hq+2·Hkv][HeadDim] viewed at its queries is
// Strides{Heads: Hq, Head: HeadDim, Token: (Hq+2·Hkv)·HeadDim}; a head-major
// cache [heads][tokens][HeadDim] of n tokens is
// Strides{Heads: heads, Head: n·HeadDim, Token: HeadDim}.
type Strides struct {
	Heads int // heads per token
	Head  int // from the start of one head to the start of the next
	Token int // from the start of one token's first head to the next token's
}

// checkView panics unless the view s, named what in messages ("s", "qs", …),
// describes tokens tokens of heads of headDim values that lie inside a slice
// of n elements and overlap neither each other: every field positive, the
// last head of the last token ending at or before n, and no two heads
// sharing an element. fn names the function ("Table.ApplyStrided"), word
// the token count as its caller passed it ("len(pos)", "b.Len()", …).
func checkView(fn, what string, s Strides, n, tokens, headDim int, word string) {
	switch {
	case s.Heads <= 0:
		panicView(fn, "%s.Heads = %d: want %s.Heads > 0", what, s.Heads, what)
	case s.Head <= 0:
		panicView(fn, "%s.Head = %d: want %s.Head > 0", what, s.Head, what)
	case s.Token <= 0:
		panicView(fn, "%s.Token = %d: want %s.Token > 0", what, s.Token, what)
	}
	if tokens == 0 {
		return
	}
	if end, ok := viewEnd(s, tokens, headDim); !ok || end > n {
		panicView(fn, "%s = %+v with %s = %d: the last head ends at %s, past len = %d: want (%s−1)·%s.Token + (%s.Heads−1)·%s.Head + HeadDim <= len", what, s, word, tokens, endString(end, ok), n, word, what, what, what)
	}
	if !apart(s, tokens, headDim) {
		i, j, _ := overlap(heads(s, 0, tokens), headDim)
		panicView(fn, "%s = %+v with %s = %d: heads overlap (the heads at %d and %d, HeadDim = %d): want disjoint heads, e.g. %s.Head >= HeadDim and %s.Token >= (%s.Heads−1)·%s.Head + HeadDim", what, s, word, tokens, i, j, headDim, what, what, what, what)
	}
}

// smallView reports whether the view s certainly passes checkView: at least
// one token, a token-major view (heads apart, a token's heads before the
// next token's) of fields small enough for the products below not to
// overflow, its last head ending at or before n. It is cheap enough for the
// compiler to inline, so a decode step skips checkView's call; any view it
// does not vouch for goes through checkView.
func smallView(s Strides, n, tokens, headDim int) bool {
	return s.Heads|s.Head|s.Token|tokens|headDim < 1<<(bits.UintSize/2-2) &&
		tokens > 0 && s.Heads > 0 && s.Head >= headDim && headDim > 0 &&
		s.Token >= (s.Heads-1)*s.Head+headDim &&
		headDim+(s.Heads-1)*s.Head+(tokens-1)*s.Token <= n
}

// adjacent reports whether ApplyQK's views are one: k's element 0 is q's
// element qs.Heads·qs.Head (k's heads continue q's, as in a fused QKV row
// [q heads][k heads][v heads]), both have the same Head and Token, and
// smallView vouches for q's view, k's view and m, q's view with k's heads
// added, all inside q. Rotating m then rotates exactly the heads of both,
// after the same checks.
func adjacent[E any](q []E, qs Strides, k []E, ks Strides, tokens, headDim int) (m Strides, ok bool) {
	// The address comparison first: views of two buffers fail it at once
	// (Table.ApplyQK's one-token path asks, then applyQK asks again).
	var z E
	pq, pk := uintptr(unsafe.Pointer(unsafe.SliceData(q))), uintptr(unsafe.Pointer(unsafe.SliceData(k)))
	if qs.Head != ks.Head || qs.Token != ks.Token || len(k) == 0 ||
		pk-pq != uintptr(qs.Heads*qs.Head)*unsafe.Sizeof(z) ||
		!smallView(qs, len(q), tokens, headDim) || !smallView(ks, len(k), tokens, headDim) {
		return m, false
	}
	m = Strides{Heads: qs.Heads + ks.Heads, Head: qs.Head, Token: qs.Token}
	return m, smallView(m, len(q), tokens, headDim)
}

// checkApart panics if a head of the view a (named av) of the slice an
// overlaps a head of the view b (bv) of the slice bn, whose element 0 lies
// delta elements after a's element 0 (views in one buffer: ApplyQK's q and
// k).
func checkApart(fn, an, av string, a Strides, bn, bv string, b Strides, delta, tokens, headDim int) {
	if tokens == 0 {
		return
	}
	// The common case, two token-major views of one row layout (fused QKV):
	// within a token stride a's heads fill [0, fa) and b's, modulo the
	// stride, [r, r+fb); disjoint there means disjoint everywhere.
	if a.Token == b.Token && tokenMajor(a, headDim) && tokenMajor(b, headDim) {
		fa, fb := (a.Heads-1)*a.Head+headDim, (b.Heads-1)*b.Head+headDim
		if r := ((delta % a.Token) + a.Token) % a.Token; r >= fa && r+fb <= a.Token {
			return
		}
	}
	all := append(heads(a, 0, tokens), heads(b, delta, tokens)...)
	if i, j, found := overlap(all, headDim); found {
		panicView(fn, "%s = %+v and %s = %+v with %s %d elements after %s: a %s head overlaps a %s head (the heads at %d and %d from %s, HeadDim = %d): want no head of %s to share an element with a head of %s", av, a, bv, b, bn, delta, an, an, bn, i, j, an, headDim, an, bn)
	}
}

// sharedOffset reports whether a and b share memory and, if they do, how
// many elements after a's element 0 b's element 0 lies (negative: before).
// Slices that share memory at an offset that is not a whole number of
// elements panic, naming them an and bn.
func sharedOffset[E any](fn, an, bn string, a, b []E) (int, bool) {
	if len(a) == 0 || len(b) == 0 {
		return 0, false
	}
	var z E
	size := unsafe.Sizeof(z)
	pa, pb := uintptr(unsafe.Pointer(unsafe.SliceData(a))), uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if pa+uintptr(len(a))*size <= pb || pb+uintptr(len(b))*size <= pa {
		return 0, false
	}
	d := int(pb - pa) // two's complement: negative when b starts first
	if d%int(size) != 0 {
		panicView(fn, "%s and %s share memory %s apart: want a whole number of elements", an, bn, count(d, "byte"))
	}
	return d / int(size), true
}

// viewEnd returns one past the last element of the view's last head, and
// false if that does not fit in an int.
func viewEnd(s Strides, tokens, headDim int) (int, bool) {
	const maxInt = int(^uint(0) >> 1)
	end := headDim
	for _, t := range [2][2]int{{s.Heads - 1, s.Head}, {tokens - 1, s.Token}} {
		if t[0] > 0 && t[1] > (maxInt-end)/t[0] {
			return 0, false
		}
		end += t[0] * t[1]
	}
	return end, true
}

func endString(end int, ok bool) string {
	if !ok {
		return "an index beyond the int range"
	}
	return strconv.Itoa(end)
}

// tokenMajor reports whether s keeps each token's heads together: heads
// apart, and a token's heads before the next token's.
func tokenMajor(s Strides, headDim int) bool {
	return (s.Heads == 1 || s.Head >= headDim) && s.Token >= (s.Heads-1)*s.Head+headDim
}

// apart reports whether no two heads of the view share an element: by the
// token-major or head-major rule where one holds, else by sorting the heads.
func apart(s Strides, tokens, headDim int) bool {
	switch {
	case tokenMajor(s, headDim) || tokens == 1 && (s.Heads == 1 || s.Head >= headDim):
		return true
	case (tokens == 1 || s.Token >= headDim) && (s.Heads == 1 || s.Head >= (tokens-1)*s.Token+headDim):
		return true
	}
	_, _, found := overlap(heads(s, 0, tokens), headDim)
	return !found
}

// heads returns the first element of every head of the view, offset by from.
func heads(s Strides, from, tokens int) []int {
	hs := make([]int, 0, tokens*s.Heads)
	for j := range tokens {
		for h := range s.Heads {
			hs = append(hs, from+j*s.Token+h*s.Head)
		}
	}
	return hs
}

// overlap sorts the head starts hs and returns two of them less than headDim
// apart, if there are such.
func overlap(hs []int, headDim int) (i, j int, found bool) {
	slices.Sort(hs)
	for k := 1; k < len(hs); k++ {
		if hs[k]-hs[k-1] < headDim {
			return hs[k-1], hs[k], true
		}
	}
	return 0, 0, false
}

// panicView panics with the package, fn, a colon and the formatted
// message.
func panicView(fn, format string, args ...any) {
	panic(pkgName + "." + fn + ": " + fmt.Sprintf(format, args...))
}
