package spec

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ropeNotes drops the qk-norm notes from notes: the RoPE tests count the
// others.
func ropeNotes(notes []string) []string {
	var out []string
	for _, n := range notes {
		if !strings.HasPrefix(n, "qk-norm:") {
			out = append(out, n)
		}
	}
	return out
}

// hfNormWant is what a model type's transformers code does, written out
// here from the code (see the comments on hfNorms), not from the table.
type hfNormWant struct {
	kind   NormKind
	scope  string
	after  bool
	defEps float64 // rms_norm_eps's config-class default; 0: the key is required
	flag   string  // the switch, when there is one
}

var hfNormWants = map[string]hfNormWant{
	"qwen3":            {NormRMS, ScopeHead, false, 1e-6, ""},   // Qwen3RMSNorm(head_dim) before RoPE; Qwen3Config
	"qwen3_moe":        {NormRMS, ScopeHead, false, 1e-6, ""},   // Qwen3MoeRMSNorm(head_dim); Qwen3MoeConfig
	"qwen3_next":       {NormGemma, ScopeHead, false, 1e-6, ""}, // Qwen3NextRMSNorm is Gemma3RMSNorm; Qwen3NextConfig
	"qwen3_vl":         {NormRMS, ScopeHead, false, 1e-6, ""},   // Qwen3VLTextRMSNorm(head_dim); Qwen3VLTextConfig
	"qwen3_vl_text":    {NormRMS, ScopeHead, false, 1e-6, ""},   // likewise
	"gemma3":           {NormGemma, ScopeHead, false, 1e-6, ""}, // Gemma3RMSNorm, (1 + weight); Gemma3TextConfig
	"gemma3_text":      {NormGemma, ScopeHead, false, 1e-6, ""}, // likewise
	"olmo2":            {NormRMS, ScopeToken, false, 1e-5, ""},  // Olmo2RMSNorm(num_heads·head_dim) on the projection; Olmo2Config
	"olmo3":            {NormRMS, ScopeToken, false, 1e-5, ""},  // Olmo2Attention's norms; Olmo3Config
	"llama4":           {NormL2, ScopeHead, true, 1e-5, "use_qk_norm"},
	"llama4_text":      {NormL2, ScopeHead, true, 1e-5, "use_qk_norm"}, // Llama4TextL2Norm after apply_rotary_emb; Llama4TextConfig
	"hunyuan_v1_dense": {NormRMS, ScopeHead, true, 1e-5, ""},           // query_layernorm after apply_rotary_pos_emb; HunYuanDenseV1Config
	"hunyuan_v1_moe":   {NormRMS, ScopeHead, true, 1e-5, ""},           // likewise; HunYuanMoEV1Config
	// A type whose config class has no default ropegen checked needs the
	// key; no real entry is one today, so the test adds one (hfNormTest).
	hfNormTest: {NormRMS, ScopeHead, false, 0, ""},
}

// hfNormTest is the model type of a test-only entry without a default ε.
const hfNormTest = "ropegen_test_norm_without_default"

// loadNorm loads an inline config, with the layout given (some of these
// model types are not in the layout table).
func loadNorm(t *testing.T, cfg string) (Spec, HFInfo, error) {
	t.Helper()
	_, path, _ := loadInline(t, cfg)
	return LoadHFConfigWith(path, HFOptions{Layout: NeoX})
}

