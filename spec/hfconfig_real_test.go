package spec

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"github.com/ropegen/ropegen/templates/exact"
)

// realCase is a published config in testdata/hf with what Hugging Face
// builds from it, written out by hand from the config and the model's
// transformers code (not from LoadHFConfigWith): the head and rotary dims,
// the base, the pair layout of the family's reference implementation, the
// RoPE parameters for hfReference, and M-RoPE's sections.
type realCase struct {
	file    string
	local   bool      // HFOptions.Local: the local layers' RoPE
	opt     HFOptions // other options (LayerType, Part)
	headDim int
	rotary  int
	base    float64
	layout  Layout     // the family's pairing: Interleaved (2i, 2i+1) or NeoX (i, i+R/2)
	rope    hfref.Rope // dim and base are filled in from above
	// M-RoPE: "" for 1-D, else "sections" (Qwen2.5-VL's
	// apply_multimodal_rotary_pos_emb) or "interleaved" (Qwen3-VL's
	// apply_interleaved_mrope).
	mrope    string
	sections []int
	dynamic  bool // rope_type dynamic: factor and L = max_position_embeddings in rope
	notes    []string
	// layers: each layer type and whether it has RoPE ("rope", "nope"),
	// "*" marking the chosen one; nil for a model with one layer type.
	layers map[string]string
	// angles: a scheme whose pairs, axes and frequencies are checked per
	// head value against transformers' own cos/sin layout (hfref):
	// "pixtral", "ernie-vl", "glm4v" (interleaved), "glm4v-moe" (neox).
	angles string
	// alpha: HunYuan's dynamic NTK with alpha (rope_scaling alpha), whose
	// frequencies are hfref.HunYuanAlphaInvFreq's; rope is then unused.
	alpha float64
}

