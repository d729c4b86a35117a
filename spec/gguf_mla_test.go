package spec

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	gw "github.com/ropegen/ropegen/internal/ggufwrite"
)

// A deepseek2 GGUF gives the softmax scale factor llama.cpp's graph
// computes (src/models/deepseek2.cpp: mscale = attn_factor_org·(1 +
// 0.1·rope_yarn_log_mul·ln s), kq_scale = mscale²/sqrt(d)), and for a file
// converted from a published config the factor -hf-config gives from that
// config (transformers' yarn_apply_mscale). The expected values are the
// formulas with the configs' numbers written out here.
func TestGGUFMLASoftmaxScale(t *testing.T) {
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
		want  float64                 // Spec.SoftmaxScale (0: none, Runtime's 1)
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
			extra: []gw.KV{gw.F32("deepseek2.rope.scaling.yarn_log_multiplier", 0.1)}},
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
		if !relClose(gs.SoftmaxScale, c.want, c.tol) {
			t.Errorf("%s: GGUF SoftmaxScale %.17g, want %.17g", c.name, gs.SoftmaxScale, c.want)
		}
		gp, err := Resolve(gs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		want := c.want
		if want == 0 {
			want = 1
		}
		if r := gp.Runtime(); !relClose(r.SoftmaxScale, want, c.tol) {
			t.Errorf("%s: Runtime.SoftmaxScale %.17g, want %.17g", c.name, r.SoftmaxScale, want)
		}
		if !c.hf {
			continue
		}
		hs, err := LoadHFConfig(filepath.Join("testdata", "hf", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if hs.SoftmaxScale != gs.SoftmaxScale {
			t.Errorf("%s: GGUF SoftmaxScale %.17g, -hf-config %.17g", c.name, gs.SoftmaxScale, hs.SoftmaxScale)
		}
	}
}