// The norm table: one expectation per entry; the config's rms_norm_eps
// wins, the class default fills in, a missing one is refused where there
// is no default, and the switch turns it off.
func TestHFNormTable(t *testing.T) {
	hfNorms[hfNormTest] = hfNorm{kind: NormRMS, scope: ScopeHead, how: "a test-only entry"}
	defer delete(hfNorms, hfNormTest)
	for model := range hfNorms {
		if _, ok := hfNormWants[model]; !ok {
			t.Errorf("model type %q is in hfNorms but has no expectation here", model)
		}
	}
	for model, w := range hfNormWants {
		t.Run(model, func(t *testing.T) {
			base := fmt.Sprintf(`{"model_type": %q, "head_dim": 128, "hidden_size": 4096, "num_attention_heads": 32`, model)
			s, info, err := loadNorm(t, base+`, "rms_norm_eps": 3e-6}`)
			if err != nil {
				t.Fatal(err)
			}
			want := QKNorm{Kind: w.kind, Eps: 3e-6, Scope: w.scope, After: w.after}
			if s.QKNorm != want {
				t.Errorf("with rms_norm_eps 3e-6: %+v, want %+v", s.QKNorm, want)
			}
			if n := strings.Join(info.Notes, "\n"); !strings.Contains(n, "qk-norm: "+string(w.kind)) || !strings.Contains(n, "ε 3e-06 (rms_norm_eps)") {
				t.Errorf("notes %q do not say which norm", info.Notes)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("does not validate: %v", err)
			}
			s, info, err = loadNorm(t, base+`}`)
			if w.defEps == 0 {
				var he *HFConfigError
				if !errors.As(err, &he) || he.Key != "rms_norm_eps" || !strings.Contains(err.Error(), "-qk-norm-eps") {
					t.Errorf("without rms_norm_eps: %v, want a refusal naming rms_norm_eps and -qk-norm-eps", err)
				}
			} else if err != nil || s.QKNorm.Eps != w.defEps || !strings.Contains(strings.Join(info.Notes, "\n"), "default rms_norm_eps") {
				t.Errorf("without rms_norm_eps: %+v, %v, %q; want ε %v, the class default", s.QKNorm, err, info.Notes, w.defEps)
			}
			if w.flag != "" {
				s, info, err = loadNorm(t, base+`, "rms_norm_eps": 1e-5, "`+w.flag+`": false}`)
				if err != nil || s.QKNorm.Enabled() || !strings.Contains(strings.Join(info.Notes, "\n"), "qk-norm: none: "+w.flag+" is false") {
					t.Errorf("%s false: %+v, %v, %q", w.flag, s.QKNorm, err, info.Notes)
				}
			}
		})
	}
}

// Model types without a QK-norm get none; one whose config turns an unknown
// QK-norm on gets a note instead of a guess.
func TestHFNormNone(t *testing.T) {
	s, info, err := loadNorm(t, `{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rms_norm_eps": 1e-5}`)
	if err != nil || s.QKNorm.Enabled() || len(info.Notes) != 0 {
		t.Errorf("llama: %+v, %v, %q", s.QKNorm, err, info.Notes)
	}
	s, info, err = loadNorm(t, `{"model_type": "cohere", "hidden_size": 4096, "num_attention_heads": 32, "use_qk_norm": true}`)
	if err != nil || s.QKNorm.Enabled() || !strings.Contains(strings.Join(info.Notes, "\n"), `use_qk_norm true, but model_type "cohere" has no QK-norm in ropegen's table`) {
		t.Errorf("cohere with use_qk_norm: %+v, %v, %q", s.QKNorm, err, info.Notes)
	}
}

// Bad values of the keys the norm reads are refused, naming the key.
func TestHFNormErrors(t *testing.T) {
	for _, c := range []struct{ cfg, key, msg string }{
		{`{"model_type": "qwen3", "head_dim": 128, "rms_norm_eps": "1e-6"}`, "rms_norm_eps", `want a number, got the string "1e-6"`},
		{`{"model_type": "qwen3", "head_dim": 128, "rms_norm_eps": 0}`, "rms_norm_eps", "want a number > 0, got 0"},
		{`{"model_type": "qwen3", "head_dim": 128, "rms_norm_eps": -1e-6}`, "rms_norm_eps", "want a number > 0"},
		{`{"model_type": "llama4_text", "head_dim": 128, "use_qk_norm": 1}`, "use_qk_norm", "want true or false"},
		{`{"model_type": "cohere", "head_dim": 128, "use_qk_norm": "yes"}`, "use_qk_norm", "want true or false"},
	} {
		_, _, err := loadNorm(t, c.cfg)
		var he *HFConfigError
		if !errors.As(err, &he) || he.Key != c.key || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want an error on %s saying %q", c.cfg, err, c.key, c.msg)
		}
	}
}

