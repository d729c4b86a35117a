package spec

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestLoadHFConfigTestdata checks every testdata config against values
// written out by hand from the published config.
func TestLoadHFConfigTestdata(t *testing.T) {
	// TestHFConfigsAllChecked checks that every config is covered.
	cases := hfCases(t)
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join("testdata", "hf", c.file)
			s, err := LoadHFConfig(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("spec does not validate: %v", err)
			}
			want := DefaultSpec()
			want.HeadDim, want.Base, want.Layout = c.headDim, c.base, c.layout
			want.MaxPositions = rawMaxPositions(t, path)
			if c.rotary != c.headDim {
				want.RotaryDim = c.rotary
			}
			r := c.rope
			sc := &want.Scaling
			switch r.RopeType {
			case "default":
			case "llama3":
				sc.Type, sc.Factor, sc.OrigCtx, sc.LowFreqFactor, sc.HighFreqFactor = ScalingLlama3, r.Factor, r.OrigMax, r.LowFreq, r.HighFreq
			case "yarn":
				sc.Type, sc.Factor, sc.OrigCtx, sc.Truncate = ScalingYaRN, r.Factor, r.OrigMax, r.Truncate
				sc.BetaFast, sc.BetaSlow = r.BetaFast, r.BetaSlow
			case "longrope":
				sc.Type, sc.Factor, sc.OrigCtx = ScalingLongRoPE, float64(r.MaxPos)/float64(r.OrigMax), r.OrigMax
				sc.ShortFactor, sc.LongFactor = r.Short, r.Long
			default:
				t.Fatalf("no expectation for %s", r.RopeType)
			}
			if !reflect.DeepEqual(s, want) {
				t.Errorf("LoadHFConfig(%s) =\n\t%+v\nwant\n\t%+v", path, s, want)
			}
		})
	}
	// The Phi-3 lists are the published 48 values each.
	s, err := LoadHFConfig(filepath.Join("testdata", "hf", "phi-3-mini-128k-instruct.json"))
	if err != nil {
		t.Fatal(err)
	}
	sc := s.Scaling
	if len(sc.ShortFactor) != 48 || len(sc.LongFactor) != 48 || sc.ShortFactor[0] != 1.05 || sc.LongFactor[47] != 64.81001281738281 || sc.ShortFactor[47] != 2.9499999999999975 {
		t.Errorf("phi-3 factor lists: %v %v", sc.ShortFactor, sc.LongFactor)
	}
}

