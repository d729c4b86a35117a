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

	"github.com/ropegen/ropegen/internal/exact"
	"github.com/ropegen/ropegen/internal/hfref"
)

// realCase is a published config in testdata/hf with what Hugging Face
// builds from it, written out by hand from the config and the model's
// transformers code (not from LoadHFConfigWith): the head and rotary dims,
// the base, the pair layout of the family's reference implementation, the
// RoPE parameters for hfReference, and M-RoPE's sections.
type realCase struct {
	file    string
	local   bool // HFOptions.Local: the local layers' RoPE
	headDim int
	rotary  int
	base    float64
	layout  string     // the family's pairing: Interleaved (2i, 2i+1) or NeoX (i, i+R/2)
	rope    hfref.Rope // dim and base are filled in from above
	// M-RoPE: "" for 1-D, else "sections" (Qwen2.5-VL's
	// apply_multimodal_rotary_pos_emb) or "interleaved" (Qwen3-VL's
	// apply_interleaved_mrope).
	mrope    string
	sections []int
	dynamic  bool // rope_type dynamic: factor and L = max_position_embeddings in rope
	notes    []string
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
		rope: hfref.Rope{RopeType: "linear", Factor: 8}, notes: []string{"global", "-rope-local"}},
	{file: "gemma-3-4b-it.json", local: true, headDim: 256, rotary: 256, base: 1e4, layout: NeoX,
		rope: hfref.Rope{RopeType: "default"}, notes: []string{"local (sliding-window)", "without it"}},
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
}