// The published configs in testdata: the norm each model's transformers
// code applies, and the note about it.
func TestHFNormConfigs(t *testing.T) {
	none := QKNorm{}
	for _, c := range []struct {
		file string
		want QKNorm
		note string // in the notes
	}{
		{"qwen3-8b.json", QKNorm{NormRMS, 1e-6, ScopeHead, false}, "ε 1e-06 (rms_norm_eps)"},
		{"qwen3-0.6b.json", QKNorm{NormRMS, 1e-6, ScopeHead, false}, "(Qwen3Config's default rms_norm_eps)"},
		{"qwen3-vl-8b-instruct.json", QKNorm{NormRMS, 1e-6, ScopeHead, false}, "Qwen3VLTextConfig's default"},
		{"gemma-3-4b-it.json", QKNorm{NormGemma, 1e-6, ScopeHead, false}, "Gemma3RMSNorm"},
		{"olmo-2-1124-7b.json", QKNorm{NormRMS, 1e-5, ScopeToken, false}, "each token's heads as one vector"},
		{"llama-4-scout-17b-16e-instruct.json", QKNorm{NormL2, 1e-5, ScopeHead, true}, "after the rotation"},
		{"hunyuan-a13b-instruct.json", QKNorm{NormRMS, 1e-5, ScopeHead, true}, "HunYuanMoEV1Attention"},
		{"llama-3.1-8b.json", none, ""},
		{"mistral-7b-v0.3.json", none, ""},
		{"deepseek-v3.json", none, ""},
		{"gemma-2-9b.json", none, ""},
	} {
		s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), HFOptions{})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if s.QKNorm != c.want {
			t.Errorf("%s: %+v, want %+v", c.file, s.QKNorm, c.want)
		}
		notes := "\n" + strings.Join(info.Notes, "\n")
		if c.note == "" {
			if strings.Contains(notes, "\nqk-norm") {
				t.Errorf("%s: the notes say a norm:%s", c.file, notes)
			}
			continue
		}
		if !strings.Contains(notes, "\nqk-norm: "+string(c.want.Kind)) || !strings.Contains(notes, c.note) {
			t.Errorf("%s: the notes lack the norm's (%q):%s", c.file, c.note, notes)
		}
	}
}

// A norm the caller forces on a config takes the model's ε, and the notes
// on the config's norm give way when the caller changes it.
func TestHFForcedNormAndNotes(t *testing.T) {
	load := func(file string) (Spec, HFInfo) {
		t.Helper()
		s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", file), HFOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return s, info
	}
	// Llama 3.1: no QK-norm, rms_norm_eps 1e-05.
	s, info := load("llama-3.1-8b.json")
	if info.NormEps != 1e-5 {
		t.Errorf("llama-3.1: NormEps %v, want 1e-05 (rms_norm_eps)", info.NormEps)
	}
	if n := info.ForcedNorm(QKNorm{Kind: NormRMS}); n.Eps != 1e-5 {
		t.Errorf("forced rms: ε %v, want the config's 1e-05", n.Eps)
	}
	if n := info.ForcedNorm(QKNorm{Kind: NormRMS, Eps: 3e-6}); n.Eps != 3e-6 {
		t.Errorf("forced rms with ε 3e-6: ε %v, want 3e-06", n.Eps)
	}
	if n := info.ForcedNorm(QKNorm{Kind: NormNone}); n.Eps != 0 {
		t.Errorf("no norm: ε %v, want 0", n.Eps)
	}
	if got := info.NotesFor(s); !slices.Equal(got, info.Notes) {
		t.Errorf("unchanged spec: notes %q, want %q", got, info.Notes)
	}
	s.QKNorm = info.ForcedNorm(QKNorm{Kind: NormRMS})
	if got := strings.Join(info.NotesFor(s), "\n"); !strings.Contains(got, "qk-norm: rms, set by the caller over the config's none; ε 1e-05 is the model's") {
		t.Errorf("forced rms: notes %q", got)
	}
	// Gemma 3 gives no rms_norm_eps: Gemma3TextConfig's default 1e-6.
	if _, info := load("gemma-3-4b-it.json"); info.NormEps != 1e-6 {
		t.Errorf("gemma-3: NormEps %v, want 1e-06", info.NormEps)
	}
	// Qwen3 with its norm turned off: the note on ApplyNormQK goes.
	s, info = load("qwen3-8b.json")
	if !strings.Contains(strings.Join(info.Notes, "\n"), "ApplyNormQK does both") {
		t.Fatalf("qwen3: notes %q lack the norm's", info.Notes)
	}
	s.QKNorm = QKNorm{Kind: NormNone}
	got := strings.Join(info.NotesFor(s), "\n")
	if strings.Contains(got, "ApplyNormQK does both") || !strings.Contains(got, "qk-norm: none (no ApplyNormQK), set by the caller over the config's rms") {
		t.Errorf("qwen3 -qk-norm none: notes %q", got)
	}
}