// rawMaxPositions reads max_position_embeddings straight from the JSON at
// path: text_config's when there is one, else the top level's (0 if none).
func rawMaxPositions(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Max  int `json:"max_position_embeddings"`
		Text *struct {
			Max int `json:"max_position_embeddings"`
		} `json:"text_config"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Text != nil && cfg.Text.Max != 0 {
		return cfg.Text.Max
	}
	return cfg.Max
}

// loadInline writes config to a file and loads it.
func loadInline(t *testing.T, config string) (Spec, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadHFConfig(path)
	return s, path, err
}

// llamaLike is a Llama-shaped config with the given extra top-level JSON.
func llamaLike(extra string) string {
	cfg := `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072, "rope_theta": 500000.0`
	if extra != "" {
		cfg += ", " + extra
	}
	return cfg + "}"
}

func TestLoadHFConfigVariants(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   func(*Spec) // applied to the spec of llamaLike("")
	}{
		{"no scaling", llamaLike(""), func(s *Spec) {}},
		{"rope_scaling null", llamaLike(`"rope_scaling": null`), func(s *Spec) {}},
		{"rope_type default", llamaLike(`"rope_scaling": {"rope_type": "default"}`), func(s *Spec) {}},
		{"empty rope_scaling", llamaLike(`"rope_scaling": {}`), func(s *Spec) {}},
		{"head_dim wins", llamaLike(`"head_dim": 64`), func(s *Spec) { s.HeadDim = 64 }},
		{"head_dim null", llamaLike(`"head_dim": null`), func(s *Spec) {}},
		{"integral float", `{"model_type": "llama", "hidden_size": 4096.0, "num_attention_heads": 32, "rope_theta": 500000}`, func(s *Spec) {}},
		{"no rope_theta", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32}`, func(s *Spec) { s.Base = 10000 }},
		{"linear, older type key", llamaLike(`"rope_scaling": {"type": "linear", "factor": 2.0}`), func(s *Spec) {
			s.Scaling.Type, s.Scaling.Factor = ScalingLinear, 2
		}},
		{"rope_type wins over type", llamaLike(`"rope_scaling": {"type": "yarn", "rope_type": "linear", "factor": 2.0}`), func(s *Spec) {
			s.Scaling.Type, s.Scaling.Factor = ScalingLinear, 2
		}},
		{"ntk", llamaLike(`"rope_scaling": {"rope_type": "ntk", "factor": 2}`), func(s *Spec) {
			s.Scaling.Type, s.Scaling.Factor = ScalingNTK, 2
		}},
		{"yarn, DeepSeek style", llamaLike(`"rope_scaling": {"type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1, "mscale": 0.707, "mscale_all_dim": 0.707}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 40, OrigCtx: 4096, BetaFast: 32, BetaSlow: 1, MScale: 0.707, MScaleAllDim: 0.707, Truncate: true}
		}},
		{"yarn, mscale alone is ignored as transformers does", llamaLike(`"rope_scaling": {"type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 0}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 4, OrigCtx: 4096, Truncate: true}
		}},
		{"yarn, attention_factor and truncate", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096, "attention_factor": 1.25, "truncate": false, "finetuned": true}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 4, OrigCtx: 4096, AttnFactor: 1.25}
		}},
		// _compute_yarn_parameters: a factor of None is the ratio of the
		// contexts (the key itself is required by the validator).
		{"yarn, factor null: from the contexts", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": null, "original_max_position_embeddings": 4096}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 32, OrigCtx: 4096, Truncate: true}
		}},
		{"yarn, original context from max_position_embeddings", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 4, OrigCtx: 131072, Truncate: true}
		}},
		{"top-level original_max_position_embeddings wins (v5)", llamaLike(`"original_max_position_embeddings": 8192, "rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingYaRN, Factor: 4, OrigCtx: 8192, Truncate: true}
		}},
		{"su is longrope", llamaLike(`"original_max_position_embeddings": 4096, "rope_scaling": {"type": "su", "short_factor": [` + strings.Repeat("1,", 63) + `1], "long_factor": [` + strings.Repeat("2,", 63) + `2]}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingLongRoPE, Factor: 32, OrigCtx: 4096, ShortFactor: filled(64, 1), LongFactor: filled(64, 2), Truncate: true}
		}},
		{"longrope, explicit factor and attention factor", llamaLike(`"rope_scaling": {"type": "longrope", "factor": 16, "attention_factor": 1.1, "original_max_position_embeddings": 8192, "short_factor": [` + strings.Repeat("1,", 63) + `1], "long_factor": [` + strings.Repeat("2,", 63) + `2]}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingLongRoPE, Factor: 16, AttnFactor: 1.1, OrigCtx: 8192, ShortFactor: filled(64, 1), LongFactor: filled(64, 2), Truncate: true}
		}},
		{"v5 rope_parameters", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_parameters": {"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}}`, func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingLlama3, Factor: 8, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4, Truncate: true}
		}},
		{"v5 rope_parameters default with partial_rotary_factor", `{"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.4}}`, func(s *Spec) {
			s.HeadDim, s.RotaryDim, s.Base = 80, 32, 10000
		}},
		{"rope_parameters' rope_theta wins", llamaLike(`"rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}`), func(s *Spec) { s.Base = 1e6 }},
		{"rope_scaling wins over rope_parameters", llamaLike(`"rope_scaling": {"rope_type": "linear", "factor": 2}, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}`), func(s *Spec) {
			s.Scaling.Type, s.Scaling.Factor = ScalingLinear, 2
		}},
		{"gpt_neox default rotary_pct", `{"model_type": "gpt_neox", "hidden_size": 512, "num_attention_heads": 8}`, func(s *Spec) {
			s.HeadDim, s.RotaryDim, s.Base = 64, 16, 10000
		}},
		{"phi default partial_rotary_factor", `{"model_type": "phi", "hidden_size": 2048, "num_attention_heads": 32}`, func(s *Spec) {
			s.HeadDim, s.RotaryDim, s.Base = 64, 32, 10000
		}},
		{"gptj default rotary_dim", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16}`, func(s *Spec) {
			s.HeadDim, s.RotaryDim, s.Base, s.Layout = 256, 64, 10000, Interleaved
		}},
		{"gptj rotary_dim null is the whole head", `{"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": null}`, func(s *Spec) {
			s.HeadDim, s.RotaryDim, s.Base, s.Layout = 256, 64, 10000, Interleaved
		}},
		{"gemma default head_dim", `{"model_type": "gemma", "hidden_size": 3072, "num_attention_heads": 16}`, func(s *Spec) {
			s.HeadDim, s.Base = 256, 10000
		}},
		{"partial_rotary_factor 1", llamaLike(`"partial_rotary_factor": 1.0`), func(s *Spec) {}},
		{"partial_rotary_factor and rotary_dim agree", llamaLike(`"partial_rotary_factor": 0.5, "rotary_dim": 64`), func(s *Spec) { s.RotaryDim = 64 }},
		{"cohere interleaved", `{"model_type": "cohere", "hidden_size": 8192, "num_attention_heads": 64, "rope_theta": 8000000.0}`, func(s *Spec) {
			s.Base, s.Layout = 8e6, Interleaved
		}},
		// Gemma2Attention's scale: Gemma2Config's query_pre_attn_scalar 256.
		{"gemma2 with a local base: the global RoPE", `{"model_type": "gemma2", "head_dim": 128, "rope_theta": 500000, "rope_local_base_freq": 10000}`, func(s *Spec) { s.QKScale = 1 / math.Sqrt(256) }},
		{"dynamic", llamaLike(`"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingDynamic, Factor: 2, OrigCtx: 131072, Truncate: true}
		}},
		{"dynamic, older key, L is max_position_embeddings", llamaLike(`"original_max_position_embeddings": 8192, "rope_scaling": {"type": "dynamic", "factor": 2.0}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingDynamic, Factor: 2, OrigCtx: 131072, Truncate: true}
		}},
		{"mrope", llamaLike(`"rope_scaling": {"type": "default", "mrope_section": [16, 24, 24]}`), func(s *Spec) {
			s.Axes, s.Sections = AxesMRoPE, []int{16, 24, 24}
		}},
		{"mrope type", llamaLike(`"rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}`), func(s *Spec) {
			s.Axes, s.Sections = AxesMRoPE, []int{16, 24, 24}
		}},
		{"interleaved mrope in rope_parameters", llamaLike(`"rope_parameters": {"rope_type": "default", "mrope_section": [24, 20, 20], "mrope_interleaved": true}`), func(s *Spec) {
			s.Axes, s.Sections = AxesInterleaved, []int{24, 20, 20}
		}},
		{"text_config", `{"model_type": "llava", "text_config": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000}}`, func(s *Spec) {}},
		{"text_config without model_type", `{"model_type": "llama", "text_config": {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000}}`, func(s *Spec) {}},
		// DeepseekV3Attention's scale: qk_head_dim**-0.5 with
		// DeepseekV3Config's qk_nope_head_dim 128.
		{"MLA, rope_interleave false", `{"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64, "rope_theta": 500000, "rope_interleave": false}`, func(s *Spec) {
			s.HeadDim, s.QKScale = 64, 1/math.Sqrt(128+64)
		}},
		{"llama3 equal factors", llamaLike(`"rope_scaling": {"rope_type": "llama3", "factor": 16, "low_freq_factor": 1, "high_freq_factor": 1, "original_max_position_embeddings": 8192}`), func(s *Spec) {
			s.Scaling = Scaling{Type: ScalingLlama3, Factor: 16, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 1, Truncate: true}
		}},
	}
	base := DefaultSpec()
	base.HeadDim, base.Base, base.Layout = 128, 500000, NeoX
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, path, err := loadInline(t, tt.config)
			if err != nil {
				t.Fatal(err)
			}
			want := base
			want.MaxPositions = rawMaxPositions(t, path)
			tt.want(&want)
			if !reflect.DeepEqual(s, want) {
				t.Errorf("got\n\t%+v\nwant\n\t%+v", s, want)
			}
		})
	}
}

