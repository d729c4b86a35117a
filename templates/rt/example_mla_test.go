package rt

import (
	"fmt"
	"math"
	"slices"
)

// Multi-head latent attention (MLA, DeepSeek-V2 and V3) caches two things
// per token: k_rot, one rotary key head that every query head shares, and
// c_kv, the compressed latent the keys' other part and the values are
// projected up from. Prep stores them in one call: k_rot as the key, turned
// into the key cache, and the latent as the value, stored as it is (as
// HeadDim-wide "heads"), while the rotary part of every query head, which
// follows its q_nope part, turns in place. The package's HeadDim is MLA's
// qk_rope_head_dim (64 for DeepSeek-V3); MLA normalizes neither part, so
// the model here has no QK-norm. The engine computes the scores from there:
// q_nope against the latent projected by W_UK, plus q_rope · k_rot, scaled
// by Params.SoftmaxScale over the square root of qk_nope_head_dim +
// qk_rope_head_dim.
func ExampleTable_Prep_mla() {
	p := Default().Params()
	p.NormKind, p.NormScope, p.NormAfter = "", "", false // MLA has no QK-norm
	r, err := New(p)
	if err != nil {
		panic(err)
	}
	rope := p.HeadDim  // qk_rope_head_dim
	nope := 2 * rope   // qk_nope_head_dim (128 for DeepSeek-V3)
	latent := 8 * rope // kv_lora_rank (512 for DeepSeek-V3)
	const heads, rows = 16, 8
	tab := r.NewTable(4096)
	pos := examplePos(r, 200, 201, 202)
	slots := []int64{5, 6, 7} // the tokens' rows of the caches
	tokens := len(slots)

	// q: per token, per head, q_nope then q_rope; kv: per token, c_kv then
	// k_rot, as DeepSeek's kv_a_proj_with_mqa gives them.
	q := make([]float32, tokens*heads*(nope+rope))
	kv := make([]float32, tokens*(latent+rope))
	for i := range q {
		q[i] = float32(i%11) - 5 + 0.25
	}
	for i := range kv {
		kv[i] = float32(i%13) - 6 + 0.5
	}
	q0, kv0 := slices.Clone(q), slices.Clone(kv)
	qs := Strides{Heads: heads, Head: nope + rope, Token: heads * (nope + rope)}
	ks := Strides{Heads: 1, Head: rope, Token: latent + rope}
	vs := Strides{Heads: latent / rope, Head: rope, Token: latent + rope}

	kc, vc := exampleCache(r, rows, 1), exampleCache(r, rows, latent/rope)
	tab.Prep(Step{
		Q: q[nope:], QS: qs, // the q_rope parts
		K: kv[latent:], KS: ks, // k_rot: the key
		V: kv, VS: vs, // c_kv: the value
		KCache: kc, VCache: vc, Slots: slots,
	}, pos)

	// The separate calls: the q_rope parts and a copy of k_rot turned, then
	// stored; the latent stored.
	wantQ, krot := slices.Clone(q0), slices.Clone(kv0)
	tab.ApplyQK(wantQ[nope:], qs, krot[latent:], ks, pos)
	wkc, wvc := exampleCache(r, rows, 1), exampleCache(r, rows, latent/rope)
	r.Store(wkc, slots, krot[latent:], ks)
	r.Store(wvc, slots, kv0, vs)

	same := func(a, b []float32) bool {
		return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
	}
	load := func(c Cache, h int) []float32 {
		out := make([]float32, tokens*h*rope)
		r.Load(out, Strides{Heads: h, Head: rope, Token: h * rope}, c, slots)
		return out
	}
	fmt.Println("q_rope turned, q_nope untouched:", same(q, wantQ))
	fmt.Println("c_kv and k_rot untouched:", same(kv, kv0))
	fmt.Println("key cache holds k_rot turned:", same(load(kc, 1), load(wkc, 1)))
	fmt.Println("value cache holds c_kv:", same(load(vc, latent/rope), load(wvc, latent/rope)))
	// Output:
	// q_rope turned, q_nope untouched: true
	// c_kv and k_rot untouched: true
	// key cache holds k_rot turned: true
	// value cache holds c_kv: true
}
