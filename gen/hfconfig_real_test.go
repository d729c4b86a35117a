package gen

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
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
	layout  string // the family's pairing: Interleaved (2i, 2i+1) or NeoX (i, i+R/2)
	rope    hfRope // dim and base are filled in from above
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
		rope: hfRope{ropeType: "llama3", factor: 32, lowFreq: 1, highFreq: 4, origMax: 8192}},
	// Llama 4: equal low and high factors, complex (interleaved) rotation.
	{file: "llama-4-scout-17b-16e-instruct.json", headDim: 128, rotary: 128, base: 500000, layout: Interleaved,
		rope: hfRope{ropeType: "llama3", factor: 16, lowFreq: 1, highFreq: 1, origMax: 8192}, notes: []string{"text_config", "(i+1) mod 4 = 0 (layers 3, 7, 11, …; Llama4TextConfig's default"}},
	{file: "qwen3-0.6b.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfRope{ropeType: "default"}},
	{file: "qwen2.5-vl-7b-instruct.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfRope{ropeType: "default"},
		mrope: "sections", sections: []int{16, 24, 24}},
	{file: "qwen3-vl-8b-instruct.json", headDim: 128, rotary: 128, base: 5e6, layout: NeoX, rope: hfRope{ropeType: "default"},
		mrope: "interleaved", sections: []int{24, 20, 20}, notes: []string{"text_config"}},
	{file: "mistral-nemo-instruct-2407.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX, rope: hfRope{ropeType: "default"}},
	{file: "phi-4.json", headDim: 128, rotary: 128, base: 250000, layout: NeoX, rope: hfRope{ropeType: "default"}},
	{file: "gemma-2-9b.json", headDim: 256, rotary: 256, base: 10000, layout: NeoX, rope: hfRope{ropeType: "default"}},
	// Gemma 3: Gemma3TextConfig's defaults (head_dim 256, rope_theta 1e6,
	// rope_local_base_freq 1e4); global layers linear ×8, local default.
	{file: "gemma-3-4b-it.json", headDim: 256, rotary: 256, base: 1e6, layout: NeoX,
		rope: hfRope{ropeType: "linear", factor: 8}, notes: []string{"global", "-rope-local"}},
	{file: "gemma-3-4b-it.json", local: true, headDim: 256, rotary: 256, base: 1e4, layout: NeoX,
		rope: hfRope{ropeType: "default"}, notes: []string{"local (sliding-window)", "without it"}},
	// MLA: the rotary part, qk_rope_head_dim values, interleaved.
	{file: "deepseek-v3.json", headDim: 64, rotary: 64, base: 10000, layout: Interleaved,
		rope:  hfRope{ropeType: "yarn", factor: 40, origMax: 4096, betaFast: 32, betaSlow: 1, mscale: 1, mscaleAllDim: 1, truncate: true},
		notes: []string{"MLA", "LAST qk_rope_head_dim = 64", "128 + qk_rope_head_dim 64 = 192"}},
	{file: "deepseek-v2-lite.json", headDim: 64, rotary: 64, base: 10000, layout: Interleaved,
		rope:  hfRope{ropeType: "yarn", factor: 40, origMax: 4096, betaFast: 32, betaSlow: 1, mscale: 0.707, mscaleAllDim: 0.707, truncate: true},
		notes: []string{"MLA"}},
	{file: "kimi-k2-instruct-0905.json", headDim: 64, rotary: 64, base: 50000, layout: Interleaved,
		rope:  hfRope{ropeType: "yarn", factor: 64, origMax: 4096, betaFast: 1, betaSlow: 1, mscale: 1, mscaleAllDim: 1, truncate: true},
		notes: []string{"MLA"}},
	{file: "internlm2.5-7b-chat.json", headDim: 128, rotary: 128, base: 1e6, layout: NeoX,
		rope: hfRope{ropeType: "default", factor: 2, maxPos: 32768}, dynamic: true},
	// GLM: partial_rotary_factor 0.5, interleaved on the first half.
	{file: "glm-4-9b-chat-hf.json", headDim: 128, rotary: 64, base: 10000, layout: Interleaved, rope: hfRope{ropeType: "default"}},
	{file: "c4ai-command-r-v01.json", headDim: 128, rotary: 128, base: 8e6, layout: Interleaved, rope: hfRope{ropeType: "default"}},
	{file: "olmo-2-1124-7b.json", headDim: 128, rotary: 128, base: 500000, layout: NeoX, rope: hfRope{ropeType: "default"}},
	{file: "smollm2-1.7b.json", headDim: 64, rotary: 64, base: 130000, layout: NeoX, rope: hfRope{ropeType: "default"}},
}

// hfDynamicNTKInvFreq is _compute_dynamic_ntk_parameters for a sequence of n
// tokens: base·((factor·n/L) − (factor − 1))^(dim/(dim−2)) for n > L, then
// the default inverse frequencies.
func hfDynamicNTKInvFreq(base float64, dim int, factor float64, l, n int) []float64 {
	seq := max(n, l)
	base = base * math.Pow((factor*float64(seq)/float64(l))-(factor-1), float64(dim)/float64(dim-2))
	return hfDefaultInvFreq(base, dim, nil)
}

// hfPairs is the pairing of the family's rotation: rotate_half pairs i
// with i+R/2 (cos/sin cat((freqs, freqs))); rotate_every_two, complex
// multiplication of (x[2i], x[2i+1]) and Cohere's/GLM's x[..., ::2] pair
// neighbours.
func hfPairs(layout string, rot int) [][2]int {
	p := make([][2]int, rot/2)
	for i := range p {
		if layout == NeoX {
			p[i] = [2]int{i, i + rot/2}
		} else {
			p[i] = [2]int{2 * i, 2*i + 1}
		}
	}
	return p
}

// hfAxis is the axis of pair i: Qwen2.5-VL's apply_multimodal_rotary_pos_emb
// splits cos/sin (cat((freqs, freqs))) into mrope_section·2 chunks and
// takes chunk k from axis k mod 3; Qwen3-VL's apply_interleaved_mrope starts
// from the time axis and gives axis d (1, 2) the indices d, d+3, … below
// 3·mrope_section[d].
func hfAxis(kind string, sections []int, i int) uint8 {
	switch kind {
	case "sections":
		end := 0
		for k, s := range sections {
			end += s
			if i < end {
				return uint8(k)
			}
		}
		panic("pair past the sections")
	case "interleaved":
		for _, d := range []int{1, 2} {
			if i%3 == d && i < 3*sections[d] {
				return uint8(d)
			}
		}
		return 0
	}
	panic("no M-RoPE")
}

// angleTol is the relative tolerance on an angle p·θ_i. Both sides compute
// θ_i in float64 (gen with correctly rounded powers, the reference with
// math.Pow and the formula as transformers writes it: 1/base^(2i/R),
// products and quotients in its order), which differ by a few ulps, 2^−52
// each, amplified at most by the exponent ln(base)·2i/R < 20 of the power:
// well under 1e-12. The product by an integer position adds one rounding on
// each side.
const angleTol = 1e-12

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
			p, err := NewPlan(s)
			if err != nil {
				t.Fatalf("NewPlan: %v", err)
			}
			if p.HeadDim != c.headDim || p.RotaryDim != c.rotary {
				t.Fatalf("head dim %d, rotary dim %d; want %d, %d", p.HeadDim, p.RotaryDim, c.headDim, c.rotary)
			}
			if s.Base != c.base {
				t.Errorf("base %v, want %v", s.Base, c.base)
			}
			for i, want := range hfPairs(c.layout, c.rotary) {
				if a, b := p.Pair(i); a != want[0] || b != want[1] {
					t.Fatalf("pair %d is (%d, %d), want (%d, %d) (%s)", i, a, b, want[0], want[1], c.layout)
				}
			}
			r := c.rope
			r.dim, r.base = c.rotary, c.base
			var want []float64
			wantAttn := 1.0
			if c.dynamic {
				if s.Scaling.Type != ScalingDynamic || s.Scaling.Factor != r.factor || s.Scaling.OrigCtx != r.maxPos {
					t.Fatalf("scaling %+v, want dynamic factor %v, L %d", s.Scaling, r.factor, r.maxPos)
				}
				// A table of at most L positions: the default frequencies;
				// longer ones: the base for their length.
				want = hfDynamicNTKInvFreq(r.base, r.dim, r.factor, r.maxPos, r.maxPos)
				for _, n := range []int{r.maxPos + 1, 2 * r.maxPos, 1 << 20} {
					got := make([]float64, r.dim/2)
					dynamicFreqs(got, s.Base, s.Scaling.Factor, s.Scaling.OrigCtx, p.RotaryDim, n)
					compareFreqs(t, fmt.Sprintf("dynamic n=%d", n), got, hfDynamicNTKInvFreq(r.base, r.dim, r.factor, r.maxPos, n))
				}
			} else {
				var long []float64
				want, long, wantAttn = hfReference(r)
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
					if !relClose(got, exp, angleTol) {
						t.Fatalf("position %v pair %d: angle %.17g, Hugging Face %.17g", pos, i, got, exp)
					}
				}
			}
			if c.mrope == "" {
				if p.Axes != 1 || p.Axis != nil {
					t.Errorf("axes %d %v, want 1-D", p.Axes, p.Axis)
				}
			} else {
				if p.Axes != 3 || len(p.Axis) != p.Half {
					t.Fatalf("axes %d, %d axis entries; want 3, %d", p.Axes, len(p.Axis), p.Half)
				}
				for i, a := range p.Axis {
					if w := hfAxis(c.mrope, c.sections, i); a != w {
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
			if c.notes == nil && len(info.Notes) > 0 {
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
	checkAgainstHF(t, s, hfRope{dim: 128, base: 500000, ropeType: "llama3", factor: 16, origMax: 8192, lowFreq: 1, highFreq: 1})
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
	if err != nil || l.Base != 1e4 || l.Scaling.Type != ScalingNone || len(info.Notes) != 1 {
		t.Errorf("local: %+v, %v, %q", l, err, info.Notes)
	}
}

// For a few configs the generated package itself: cos and sin of every
// pair at several positions, from a table and from Rotate, against
// Hugging Face's angle.
func TestHFConfigsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated packages")
	}
	type pkgCase struct {
		file  string
		local bool
	}
	cases := []pkgCase{{"llama-3.1-8b.json", false}, {"deepseek-v3.json", false}, {"gemma-3-4b-it.json", true}}
	var specs []Spec
	var wants [][]float64
	var attns []float64
	var pairs [][][2]int
	for _, c := range cases {
		s, _, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), HFOptions{Local: c.local})
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	// The expectations, by hand as above.
	wantLlama, _, _ := hfReference(hfRope{dim: 128, base: 500000, ropeType: "llama3", factor: 8, lowFreq: 1, highFreq: 4, origMax: 8192})
	wantDS, _, attnDS := hfReference(hfRope{dim: 64, base: 10000, ropeType: "yarn", factor: 40, origMax: 4096, betaFast: 32, betaSlow: 1, mscale: 1, mscaleAllDim: 1, truncate: true})
	wantGemma, _, _ := hfReference(hfRope{dim: 256, base: 1e4, ropeType: "default"})
	wants = [][]float64{wantLlama, wantDS, wantGemma}
	attns = []float64{1, attnDS}
	attns = append(attns, 1)
	pairs = [][][2]int{hfPairs(NeoX, 128), hfPairs(Interleaved, 64), hfPairs(NeoX, 256)}

	dir := writeModule(t, specs, false)
	must(t, os.Mkdir(filepath.Join(dir, "probe"), 0o755))
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n\t\"encoding/json\"\n\t\"os\"\n")
	for i := range specs {
		fmt.Fprintf(&src, "\t\"example.com/gentest/p%c\"\n", 'a'+i)
	}
	src.WriteString(")\n\n// unit returns the rotated unit vector e_j of a head of n values at pos.\n")
	src.WriteString("func main() {\n\tout := map[string]map[string][]float32{}\n")
	for i := range specs {
		p := fmt.Sprintf("p%c", 'a'+i)
		fmt.Fprintf(&src, `	{
		m := map[string][]float32{}
		tab := %[1]s.NewTable(5000)
		one := %[1]s.NewTable(1)
		for _, pos := range []int{0, 1, 7, 4095, 4999, 131071} {
			for j := 0; j < %[1]s.HeadDim; j++ {
				x := make([]float32, %[1]s.HeadDim)
				x[j] = 1
				switch {
				case pos == 131071:
					%[1]s.Rotate(x, pos)
				case pos == 0:
					one.Apply(x, pos)
				default:
					tab.Apply(x, pos)
				}
				m[string(rune('0'+j%%10))+"/"+itoa(pos)+"/"+itoa(j)] = x
			}
		}
		out[%[2]q] = m
	}
`, p, p)
	}
	src.WriteString("\tjson.NewEncoder(os.Stdout).Encode(out)\n}\n\nfunc itoa(n int) string {\n\tif n == 0 {\n\t\treturn \"0\"\n\t}\n\ts := \"\"\n\tfor ; n > 0; n /= 10 {\n\t\ts = string(rune('0'+n%10)) + s\n\t}\n\treturn s\n}\n")
	must(t, os.WriteFile(filepath.Join(dir, "probe", "main.go"), []byte(src.String()), 0o644))
	out := goCmd(t, dir, nil, "run", "./probe")
	var got map[string]map[string][]float32
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("probe output: %v", err)
	}
	// A float32 table value is A·cos φ rounded once (half an ulp, 2^−24
	// relative), and e_a·c is exact; the angle itself agrees with Hugging
	// Face's to angleTol·φ (φ ≤ 131071·θ_0 here, θ_0 = 1).
	for k, c := range cases {
		m := got[fmt.Sprintf("p%c", 'a'+k)]
		for _, pos := range []int{0, 1, 7, 4095, 4999, 131071} {
			for i, pr := range pairs[k] {
				phi := float64(pos) * wants[k][i]
				cs, sn := attns[k]*math.Cos(phi), attns[k]*math.Sin(phi)
				tol := attns[k]*(math.Pow(2, -24)) + attns[k]*angleTol*math.Abs(phi)
				key := func(j int) string { return fmt.Sprintf("%c/%d/%d", '0'+j%10, pos, j) }
				ya, yb := m[key(pr[0])], m[key(pr[1])]
				if ya == nil || yb == nil {
					t.Fatalf("%s: no output for position %d pair %d", c.file, pos, i)
				}
				// e_a turns into (cos, sin) on (a, b); e_b into (−sin, cos).
				checks := []struct {
					got, want float64
				}{{float64(ya[pr[0]]), cs}, {float64(ya[pr[1]]), sn}, {float64(yb[pr[0]]), -sn}, {float64(yb[pr[1]]), cs}}
				for _, ch := range checks {
					if math.Abs(ch.got-ch.want) > tol {
						t.Fatalf("%s position %d pair %d (%d, %d): %v, Hugging Face %v (tol %g)", c.file, pos, i, pr[0], pr[1], ch.got, ch.want, tol)
					}
				}
			}
		}
	}
}