func TestLoadHFConfigErrors(t *testing.T) {
	tests := []struct {
		name   string
		config string // "" for no file
		key    string // the key the error names
		msg    string // a part of the message
	}{
		{"missing file", "", "", "cannot read the config: no such file or directory"},
		{"empty file", " ", "", "invalid JSON: the file is empty"},
		{"malformed JSON", "{\n  \"model_type\": \"llama\",\n  \"hidden_size\": 4096,,\n}", "", "invalid JSON at line 3, column 23"},
		{"truncated JSON", `{"model_type": "llama"`, "", "invalid JSON: unexpected end of the file"},
		{"trailing data", `{"model_type": "llama"} {}`, "", "invalid JSON at line 1, column 25: data after the top-level object"},
		{"not an object", `[1, 2]`, "", "want a JSON object (a config.json), got an array"},
		{"no model_type", `{"hidden_size": 4096, "num_attention_heads": 32}`, "model_type", "missing: ropegen needs the model type to pick the pair layout"},
		{"model_type not a string", `{"model_type": 7}`, "model_type", "want a string, got the number 7"},
		{"rope_theta a string", llamaLike(`"rope_theta": "10000"`), "rope_theta", `want a number, got the string "10000"`},
		{"head_dim fractional", llamaLike(`"head_dim": 64.5`), "head_dim", "want an integer, got 64.5"},
		{"head_dim negative", llamaLike(`"head_dim": -64`), "head_dim", "want a positive integer, got -64"},
		{"no hidden_size", `{"model_type": "llama", "num_attention_heads": 32}`, "hidden_size", "missing"},
		{"no heads", `{"model_type": "llama", "hidden_size": 4096}`, "num_attention_heads", "missing"},
		{"zero heads", `{"model_type": "gptj", "n_embd": 4096, "n_head": 0}`, "n_head", "want a positive integer, got 0"},
		{"heads do not divide", `{"model_type": "llama", "hidden_size": 4000, "num_attention_heads": 48}`, "hidden_size", "4000 is not a multiple of num_attention_heads 48"},
		{"partial_rotary_factor above 1", llamaLike(`"partial_rotary_factor": 1.5`), "partial_rotary_factor", "want a fraction of the head in (0, 1], got 1.5"},
		{"rotary_pct zero", llamaLike(`"rotary_pct": 0`), "rotary_pct", "want a fraction of the head in (0, 1], got 0"},
		{"rotary_dim disagrees", llamaLike(`"partial_rotary_factor": 0.5, "rotary_dim": 32`), "rotary_dim", "gives rotary dim 32, but partial_rotary_factor gives 64"},
		{"rope_theta an object", llamaLike(`"rope_theta": {}`), "rope_theta", "want a number, got an object"},
		{"rope_parameters not an object", llamaLike(`"rope_parameters": [1]`), "rope_parameters", "want an object or null, got an array"},
		{"rope_parameters rope_theta a string", llamaLike(`"rope_parameters": {"rope_type": "default", "rope_theta": "1e6"}`), "rope_parameters.rope_theta", "want a number"},
		{"rope_parameters partial_rotary_factor", llamaLike(`"rope_parameters": {"rope_type": "default", "partial_rotary_factor": 2}`), "rope_parameters.partial_rotary_factor", "want a fraction of the head in (0, 1], got 2"},
		{"rotary_dim negative", llamaLike(`"rotary_dim": -2`), "rotary_dim", "want a positive integer, got -2"},
		{"hidden_size zero", `{"model_type": "llama", "hidden_size": 0, "num_attention_heads": 32}`, "hidden_size", "want a positive integer, got 0"},
		{"top-level original context zero", llamaLike(`"original_max_position_embeddings": 0, "rope_scaling": {"rope_type": "yarn", "factor": 4}`), "original_max_position_embeddings", "want a positive integer, got 0"},
		{"max_position_embeddings zero", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 0, "rope_scaling": {"rope_type": "yarn", "factor": 4}}`, "max_position_embeddings", "want a positive integer, got 0"},
		{"finetuned a number", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "finetuned": 1}`), "rope_scaling.finetuned", "want true or false, got the number 1"},
		{"rope_scaling not an object", llamaLike(`"rope_scaling": 2`), "rope_scaling", "want an object or null, got the number 2"},
		{"dynamic without factor", llamaLike(`"rope_scaling": {"rope_type": "dynamic"}`), "rope_scaling.factor", `missing: rope_type "dynamic" requires it (transformers' _validate_dynamic_rope_parameters refuses the config without it)`},
		{"unknown type", llamaLike(`"rope_scaling": {"rope_type": "foo"}`), "rope_scaling.rope_type", `scaling type "foo" is not supported (ropegen reads "default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")`},
		{"unknown type, older key", llamaLike(`"rope_scaling": {"type": "foo "}`), "rope_scaling.type", `scaling type "foo " is not supported`},
		{"type not a string", llamaLike(`"rope_scaling": {"rope_type": 3}`), "rope_scaling.rope_type", "want a string"},
		{"mrope section fractional", llamaLike(`"rope_scaling": {"type": "default", "mrope_section": [16, 24.5, 24]}`), "rope_scaling.mrope_section", "element 1: want a count of pairs, got 24.5"},
		{"mrope_interleaved a string", llamaLike(`"rope_scaling": {"type": "default", "mrope_section": [16, 24, 24], "mrope_interleaved": "yes"}`), "rope_scaling.mrope_interleaved", `want true or false, got the string "yes"`},
		{"unknown yarn key", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "llama_5_scaling": 0.1}`), "rope_scaling.llama_5_scaling", `unknown key for rope_type "yarn" (ropegen reads: "attention_factor", "beta_fast"`},
		{"phimoe mscales", llamaLike(`"rope_scaling": {"type": "longrope", "short_mscale": 1.2, "long_mscale": 1.2, "short_factor": [1], "long_factor": [1]}`), "rope_scaling.long_mscale", `unknown key for rope_type "longrope"`},
		{"factor in default", llamaLike(`"rope_scaling": {"rope_type": "default", "factor": 2}`), "rope_scaling.factor", `unknown key for rope_type "default" (ropegen reads: none)`},
		{"per-layer mixed with plain keys", llamaLike(`"rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6}, "rope_theta": 1e4}`), "rope_parameters",
			"mixes per-layer-type objects (full_attention) with plain keys"},
		{"linear without factor", llamaLike(`"rope_scaling": {"rope_type": "linear"}`), "rope_scaling.factor", `missing: rope_type "linear" requires it (transformers' _validate_linear_rope_parameters refuses the config without it)`},
		{"factor zero", llamaLike(`"rope_scaling": {"rope_type": "linear", "factor": 0}`), "rope_scaling.factor", "want a number > 0, got 0"},
		{"factor a string", llamaLike(`"rope_scaling": {"rope_type": "linear", "factor": "2"}`), "rope_scaling.factor", "want a number"},
		{"factor huge", llamaLike(`"rope_scaling": {"rope_type": "linear", "factor": 1e999}`), "rope_scaling.factor", "1e999 is out of range of float64"},
		{"llama3 without factor", llamaLike(`"rope_scaling": {"rope_type": "llama3", "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192}`), "rope_scaling.factor", `missing: rope_type "llama3" requires it (transformers' _validate_llama3_rope_parameters refuses the config without it)`},
		{"llama3 without high_freq_factor", llamaLike(`"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 1, "original_max_position_embeddings": 8192}`), "rope_scaling.high_freq_factor", `missing: rope_type "llama3" requires it (transformers' _validate_llama3_rope_parameters refuses the config without it)`},
		{"yarn without any context", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_scaling": {"rope_type": "yarn", "factor": 4}}`, "rope_scaling.original_max_position_embeddings", "missing, and so is max_position_embeddings"},
		{"yarn orig fractional", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 4096.5}`), "rope_scaling.original_max_position_embeddings", "want an integer"},
		{"yarn orig zero", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "original_max_position_embeddings": 0}`), "rope_scaling.original_max_position_embeddings", "want a positive integer, got 0"},
		{"yarn attention_factor zero", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "attention_factor": 0}`), "rope_scaling.attention_factor", "want a number > 0, got 0"},
		{"yarn truncate a string", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "truncate": "no"}`), "rope_scaling.truncate", `want true or false, got the string "no"`},
		{"yarn beta_fast a bool", llamaLike(`"rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": true}`), "rope_scaling.beta_fast", "want a number, got true"},
		{"longrope without long_factor", llamaLike(`"rope_scaling": {"rope_type": "longrope", "factor": 4, "short_factor": [1]}`), "rope_scaling.long_factor", `missing: rope_type "longrope" requires it (transformers' _validate_longrope_rope_parameters refuses the config without it)`},
		// transformers' validators require factor for yarn, and every type's
		// rotary embedding but longrope's and yarn's needs it a number.
		{"yarn without factor", llamaLike(`"rope_scaling": {"rope_type": "yarn"}`), "rope_scaling.factor", `missing: rope_type "yarn" requires it (transformers' _validate_yarn_rope_parameters refuses the config without it)`},
		{"yarn without factor, older key", llamaLike(`"rope_scaling": {"type": "yarn", "original_max_position_embeddings": 4096}`), "rope_scaling.factor", `missing: rope_type "yarn" requires it`},
		{"su without short_factor", llamaLike(`"rope_scaling": {"type": "su", "long_factor": [1]}`), "rope_scaling.short_factor", `missing: rope_type "su" requires it (transformers' _validate_longrope_rope_parameters refuses`},
		{"linear factor null", llamaLike(`"rope_scaling": {"rope_type": "linear", "factor": null}`), "rope_scaling.factor", `null: rope_type "linear" needs a number`},
		{"llama3 factor null", llamaLike(`"rope_scaling": {"rope_type": "llama3", "factor": null, "low_freq_factor": 1, "high_freq_factor": 4}`), "rope_scaling.factor", `null: rope_type "llama3" needs a number`},
		{"max_position_embeddings negative", `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": -1}`, "max_position_embeddings", "want a positive integer, got -1: it is the model's context length"},
		{"longrope list of strings", llamaLike(`"rope_scaling": {"rope_type": "longrope", "factor": 4, "short_factor": [1, "2"], "long_factor": [1, 2]}`), "rope_scaling.short_factor", `element 1: want a number, got the string "2"`},
		{"longrope list not a list", llamaLike(`"rope_scaling": {"rope_type": "longrope", "factor": 4, "short_factor": 1, "long_factor": [1, 2]}`), "rope_scaling.short_factor", "want an array of numbers, got the number 1"},
		{"longrope no factor, no max_position_embeddings", `{"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "original_max_position_embeddings": 4096, "rope_scaling": {"type": "longrope", "short_factor": [1], "long_factor": [1]}}`, "rope_scaling.factor", "missing, and so is max_position_embeddings to derive it from (max_position_embeddings/original_max_position_embeddings)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				path string
				err  error
			)
			if tt.config == "" {
				path = filepath.Join(t.TempDir(), "missing.json")
				_, err = LoadHFConfig(path)
			} else {
				_, path, err = loadInline(t, tt.config)
			}
			var he *HFConfigError
			if !errors.As(err, &he) {
				t.Fatalf("error %v (%T), want a *HFConfigError", err, err)
			}
			if he.Path != path || he.Key != tt.key {
				t.Errorf("error %q: path %q key %q, want %q %q", err, he.Path, he.Key, path, tt.key)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+": ") || !strings.Contains(msg, tt.msg) {
				t.Errorf("error\n\t%q\nwant it to start with the path and contain\n\t%q", msg, tt.msg)
			}
			if tt.key != "" && !strings.Contains(msg, tt.key+": ") {
				t.Errorf("error %q does not name the key %s", msg, tt.key)
			}
		})
	}
}

