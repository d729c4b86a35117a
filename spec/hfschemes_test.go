package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
)

// The schemes of 2025–26 models ropegen has no publisher config.json for
// in testdata/hf, on configs written here from the transformers config
// classes' own defaults (the class named in each case, at HFSourceCommit),
// each checked against transformers' formula in internal/hfref.
func TestHFSchemes(t *testing.T) {
	for _, c := range []struct {
		name   string
		config string
		opt    HFOptions
		head   int
		rot    int
		base   float64
		layout Layout
		want   []float64 // θ_i; nil: checked per head value by angles
		angles string    // hfref per-value check: "ernie-vl", "glm4v", "glm4v-moe"
		secs   []int
		layers map[string]string
		notes  []string
	}{
		// HunYuanDenseV1RotaryEmbedding, rope_type "dynamic" with alpha
		// (Hunyuan-7B-Instruct's rope_scaling carries alpha 1000 and the
		// yarn keys beside it).
		{name: "HunYuan alpha", config: `{"model_type": "hunyuan_v1_dense", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 262144, "rope_theta": 10000.0,
			"rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}}`,
			head: 128, rot: 128, base: 10000, layout: NeoX, want: hfref.HunYuanAlphaInvFreq(10000, 1000, 128), notes: []string{"alpha 1000", "Differs from transformers"}},
		// ERNIE 4.5: rotate_half over x[..., 0::2] (Ernie4_5Config: rope_theta 500000).
		{name: "ERNIE 4.5", config: `{"model_type": "ernie4_5", "head_dim": 128, "hidden_size": 1024, "num_attention_heads": 16, "rope_theta": 500000.0}`,
			head: 128, rot: 128, base: 500000, layout: Interleaved, want: hfref.DefaultInvFreq(500000, 128, nil)},
		// ERNIE-4.5-VL: the text model's 3-D RoPE, mrope_section
		// [22, 22, 20] (its rotary embedding's default), interleaved pairs.
		{name: "ERNIE-4.5-VL", config: `{"model_type": "ernie4_5_vl_moe", "text_config": {"model_type": "ernie4_5_vl_moe_text", "head_dim": 128, "hidden_size": 2560, "num_attention_heads": 20, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}}`,
			head: 128, rot: 128, base: 500000, layout: Interleaved, angles: "ernie-vl", secs: []int{22, 22, 20}, notes: []string{"text_config"}},
		{name: "ERNIE-4.5-VL, given sections", config: `{"model_type": "ernie4_5_vl_moe_text", "head_dim": 64, "hidden_size": 2560, "num_attention_heads": 40, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [10, 10, 12]}}`,
			head: 64, rot: 64, base: 10000, layout: Interleaved, angles: "ernie-vl", secs: []int{10, 10, 12}},
		// GLM-4.1V: partial rotary 0.5, M-RoPE [8, 12, 12], interleaved
		// (Glm4vTextConfig, GLM-4.1V-9B-Thinking's text_config).
		{name: "GLM-4.1V", config: `{"model_type": "glm4v", "text_config": {"model_type": "glm4v_text", "hidden_size": 4096, "num_attention_heads": 32, "partial_rotary_factor": 0.5, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 12, 12]}}}`,
			head: 128, rot: 64, base: 10000, layout: Interleaved, angles: "glm4v", secs: []int{8, 12, 12}, notes: []string{"text_config"}},
		// GLM-4.5V: the same M-RoPE, rotate_half (Glm4vMoeTextConfig's
		// partial_rotary_factor default 0.5).
		{name: "GLM-4.5V", config: `{"model_type": "glm4v_moe", "text_config": {"model_type": "glm4v_moe_text", "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 96, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [8, 12, 12]}}}`,
			head: 128, rot: 64, base: 10000, layout: NeoX, angles: "glm4v-moe", secs: []int{8, 12, 12}, notes: []string{"text_config"}},
		// DeepSeek-V3.2: MLA interleaved on the last 64 of 192 values;
		// the indexer's 128-value heads turn their first 64 as neox pairs.
		{name: "DeepSeek-V3.2 MLA", config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			head: 64, rot: 64, base: 10000, layout: Interleaved, want: dsv32Freqs(), notes: []string{"MLA", "-hf-part indexer writes its package"}},
		{name: "DeepSeek-V3.2 indexer", opt: HFOptions{Part: HFPartIndexer}, config: `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "index_n_heads": 64, "max_position_embeddings": 163840, "rope_theta": 10000,
			"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`,
			head: 128, rot: 64, base: 10000, layout: NeoX, want: dsv32Freqs(), notes: []string{"FIRST qk_rope_head_dim = 64", "DeepseekV32Indexer"}},
		// GLM-5 (glm_moe_dsa): the indexer turns interleaved pairs too,
		// since transformers' "[glm-mode-dsa] Indexer uses interleaved rope".
		{name: "GLM-5 indexer", opt: HFOptions{Part: HFPartIndexer}, config: `{"model_type": "glm_moe_dsa", "hidden_size": 6144, "num_attention_heads": 64, "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "index_head_dim": 128, "index_n_heads": 32, "rope_interleave": true, "rope_parameters": {"rope_theta": 1000000, "rope_type": "default"}}`,
			head: 128, rot: 64, base: 1e6, layout: Interleaved, want: hfref.DefaultInvFreq(1e6, 64, nil), notes: []string{"GlmMoeDsaIndexer"}},
		// Qwen3-Next: full_attention every 4th layer (Qwen3NextConfig's
		// full_attention_interval 4 and partial_rotary_factor 0.25).
		{name: "Qwen3-Next", config: `{"model_type": "qwen3_next", "head_dim": 256, "hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 48, "rope_theta": 10000000}`,
			head: 256, rot: 64, base: 1e7, layout: NeoX, want: hfref.DefaultInvFreq(1e7, 64, nil),
			layers: map[string]string{"linear_attention": "nope", "full_attention": "rope*"}, notes: []string{"(12 of 48: 3, 7, 11, …, 47)"}},
		// MiMo-V2-Flash: per-layer-type rope_parameters, two bases.
		{name: "MiMo-V2-Flash", config: `{"model_type": "mimo_v2_flash", "head_dim": 192, "hidden_size": 4096, "num_attention_heads": 64, "num_hidden_layers": 12,
			"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5000000.0, "partial_rotary_factor": 0.334}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.334}}}`,
			head: 192, rot: 64, base: 5e6, layout: NeoX, want: hfref.DefaultInvFreq(5e6, 64, nil),
			layers: map[string]string{"full_attention": "rope*", "sliding_attention": "rope"}, notes: []string{"layers of type full_attention (3 of 12: 0, 5, 11)"}},
		{name: "MiMo-V2-Flash sliding", opt: HFOptions{LayerType: "sliding_attention"}, config: `{"model_type": "mimo_v2_flash", "head_dim": 192, "hidden_size": 4096, "num_attention_heads": 64, "num_hidden_layers": 12,
			"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5000000.0, "partial_rotary_factor": 0.334}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.334}}}`,
			head: 192, rot: 64, base: 1e4, layout: NeoX, want: hfref.DefaultInvFreq(1e4, 64, nil),
			layers: map[string]string{"full_attention": "rope", "sliding_attention": "rope*"}},
		// Without rope_parameters, MiMoV2FlashConfig's own (5e6 and 1e4,
		// partial 0.334), whatever rope_theta says.
		{name: "MiMo-V2-Flash class defaults", config: `{"model_type": "mimo_v2_flash", "head_dim": 192, "hidden_size": 4096, "num_attention_heads": 64, "num_hidden_layers": 12, "rope_theta": 123456}`,
			head: 192, rot: 64, base: 5e6, layout: NeoX, want: hfref.DefaultInvFreq(5e6, 64, nil),
			layers: map[string]string{"full_attention": "rope*", "sliding_attention": "rope"}},
		// Gemma 4 without rope_parameters: Gemma4TextConfig's defaults,
		// proportional 0.25 of global_head_dim 512 (its default).
		{name: "Gemma 4 class defaults", config: `{"model_type": "gemma4_text", "head_dim": 256, "hidden_size": 2304, "num_attention_heads": 8, "num_hidden_layers": 12}`,
			head: 512, rot: 512, base: 1e6, layout: NeoX, want: func() []float64 {
				w, _, _ := hfref.Reference(hfref.Rope{Dim: 512, Base: 1e6, RopeType: "proportional", Partial: 0.25})
				return w
			}(),
			layers: map[string]string{"full_attention": "rope*", "sliding_attention": "rope"}},
		// Proportional RoPE named by the older "type" key, as by rope_type.
		{name: "proportional under the type key", config: `{"model_type": "llama", "head_dim": 512, "hidden_size": 4096, "num_attention_heads": 8, "rope_scaling": {"type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000}}`,
			head: 512, rot: 512, base: 1e6, layout: NeoX, want: func() []float64 {
				w, _, _ := hfref.Reference(hfref.Rope{Dim: 512, Base: 1e6, RopeType: "proportional", Partial: 0.25})
				return w
			}()},
		// Granite 4 hybrid: Mamba layers, and attention layers with RoPE
		// only for position_embedding_type "rope".
		{name: "Granite 4 with rope", config: `{"model_type": "granitemoehybrid", "hidden_size": 1536, "num_attention_heads": 12, "layer_types": ["mamba", "mamba", "attention"], "position_embedding_type": "rope", "rope_theta": 10000}`,
			head: 128, rot: 128, base: 1e4, layout: NeoX, want: hfref.DefaultInvFreq(1e4, 128, nil),
			layers: map[string]string{"linear_attention": "nope", "full_attention": "rope*"}},
		// SmolLM3: every 4th layer NoPE (SmolLM3Config's no_rope_layer_interval).
		{name: "SmolLM3", config: `{"model_type": "smollm3", "hidden_size": 2048, "num_attention_heads": 16, "num_hidden_layers": 36, "rope_theta": 5000000.0}`,
			head: 128, rot: 128, base: 5e6, layout: NeoX, want: hfref.DefaultInvFreq(5e6, 128, nil), notes: []string{"(i+1) mod 4 = 0", "SmolLM3Config's default no_rope_layer_interval 4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			must(t, os.WriteFile(path, []byte(c.config), 0o644))
			s, info, err := LoadHFConfigWith(path, c.opt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Resolve(s)
			if err != nil {
				t.Fatal(err)
			}
			if p.HeadDim != c.head || p.RotaryDim != c.rot || s.Base != c.base || s.Layout != c.layout {
				t.Fatalf("head %d, rotary %d, base %v, layout %s; want %d, %d, %v, %s", p.HeadDim, p.RotaryDim, s.Base, s.Layout, c.head, c.rot, c.base, c.layout)
			}
			for i, w := range hfref.Pairs(string(c.layout), c.rot) {
				if a, b := p.Pair(i); a != w[0] || b != w[1] {
					t.Fatalf("pair %d is (%d, %d), want %v", i, a, b, w)
				}
			}
			if c.angles != "" {
				checkHFAngles(t, p, c.angles, c.secs)
			} else {
				compareFreqs(t, "freqs", p.Freqs, c.want)
				if p.Axes != 1 {
					t.Errorf("axes %d, want 1-D", p.Axes)
				}
			}
			checkHFLayers(t, info.Layers, c.layers)
			notes := strings.Join(info.Notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q do not say %q", info.Notes, n)
				}
			}
		})
	}
}

