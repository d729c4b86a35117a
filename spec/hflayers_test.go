package spec

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// LoadHFConfigLayers gives every layer type's RoPE, each as
// LoadHFConfigWith gives it for that type, and nothing for the layers
// without RoPE. The expected types, head dims and bases are written out
// from the configs and their config classes' defaults.
func TestLoadHFConfigLayers(t *testing.T) {
	mimo := filepath.Join(t.TempDir(), "mimo.json")
	must(t, os.WriteFile(mimo, []byte(`{"model_type": "mimo_v2_flash", "head_dim": 192, "hidden_size": 4096, "num_attention_heads": 64, "num_hidden_layers": 12,
		"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 5000000.0, "partial_rotary_factor": 0.334}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.334}}}`), 0o644))
	type layer struct {
		typ      string
		head     int
		base     float64
		scaling  string
		sections bool
	}
	hf := func(f string) string { return filepath.Join("testdata", "hf", f) }
	for _, c := range []struct {
		path string
		want []layer
	}{
		// Gemma 3: layer 0 is sliding (five of every six); the global
		// layers take rope_scaling, the sliding ones rope_local_base_freq.
		{hf("gemma-3-4b-it.json"), []layer{{"sliding_attention", 256, 1e4, ScalingNone, false}, {"full_attention", 256, 1e6, ScalingLinear, false}}},
		{hf("gemma-3-1b-it.json"), []layer{{"sliding_attention", 256, 1e4, ScalingNone, false}, {"full_attention", 256, 1e6, ScalingNone, false}}},
		// OLMo 3: three sliding layers, then a full one with YaRN.
		{hf("olmo-3.1-32b-instruct.json"), []layer{{"sliding_attention", 128, 500000, ScalingNone, false}, {"full_attention", 128, 500000, ScalingYaRN, false}}},
		// Gemma 4: the global layers' heads are global_head_dim.
		{hf("gemma-4-31b-it.json"), []layer{{"sliding_attention", 256, 1e4, ScalingNone, false}, {"full_attention", 512, 1e6, ScalingProportional, false}}},
		// MiMo-V2-Flash: layer 0 is full attention.
		{mimo, []layer{{"full_attention", 192, 5e6, ScalingNone, false}, {"sliding_attention", 192, 1e4, ScalingNone, false}}},
		// Layer types without RoPE are left out.
		{hf("qwen3.5-9b.json"), []layer{{"full_attention", 256, 1e7, ScalingNone, true}}},
		{hf("exaone-4.0-32b.json"), []layer{{"sliding_attention", 128, 1e6, ScalingLlama3, false}}},
		// One RoPE, no layer types named: full attention throughout.
		{hf("llama-3.1-8b.json"), []layer{{"full_attention", 128, 500000, ScalingLlama3, false}}},
	} {
		got, err := LoadHFConfigLayers(c.path, HFOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if len(got) != len(c.want) {
			t.Fatalf("%s: %d layer types, want %d: %+v", c.path, len(got), len(c.want), got)
		}
		for i, w := range c.want {
			g := got[i]
			if g.Type != w.typ || g.Spec.HeadDim != w.head || g.Spec.Base != w.base || g.Spec.Scaling.Kind() != w.scaling || (g.Spec.Axes != "") != w.sections {
				t.Errorf("%s: layer type %d is %q, head %d, base %v, %s, axes %q; want %+v", c.path, i, g.Type, g.Spec.HeadDim, g.Spec.Base, g.Spec.Scaling.Kind(), g.Spec.Axes, w)
			}
			opt := HFOptions{LayerType: w.typ}
			s, info, err := LoadHFConfigWith(c.path, opt)
			if err != nil {
				t.Fatalf("%s, layer type %q: %v", c.path, w.typ, err)
			}
			if !reflect.DeepEqual(g.Spec, s) || !reflect.DeepEqual(g.Info, info) {
				t.Errorf("%s, layer type %q: not LoadHFConfigWith's:\n%+v\n%+v", c.path, w.typ, g, s)
			}
			if w.typ != "" {
				for _, l := range g.Info.Layers {
					if l.Chosen != (l.Type == w.typ) {
						t.Errorf("%s, layer type %q: layer %+v chosen %v", c.path, w.typ, l, l.Chosen)
					}
				}
			}
		}
	}
	for _, opt := range []HFOptions{{LayerType: "full_attention"}, {Local: true}} {
		if _, err := LoadHFConfigLayers(hf("gemma-3-4b-it.json"), opt); err == nil || !strings.Contains(err.Error(), "loads every layer type") {
			t.Errorf("%+v: error %v, want a refusal", opt, err)
		}
	}
	// The vision encoder has no layer types: one entry of type "".
	if got, err := LoadHFConfigLayers(hf("ministral-3-3b-instruct-2512.json"), HFOptions{Part: HFPartVision}); err != nil || len(got) != 1 || got[0].Type != "" || got[0].Spec.Axes != AxesPixtral {
		t.Errorf("vision part: %+v, %v; want one Pixtral entry of type \"\"", got, err)
	}
	if _, err := LoadHFConfigLayers(filepath.Join(t.TempDir(), "none.json"), HFOptions{}); err == nil || !strings.Contains(err.Error(), "cannot read the config") {
		t.Errorf("missing file: %v", err)
	}
}
