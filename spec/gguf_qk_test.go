package spec

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gw "github.com/ropegen/ropegen/internal/ggufwrite"
)

// A deepseek2 GGUF gives the q·k scale llama.cpp's graph computes
// (src/models/deepseek2.cpp: mscale = attn_factor_org·(1 +
// 0.1·rope_yarn_log_mul·ln s), kq_scale = mscale²/sqrt(d), d
// attention.key_length_mla), and for a file converted from a published
// config the scale -hf-config gives from that config (transformers'
// yarn_apply_mscale of qk_head_dim**-0.5). The expected values are the
// formulas with the configs' numbers written out here.
func TestGGUFMLAQKScale(t *testing.T) {
	g := func(s, m float64) float64 { return 0.1*m*math.Log(s) + 1 }
	// without removes keys from a config's RoPE parameters, as a
	// converter that wrote no yarn_log_multiplier (an older GGUF) would
	// have seen them.
	without := func(p hfParams, keys ...string) hfParams {
		r := hfParams{}
		for k, v := range p.rope() {
			r[k] = v
		}
		for _, k := range keys {
			delete(r, k)
		}
		q := hfParams{}
		for k, v := range p {
			q[k] = v
		}
		q["rope_scaling"] = map[string]any(r)
		return q
	}
	for _, c := range []struct {
		name  string
		file  string                  // the published config
		edit  func(hfParams) hfParams // the config the GGUF is converted from; nil: file's
		extra []gw.KV                 // keys added to the file
		want  float64                 // mscale²; Spec.QKScale is mscale²/sqrt(192)
		hf    bool                    // -hf-config of file gives want too, to the bit
		tol   float64                 // relative, against want
	}{
		// DeepSeek-V3: factor 40, mscale_all_dim 1 (yarn_log_multiplier
		// float32(0.1), which llama.cpp divides by 0.1f back to 1).
		{name: "deepseek-v3", file: "deepseek-v3.json", want: g(40, 1) * g(40, 1), hf: true, tol: 1e-15},
		{name: "kimi-k2", file: "kimi-k2-instruct-0905.json", want: g(64, 1) * g(64, 1), hf: true, tol: 1e-15},
		// DeepSeek-V2-Lite: mscale_all_dim 0.707, stored as
		// float32(0.0707) and divided in float32.
		{name: "deepseek-v2-lite", file: "deepseek-v2-lite.json", want: g(40, 0.707) * g(40, 0.707), tol: 1e-7},
		// A file without the key: llama.cpp's rope_yarn_log_mul is 0, and
		// attn_factor_org is YaRN's default g(s, 1) = 0.1·ln s + 1.
		{name: "deepseek-v2-lite, no yarn_log_multiplier", file: "deepseek-v2-lite.json",
			edit: func(p hfParams) hfParams { return without(p, "mscale_all_dim") }, want: g(40, 1) * g(40, 1), tol: 1e-15},
		// rope.scaling.attn_factor multiplies attn_factor_org.
		{name: "deepseek-v3, attn_factor 2", file: "deepseek-v3.json", extra: []gw.KV{gw.F32("deepseek2.rope.scaling.attn_factor", 2)},
			want: (2 * g(40, 1)) * (2 * g(40, 1)), tol: 1e-15},
		// No scaling: s = 1, and the factor is 1 whatever the key says.
		{name: "deepseek-v3, no scaling", file: "deepseek-v3.json",
			edit:  func(p hfParams) hfParams { q := without(p); q["rope_scaling"] = nil; return q },
			extra: []gw.KV{gw.F32("deepseek2.rope.scaling.yarn_log_multiplier", 0.1)}, want: 1, tol: 1e-15},
	} {
		p := loadHFParams(t, c.file)
		if c.edit != nil {
			p = c.edit(p)
		}
		kv, ts := convDeepseek2("deepseek2", p)
		kv = append(kv, c.extra...)
		path := filepath.Join(t.TempDir(), "model.gguf")
		must(t, os.WriteFile(path, (&gw.File{KV: kv, Tensors: ts}).Bytes(), 0o644))
		gs, _, err := LoadGGUF(path)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := 1 / math.Sqrt(192) * c.want // key_length_mla: qk_nope_head_dim 128 + qk_rope_head_dim 64
		if !relClose(gs.QKScale, want, c.tol) {
			t.Errorf("%s: GGUF QKScale %.17g, want %.17g", c.name, gs.QKScale, want)
		}
		gp, err := Resolve(gs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r := gp.Runtime(); !relClose(r.QKScale, want, c.tol) {
			t.Errorf("%s: Runtime.QKScale %.17g, want %.17g", c.name, r.QKScale, want)
		}
		if !c.hf {
			continue
		}
		hs, err := LoadHFConfig(filepath.Join("testdata", "hf", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if hs.QKScale != gs.QKScale {
			t.Errorf("%s: GGUF QKScale %.17g, -hf-config %.17g", c.name, gs.QKScale, hs.QKScale)
		}
	}
}

// The other architectures whose llama.cpp graph does not scale q·k by
// 1/sqrt(head dim): gemma2 and gemma3 at 27B (by block count) scale by
// 1/sqrt(embedding_length/head_count), as transformers scales by
// query_pre_attn_scalar**-0.5 (Gemma 3 27B: 5376/32 = 168, its
// query_pre_attn_scalar); granite by attention.scale, which it requires.
func TestGGUFQKScale(t *testing.T) {
	gemma := func(arch string, layers, embd, heads, head int) []gw.KV {
		return []gw.KV{
			gw.Str("general.architecture", arch),
			gw.U32(arch+".block_count", uint32(layers)),
			gw.U32(arch+".embedding_length", uint32(embd)),
			gw.U32(arch+".attention.head_count", uint32(heads)),
			gw.U32(arch+".attention.key_length", uint32(head)),
		}
	}
	granite := func(kv ...gw.KV) []gw.KV {
		return append([]gw.KV{gw.Str("general.architecture", "granite"), gw.U32("granite.attention.key_length", 128)}, kv...)
	}
	for _, c := range []struct {
		name string
		kv   []gw.KV
		want float64 // Spec.QKScale
		err  string
	}{
		{name: "gemma3 27B", kv: gemma("gemma3", 62, 5376, 32, 128), want: 1 / math.Sqrt(168)},
		{name: "gemma3 4B", kv: gemma("gemma3", 34, 2560, 8, 256)},
		{name: "gemma2 27B", kv: gemma("gemma2", 46, 4608, 32, 128), want: 1 / math.Sqrt(144)},
		{name: "gemma2 9B", kv: gemma("gemma2", 42, 3584, 16, 256)},
		{name: "granite", kv: granite(gw.F32("granite.attention.scale", 0.0078125)), want: 0.0078125},
		{name: "granite without attention.scale", kv: granite(), err: `key "granite.attention.scale": missing: llama.cpp's granite multiplies q·k by it`},
		{name: "llama", kv: []gw.KV{gw.Str("general.architecture", "llama"), gw.U32("llama.attention.key_length", 128), gw.F32("llama.attention.scale", 0.5)}},
	} {
		s, info, err := readBytes((&gw.File{KV: c.kv}).Bytes(), GGUFOptions{})
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !relClose(s.QKScale, c.want, 1e-15) {
			t.Errorf("%s: QKScale %.17g, want %.17g", c.name, s.QKScale, c.want)
		}
		if note := strings.Contains(strings.Join(info.Notes, "\n"), "q·k scale: "); note != (c.want != 0) {
			t.Errorf("%s: a q·k scale note: %v, want %v", c.name, note, c.want != 0)
		}
	}
	// Gemma 3 27B's config gives the same scale through -hf-config.
	path := filepath.Join(t.TempDir(), "config.json")
	must(t, os.WriteFile(path, []byte(`{"model_type": "gemma3_text", "hidden_size": 5376, "num_attention_heads": 32, "head_dim": 128, "num_hidden_layers": 62, "query_pre_attn_scalar": 168}`), 0o644))
	hs, err := LoadHFConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	gs, _, err := readBytes((&gw.File{KV: gemma("gemma3", 62, 5376, 32, 128)}).Bytes(), GGUFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hs.QKScale != gs.QKScale {
		t.Errorf("Gemma 3 27B: -hf-config QKScale %.17g, GGUF %.17g", hs.QKScale, gs.QKScale)
	}
}
