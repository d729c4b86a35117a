package spec

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
)

// The softmax scale factor LoadHFConfigWith gives, against transformers'
// yarn_apply_mscale written apart (internal/hfref) with the config's
// numbers written out here, and as a literal where the issue states it.
func TestHFSoftmaxScale(t *testing.T) {
	const dsv3 = `{"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "max_position_embeddings": 163840, "rope_theta": 10000, "rope_scaling": %s}`
	inline := func(rs string) string { return strings.Replace(dsv3, "%s", rs, 1) }
	for _, c := range []struct {
		name, file, config string
		opt                HFOptions
		want               float64 // Spec.SoftmaxScale: 0 means none
	}{
		// DeepSeek-V3: factor 40, mscale_all_dim 1.
		{name: "deepseek-v3", file: "deepseek-v3.json", want: (0.1*math.Log(40) + 1) * (0.1*math.Log(40) + 1)},
		{name: "deepseek-v3 hfref", file: "deepseek-v3.json", want: hfref.YarnApplyMScale("yarn", 40, 1, 1)},
		{name: "kimi-k2", file: "kimi-k2-instruct-0905.json", want: hfref.YarnApplyMScale("yarn", 64, 1, 1)},
		{name: "deepseek-v2-lite", file: "deepseek-v2-lite.json", want: hfref.YarnApplyMScale("yarn", 40, 0.707, 1)},
		// Models whose attention scales by head_dim^−0.5 alone.
		{name: "llama-3.1", file: "llama-3.1-8b.json"},
		{name: "qwen2.5 yarn", file: "qwen2.5-7b-instruct-yarn.json"},
		{name: "ministral 3 (yarn, mscale_all_dim 1, not MLA)", file: "ministral-3-3b-instruct-2512.json"},
		// mscale_all_dim alone: the rotary embedding ignores it (A =
		// g(s, 1)), the attention does not.
		{name: "mscale_all_dim alone", config: inline(`{"type": "yarn", "factor": 40, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}`),
			want: hfref.YarnApplyMScale("yarn", 40, 1, 1)},
		{name: "mscale_all_dim 0", config: inline(`{"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 0, "original_max_position_embeddings": 4096}`)},
		{name: "no rope_scaling", config: inline(`null`)},
		{name: "factor 1", config: inline(`{"type": "yarn", "factor": 1, "mscale": 1, "mscale_all_dim": 1, "original_max_position_embeddings": 4096}`)},
		// The indexer scores with its own head_dim^−0.5.
		{name: "deepseek-v3.2 indexer", opt: HFOptions{Part: HFPartIndexer},
			config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`},
		{name: "deepseek-v3.2 MLA",
			config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			want: hfref.YarnApplyMScale("yarn", 40, 1, 1)},
	} {
		path := filepath.Join("testdata", "hf", c.file)
		if c.config != "" {
			path = filepath.Join(t.TempDir(), "config.json")
			must(t, os.WriteFile(path, []byte(c.config), 0o644))
		}
		s, _, err := LoadHFConfigWith(path, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !relClose(s.SoftmaxScale, c.want, 1e-15) && s.SoftmaxScale != c.want {
			t.Errorf("%s: SoftmaxScale %.17g, want %.17g", c.name, s.SoftmaxScale, c.want)
		}
		p, err := Resolve(s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := c.want
		if want == 0 {
			want = 1
		}
		if r := p.Runtime(); !relClose(r.SoftmaxScale, want, 1e-15) {
			t.Errorf("%s: Runtime.SoftmaxScale %.17g, want %.17g", c.name, r.SoftmaxScale, want)
		}
	}
}

// A softmax scale that is not finite and positive is refused, naming it.
func TestValidateSoftmaxScale(t *testing.T) {
	for _, f := range []float64{-1, math.Inf(1), math.NaN()} {
		s := DefaultSpec()
		s.SoftmaxScale = f
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), "-softmax-scale ") {
			t.Errorf("SoftmaxScale %v: %v, want a -softmax-scale error", f, err)
		}
	}
}

// DeepSeek's pairs and transformers' output: apply_rotary_pos_emb_interleave
// (DeepSeek-V3's attention when rope_interleave, the default) returns
// ropegen's interleaved rotation with the values permuted, the even ones
// first, then the odd ones; it equals de-interleaving then rotate_half
// (the form its docstring says it is bit-identical to); and q·k is the
// same, since q and k are permuted alike. Both sides are computed here:
// transformers' from internal/hfref's transcription, ropegen's from
// docs/contract.md §2 (pair i = (2i, 2i+1) turns by θ_i).
func TestMLAInterleavePermutation(t *testing.T) {
	s, err := LoadHFConfig(filepath.Join("testdata", "hf", "deepseek-v3.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	d := p.RotaryDim
	perm := make([]int, d) // transformers' value j is ropegen's value perm[j]
	for i := range d / 2 {
		perm[i], perm[d/2+i] = 2*i, 2*i+1
	}
	rng := rand.New(rand.NewPCG(24, 2))
	vec := func() []float64 {
		v := make([]float64, d)
		for j := range v {
			v[j] = rng.NormFloat64()
		}
		return v
	}
	ropegen := func(x []float64, pos float64) []float64 {
		out := make([]float64, d)
		for i := range d / 2 {
			th := pos * p.Freqs[i]
			c, sn := math.Cos(th)*p.Attn, math.Sin(th)*p.Attn
			a, b := x[2*i], x[2*i+1]
			out[2*i] = a*c - b*sn
			out[2*i+1] = b*c + a*sn
		}
		return out
	}
	for _, pos := range []float64{0, 1, 7, 4095, 163839} {
		angles := make([]float64, d/2)
		for i := range angles {
			angles[i] = pos * p.Freqs[i]
		}
		cos, sin := hfref.CatFreqs(angles, math.Cos), hfref.CatFreqs(angles, math.Sin)
		for j := range cos {
			cos[j], sin[j] = cos[j]*p.Attn, sin[j]*p.Attn // attention_scaling
		}
		q, k := vec(), vec()
		hq, hk := hfref.ApplyRotaryPosEmbInterleave(q, cos, sin), hfref.ApplyRotaryPosEmbInterleave(k, cos, sin)
		rq, rk := ropegen(q, pos), ropegen(k, pos)
		for j := range d {
			if hq[j] != rq[perm[j]] || hk[j] != rk[perm[j]] {
				t.Fatalf("position %v value %d: transformers q %v k %v, ropegen's value %d q %v k %v", pos, j, hq[j], hk[j], perm[j], rq[perm[j]], rk[perm[j]])
			}
		}
		if old := hfref.ApplyRotaryPosEmb(hfref.DeInterleave(q), cos, sin); !slices.Equal(old, hq) {
			t.Fatalf("position %v: de-interleave + rotate_half %v differs from apply_rotary_pos_emb_interleave %v", pos, old, hq)
		}
		// q·k: the same products, so the same sum in any one order.
		hp, rp := make([]float64, d), make([]float64, d)
		for j := range d {
			hp[j], rp[j] = hq[j]*hk[j], rq[j]*rk[j]
		}
		slices.Sort(hp)
		slices.Sort(rp)
		if !slices.Equal(hp, rp) {
			t.Fatalf("position %v: q·k's products differ", pos)
		}
		var hd, rd float64
		for j := range d {
			hd += hq[j] * hk[j]
			rd += rq[j] * rk[j]
		}
		if !relClose(hd, rd, 1e-12) {
			t.Fatalf("position %v: q·k %v (transformers) vs %v (ropegen)", pos, hd, rd)
		}
	}
}
