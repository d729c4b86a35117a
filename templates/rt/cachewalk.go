package rt

import (
	"cmp"
	"slices"
)

// The slot checks and the walk of the KV-cache entry points (ApplyStore,
// Store, Load, Shift, Prep; docs/contract.md §11).

// cacheRows returns how many rows the cache view s, named what in
// messages, gives a slice of n elements: the rows r >= 0 whose last head
// ends at or before n, r·s.Token + (s.Heads−1)·s.Head + headSize <= n. A
// head is headSize elements (HeadDim values, or for a block format the
// bytes of HeadDim/32 blocks). A field of s that is not positive panics, naming fn.
func cacheRows(fn, what string, s Strides, n, headSize int) int {
	checkView(fn, what, s, n, 0, headSize, "") // the fields only
	end, ok := viewEnd(s, 1, headSize)
	if !ok || end > n {
		return 0
	}
	return (n-end)/s.Token + 1
}

// checkSlots panics unless every slots[j] is −1 (the token is skipped) or
// a row below rows, and no row is listed twice; fn names the function,
// sname the slots ("slots", "s.Slots"), what the cache ("c", "s.KCache")
// and view its Strides. Slots that
// increase, as a decode step's one slot and a contiguous prefill's do, are
// checked in one pass; others by their runs of consecutive slots (a paged
// cache's blocks), and only when two runs overlap by sorting a copy.
func checkSlots(fn, sname, what, view string, slots []int64, rows, n int) {
	last, increasing := int64(-1), true
	for j, s := range slots {
		if uint64(s+1) > uint64(rows) {
			panicView(fn, "%s[%d] = %d: want -1 (skip) or 0 <= slot < %d, the rows %s gives %s (len %d)", sname, j, s, rows, view, what, n)
		}
		if s >= 0 {
			increasing = increasing && s > last
			last = s
		}
	}
	if !increasing {
		checkDistinct(fn, sname, slots)
	}
}

// checkDistinct panics if a slot other than −1 appears twice in slots. It
// cuts slots into runs of consecutive slots (s, s+1, …: a paged cache's
// blocks), each free of repeats and covering exactly the rows from its first
// slot to its last, and sorts the runs by their first slot: if each run
// starts after the one before it ends, no slot repeats. Otherwise it sorts
// a copy of the slots.
func checkDistinct(fn, sname string, slots []int64) {
	var buf [64][2]int64
	runs := buf[:0]
	lo, hi := int64(-1), int64(-1)
	for _, s := range slots {
		switch {
		case s < 0:
		case lo >= 0 && s == hi+1:
			hi = s
		default:
			if lo >= 0 {
				runs = append(runs, [2]int64{lo, hi})
			}
			lo, hi = s, s
		}
	}
	if lo >= 0 {
		runs = append(runs, [2]int64{lo, hi})
	}
	slices.SortFunc(runs, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	for i := 1; i < len(runs); i++ {
		if runs[i][0] <= runs[i-1][1] {
			checkDistinctSorted(fn, sname, slots)
			return
		}
	}
}

// checkDistinctSorted is checkDistinct by sorting a copy of the slots.
func checkDistinctSorted(fn, sname string, slots []int64) {
	c := slices.Clone(slots)
	slices.Sort(c)
	for i := 1; i < len(c); i++ {
		if c[i] >= 0 && c[i] == c[i-1] {
			first := slices.Index(slots, c[i])
			second := first + 1 + slices.Index(slots[first+1:], c[i])
			panicView(fn, "%s[%d] = %d: %s[%d] is %d too: want each row at most once per call", sname, second, c[i], sname, first, c[i])
		}
	}
}

// checkCacheView panics unless the heads of the rows slots names are
// disjoint in the cache view s (named what): at once where every row's
// heads are apart (a token-major cache, each row's heads before the next
// row's, or a head-major one, each head's rows before the next head's),
// else by sorting the heads of those rows.
func checkCacheView(fn, what string, s Strides, rows, headSize int, slots []int64) {
	if (s.Heads == 1 || s.Head >= headSize) && (rows <= 1 || s.Token >= (s.Heads-1)*s.Head+headSize) {
		return // token-major
	}
	if s.Token >= headSize && (s.Heads == 1 || rows <= 0 || s.Head >= (rows-1)*s.Token+headSize) {
		return // head-major
	}
	var hs []int
	for _, r := range slots {
		for h := 0; r >= 0 && h < s.Heads; h++ {
			hs = append(hs, int(r)*s.Token+h*s.Head)
		}
	}
	if i, j, found := overlap(hs, headSize); found {
		panicView(fn, "%s = %+v: two heads of the rows slots names overlap (the heads at %d and %d, %d elements each): want disjoint heads, e.g. %s.Head >= %d and %s.Token >= (%s.Heads−1)·%s.Head + %d", what, s, i, j, headSize, what, headSize, what, what, what, headSize)
	}
}

// cacheWalk calls f once for each stretch of the tokens of slots that one
// kernel call covers, skipping slots of −1: f(j, cOff, cStride, xOff,
// xStride, n, hs) is for n heads, head i at element cOff + i·cStride of the
// cache (view c) and xOff + i·xStride of the token buffer (view x), KV head
// hs.h0 + i·hs.step mod c.Heads, j the first token. A run is tokens j, j+1, … at slots s, s+1, … (and, with
// delta not nil, of equal delta[j]). A run's heads are one call when both
// views keep a row's heads one stride apart and rows back to back
// (Token = Heads·Head); a head-major cache (c.Token < c.Head) takes a call
// per head along the run; anything else a call per token. Heads are
// disjoint, so the calls' order changes no bit.
func cacheWalk(slots []int64, delta []int32, c, x Strides, f func(j, cOff, cStride, xOff, xStride, n int, hs headSeq)) {
	merge := c.Token == c.Heads*c.Head && x.Token == x.Heads*x.Head
	for j := 0; j < len(slots); {
		s := slots[j]
		if s < 0 {
			j++
			continue
		}
		m := 1
		for j+m < len(slots) && slots[j+m] == s+int64(m) && (delta == nil || delta[j+m] == delta[j]) {
			m++
		}
		cOff, xOff := int(s)*c.Token, j*x.Token
		switch {
		case m == 1 || merge:
			f(j, cOff, c.Head, xOff, x.Head, m*c.Heads, headSeq{0, 1})
		case c.Token < c.Head:
			for h := range c.Heads {
				f(j, cOff+h*c.Head, c.Token, xOff+h*x.Head, x.Token, m, headSeq{h, 0})
			}
		default:
			for i := range m {
				f(j+i, cOff+i*c.Token, c.Head, xOff+i*x.Token, x.Head, c.Heads, headSeq{0, 1})
			}
		}
		j += m
	}
}
