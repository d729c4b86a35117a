package verify

import (
	"slices"
	"testing"
)

// Strided benchmark shapes: Llama 3 8B's attention, 32 query heads and 8
// key/value heads per token, in a fused QKV projection row.
const (
	benchKVHeads = 8 // key (and value) heads per token
)

// benchStrided measures the strided entry points, when k has them (Bench's
// list names the sub-benchmarks). SetBytes counts the bytes the call
// rotates (the q and k heads; not v's), so that throughput compares with
// baseline=stream on those bytes.
func benchStrided[T Elem](b *testing.B, s *suite[T], backends []Backend, restore func(), every int, input func(int) []T) {
	hd := s.hd
	size := int64(sizeOf[T]())
	row := (benchHeads + 2*benchKVHeads) * hd
	qs := Strides{benchHeads, hd, row}
	ks := Strides{benchKVHeads, hd, row}
	touched := (benchHeads + benchKVHeads) * hd // per token
	// check runs ApplyQK on a fused copy of x0 and compares its q and k
	// heads with Apply (ApplySeq) on the split copies.
	check := func(x0 []T, tokens int, pos []int32) {
		got := slices.Clone(x0)
		s.k.Strided.ApplyQK(s.tab, got, qs, got[benchHeads*hd:], ks, pos)
		q := make([]T, 0, tokens*benchHeads*hd)
		k := make([]T, 0, tokens*benchKVHeads*hd)
		for j := range tokens {
			r := x0[j*row:]
			q = append(q, r[:benchHeads*hd]...)
			k = append(k, r[benchHeads*hd:touched]...)
		}
		s.tab.ApplySeq(q, pos)
		s.tab.ApplySeq(k, pos)
		for j := range tokens {
			r := got[j*row:]
			if i := s.firstDiff(r[:benchHeads*hd], q[j*benchHeads*hd:(j+1)*benchHeads*hd]); i >= 0 {
				b.Fatalf("ApplyQK on %d fused rows: token %d, q value %d differs from ApplySeq on the split queries", tokens, j, i)
			}
			if i := s.firstDiff(r[benchHeads*hd:touched], k[j*benchKVHeads*hd:(j+1)*benchKVHeads*hd]); i >= 0 {
				b.Fatalf("ApplyQK on %d fused rows: token %d, k value %d differs from ApplySeq on the split keys", tokens, j, i)
			}
		}
	}

	b.Run("decodeqk", func(b *testing.B) {
		x0 := input(row)
		pos := []int32{benchDecodePos}
		check(x0, 1, pos)
		bytes := int64(touched) * size
		for _, be := range backends {
			b.Run("backend="+be.Name, func(b *testing.B) {
				be.Use()
				defer restore()
				benchLoopBytes(b, x0, every, bytes, func(x []T) { s.k.Strided.ApplyQK(s.tab, x, qs, x[benchHeads*hd:], ks, pos) })
			})
		}
		restore()
		split := input(touched)
		b.Run("baseline=split", func(b *testing.B) {
			benchLoopBytes(b, split, every, bytes, func(x []T) {
				s.tab.Apply(x[:benchHeads*hd], benchDecodePos)
				s.tab.Apply(x[benchHeads*hd:], benchDecodePos)
			})
		})
		b.Run("baseline=copyloop", func(b *testing.B) {
			tmp := make([]T, hd)
			benchLoopBytes(b, x0, every, bytes, func(x []T) {
				for h := range benchHeads + benchKVHeads {
					v := x[h*hd : (h+1)*hd]
					copy(tmp, v)
					s.tab.Apply(tmp, benchDecodePos)
					copy(v, tmp)
				}
			})
		})
		benchStream(b, split, every)
	})

	b.Run("prefillqk", func(b *testing.B) {
		x0 := input(benchTokens * row)
		pos := make([]int32, benchTokens)
		for i := range pos {
			pos[i] = int32(i)
		}
		check(x0, benchTokens, pos)
		bytes := int64(benchTokens*touched) * size
		for _, be := range backends {
			b.Run("backend="+be.Name, func(b *testing.B) {
				be.Use()
				defer restore()
				benchLoopBytes(b, x0, every, bytes, func(x []T) { s.k.Strided.ApplyQK(s.tab, x, qs, x[benchHeads*hd:], ks, pos) })
			})
		}
		restore()
		split := input(benchTokens * touched)
		nq := benchTokens * benchHeads * hd
		b.Run("baseline=split", func(b *testing.B) {
			benchLoopBytes(b, split, every, bytes, func(x []T) {
				s.tab.ApplySeq(x[:nq], pos)
				s.tab.ApplySeq(x[nq:], pos)
			})
		})
		benchStream(b, split, every)
	})

	b.Run("headmajor", func(b *testing.B) {
		x0 := input(benchHeads * benchTokens * hd)
		pos := make([]int32, benchTokens)
		for i := range pos {
			pos[i] = int32(i)
		}
		hm := Strides{benchHeads, benchTokens * hd, hd}
		for _, be := range backends {
			b.Run("backend="+be.Name, func(b *testing.B) {
				be.Use()
				defer restore()
				benchLoop(b, x0, every, func(x []T) { s.k.Strided.ApplyStrided(s.tab, x, hm, pos) })
			})
		}
		restore()
		benchStream(b, x0, every)
	})
}
