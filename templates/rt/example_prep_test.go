package rt

import (
	"fmt"
	"math"
	"slices"
)

// A prefill of four tokens through one Qwen3-8B-shaped layer: the fused QKV
// projection of each token holds 32 query, 8 key and 8 value heads. Prep
// normalizes (with the model's QK-norm, if it has one) and turns the
// queries in place, normalizes and turns the keys on their way into the key
// cache at the tokens' slots, and stores the values into the value cache,
// in one call; the projection's keys and values keep their bits. The result
// is ApplyNormQK (ApplyQK without a norm) on the queries and on a copy of
// the keys, then Store of both, bit for bit.
func ExampleTable_Prep() {
	r := Default()
	p := r.Params()
	hd := p.HeadDim
	const hq, hkv, rows = 32, 8, 16
	row := (hq + 2*hkv) * hd
	tab := r.NewTable(4096)
	pos := examplePos(r, 100, 101, 102, 103)
	slots := []int64{8, 9, 10, 11} // the tokens' rows of the caches
	qkv := make([]float32, 4*row)
	for i := range qkv {
		qkv[i] = float32(i%7) - 3 + 0.5
	}
	// This layer's q_norm and k_norm weights (nil without a weighted norm).
	weights := func(heads int, base float32) []float32 {
		if p.NormKind == "" || p.NormKind == "l2" {
			return nil
		}
		n := hd
		if p.NormScope == "token" {
			n *= heads
		}
		w := make([]float32, n)
		for i := range w {
			w[i] = base + float32(i%5)/8
		}
		return w
	}
	qw, kw := weights(hq, 0.75), weights(hkv, 1.25)
	qs := Strides{Heads: hq, Head: hd, Token: row}
	kvs := Strides{Heads: hkv, Head: hd, Token: row}
	orig := slices.Clone(qkv)

	kc, vc := exampleCache(r, rows, hkv), exampleCache(r, rows, hkv)
	tab.Prep(Step{
		Q: qkv, QS: qs, QW: qw,
		K: qkv[hq*hd:], KS: kvs, KW: kw,
		V: qkv[(hq+hkv)*hd:], VS: kvs,
		KCache: kc, VCache: vc, Slots: slots,
	}, pos)

	// The separate calls.
	want := slices.Clone(orig)
	tab.ApplyNormQK(want, qs, qw, want[hq*hd:], kvs, kw, pos) // ApplyQK without a norm
	wkc, wvc := exampleCache(r, rows, hkv), exampleCache(r, rows, hkv)
	r.Store(wkc, slots, want[hq*hd:], kvs)
	r.Store(wvc, slots, orig[(hq+hkv)*hd:], kvs)

	same := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	queries := true
	for j := range 4 {
		o := j * row
		queries = queries && same(qkv[o:o+hq*hd], want[o:o+hq*hd]) && same(qkv[o+hq*hd:o+row], orig[o+hq*hd:o+row])
	}
	// Read both caches' rows back: the same bits.
	load := func(c Cache) []float32 {
		out := make([]float32, 4*hkv*hd)
		r.Load(out, Strides{Heads: hkv, Head: hd, Token: hkv * hd}, c, slots)
		return out
	}
	fmt.Println("queries as the separate calls leave them, keys and values untouched:", queries)
	fmt.Println("key cache as ApplyNormQK then Store:", same(load(kc), load(wkc)))
	fmt.Println("value cache as Store:", same(load(vc), load(wvc)))
	// Output:
	// queries as the separate calls leave them, keys and values untouched: true
	// key cache as ApplyNormQK then Store: true
	// value cache as Store: true
}
