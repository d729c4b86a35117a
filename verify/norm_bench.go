package verify

import (
	"testing"
)

// benchNorm measures ApplyNormQK on Qwen3-8B's attention shapes, 32 query
// and 8 key/value heads per token in a fused QKV row, with this package's
// HeadDim (Bench's list names the sub-benchmarks):
//
//	prefillnorm/backend=<name>           ApplyNormQK on 512 fused rows at 0..511
//	prefillnorm/separate/backend=<name>  the norm alone (NormOnly) token by token, then ApplyQK (the
//	                                     other way round with -qk-norm-after), on the same backend
//	prefillnorm/baseline=stream          the stream kernel on the q and k bytes (and stream-avx2)
//	decodenorm/backend=<name>            ApplyNormQK on one fused row at one position
//	decodenorm/applyqk/backend=<name>    ApplyQK alone on the same row, the same backend
//	decodenorm/separate/backend=<name>   the norm alone, then ApplyQK
//
// SetBytes counts the q and k bytes, as benchStrided does. The weights are
// the package's type, made once.
func benchNorm[T Elem](b *testing.B, s *suite[T], backends []Backend, restore func(), every int, input func(int) []T) {
	hd := s.hd
	const hq, hkv = benchHeads, benchKVHeads
	row := (hq + 2*hkv) * hd
	qs, ks := Strides{hq, hd, row}, Strides{hkv, hd, row}
	size := int64(sizeOf[T]())
	touched := (hq + hkv) * hd
	nk := s.k.Norm
	weights := func(heads int, base float64) []float64 {
		n := s.weightsLen(heads)
		if n == 0 {
			return nil
		}
		// One weight for every value: x ← norm(x)·w is then a fixed point
		// of the calls repeated in place (so is the rotation, with A = 1).
		// Weights that differ from value to value would move the values
		// apart by their ratio at every call, into subnormals (which cost
		// the FPU microcode assists) and infinities within a few hundred
		// calls; the arithmetic is the same for any weights.
		w := make([]float64, n)
		for i := range w {
			w[i] = base
		}
		return w
	}
	qw, kw := weights(hq, 0.75), weights(hkv, 1.25)
	qw32, kw32 := to32(qw), to32(kw)
	fused := func(x []T, pos []int32) {
		if nk.ApplyNormQK64 != nil {
			nk.ApplyNormQK64(s.tab, x, qs, qw, x[hq*hd:], ks, kw, pos)
			return
		}
		nk.ApplyNormQK32(s.tab, x, qs, qw32, x[hq*hd:], ks, kw32, pos)
	}
	only := func(x []T, n int, w []float64, w32 []float32) {
		if nk.NormOnly64 != nil {
			nk.NormOnly64(x, hd, n, w)
			return
		}
		nk.NormOnly32(x, hd, n, w32)
	}
	separate := func(x []T, pos []int32) {
		norm := func() {
			for j := range pos {
				only(x[j*row:], hq, qw, qw32)
				only(x[j*row+hq*hd:], hkv, kw, kw32)
			}
		}
		if !nk.After {
			norm()
		}
		s.k.Strided.ApplyQK(s.tab, x, qs, x[hq*hd:], ks, pos)
		if nk.After {
			norm()
		}
	}
	applyQK := func(x []T, pos []int32) { s.k.Strided.ApplyQK(s.tab, x, qs, x[hq*hd:], ks, pos) }

	for _, shape := range []struct {
		name   string
		tokens int
		pos    func(j int) int32
	}{
		{"prefillnorm", benchTokens, func(j int) int32 { return int32(j) }},
		{"decodenorm", 1, func(int) int32 { return benchDecodePos }},
	} {
		b.Run(shape.name, func(b *testing.B) {
			x0 := input(shape.tokens * row)
			pos := make([]int32, shape.tokens)
			for j := range pos {
				pos[j] = shape.pos(j)
			}
			bytes := int64(shape.tokens*touched) * size
			for _, be := range backends {
				b.Run("backend="+be.Name, func(b *testing.B) {
					be.Use()
					defer restore()
					benchLoopBytes(b, x0, every, bytes, func(x []T) { fused(x, pos) })
				})
			}
			if shape.tokens == 1 {
				for _, be := range backends {
					b.Run("applyqk/backend="+be.Name, func(b *testing.B) {
						be.Use()
						defer restore()
						benchLoopBytes(b, x0, every, bytes, func(x []T) { applyQK(x, pos) })
					})
				}
			}
			if nk.NormOnly32 != nil || nk.NormOnly64 != nil {
				for _, be := range backends {
					b.Run("separate/backend="+be.Name, func(b *testing.B) {
						be.Use()
						defer restore()
						benchLoopBytes(b, x0, every, bytes, func(x []T) { separate(x, pos) })
					})
				}
			}
			restore()
			if shape.tokens > 1 {
				benchStream(b, input(shape.tokens*touched), every)
			}
		})
	}
}
