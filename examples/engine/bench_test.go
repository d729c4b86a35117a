package engine

import (
	"math"
	"slices"
	"testing"

	rope "github.com/ropegen/ropegen/generated/engine"
	"github.com/ropegen/ropegen/generated/qwen3"
)

// The benchmarks compare the engine package with a package generated for
// one spec, and Prep with the separate calls (run them on a quiet machine:
// go test -run '^$' -bench . -count 6 ./examples/engine):
//
//   - BenchmarkEngineVsPerSpec: the engine package, its kernels chosen at
//     run time by New from a model loaded from its config (Llama 3.1 8B), against a package
//     generated for one spec of the same shape (generated/qwen3, 128/128/neox;
//     ApplyQK takes no norm), on a decode step (ApplyQK of one token's fused
//     QKV row: 32 query and 8 key heads of 128, 8 value heads left alone) and
//     a 512-token prefill.
//   - BenchmarkPrep: Qwen3-8B's attention prep of a 512-token prefill into f16
//     and q8_0 caches: Prep against ApplyNormQK followed by Store of the keys
//     and of the values.

const hq, hkv = 32, 8

func benchQKV(tokens, hd int) []float32 {
	x := make([]float32, tokens*(hq+2*hkv)*hd)
	for i := range x {
		x[i] = float32(math.Sin(float64(i) * 0.37))
	}
	return x
}

func benchPos(tokens int) []int32 {
	pos := make([]int32, tokens)
	for j := range pos {
		pos[j] = int32(100 + j)
	}
	return pos
}

func BenchmarkEngineVsPerSpec(b *testing.B) {
	m, err := LoadHF(hfPath("llama-3.1-8b.json"))
	if err != nil {
		b.Fatal(err)
	}
	e := m.Layer("").R
	hd := e.Shape().HeadDim
	et := e.NewTable(4096)
	ot := qwen3.NewTable(4096)
	row := (hq + 2*hkv) * hd
	for _, c := range []struct {
		name   string
		tokens int
	}{{"decode", 1}, {"prefill512", 512}} {
		qkv := benchQKV(c.tokens, hd)
		pos := benchPos(c.tokens)
		b.Run(c.name+"/engine", func(b *testing.B) {
			qs, ks := rope.Strides{Heads: hq, Head: hd, Token: row}, rope.Strides{Heads: hkv, Head: hd, Token: row}
			b.SetBytes(int64(c.tokens * (hq + hkv) * hd * 4))
			for b.Loop() {
				et.ApplyQK(qkv, qs, qkv[hq*hd:], ks, pos)
			}
		})
		b.Run(c.name+"/perspec", func(b *testing.B) {
			qs, ks := qwen3.Strides{Heads: hq, Head: hd, Token: row}, qwen3.Strides{Heads: hkv, Head: hd, Token: row}
			b.SetBytes(int64(c.tokens * (hq + hkv) * hd * 4))
			for b.Loop() {
				ot.ApplyQK(qkv, qs, qkv[hq*hd:], ks, pos)
			}
		})
	}
}

func BenchmarkPrep(b *testing.B) {
	m, err := LoadHF(hfPath("qwen3-8b.json"))
	if err != nil {
		b.Fatal(err)
	}
	l := m.Layer("")
	r := l.R
	hd := r.Shape().HeadDim
	const tokens = 512
	row := (hq + 2*hkv) * hd
	tab := r.NewTable(4096)
	qkv := benchQKV(tokens, hd)
	pos := benchPos(tokens)
	slots := make([]int64, tokens)
	for j := range slots {
		slots[j] = int64(j)
	}
	// One weight for every value, so that the calls repeated in place on
	// qkv are a fixed point (verify's norm benchmarks say why).
	qw, kw := make([]float32, hd), make([]float32, hd)
	for i := range qw {
		qw[i], kw[i] = 1.0625, 0.9375
	}
	x0 := slices.Clone(qkv)
	qs, kvs := rope.Strides{Heads: hq, Head: hd, Token: row}, rope.Strides{Heads: hkv, Head: hd, Token: row}
	for _, dtype := range []string{"f16", "q8_0"} {
		ch := r.CacheHead(dtype)
		cs := rope.Strides{Heads: hkv, Head: ch, Token: hkv * ch}
		var kc, vc rope.Cache
		if dtype == "f16" {
			kc, vc = rope.F16Cache(make([]uint16, tokens*cs.Token), cs), rope.F16Cache(make([]uint16, tokens*cs.Token), cs)
		} else {
			kc, vc = rope.Q80Cache(make([]byte, tokens*cs.Token), cs), rope.Q80Cache(make([]byte, tokens*cs.Token), cs)
		}
		b.Run(dtype+"/prep", func(b *testing.B) {
			copy(qkv, x0)
			b.SetBytes(int64(tokens * (hq + 2*hkv) * hd * 4))
			for b.Loop() {
				l.Prep(tab, qkv, hq, hkv, qw, kw, kc, vc, slots, pos)
			}
		})
		b.Run(dtype+"/separate", func(b *testing.B) {
			copy(qkv, x0)
			b.SetBytes(int64(tokens * (hq + 2*hkv) * hd * 4))
			for b.Loop() {
				tab.ApplyNormQK(qkv, qs, qw, qkv[hq*hd:], kvs, kw, pos)
				r.Store(kc, slots, qkv[hq*hd:], kvs)
				r.Store(vc, slots, qkv[(hq+hkv)*hd:], kvs)
			}
		})
	}
}
