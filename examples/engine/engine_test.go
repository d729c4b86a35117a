package engine

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	rope "github.com/ropegen/ropegen/generated/engine"
	"github.com/ropegen/ropegen/spec"
)

func hfPath(name string) string { return filepath.Join("..", "..", "spec", "testdata", "hf", name) }

// Every RoPE layer type of a model is a Layer: Gemma 3's global and sliding
// layers (base 1e6 with linear scaling by 8, and base 1e4; one shape, one
// norm), one layer for Llama.
func TestLoadHFLayers(t *testing.T) {
	m, err := LoadHF(hfPath("gemma-3-4b-it.json"))
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, l := range m.Layers {
		types = append(types, l.Type)
	}
	if !slices.Equal(types, []string{"sliding_attention", "full_attention"}) && !slices.Equal(types, []string{"full_attention", "sliding_attention"}) {
		t.Fatalf("Gemma 3's layers: %v, want its sliding and full attention layers", types)
	}
	g, s := m.Layer("full_attention"), m.Layer("sliding_attention")
	if g.Spec.Base == s.Spec.Base || g.R.Shape() != s.R.Shape() || g.R.Params().NormKind != "gemma" {
		t.Errorf("global %v base %v, sliding %v base %v", g.R.Shape(), g.Spec.Base, s.R.Shape(), s.Spec.Base)
	}
	if m.Layer("linear_attention") != nil {
		t.Errorf("a layer type Gemma 3 lacks was found")
	}
	l, err := LoadHF(hfPath("llama-3.1-8b.json"))
	if err != nil || len(l.Layers) != 1 {
		t.Fatalf("Llama 3.1: %v, %v: want one layer", l, err)
	}
}

// A model the engine package has no kernels for is refused by New, naming
// the field and listing what the package has: Phi-2's head of 80, GPT-J's
// rotary 64 of 256, a QK-norm the shape lacks.
func TestRefused(t *testing.T) {
	for _, c := range []struct {
		what  string
		s     func() spec.Spec
		words []string
	}{
		{"Phi-2", func() spec.Spec { s, _ := spec.LoadHFConfig(hfPath("phi-2.json")); return s }, []string{"HeadDim = 80", "128/128/neox", "96/96/neox"}},
		{"GPT-J", func() spec.Spec { s, _ := spec.LoadHFConfig(hfPath("gpt-j-6b.json")); return s }, []string{"RotaryDim = 64", "256/256/neox"}},
		{"Llama 3.1 with a gemma norm", func() spec.Spec {
			s, _ := spec.LoadHFConfig(hfPath("llama-3.1-8b.json"))
			s.QKNorm = spec.QKNorm{Kind: "gemma"}
			return s
		}, []string{`NormKind = "gemma"`, "rms/head", "rms/token"}},
	} {
		r, err := New(c.s())
		if err == nil {
			t.Errorf("%s: New = %v: want an error", c.what, r.Shape())
			continue
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v: does not say %q", c.what, err, w)
			}
		}
	}
}

// Prep is the engine package's Prep on fused QKV rows, through a prefill's
// table and through a decode step's Batch: the queries as ApplyNormQK
// leaves them, the keys and values in the caches as Store puts them after
// it; for Qwen3, which normalizes q and k, and Llama 3.1, which does not
// (no weights: the same calls only rotate).
func TestPrep(t *testing.T) {
	for _, c := range []struct {
		config string
		norm   bool
	}{{"qwen3-8b.json", true}, {"llama-3.1-8b.json", false}} {
		m, err := LoadHF(hfPath(c.config))
		if err != nil {
			t.Fatal(err)
		}
		l := m.Layer("")
		hd := l.R.Shape().HeadDim
		const hq, hkv, rows = 32, 8, 8
		row := (hq + 2*hkv) * hd
		qkv := make([]float32, 3*row)
		for i := range qkv {
			qkv[i] = float32(math.Sin(float64(i)))
		}
		var qw, kw []float32
		if c.norm {
			qw, kw = make([]float32, hd), make([]float32, hd)
			for i := range qw {
				qw[i], kw[i] = 1+float32(i%3)/4, 1-float32(i%5)/8
			}
		}
		tab := l.R.NewTable(64)
		pos, slots := []int32{10, 11, 12}, []int64{4, 5, 6}
		cs := rope.Strides{Heads: hkv, Head: l.R.CacheHead("q8_0"), Token: hkv * l.R.CacheHead("q8_0")}

		want := slices.Clone(qkv)
		qs, kvs := rope.Strides{Heads: hq, Head: hd, Token: row}, rope.Strides{Heads: hkv, Head: hd, Token: row}
		tab.ApplyNormQK(want, qs, qw, want[hq*hd:], kvs, kw, pos)
		wk, wv := make([]byte, rows*cs.Token), make([]byte, rows*cs.Token)
		l.R.Store(rope.Q80Cache(wk, cs), slots, want[hq*hd:], kvs)
		l.R.Store(rope.Q80Cache(wv, cs), slots, qkv[(hq+hkv)*hd:], kvs)

		b := l.R.NewBatch(len(pos))
		b.Set(pos)
		for _, r := range []rope.CacheRows{tab, b} {
			kb, vb := make([]byte, rows*cs.Token), make([]byte, rows*cs.Token)
			got := slices.Clone(qkv)
			l.Prep(r, got, hq, hkv, qw, kw, rope.Q80Cache(kb, cs), rope.Q80Cache(vb, cs), slots, pos)
			for j := range 3 {
				o := j * row
				if !slices.Equal(got[o:o+hq*hd], want[o:o+hq*hd]) || !slices.Equal(got[o+hq*hd:o+row], qkv[o+hq*hd:o+row]) {
					t.Fatalf("%s, %T: token %d: the queries differ from ApplyNormQK's, or the keys or values changed", c.config, r, j)
				}
			}
			if !slices.Equal(kb, wk) || !slices.Equal(vb, wv) {
				t.Fatalf("%s, %T: the caches differ from ApplyNormQK then Store", c.config, r)
			}
		}
	}
}

// The engine loads Gemma 3's config, serves both its layer types from one
// package, and turns a query head at position 1,000,005 with a window,
// without a table from position 0.
func Example() {
	m, err := LoadHF("../../spec/testdata/hf/gemma-3-4b-it.json")
	if err != nil {
		panic(err)
	}
	for _, l := range m.Layers {
		p := l.R.Params()
		fmt.Printf("%s: %v, θ_1 = %.6g, norm %s/%s ε %g\n", l.Type, l.R.Shape(), p.Freqs[1], p.NormKind, p.NormScope, p.NormEps)
	}
	win := m.Layer("full_attention").R.NewTableRange(1_000_000, 64) // 64 rows, not a million
	q := make([]float32, 256)
	q[0] = 1
	win.Apply(q, 1_000_005)
	fmt.Println("window rows:", win.Len(), "from", win.Start())
	// Output:
	// sliding_attention: 256/256/neox, θ_1 = 0.930572, norm gemma/head ε 1e-06
	// full_attention: 256/256/neox, θ_1 = 0.112211, norm gemma/head ε 1e-06
	// window rows: 64 from 1000000
}
