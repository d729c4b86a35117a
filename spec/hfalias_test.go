package spec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Llama-3.3-Nemotron-Super-49B-v1 (model_type nemotron-nas, remote code)
// gets Llama 3.3's RoPE, as vLLM's nemotron_nas.py runs it: neox pairs,
// llama3 scaling ×8 (low 1, high 4, L 8192), θ 500000, heads of 128. The
// numbers are Llama 3.3's config's, written out here; its frequencies are
// those of Llama 3.1 8B's config, which has the same RoPE.
func TestHFNemotronNAS(t *testing.T) {
	s, info, err := LoadHFConfigWith(filepath.Join("testdata", "hf", "llama-3.3-nemotron-super-49b-v1.json"), HFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Scaling{Type: ScalingLlama3, Factor: 8, OrigCtx: 8192, LowFreqFactor: 1, HighFreqFactor: 4, Truncate: true}
	if s.Layout != NeoX || s.HeadDim != 128 || s.Rotary() != 128 || s.Base != 500000 || s.MaxPositions != 131072 {
		t.Errorf("spec %+v: want neox, head 128, rotary 128, θ 500000, 131072 positions", s)
	}
	if s.Scaling.Type != want.Type || s.Scaling.Factor != want.Factor || s.Scaling.OrigCtx != want.OrigCtx ||
		s.Scaling.LowFreqFactor != want.LowFreqFactor || s.Scaling.HighFreqFactor != want.HighFreqFactor {
		t.Errorf("scaling %+v, want %+v", s.Scaling, want)
	}
	if info.ModelType != "llama" || !strings.Contains(strings.Join(info.Notes, "\n"), "nemotron_nas.py") {
		t.Errorf("model type %q, notes %q: want llama, citing nemotron_nas.py", info.ModelType, info.Notes)
	}
	llama, err := LoadHFConfig(filepath.Join("testdata", "hf", "llama-3.1-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	lp, err := Resolve(llama)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Freqs {
		if math.Float64bits(p.Freqs[i]) != math.Float64bits(lp.Freqs[i]) {
			t.Fatalf("θ_%d = %v, Llama 3.1's %v", i, p.Freqs[i], lp.Freqs[i])
		}
	}
	if len(p.Freqs) != 64 || p.Attn != 1 {
		t.Errorf("%d pairs, A %v: want 64 pairs, A 1", len(p.Freqs), p.Attn)
	}
}

// A nemotron-nas config whose position_embedding_type makes vLLM rotate
// adjacent pairs is refused, naming the key.
func TestHFNemotronNASPositionType(t *testing.T) {
	for _, c := range []struct {
		typ  string
		want string // "" for accepted
	}{
		{`"rope"`, ""},
		{`null`, ""},
		{`"mistral_yarn"`, `position_embedding_type: "mistral_yarn": ropegen reads a nemotron-nas config as Llama's RoPE`},
		{`"rope_llama4"`, `position_embedding_type: "rope_llama4"`},
		{`3`, "position_embedding_type: want a string"},
	} {
		cfg := `{"model_type": "nemotron-nas", "architectures": ["DeciLMForCausalLM"], "hidden_size": 8192, "num_attention_heads": 64, "rope_theta": 500000.0, "position_embedding_type": ` + c.typ + `}`
		path := filepath.Join(t.TempDir(), "config.json")
		must(t, os.WriteFile(path, []byte(cfg), 0o644))
		_, err := LoadHFConfig(path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.typ, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error with %q", c.typ, err, c.want)
		}
	}
}