// realCases are the configs of testdata/hf that hfCases (freq_test.go)
// does not already cover. Their sources are in testdata/hf/README.md.
var realCases = []realCase{
	{file: "llama-3.2-1b.json", headDim: 64, rotary: 64, base: 500000, layout: NeoX,
		rope: hfref.Rope{RopeType: "llama3", Factor: 32, LowFreq: 1, HighFreq: 4, OrigMax: 8192}},
	// Llama 4: equal low and high factors, complex (interleaved) rotation.
	{file: "llama-4-scout-17b-16e-instruct.json", headDim: 128, rotary: 128, base: 500000, layout: Interleaved,
		rope: hfref.Rope{RopeType: "llama3", Factor: 16, LowFreq: 1, HighFreq: 1, OrigMax: 8192}, notes: []string{"text_config", "(i+1) mod 4 = 0 (layers 3, 7, 11, …; Llama4TextConfig's default"}},
	{file: "qwen3-0.6b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-8b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen2.5-vl-7b-instruct.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		mrope: "sections", sections: []int{16, 24, 24}},
	{file: "qwen3-vl-8b-instruct.json", headDim: 128, rotary: 128, base: 5e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		mrope: "interleaved", sections: []int{24, 20, 20}, notes: []string{"text_config"}},
	{file: "mistral-nemo-instruct-2407.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "phi-4.json", headDim: 128, rotary: 128, base: 250000, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "gemma-2-9b.json", headDim: 256, rotary: 256, base: 10000, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	// Gemma 3: Gemma3TextConfig's defaults (head_dim 256, rope_theta 1e6,
	// rope_local_base_freq 1e4); global layers linear ×8, local default.
	{file: "gemma-3-4b-it.json", headDim: 256, rotary: 256, base: 1e6, layout: NeoX,
		rope: hfref.Rope{RopeType: "linear", Factor: 8}, layers: map[string]string{"sliding_attention": "rope", "full_attention": "rope*"},
		notes: []string{"layers of type full_attention (5 of 34: 5, 11, 17, 23, 29): head 256, rotary 256, base 1e+06, linear factor 8 — this package", "layers of type sliding_attention (29 of 34: 0–4, 6–10, 12–16, 18–22, 24–28, 30–33): head 256, rotary 256, base 10000, no scaling — -layer-type sliding_attention writes its package"}},
	{file: "gemma-3-4b-it.json", local: true, headDim: 256, rotary: 256, base: 1e4, layout: NeoX,
		rope: hfref.Rope{RopeType: "default"}, layers: map[string]string{"sliding_attention": "rope*", "full_attention": "rope"}, notes: []string{"sliding_attention (29 of 34: 0–4, 6–10, 12–16, 18–22, 24–28, 30–33): head 256, rotary 256, base 10000, no scaling — this package", "linear factor 8 — -layer-type full_attention writes its package"}},
	// MLA: the rotary part, qk_rope_head_dim values, interleaved.
	{file: "deepseek-v3.json", headDim: 64, rotary: 64, base: 10000, layout: Interleaved,
		rope:  hfref.Rope{RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true},
		notes: []string{"MLA", "LAST qk_rope_head_dim = 64", "128 + qk_rope_head_dim 64 = 192"}},
	{file: "deepseek-v2-lite.json", headDim: 64, rotary: 64, base: 10000, layout: Interleaved,
		rope:  hfref.Rope{RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 0.707, MScaleAllDim: 0.707, Truncate: true},
		notes: []string{"MLA"}},
	{file: "kimi-k2-instruct-0905.json", headDim: 64, rotary: 64, base: 50000, layout: Interleaved,
		rope:  hfref.Rope{RopeType: "yarn", Factor: 64, OrigMax: 4096, BetaFast: 1, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true},
		notes: []string{"MLA"}},
	{file: "internlm2.5-7b-chat.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope: hfref.Rope{RopeType: "default", Factor: 2, MaxPos: 32768}, dynamic: true},
	// GLM: partial_rotary_factor 0.5, interleaved on the first half.
	{file: "glm-4-9b-chat-hf.json", headDim: 128, rotary: 64, base: 10000, layout: Interleaved, rope: hfref.Rope{RopeType: "default"}},
	{file: "c4ai-command-r-v01.json", headDim: 128, rotary: 128, base: 8e6, layout: Interleaved, rope: hfref.Rope{RopeType: "default"}},
	{file: "olmo-2-1124-7b.json", headDim: 128, rotary: 128, base: 500000, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "smollm2-1.7b.json", headDim: 64, rotary: 64, base: 130000, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},

	// Models of 2025–26 (testdata/hf/README.md).
	// EXAONE 4: llama3 scaling on the sliding layers; the global layers
	// have no RoPE (Exaone4Attention: RoPE only if the layer is sliding).
	{file: "exaone-4.0-32b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope:   hfref.Rope{RopeType: "llama3", Factor: 16, LowFreq: 1, HighFreq: 4, OrigMax: 8192},
		layers: map[string]string{"sliding_attention": "rope*", "full_attention": "nope"}, notes: []string{"EXAONE 4's global layers", "this package is the sliding_attention layers' RoPE"}},
	{file: "exaone-4.5-33b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope:   hfref.Rope{RopeType: "llama3", Factor: 16, LowFreq: 1, HighFreq: 4, OrigMax: 8192},
		layers: map[string]string{"sliding_attention": "rope*", "full_attention": "nope"}, notes: []string{"text_config", `its attention is model_type "exaone4_5"'s`}},
	// OLMo 3: YaRN (given attention factor) on the full-attention layers;
	// the sliding ones keep base 500000 unscaled.
	{file: "olmo-3.1-32b-instruct.json", headDim: 128, rotary: 128, base: 500000, layout: NeoX,
		rope:   hfref.Rope{RopeType: "yarn", Factor: 8, OrigMax: 8192, AttnFactor: 1.2079441541679836, BetaFast: 32, BetaSlow: 1, Truncate: true},
		layers: map[string]string{"sliding_attention": "rope", "full_attention": "rope*"}, notes: []string{"-layer-type sliding_attention writes its package"}},
	{file: "olmo-3.1-32b-instruct.json", local: true, headDim: 128, rotary: 128, base: 500000, layout: NeoX,
		rope:   hfref.Rope{RopeType: "default"},
		layers: map[string]string{"sliding_attention": "rope*", "full_attention": "rope"}, notes: []string{"this package is the sliding_attention layers' RoPE"}},
	// Qwen3.5: Gated DeltaNet layers without RoPE, full-attention layers
	// with interleaved M-RoPE on a quarter of the head.
	{file: "qwen3.5-9b.json", headDim: 256, rotary: 64, base: 1e7, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		mrope: "interleaved", sections: []int{11, 11, 10}, layers: map[string]string{"linear_attention": "nope", "full_attention": "rope*"}, notes: []string{"text_config"}},
	{file: "qwen3.5-27b.json", headDim: 256, rotary: 64, base: 1e7, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		mrope: "interleaved", sections: []int{11, 11, 10}, layers: map[string]string{"linear_attention": "nope", "full_attention": "rope*"}, notes: []string{"text_config"}},
	// Ministral 3 (Devstral Small 2's text model): YaRN with mscale =
	// mscale_all_dim, so A = 1; llama_4_scaling_beta is noted, not applied.
	{file: "devstral-small-2-24b-instruct-2512.json", headDim: 128, rotary: 128, base: 1e8, layout: NeoX,
		rope:  hfref.Rope{RopeType: "yarn", Factor: 48, OrigMax: 8192, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true},
		notes: []string{"text_config", "1 + 0.1·ln(1 + floor(p/8192))", "This package does not"}},
	// Its vision encoder: Pixtral's 2-D RoPE.
	{file: "devstral-small-2-24b-instruct-2512.json", opt: HFOptions{Part: HFPartVision}, headDim: 64, rotary: 64, base: 10000, layout: NeoX,
		rope: hfref.Rope{RopeType: "default"}, angles: "pixtral", notes: []string{"vision encoder (-hf-part vision)"}},
	// mscale_all_dim 0: transformers ignores mscale; A = 0.1·ln 64 + 1.
	{file: "devstral-2-123b-instruct-2512.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope: hfref.Rope{RopeType: "yarn", Factor: 64, OrigMax: 4096, BetaFast: 4, BetaSlow: 1, Truncate: true}},
	{file: "ministral-3-3b-instruct-2512.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope:  hfref.Rope{RopeType: "yarn", Factor: 16, OrigMax: 16384, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true},
		notes: []string{"text_config", "floor(p/16384)"}},
	{file: "ministral-3-3b-instruct-2512.json", opt: HFOptions{Part: HFPartVision}, headDim: 64, rotary: 64, base: 10000, layout: NeoX,
		rope: hfref.Rope{RopeType: "default"}, angles: "pixtral", notes: []string{"vision encoder"}},
	// LFM2.5: short-convolution blocks without RoPE.
	{file: "lfm2.5-vl-1.6b.json", headDim: 64, rotary: 64, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		layers: map[string]string{"linear_attention": "nope", "full_attention": "rope*"}, notes: []string{"text_config"}},
	{file: "voxtral-mini-3b-2507.json", headDim: 128, rotary: 128, base: 1e8, layout: NeoX, rope: hfref.Rope{RopeType: "default"}, notes: []string{"text_config"}},
	{file: "qwen3-8b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-32b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-1.7b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-embedding-0.6b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-embedding-4b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "qwen3-embedding-8b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	{file: "olmocr-2-7b-1025.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		mrope: "sections", sections: []int{16, 24, 24}, notes: []string{"text_config"}},
	{file: "olmo-2-0325-32b.json", headDim: 128, rotary: 128, base: 500000, layout: NeoX, rope: hfref.Rope{RopeType: "default"}},
	// Publishers' configs of remote-code model types, read as the
	// transformers type their architectures name. HunYuan-A13B:
	// HunYuanMoEV1ForCausalLM → hunyuan_v1_moe, rotate_half, dynamic NTK
	// with alpha 1000 (HunYuanMoEV1RotaryEmbedding: rope_theta·alpha^(d/(d−2))).
	{file: "hunyuan-a13b-instruct.json", headDim: 128, rotary: 128, base: 10000, layout: NeoX, alpha: 1000,
		notes: []string{`model_type "hunyuan" is remote code`, `HunYuanMoEV1ForCausalLM is transformers' class of model type "hunyuan_v1_moe"`, "alpha 1000", "qk-norm: rms over each head, after the rotation, ε 1e-05 (rms_norm_eps)"}},
	// Llama-3.3-Nemotron-Super-49B-v1: nemotron-nas, which vLLM runs
	// with Llama's RoPE (hfAliases): Llama 3.3's θ 500000 and llama3
	// scaling ×8 on heads of 8192/64 = 128.
	{file: "llama-3.3-nemotron-super-49b-v1.json", headDim: 128, rotary: 128, base: 500000, layout: NeoX,
		rope:  hfref.Rope{RopeType: "llama3", Factor: 8, LowFreq: 1, HighFreq: 4, OrigMax: 8192},
		notes: []string{`model_type "nemotron-nas" is remote code`, `read as model_type "llama"`, "nemotron_nas.py"}},
	// ERNIE-4.5-VL: Ernie4_5_VLMoeForConditionalGeneration →
	// ernie4_5_vl_moe, whose text config is the flat file's top level
	// (Ernie4_5_VLMoeConfig.__post_init__: text_config from the kwargs)
	// and whose rotary embedding takes mrope_section [22, 22, 20] by
	// default; rope_theta from the file.
	{file: "ernie-4.5-vl-28b-a3b-pt.json", headDim: 128, rotary: 128, base: 500000, layout: Interleaved, rope: hfref.Rope{RopeType: "default"},
		angles: "ernie-vl", sections: []int{22, 22, 20}, notes: []string{`model_type "ernie4_5_moe_vl" is remote code`, `model type "ernie4_5_vl_moe"`, "freq_allocation 20"}},
	// Gemma 3 1B: rope_local_base_freq 1e4 for the sliding layers (5 of
	// every 6, sliding_window_pattern 6), 1e6 for the global ones.
	{file: "gemma-3-1b-it.json", headDim: 256, rotary: 256, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		layers: map[string]string{"sliding_attention": "rope", "full_attention": "rope*"}},
	{file: "gemma-3-1b-it.json", local: true, headDim: 256, rotary: 256, base: 1e4, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		layers: map[string]string{"sliding_attention": "rope*", "full_attention": "rope"}, notes: []string{"this package is the sliding_attention layers' RoPE"}},
	// Gemma 4: proportional RoPE on the global layers' 512-value heads
	// (global_head_dim), default RoPE on the sliding layers' 256.
	{file: "gemma-4-31b-it.json", headDim: 512, rotary: 512, base: 1e6, layout: NeoX, rope: hfref.Rope{RopeType: "proportional", Partial: 0.25},
		layers: map[string]string{"sliding_attention": "rope", "full_attention": "rope*"}, notes: []string{"text_config", "only pairs 0…63"}},
	{file: "gemma-4-31b-it.json", opt: HFOptions{LayerType: "sliding_attention"}, headDim: 256, rotary: 256, base: 1e4, layout: NeoX, rope: hfref.Rope{RopeType: "default"},
		layers: map[string]string{"sliding_attention": "rope*", "full_attention": "rope"}, notes: []string{"text_config"}},
}

func TestHFConfigsReal(t *testing.T) {
	for _, c := range realCases {
		name := c.file
		if c.local {
			name += "/local"
		}
		if c.opt != (HFOptions{}) {
			name += fmt.Sprintf("/%s%s", c.opt.LayerType, c.opt.Part)
		}
		t.Run(name, func(t *testing.T) {
			opt := c.opt
			opt.Local = c.local
			s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), opt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Resolve(s)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if p.HeadDim != c.headDim || p.RotaryDim != c.rotary {
				t.Fatalf("head dim %d, rotary dim %d; want %d, %d", p.HeadDim, p.RotaryDim, c.headDim, c.rotary)
			}
			if s.Base != c.base {
				t.Errorf("base %v, want %v", s.Base, c.base)
			}
			for i, want := range hfref.Pairs(string(c.layout), c.rotary) {
				if a, b := p.Pair(i); a != want[0] || b != want[1] {
					t.Fatalf("pair %d is (%d, %d), want (%d, %d) (%s)", i, a, b, want[0], want[1], c.layout)
				}
			}
			r := c.rope
			r.Dim, r.Base = c.rotary, c.base
			var want []float64
			wantAttn := 1.0
			if c.dynamic {
				if s.Scaling.Type != ScalingDynamic || s.Scaling.Factor != r.Factor || s.Scaling.OrigCtx != r.MaxPos {
					t.Fatalf("scaling %+v, want dynamic factor %v, L %d", s.Scaling, r.Factor, r.MaxPos)
				}
				// A table of at most L positions: the default frequencies;
				// longer ones: the base for their length.
				want = hfref.DynamicNTKInvFreq(r.Base, r.Dim, r.Factor, r.MaxPos, r.MaxPos)
				for _, n := range []int{r.MaxPos + 1, 2 * r.MaxPos, 1 << 20} {
					got := make([]float64, r.Dim/2)
					exact.DynamicFreqs(got, s.Base, s.Scaling.Factor, s.Scaling.OrigCtx, p.RotaryDim, n)
					compareFreqs(t, fmt.Sprintf("dynamic n=%d", n), got, hfref.DynamicNTKInvFreq(r.Base, r.Dim, r.Factor, r.MaxPos, n))
				}
			} else if c.alpha != 0 {
				want = hfref.HunYuanAlphaInvFreq(c.base, c.alpha, c.rotary)
			} else {
				var long []float64
				want, long, wantAttn = hfref.Reference(r)
				if long != nil {
					t.Fatal("no longrope config here")
				}
			}
			if !relClose(p.Attn, wantAttn, refTol) {
				t.Errorf("attention factor %.17g, Hugging Face %.17g", p.Attn, wantAttn)
			}
			if c.angles == "" { // else checked per head value below
				compareFreqs(t, "freqs", p.Freqs, want)
				for _, pos := range []float64{1, 7, 4095, 131071, 1 << 23} {
					for i, th := range want {
						got, exp := pos*p.Freqs[i], pos*th
						if !relClose(got, exp, hfref.AngleTol) && !(got == 0 && exp == 0) {
							t.Fatalf("position %v pair %d: angle %.17g, Hugging Face %.17g", pos, i, got, exp)
						}
					}
				}
			}
			switch {
			case c.angles != "":
				checkHFAngles(t, p, c.angles, c.sections)
			case c.mrope == "":
				if p.Axes != 1 || p.Axis != nil {
					t.Errorf("axes %d %v, want 1-D", p.Axes, p.Axis)
				}
			default:
				if p.Axes != 3 || len(p.Axis) != p.Half() {
					t.Fatalf("axes %d, %d axis entries; want 3, %d", p.Axes, len(p.Axis), p.Half())
				}
				for i, a := range p.Axis {
					if w := hfref.Axis(c.mrope, c.sections, i); a != w {
						t.Fatalf("pair %d on axis %d, Hugging Face %d", i, a, w)
					}
				}
			}
			notes := strings.Join(info.Notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q do not say %q", info.Notes, n)
				}
			}
			if c.notes == nil && c.layers == nil && len(ropeNotes(info.Notes)) > 0 {
				t.Errorf("unexpected notes %q", info.Notes)
			}
			checkHFLayers(t, info.Layers, c.layers)
		})
	}
}

// checkHFLayers compares the layer types LoadHFConfigWith found with want:
// type → "rope" or "nope", "*" for the chosen one.
func checkHFLayers(t *testing.T, got []HFLayer, want map[string]string) {
	t.Helper()
	if want == nil {
		if len(got) > 1 {
			t.Errorf("layers %+v, want one layer type", got)
		}
		return
	}
	if len(got) != len(want) {
		t.Fatalf("layers %+v, want %v", got, want)
	}
	for _, l := range got {
		w, ok := want[l.Type]
		kind := "rope"
		if l.NoPE != "" {
			kind = "nope"
		}
		if l.Chosen {
			kind += "*"
		}
		if !ok || kind != w || (l.NoPE == "") == (l.RoPE == "") {
			t.Errorf("layer type %s: %s (%+v), want %q", l.Type, kind, l, w)
		}
	}
}

// checkHFAngles checks, per head value, the angle ropegen turns it by at a
// few positions against transformers' cos/sin for the same positions
// (internal/hfref): the pairs, the axes and the frequencies together.
func checkHFAngles(t *testing.T, p *Params, scheme string, sections []int) {
	t.Helper()
	base, rot := p.Spec.Base, p.RotaryDim
	for _, pos := range [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {3, 17, 29}, {4095, 7, 1000}, {131071, 65535, 12345}} {
		var want []float64
		var own [3]float64
		switch scheme {
		case "pixtral":
			want = hfref.PixtralAngles(base, rot, pos[0], pos[1])
			own = [3]float64{pos[0], pos[1]} // row, column
		case "ernie-vl":
			want = hfref.ErnieVLAngles(base, rot, sections, pos)
			own = pos // time, height, width
		case "glm4v", "glm4v-moe":
			want = hfref.GLM4VAngles(base, rot, sections, pos, scheme == "glm4v")
			own = pos
		default:
			t.Fatalf("no angles for %s", scheme)
		}
		if p.Axes < 2 || len(p.Axis) != p.Half() {
			t.Fatalf("axes %d, axis %v: want a multi-axis map", p.Axes, p.Axis)
		}
		got := make([]float64, rot)
		for i := range p.Half() {
			a, b := p.Pair(i)
			got[a] = own[p.Axis[i]] * p.Freqs[i]
			got[b] = got[a]
		}
		for j := range got {
			if !relClose(got[j], want[j], hfref.AngleTol) && !(got[j] == 0 && want[j] == 0) {
				t.Fatalf("%s at %v: value %d turns by %.17g, transformers %.17g", scheme, pos, j, got[j], want[j])
			}
		}
	}
}

// Every config in testdata/hf is checked, by hfCases or realCases.
func TestHFConfigsAllChecked(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hf", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, c := range hfCases(t) {
		checked[c.file] = true
	}
	for _, c := range realCases {
		checked[c.file] = true
	}
	var missing []string
	for _, f := range files {
		if !checked[filepath.Base(f)] {
			missing = append(missing, filepath.Base(f))
		}
		delete(checked, filepath.Base(f))
	}
	for f := range checked {
		missing = append(missing, "(no file) "+f)
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("unchecked configs: %v", missing)
	}
	if len(files) < 45 {
		t.Errorf("%d configs, want at least 45 (25 earlier, 20 of 2025–26)", len(files))
	}
	// Each has its source in the README.
	readme, err := os.ReadFile(filepath.Join("testdata", "hf", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.Contains(string(readme), "`"+filepath.Base(f)+"`") {
			t.Errorf("README.md gives no source for %s", filepath.Base(f))
		}
	}
}

// The layout table: expectations written from each model's reference code
// (the function named in the comment), independently of the generated
// table, for the model types ropegen's tests and presets use, and for
// every type whose pairing is not rotate_half.
func TestHFLayoutsTable(t *testing.T) {
	want := map[string]Layout{
		// rotate_half (x[..., : d//2], x[..., d//2 :]).
		"llama": NeoX, "mistral": NeoX, "mixtral": NeoX, "qwen2": NeoX, "qwen2_moe": NeoX, "qwen3": NeoX, "qwen3_moe": NeoX,
		"qwen2_vl": NeoX, "qwen2_5_vl": NeoX, "qwen3_vl": NeoX, "qwen3_vl_text": NeoX, "phi": NeoX, "phi3": NeoX, "phimoe": NeoX,
		"gemma": NeoX, "gemma2": NeoX, "gemma3": NeoX, "gemma3_text": NeoX, "gemma4": NeoX, "gemma4_text": NeoX, "gpt_neox": NeoX, "stablelm": NeoX,
		"starcoder2": NeoX, "olmo": NeoX, "olmo2": NeoX, "olmo3": NeoX, "granite": NeoX, "granitemoehybrid": NeoX, "internlm2": NeoX,
		"gpt_oss":    NeoX, // _apply_rotary_emb: torch.chunk(x, 2)
		"qwen3_next": NeoX, "qwen3_5": NeoX, "qwen3_5_text": NeoX, "qwen3_5_moe": NeoX, "smollm3": NeoX, "exaone4": NeoX,
		"hunyuan_v1_dense": NeoX, "hunyuan_v1_moe": NeoX, "ministral3": NeoX, "mimo_v2_flash": NeoX, "minimax_m2": NeoX,
		"lfm2": NeoX, "glm4_moe": NeoX, "glm4v_moe": NeoX, "glm4v_moe_text": NeoX, "falcon": NeoX, "seed_oss": NeoX, "apertus": NeoX,
		// Adjacent pairs: rotate_every_two, x[..., 0::2] / x[..., 1::2], complex multiplication.
		"gptj": Interleaved, "codegen": Interleaved, "cohere": Interleaved, "cohere2": Interleaved, "glm": Interleaved,
		"glm4": Interleaved, "glm4v": Interleaved, "glm4v_text": Interleaved, "llama4": Interleaved, "llama4_text": Interleaved,
		"deepseek_v2": Interleaved, "kimi_k2": Interleaved, "ernie4_5": Interleaved, "ernie4_5_moe": Interleaved,
		"ernie4_5_vl_moe": Interleaved, "ernie4_5_vl_moe_text": Interleaved, "helium": Interleaved, "glm_moe_dsa": Interleaved,
		"deepseek_v32": Interleaved, "deepseek_v4": Interleaved,
		// config.rope_interleave picks: apply_rotary_pos_emb_interleave, else rotate_half.
		"deepseek_v3": Interleaved + "|" + NeoX, "mistral4": Interleaved + "|" + NeoX, "glm4_moe_lite": Interleaved + "|" + NeoX,
		"chatglm": "refused",
	}
	types := HFModelTypes()
	if len(types) < 150 {
		t.Errorf("%d model types, want the whole transformers table", len(types))
	}
	for model, w := range want {
		t.Run(model, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"model_type": %q, "hidden_size": 4096, "num_attention_heads": 32}`, model)
			s, _, err := loadInline(t, cfg)
			if w == "refused" {
				var he *HFConfigError
				if !errors.As(err, &he) || he.Key != "model_type" || !strings.Contains(err.Error(), "is not supported: ") {
					t.Fatalf("error %v, want a refusal naming model_type", err)
				}
				return
			}
			got, ok := types[model]
			if !ok || got[0] != string(w) {
				t.Fatalf("table has %q (%v), want %q", got[0], ok, w)
			}
			if !strings.Contains(got[1], "modeling_") && !strings.Contains(got[1], "remote code") {
				t.Errorf("citation %q names no function", got[1])
			}
			if err != nil {
				t.Fatal(err)
			}
			if wantLayout, _, _ := strings.Cut(string(w), "|"); s.Layout != Layout(wantLayout) {
				t.Errorf("layout %q, want %q", s.Layout, wantLayout)
			}
		})
	}
	// Every entry is well formed.
	for m, e := range hfLayoutsGen {
		if len(e.layouts) == 0 || len(e.layouts) > 2 || (len(e.layouts) == 2) != e.ropeInterleave || !strings.HasPrefix(e.cite, "modeling_") {
			t.Errorf("%s: malformed entry %+v", m, e)
		}
		if e.rotaryKey != "" && (e.rotary <= 0 || (e.rotaryKey != "rotary_dim" && e.rotary >= 1)) {
			t.Errorf("%s: rotary default %s %v", m, e.rotaryKey, e.rotary)
		}
	}
	if HFSourceCommit == "" || len(HFSourceCommit) != 40 {
		t.Errorf("HFSourceCommit %q", HFSourceCommit)
	}
}

// The rotated part each config class defaults to, from the generated table:
// expectations from the classes (GPTNeoXConfig's rotary_pct 0.25, …).
func TestHFRotaryDefaults(t *testing.T) {
	for model, w := range map[string]struct {
		key string
		v   float64
	}{
		"gpt_neox": {"rotary_pct", 0.25}, "phi": {"partial_rotary_factor", 0.5}, "stablelm": {"partial_rotary_factor", 0.25},
		"glm": {"partial_rotary_factor", 0.5}, "glm4": {"partial_rotary_factor", 0.5}, "gptj": {"rotary_dim", 64}, "codegen": {"rotary_dim", 64},
		"qwen3_next": {"partial_rotary_factor", 0.25}, "qwen3_5_text": {"partial_rotary_factor", 0.25}, "glm4_moe": {"partial_rotary_factor", 0.5},
		"mimo_v2_flash": {"partial_rotary_factor", 0.334}, "persimmon": {"partial_rotary_factor", 0.5},
	} {
		e, ok := hfLayoutsGen[model]
		if !ok || e.rotaryKey != w.key || e.rotary != w.v {
			t.Errorf("%s: %q %v, want %q %v", model, e.rotaryKey, e.rotary, w.key, w.v)
		}
	}
	for _, model := range []string{"llama", "qwen3", "gemma3_text", "deepseek_v3"} {
		if e := hfLayoutsGen[model]; e.rotaryKey != "" {
			t.Errorf("%s: rotary default %q %v, want none", model, e.rotaryKey, e.rotary)
		}
	}
}

// An unknown model type is refused unless the layout is given.
func TestHFUnknownModelType(t *testing.T) {
	cfg := `{"model_type": "somethingnew ", "hidden_size": 4096, "num_attention_heads": 32}`
	_, path, err := loadInline(t, cfg)
	want := `model_type: "somethingnew " is not in ropegen's table of model types, so the pair layout is unknown: give -layout neox if`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want it to contain %q", err, want)
	}
	for _, layout := range []Layout{NeoX, Interleaved} {
		s, _, err := LoadHFConfigWith(path, HFOptions{Layout: layout})
		if err != nil || s.Layout != layout || s.HeadDim != 128 {
			t.Errorf("with layout %s: %+v, %v", layout, s, err)
		}
	}
}

// What ropegen cannot serve is refused with why and what to do instead.
func TestHFRefusals(t *testing.T) {
	for _, tt := range []struct {
		name, config string
		opt          HFOptions
		key, msg     string
	}{
		{"unknown rope_type", llamaLike(`"rope_scaling": {"rope_type": "ntk-by-parts", "factor": 2}`), HFOptions{}, "rope_scaling.rope_type",
			`scaling type "ntk-by-parts" is not supported (ropegen reads "default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional"); give the spec with flags instead of -hf-config`},
		{"rope_type with a space", llamaLike(`"rope_scaling": {"rope_type": "yarn ", "factor": 2}`), HFOptions{}, "rope_scaling.rope_type", `scaling type "yarn " is not supported`},
		{"chatglm", `{"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128, "rope_ratio": 500}`, HFOptions{}, "model_type",
			`"chatglm" is not supported: the remote-code ChatGLM config`},
		{"-rope-local, one layer type", `{"model_type": "gemma2", "head_dim": 256, "rope_theta": 10000}`, HFOptions{Local: true}, "",
			`-layer-type "sliding_attention": model_type "gemma2" has no layers of that type (its layer types: full_attention)`},
		{"per-layer unknown layer type", llamaLike(`"layer_types": ["full_attention", "sliding_attention"], "rope_parameters": {"full_attention": {"rope_type": "default"}, "chunked_attention": {"rope_type": "default"}}`), HFOptions{}, "rope_parameters.chunked_attention",
			`RoPE parameters for layer type "chunked_attention", which no layer has (layer_types gives full_attention, sliding_attention)`},
		{"per-layer, a layer type without parameters", llamaLike(`"layer_types": ["full_attention", "sliding_attention"], "rope_parameters": {"full_attention": {"rope_type": "default"}}`), HFOptions{Local: true}, "rope_parameters.sliding_attention",
			`missing: the config gives RoPE parameters per layer type but none for "sliding_attention"`},
		{"-layer-type of a NoPE layer", `{"model_type": "qwen3_next", "head_dim": 256, "num_hidden_layers": 8, "rope_theta": 1e7}`, HFOptions{LayerType: "linear_attention"}, "",
			`-layer-type "linear_attention": these layers use no RoPE (linear attention`},
		{"no RoPE at all", `{"model_type": "granitemoehybrid", "head_dim": 128, "layer_types": ["mamba", "attention"], "position_embedding_type": "nope"}`, HFOptions{}, "",
			`no layer of model_type "granitemoehybrid" uses RoPE (linear_attention: linear attention`},
		{"-rope-local and another -layer-type", llamaLike(""), HFOptions{Local: true, LayerType: "full_attention"}, "", `-rope-local is -layer-type sliding_attention, but -layer-type "full_attention" is given too`},
		{"-hf-part unknown", llamaLike(""), HFOptions{Part: "audio"}, "", `-hf-part "audio": want one of "text", "indexer", "vision"`},
		{"-hf-part indexer without one", llamaLike(""), HFOptions{Part: HFPartIndexer}, "model_type", `-hf-part indexer: model_type "llama" has no lightning indexer`},
		{"-hf-part vision without vision_config", llamaLike(""), HFOptions{Part: HFPartVision}, "vision_config", "missing: -hf-part vision reads the vision encoder"},
		{"-hf-part vision, unknown encoder", `{"model_type": "x", "vision_config": {"model_type": "siglip_vision_model"}}`, HFOptions{Part: HFPartVision}, "vision_config.model_type", `"siglip_vision_model": -hf-part vision reads the vision encoders "pixtral"`},
		{"alpha with an unknown key", llamaLike(`"rope_scaling": {"type": "dynamic", "alpha": 1000, "foo": 1}`), HFOptions{}, "rope_scaling.foo", "unknown key for HunYuan's dynamic NTK with alpha"},
		{"interleaved M-RoPE without sections", llamaLike(`"rope_scaling": {"rope_type": "default", "mrope_interleaved": true}`), HFOptions{}, "rope_scaling.mrope_interleaved",
			"mrope_section is missing"},
		{"dynamic without max_position_embeddings", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"type": "dynamic", "factor": 2}}`, HFOptions{}, "rope_scaling.factor",
			`rope_type "dynamic" needs max_position_embeddings`},
		// The older "type" key names the RoPE type as "rope_type" does.
		{"-hf-part vision, a scaling under the older type key", `{"model_type": "mistral3", "text_config": {"model_type": "ministral3"}, "vision_config": {"model_type": "pixtral", "head_dim": 64, "image_size": 1540, "patch_size": 14, "rope_parameters": {"rope_theta": 10000, "type": "linear"}}}`, HFOptions{Part: HFPartVision}, "vision_config.rope_parameters.type",
			`"linear": pixtral's vision RoPE takes no scaling`},
		{"MLA, bad qk_rope_head_dim", `{"model_type": "deepseek_v3", "qk_rope_head_dim": 0}`, HFOptions{}, "qk_rope_head_dim", "want a positive integer, got 0"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.json")
			must(t, os.WriteFile(path, []byte(tt.config), 0o644))
			_, _, err := LoadHFConfigWith(path, tt.opt)
			var he *HFConfigError
			if !errors.As(err, &he) {
				t.Fatalf("error %v, want *HFConfigError", err)
			}
			if he.Key != tt.key || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q (key %q), want key %q and %q", err, he.Key, tt.key, tt.msg)
			}
		})
	}
}

// llama3 with equal low and high factors (Llama 4): no smoothed band;
// every θ_i is unchanged or divided by s, as transformers' torch.where
// gives for every wavelength but exactly L/lf.
func TestLlama3EqualFactors(t *testing.T) {
	s := DefaultSpec()
	s.Base = 500000
	s.Scaling = Scaling{Type: ScalingLlama3, Factor: 16, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 1, Truncate: true}
	freqs, _, _, err := Frequencies(s)
	if err != nil {
		t.Fatal(err)
	}
	divided := 0
	for i, f := range freqs {
		theta := roundedPow(t, 500000, 2*i, 128)
		wave := 2 * math.Pi / theta
		switch {
		case wave > 8192 && f != theta/16:
			t.Errorf("θ_%d = %v, want θ/16 = %v", i, f, theta/16)
		case wave < 8192 && f != theta:
			t.Errorf("θ_%d = %v, want θ = %v", i, f, theta)
		}
		if f != theta {
			divided++
		}
	}
	if divided == 0 || divided == len(freqs) {
		t.Errorf("%d of %d pairs divided: want both bands", divided, len(freqs))
	}
	checkAgainstHF(t, s, hfref.Rope{Dim: 128, Base: 500000, RopeType: "llama3", Factor: 16, OrigMax: 8192, LowFreq: 1, HighFreq: 1})
	// Crossed factors are still refused.
	s.Scaling.LowFreqFactor = 2
	var se *SpecError
	if err := s.Validate(); !errors.As(err, &se) || se.Field != "low-freq-factor" {
		t.Errorf("low 2 > high 1: %v", err)
	}
}

// v5's per-layer-type rope_parameters: full_attention by default,
// sliding_attention with Local.
func TestHFPerLayerTypes(t *testing.T) {
	cfg := `{"model_type": "gemma3_text", "head_dim": 256, "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}}`
	_, path, err := loadInline(t, cfg)
	if err != nil {
		t.Fatal(err)
	}
	g, _, err := LoadHFConfigWith(path, HFOptions{})
	if err != nil || g.Base != 1e6 || g.Scaling.Type != ScalingLinear || g.Scaling.Factor != 8 {
		t.Errorf("global: %+v, %v", g, err)
	}
	l, info, err := LoadHFConfigWith(path, HFOptions{Local: true})
	if err != nil || l.Base != 1e4 || l.Scaling.Type != ScalingNone || len(info.Layers) != 2 || !info.Layers[1].Chosen || info.Layers[1].Type != "sliding_attention" {
		t.Errorf("local: %+v, %v, %+v", l, err, info.Layers)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A model type transformers lacks resolves through architectures only to
// one transformers type; otherwise it is refused with the -layout hint,
// which says why architectures did not help. A known type never looks at
// architectures.
func TestHFArchitectures(t *testing.T) {
	const hint = "so the pair layout is unknown: give -layout neox if"
	for _, c := range []struct {
		name, config, err, model string
		layout                   Layout
	}{
		{name: "unknown class", config: `{"model_type": "remote_thing", "architectures": ["RemoteThingForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32}`,
			err: `"remote_thing" is not in ropegen's table of model types (nor is its architectures' "RemoteThingForCausalLM" a transformers class of a model type in it), ` + hint},
		{name: "ambiguous class", config: `{"model_type": "remote_thing", "architectures": ["Qwen3_5ForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32}`,
			err: `(its architectures do not pick one: "Qwen3_5ForCausalLM" is the class of model types "qwen3_5", "qwen3_5_text"), ` + hint},
		{name: "no architectures", config: `{"model_type": "remote_thing", "hidden_size": 4096, "num_attention_heads": 32}`,
			err: `"remote_thing" is not in ropegen's table of model types, ` + hint},
		{name: "second class resolves", config: `{"model_type": "remote_thing", "architectures": ["RemoteThingForCausalLM", "Glm4ForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32}`,
			layout: Interleaved, model: "glm4"},
		{name: "known type wins", config: `{"model_type": "llama", "architectures": ["Glm4ForCausalLM"], "hidden_size": 4096, "num_attention_heads": 32}`,
			layout: NeoX, model: "llama"},
		{name: "ERNIE rope_3d false", config: `{"model_type": "ernie4_5_moe_vl", "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "hidden_size": 2560, "num_attention_heads": 20, "rope_theta": 500000, "rope_3d": false}`,
			err: `rope_3d: false: ERNIE-4.5-VL's remote code then turns every pair by the text position`},
		{name: "ERNIE freq_allocation", config: `{"model_type": "ernie4_5_moe_vl", "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "hidden_size": 2560, "num_attention_heads": 20, "rope_theta": 500000, "freq_allocation": 16}`,
			err: `freq_allocation: 16: the remote code turns the last 16 pairs by time, transformers' mrope_section 22,22,20 the last 20`},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		must(t, os.WriteFile(path, []byte(c.config), 0o644))
		s, info, err := LoadHFConfigWith(path, HFOptions{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		notes := strings.Join(info.Notes, "\n")
		if s.Layout != c.layout || info.ModelType != c.model || strings.Contains(notes, "is remote code") != (c.model != "llama") {
			t.Errorf("%s: layout %s, model type %q, notes %q; want %s, %q", c.name, s.Layout, info.ModelType, info.Notes, c.layout, c.model)
		}
	}
}
