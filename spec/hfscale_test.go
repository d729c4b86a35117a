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

// The q·k scale LoadHFConfigWith gives (Spec.QKScale, and Runtime.QKScale
// with its default), against each attention class's self.scaling in
// transformers written out here with the configs' numbers: yarn_apply_mscale
// through internal/hfref's transcription, the others as formulas.
func TestHFQKScale(t *testing.T) {
	const dsv3 = `{"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "max_position_embeddings": 163840, "rope_theta": 10000, "rope_scaling": %s}`
	inline := func(rs string) string { return strings.Replace(dsv3, "%s", rs, 1) }
	mla := 1 / math.Sqrt(128+64) // qk_head_dim**-0.5 of DeepSeek-V2/V3 and Kimi K2
	for _, c := range []struct {
		name, file, config string
		opt                HFOptions
		want               float64 // Spec.QKScale: 0 means head_dim^−0.5
		runtime            float64 // Runtime.QKScale
	}{
		// DeepSeek-V3: factor 40, mscale_all_dim 1.
		{name: "deepseek-v3", file: "deepseek-v3.json", want: mla * (0.1*math.Log(40) + 1) * (0.1*math.Log(40) + 1)},
		{name: "deepseek-v3 hfref", file: "deepseek-v3.json", want: hfref.YarnApplyMScale("yarn", 40, 1, mla)},
		{name: "kimi-k2", file: "kimi-k2-instruct-0905.json", want: hfref.YarnApplyMScale("yarn", 64, 1, mla)},
		{name: "deepseek-v2-lite", file: "deepseek-v2-lite.json", want: hfref.YarnApplyMScale("yarn", 40, 0.707, mla)},
		// Attention classes that scale by head_dim**-0.5.
		{name: "llama-3.1", file: "llama-3.1-8b.json", runtime: 1 / math.Sqrt(128)},
		{name: "qwen2.5 yarn", file: "qwen2.5-7b-instruct-yarn.json", runtime: 1 / math.Sqrt(128)},
		{name: "ministral 3 (yarn, mscale_all_dim 1, not MLA)", file: "ministral-3-3b-instruct-2512.json", runtime: 1 / math.Sqrt(128)},
		{name: "gpt-neox (head_size)", file: "gpt-neox-20b.json", runtime: 1 / math.Sqrt(96)},
		{name: "nemotron-nas (as llama)", file: "llama-3.3-nemotron-super-49b-v1.json", runtime: 1 / math.Sqrt(128)},
		// Gemma 2 and 3: query_pre_attn_scalar**-0.5, 256 when the config
		// leaves it to the class; Gemma 2 27B's 144 is not its head dim.
		// (When that is 1/sqrt(head_dim) too, Spec.QKScale is 0.)
		{name: "gemma-2-9b", file: "gemma-2-9b.json", runtime: 1 / math.Sqrt(256)},
		{name: "gemma-3-4b", file: "gemma-3-4b-it.json", runtime: 1 / math.Sqrt(256)},
		{name: "gemma-3-4b local", file: "gemma-3-4b-it.json", opt: HFOptions{Local: true}, runtime: 1 / math.Sqrt(256)},
		{name: "gemma2 head_dim 128", config: `{"model_type": "gemma2", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32}`, want: 1 / math.Sqrt(256)},
		{name: "gemma2 query_pre_attn_scalar 144", config: `{"model_type": "gemma2", "head_dim": 128, "hidden_size": 4608, "num_attention_heads": 32, "query_pre_attn_scalar": 144}`, want: 1 / math.Sqrt(144)},
		// Step 3.5: query_pre_attn_scalar, the head dim when absent.
		{name: "step3p5 default", config: `{"model_type": "step3p5", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 64}`, runtime: 1 / math.Sqrt(128)},
		{name: "step3p5", config: `{"model_type": "step3p5", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 64, "query_pre_attn_scalar": 96}`, want: 1 / math.Sqrt(96)},
		// Gemma 4: q and k normalized, self.scaling = 1.0.
		{name: "gemma-4-31b", file: "gemma-4-31b-it.json", want: 1},
		// Granite: attention_multiplier (1.0 by default); HyperCLOVA X's
		// default is head_dim**-0.5.
		{name: "granite", config: `{"model_type": "granite", "hidden_size": 4096, "num_attention_heads": 32, "attention_multiplier": 0.0078125}`, want: 0.0078125},
		{name: "granite default", config: `{"model_type": "granite", "hidden_size": 4096, "num_attention_heads": 32}`, want: 1},
		{name: "hyperclovax default", config: `{"model_type": "hyperclovax", "hidden_size": 4096, "num_attention_heads": 32}`, runtime: 1 / math.Sqrt(128)},
		// Zamba2: (head_dim/2)**-0.5.
		{name: "zamba2", config: `{"model_type": "zamba2", "hidden_size": 2560, "num_attention_heads": 32, "head_dim": 160}`, want: 1 / math.Sqrt(80)},
		// MLA without yarn's mscale: qk_head_dim**-0.5 alone.
		{name: "mscale_all_dim alone", config: inline(`{"type": "yarn", "factor": 40, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096}`),
			want: hfref.YarnApplyMScale("yarn", 40, 1, mla)},
		{name: "mscale_all_dim 0", config: inline(`{"type": "yarn", "factor": 40, "mscale": 1.0, "mscale_all_dim": 0, "original_max_position_embeddings": 4096}`), want: mla},
		{name: "no rope_scaling", config: inline(`null`), want: mla},
		{name: "factor 1", config: inline(`{"type": "yarn", "factor": 1, "mscale": 1, "mscale_all_dim": 1, "original_max_position_embeddings": 4096}`), want: mla},
		// DeepseekV3Config's default qk_nope_head_dim, 128.
		{name: "qk_nope_head_dim default", config: `{"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "rope_theta": 10000}`, want: mla},
		// The indexer scores with its own head_dim^−0.5 (index_head_dim).
		{name: "deepseek-v3.2 indexer", opt: HFOptions{Part: HFPartIndexer},
			config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			runtime: 1 / math.Sqrt(128)},
		{name: "deepseek-v3.2 MLA",
			config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			want: hfref.YarnApplyMScale("yarn", 40, 1, mla)},
	} {
		path := filepath.Join("testdata", "hf", c.file)
		if c.config != "" {
			path = filepath.Join(t.TempDir(), "config.json")
			must(t, os.WriteFile(path, []byte(c.config), 0o644))
		}
		s, info, err := LoadHFConfigWith(path, c.opt)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !relClose(s.QKScale, c.want, 1e-15) {
			t.Errorf("%s: QKScale %.17g, want %.17g", c.name, s.QKScale, c.want)
		}
		p, err := Resolve(s)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := c.want
		if want == 0 {
			want = c.runtime
		}
		if r := p.Runtime(); !relClose(r.QKScale, want, 1e-15) {
			t.Errorf("%s: Runtime.QKScale %.17g, want %.17g", c.name, r.QKScale, want)
		}
		if note := strings.Contains(strings.Join(info.Notes, "\n"), "q·k scale: "); note != (c.want != 0) {
			t.Errorf("%s: a q·k scale note: %v, want %v (%q)", c.name, note, c.want != 0, info.Notes)
		}
	}
}

// A q·k scale that is not finite and positive is refused, naming it; so is
// a null attention_multiplier, whose scale transformers leaves to the
// attention function.
func TestValidateQKScale(t *testing.T) {
	for _, f := range []float64{-1, math.Inf(1), math.NaN()} {
		s := DefaultSpec()
		s.QKScale = f
		if err := s.Validate(); err == nil || !strings.HasPrefix(err.Error(), "-qk-scale ") {
			t.Errorf("QKScale %v: %v, want a -qk-scale error", f, err)
		}
	}
	for _, c := range []struct{ config, want string }{
		{`{"model_type": "granite", "hidden_size": 4096, "num_attention_heads": 32, "attention_multiplier": null}`, "attention_multiplier: null"},
		{`{"model_type": "granite", "hidden_size": 4096, "num_attention_heads": 32, "attention_multiplier": -1}`, "attention_multiplier: want a number > 0"},
		{`{"model_type": "gemma2", "hidden_size": 4096, "num_attention_heads": 32, "query_pre_attn_scalar": 0}`, "query_pre_attn_scalar: want a number > 0"},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		must(t, os.WriteFile(path, []byte(c.config), 0o644))
		if _, err := LoadHFConfig(path); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.config, err, c.want)
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
