package verify

import (
	"fmt"
	"slices"
)

// Strided benchmark shapes: Llama 3 8B's attention, 32 query heads and 8
// key/value heads per token, in a fused QKV projection row.
const (
	benchKVHeads = 8 // key (and value) heads per token
)

// fusedScall is ApplyQK on tokens = len(pos) fused QKV rows of 32 q, 8 k and
// 8 v heads in one buffer of n values.
func (s *suite[T]) fusedScall(n int, pos []int32) *scall {
	hd := s.hd
	row := (benchHeads + 2*benchKVHeads) * hd
	return &scall{op: opQK, name: "fused QKV rows", pos: pos, shared: true, na: n,
		a: sview{s: Strides{benchHeads, hd, row}, n: n},
		b: sview{s: Strides{benchKVHeads, hd, row}, off: benchHeads * hd, n: n - benchHeads*hd}}
}

// fusedQK is ApplyQK on the fused rows x0 at pos (fusedScall); a benchmark
// counts the q and k heads' bytes, not v's.
func (s *suite[T]) fusedQK(x0 []T, pos []int32) *call {
	sc := s.stridedCall(s.fusedScall(len(x0), pos), sbufs[T]{a: x0})
	sc.args[0].(*buf[T]).counting(int64(len(pos)*(benchHeads+benchKVHeads)*s.hd) * int64(sizeOf[T]()))
	return sc
}

// splitQK is Apply (one position) or ApplySeq on contiguous q heads, then
// k heads, of len(pos) tokens, in one buffer x (q's first).
func (s *suite[T]) splitQK(x []T, pos []int32) *call {
	xa := newBuf("q and k", x, inPlace)
	nq := len(pos) * benchHeads * s.hd
	return &call{what: "the split q and k", args: []arg{xa}, run: func() {
		if len(pos) == 1 {
			s.tab.Apply(xa.cur[:nq], int(pos[0]))
			s.tab.Apply(xa.cur[nq:], int(pos[0]))
			return
		}
		s.tab.ApplySeq(xa.cur[:nq], pos)
		s.tab.ApplySeq(xa.cur[nq:], pos)
	}}
}

// stridedBench is the strided entry points' benchmark groups (Bench's list
// names them): decodeqk and prefillqk (ApplyQK on fused QKV rows against
// Apply or ApplySeq on split q and k, and, at decode, each head copied out
// and back), and headmajor (ApplyStrided on a head-major buffer).
func (s *suite[T]) stridedBench(input func(int) []T) []benchGroup {
	hd := s.hd
	row := (benchHeads + 2*benchKVHeads) * hd
	touched := (benchHeads + benchKVHeads) * hd

	x0 := input(row)
	pos := []int32{benchDecodePos}
	copyLoop := newBuf("x", x0, inPlace).counting(int64(touched) * int64(sizeOf[T]()))
	tmp := make([]T, hd)
	decode := benchGroup{name: "decodeqk", main: s.fusedQK(x0, pos), check: s.fusedAgrees(x0, pos), extra: []timed{
		{name: "baseline=split", c: s.splitQK(input(touched), pos)},
		{name: "baseline=copyloop", c: &call{what: "the copy loop", args: []arg{copyLoop}, run: func() {
			for h := range benchHeads + benchKVHeads {
				v := copyLoop.cur[h*hd : (h+1)*hd]
				copy(tmp, v)
				s.tab.Apply(tmp, benchDecodePos)
				copy(v, tmp)
			}
		}}},
	}}

	x0 = input(benchTokens * row)
	pos = upTo(benchTokens, s.n)
	prefill := benchGroup{name: "prefillqk", main: s.fusedQK(x0, pos), check: s.fusedAgrees(x0, pos), extra: []timed{
		{name: "baseline=split", c: s.splitQK(input(benchTokens*touched), pos)},
	}}

	hm := Strides{benchHeads, benchTokens * hd, hd}
	c := &scall{op: opFwd, name: "head-major", pos: pos, a: sview{s: hm, n: benchHeads * benchTokens * hd}, na: benchHeads * benchTokens * hd}
	headMajor := benchGroup{name: "headmajor", main: s.stridedCall(c, sbufs[T]{a: input(c.na)})}
	return []benchGroup{decode, prefill, headMajor}
}

// fusedAgrees returns a check that ApplyQK on fused rows x0 gives, in its q
// and k heads, what ApplySeq gives on the split queries and keys.
func (s *suite[T]) fusedAgrees(x0 []T, pos []int32) func() string {
	return func() string {
		hd, tokens := s.hd, len(pos)
		row := (benchHeads + 2*benchKVHeads) * hd
		touched := (benchHeads + benchKVHeads) * hd
		fused := s.fusedQK(x0, pos)
		fused.fresh()
		fused.run()
		got := fused.args[0].(*buf[T]).cur
		q := make([]T, 0, tokens*benchHeads*hd)
		k := make([]T, 0, tokens*benchKVHeads*hd)
		for j := range tokens {
			r := x0[j*row:]
			q = append(q, r[:benchHeads*hd]...)
			k = append(k, r[benchHeads*hd:touched]...)
		}
		q, k = slices.Clone(q), slices.Clone(k)
		s.tab.ApplySeq(q, pos)
		s.tab.ApplySeq(k, pos)
		for j := range tokens {
			r := got[j*row:]
			if i := s.firstDiff(r[:benchHeads*hd], q[j*benchHeads*hd:(j+1)*benchHeads*hd]); i >= 0 {
				return fmt.Sprintf("ApplyQK on fused rows: token %d, q value %d differs from ApplySeq on the split queries", j, i)
			}
			if i := s.firstDiff(r[benchHeads*hd:touched], k[j*benchKVHeads*hd:(j+1)*benchKVHeads*hd]); i >= 0 {
				return fmt.Sprintf("ApplyQK on fused rows: token %d, k value %d differs from ApplySeq on the split keys", j, i)
			}
		}
		return ""
	}
}