// dsv32Freqs is DeepSeek-V3.2's YaRN over qk_rope_head_dim 64.
func dsv32Freqs() []float64 {
	w, _, _ := hfref.Reference(hfref.Rope{Dim: 64, Base: 10000, RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true})
	return w
}

// DeepSeek-V3.2's MLA and indexer packages share their frequencies, as
// transformers hands both the one rotary embedding's cos and sin.
func TestHFIndexerFrequencies(t *testing.T) {
	cfg := `{"model_type": "deepseek_v32", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "index_head_dim": 128, "max_position_embeddings": 163840, "rope_theta": 10000,
		"rope_scaling": {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096, "type": "yarn"}}`
	_, path, err := loadInline(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, _, wantAttn := hfref.Reference(hfref.Rope{Dim: 64, Base: 10000, RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true})
	for _, part := range []string{"", HFPartIndexer} {
		s, _, err := LoadHFConfigWith(path, HFOptions{Part: part})
		if err != nil {
			t.Fatal(err)
		}
		p, err := Resolve(s)
		if err != nil {
			t.Fatal(err)
		}
		compareFreqs(t, fmt.Sprintf("part %q", part), p.Freqs, want)
		if !relClose(p.Attn, wantAttn, refTol) {
			t.Errorf("part %q: attention factor %v, want %v", part, p.Attn, wantAttn)
		}
	}
}