func TestHFConfigsReal(t *testing.T) {
	for _, c := range realCases {
		name := c.file
		if c.local {
			name += "/local"
		}
		t.Run(name, func(t *testing.T) {
			s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), HFOptions{Local: c.local})
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
			for i, want := range hfref.Pairs(c.layout, c.rotary) {
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
			} else {
				var long []float64
				want, long, wantAttn = hfref.Reference(r)
				if long != nil {
					t.Fatal("no longrope config here")
				}
			}
			compareFreqs(t, "freqs", p.Freqs, want)
			if !relClose(p.Attn, wantAttn, refTol) {
				t.Errorf("attention factor %.17g, Hugging Face %.17g", p.Attn, wantAttn)
			}
			for _, pos := range []float64{1, 7, 4095, 131071, 1 << 23} {
				for i, th := range want {
					got, exp := pos*p.Freqs[i], pos*th
					if !relClose(got, exp, hfref.AngleTol) {
						t.Fatalf("position %v pair %d: angle %.17g, Hugging Face %.17g", pos, i, got, exp)
					}
				}
			}
			if c.mrope == "" {
				if p.Axes != 1 || p.Axis != nil {
					t.Errorf("axes %d %v, want 1-D", p.Axes, p.Axis)
				}
			} else {
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
			if c.notes == nil && len(ropeNotes(info.Notes)) > 0 {
				t.Errorf("unexpected notes %q", info.Notes)
			}
		})
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
	if len(files) < 20 {
		t.Errorf("%d configs, want at least 20", len(files))
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

// The layout table: one expectation per entry, written from the model's
// reference code (see the comments on hfLayouts) independently of it.
func TestHFLayoutsTable(t *testing.T) {
	want := map[string]string{
		"llama": NeoX, "mistral": NeoX, "mixtral": NeoX, "qwen2": NeoX, "qwen2_moe": NeoX, "qwen3": NeoX, "qwen3_moe": NeoX,
		"qwen2_vl": NeoX, "qwen2_5_vl": NeoX, "qwen3_vl": NeoX, "qwen3_vl_text": NeoX, "phi": NeoX, "phi3": NeoX, "phimoe": NeoX,
		"gemma": NeoX, "gemma2": NeoX, "gemma3": NeoX, "gemma3_text": NeoX, "gpt_neox": NeoX, "stablelm": NeoX,
		"starcoder2": NeoX, "olmo": NeoX, "olmo2": NeoX, "granite": NeoX, "internlm2": NeoX, "gpt_oss": NeoX,
		"gptj": Interleaved, "codegen": Interleaved, "cohere": Interleaved, "cohere2": Interleaved, "glm": Interleaved,
		"glm4": Interleaved, "llama4": Interleaved, "llama4_text": Interleaved, "deepseek_v2": Interleaved,
		"deepseek_v3": Interleaved, "kimi_k2": Interleaved,
		"chatglm": "refused",
	}
	for model, entry := range hfLayouts {
		w, ok := want[model]
		if !ok {
			t.Errorf("model type %q is in hfLayouts but has no expectation here", model)
			continue
		}
		t.Run(model, func(t *testing.T) {
			cfg := fmt.Sprintf(`{"model_type": %q, "hidden_size": 4096, "num_attention_heads": 32}`, model)
			s, _, err := loadInline(t, cfg)
			if w == "refused" {
				var he *HFConfigError
				if !errors.As(err, &he) || he.Key != "model_type" || !strings.Contains(err.Error(), "is not supported: ") || entry.refuse == "" {
					t.Fatalf("error %v, want a refusal naming model_type", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Layout != w {
				t.Errorf("layout %q, want %q", s.Layout, w)
			}
		})
	}
	for model := range want {
		if _, ok := hfLayouts[model]; !ok {
			t.Errorf("model type %q expected in hfLayouts", model)
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
	for _, layout := range []string{NeoX, Interleaved} {
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
		{"unknown rope_type", llamaLike(`"rope_scaling": {"rope_type": "proportional", "factor": 2}`), HFOptions{}, "rope_scaling.rope_type",
			`scaling type "proportional" is not supported (ropegen reads "default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope"); give the spec with flags instead of -hf-config`},
		{"rope_type with a space", llamaLike(`"rope_scaling": {"rope_type": "yarn ", "factor": 2}`), HFOptions{}, "rope_scaling.rope_type", `scaling type "yarn " is not supported`},
		{"chatglm", `{"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128, "rope_ratio": 500}`, HFOptions{}, "model_type",
			`"chatglm" is not supported: the remote-code ChatGLM config`},
		{"-rope-local, one RoPE", `{"model_type": "gemma2", "head_dim": 256, "rope_theta": 10000}`, HFOptions{Local: true}, "",
			`-rope-local: model_type "gemma2" uses one RoPE in every layer`},
		{"per-layer unknown layer type", llamaLike(`"rope_parameters": {"full_attention": {"rope_type": "default"}, "chunked_attention": {"rope_type": "default"}}`), HFOptions{}, "rope_parameters.chunked_attention",
			`layer type "chunked_attention" are not supported`},
		{"per-layer without local", llamaLike(`"rope_parameters": {"full_attention": {"rope_type": "default"}}`), HFOptions{Local: true}, "rope_parameters.sliding_attention",
			`none for "sliding_attention"`},
		{"interleaved M-RoPE without sections", llamaLike(`"rope_scaling": {"rope_type": "default", "mrope_interleaved": true}`), HFOptions{}, "rope_scaling.mrope_interleaved",
			"mrope_section is missing"},
		{"dynamic without max_position_embeddings", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"type": "dynamic", "factor": 2}}`, HFOptions{}, "rope_scaling.factor",
			`rope_type "dynamic" needs max_position_embeddings`},
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

// The notes reach -explain.
func TestExplainNotesHF(t *testing.T) {
	for _, c := range []struct {
		file  string
		opt   HFOptions
		wants []string
	}{
		{"deepseek-v3.json", HFOptions{}, []string{"note: MLA: this kernel rotates the rotary part", "spec: dim 64, rotary-dim 64, base 10000, layout interleaved"}},
		{"gemma-3-4b-it.json", HFOptions{Local: true}, []string{"note: two RoPEs: this is the local (sliding-window) layers'", "scaling: none"}},
		{"gemma-3-4b-it.json", HFOptions{}, []string{"note: two RoPEs: this is the global (full-attention) layers'", "scaling: linear, factor 8"}},
	} {
		s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), c.opt)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := ExplainNotes(&b, s, info.Notes); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.wants {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: explain lacks %q:\n%s", c.file, w, b.String())
			}
		}
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
	if err != nil || l.Base != 1e4 || l.Scaling.Type != ScalingNone || len(ropeNotes(info.Notes)) != 1 {
		t.Errorf("local: %+v, %v, %q", l, err, info.Notes)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