// A config that loads but gives a spec Validate rejects is left to
// Validate, so that command-line flags can still override the bad value.
func TestLoadHFConfigLeavesRangesToValidate(t *testing.T) {
	s, _, err := loadInline(t, llamaLike(`"rope_scaling": {"rope_type": "longrope", "factor": 4, "short_factor": [1, 2, 3], "long_factor": [1, 2, 3]}`))
	if err != nil {
		t.Fatal(err)
	}
	var se *SpecError
	if err := s.Validate(); !errors.As(err, &se) || se.Field != "short-factor" || se.Value != "3 values" {
		t.Fatalf("Validate: %v, want -short-factor 3 values", err)
	}
	// The override the CLI would apply fixes it.
	s.Scaling.ShortFactor, s.Scaling.LongFactor = filled(64, 1), filled(64, 4)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

// Llama 4's NoPE layers: -explain's note names them from no_rope_layers,
// else from no_rope_layer_interval (4 when absent, as Llama4TextConfig);
// a malformed entry is refused naming the key.
func TestLlama4NoPENote(t *testing.T) {
	cfg := func(extra string) string {
		c := `{"model_type": "llama4_text", "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 40, "rope_theta": 500000.0`
		if extra != "" {
			c += ", " + extra
		}
		return c + "}"
	}
	for _, c := range []struct{ extra, want string }{
		{"", "(i+1) mod 4 = 0 (layers 3, 7, 11, …; Llama4TextConfig's default no_rope_layer_interval 4)"},
		{`"no_rope_layer_interval": 3`, "(i+1) mod 3 = 0 (layers 2, 5, 8, …; no_rope_layer_interval 3)"},
		{`"no_rope_layers": [1, 1, 0, 1, 1, 0]`, "layers 2, 5 of 6 use no position embedding (no_rope_layers)"},
		{`"no_rope_layers": [1, 1]`, "no_rope_layers gives all 2 layers RoPE"},
	} {
		path := filepath.Join(t.TempDir(), "config.json")
		if err := os.WriteFile(path, []byte(cfg(c.extra)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, info, err := LoadHFConfigWith(path, HFOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.extra, err)
		}
		if notes := strings.Join(info.Notes, "\n"); !strings.Contains(notes, c.want) {
			t.Errorf("%s: notes %q do not say %q", c.extra, info.Notes, c.want)
		}
	}
	for _, c := range []struct{ extra, want string }{
		{`"no_rope_layers": [1, 2]`, "no_rope_layers: entry 1 is 2: want 1 (a RoPE layer) or 0 (a NoPE layer)"},
		{`"no_rope_layer_interval": 0`, "no_rope_layer_interval: want a positive integer, got 0"},
	} {
		_, _, err := loadInline(t, cfg(c.extra))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.extra, err, c.want)
		}
	}
}
