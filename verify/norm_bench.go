package verify

// normBench is the QK-norm's benchmark groups, on Qwen3-8B's attention
// shapes, 32 query and 8 key/value heads per token in a fused QKV row,
// with this package's HeadDim:
//
//	prefillnorm/backend=<name>           ApplyNormQK on 512 fused rows at 0..511
//	prefillnorm/separate/backend=<name>  the norm alone (NormOnly) token by token, then ApplyQK (the
//	                                     other way round with -qk-norm-after), on the same backend
//	prefillnorm/baseline=stream          the stream kernel on the q and k bytes (and stream-avx2)
//	decodenorm/backend=<name>            ApplyNormQK on one fused row at one position
//	decodenorm/applyqk/backend=<name>    ApplyQK alone on the same row, the same backend
//	decodenorm/separate/backend=<name>   the norm alone, then ApplyQK
//
// SetBytes counts the q and k bytes, as the strided groups do. Every value
// of a vector has the same weight: x ← norm(x)·w is then a fixed point of
// the calls repeated in place (so is the rotation, with A = 1). Weights
// that differ from value to value would move the values apart by their
// ratio at every call, into subnormals (which cost the FPU microcode
// assists) and infinities within a few hundred calls; the arithmetic is
// the same for any weights.
func (s *suite[T]) normBench(input func(int) []T) []benchGroup {
	weights := func(heads int, base float64) []float64 {
		n := s.weightsLen(heads)
		if n == 0 {
			return nil
		}
		w := make([]float64, n)
		for i := range w {
			w[i] = base
		}
		return w
	}
	qw, kw := weights(benchHeads, 0.75), weights(benchKVHeads, 1.25)
	var gs []benchGroup
	for _, shape := range []struct {
		name string
		pos  []int32
	}{
		{"prefillnorm", upTo(benchTokens, s.n)},
		{"decodenorm", []int32{benchDecodePos}},
	} {
		x0 := input(len(shape.pos) * (benchHeads + 2*benchKVHeads) * s.hd)
		qk := s.fusedQK(x0, shape.pos)
		g := benchGroup{name: shape.name, main: s.fusedNorm(x0, shape.pos, qw, kw), noStream: len(shape.pos) == 1}
		if len(shape.pos) == 1 {
			g.extra = append(g.extra, timed{name: "applyqk", c: qk, perBackend: true})
		}
		if s.hasNormOnly() {
			g.extra = append(g.extra, timed{name: "separate", c: s.separateNorm(x0, shape.pos, qw, kw), perBackend: true})
		}
		gs = append(gs, g)
	}
	return gs
}

// fusedNorm is ApplyNormQK on the fused rows x0 of fusedQK at pos, with
// weights qw and kw.
func (s *suite[T]) fusedNorm(x0 []T, pos []int32, qw, kw []float64) *call {
	qk := s.fusedQK(x0, pos)
	c := s.fusedScall(len(x0), pos)
	nc := s.normCallOf(c, sbufs[T]{a: x0}, qw, kw)
	nc.args[0].(*buf[T]).counting(qk.args[0].counted())
	return nc
}

// separateNorm is the norm alone (NormOnly) token by token on the fused rows
// x0, then ApplyQK (ApplyQK first with After), with the weights converted
// once.
func (s *suite[T]) separateNorm(x0 []T, pos []int32, qw, kw []float64) *call {
	hd, nk := s.hd, s.k.Norm
	row := (benchHeads + 2*benchKVHeads) * hd
	qw32, kw32 := to32(qw), to32(kw)
	only := func(x []T, n int, w []float64, w32 []float32) {
		if nk.NormOnly64 != nil {
			nk.NormOnly64(x, hd, n, w)
			return
		}
		nk.NormOnly32(x, hd, n, w32)
	}
	qk := s.fusedQK(x0, pos)
	xa := qk.args[0].(*buf[T])
	norm := func() {
		for j := range pos {
			only(xa.cur[j*row:], benchHeads, qw, qw32)
			only(xa.cur[j*row+benchHeads*hd:], benchKVHeads, kw, kw32)
		}
	}
	rot := qk.run
	return &call{what: "the norm alone and ApplyQK", args: qk.args, run: func() {
		if !nk.After {
			norm()
		}
		rot()
		if nk.After {
			norm()
		}
	}}
}
