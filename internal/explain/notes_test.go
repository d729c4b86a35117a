package explain

import (
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// The notes reach -explain.
func TestExplainNotesHF(t *testing.T) {
	for _, c := range []struct {
		file  string
		opt   spec.HFOptions
		wants []string
	}{
		{"deepseek-v3.json", spec.HFOptions{}, []string{"note: MLA: this kernel rotates the rotary part", "spec: dim 64, rotary-dim 64, base 10000, layout interleaved"}},
		{"gemma-3-4b-it.json", spec.HFOptions{Local: true}, []string{"note: layers of type sliding_attention (29 of 34: 0–4, 6–10, 12–16, 18–22, 24–28, 30–33): head 256, rotary 256, base 10000, no scaling — this package", "note: this package is the sliding_attention layers' RoPE", "scaling: none"}},
		{"gemma-3-4b-it.json", spec.HFOptions{}, []string{"note: layers of type full_attention (5 of 34: 5, 11, 17, 23, 29): head 256, rotary 256, base 1e+06, linear factor 8 — this package", "scaling: linear, factor 8"}},
	} {
		s, info, err := spec.LoadHFConfigWith(filepath.Join(hfDir, c.file), c.opt)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteNotes(&b, s, info.Notes); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.wants {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: explain lacks %q:\n%s", c.file, w, b.String())
			}
		}
	}
}

// -explain says which norm a spec has, or that it has none.
func TestExplainNorm(t *testing.T) {
	for _, c := range []struct {
		norm spec.QKNorm
		want []string
	}{
		{spec.QKNorm{}, []string{"qk-norm: none (no ApplyNormQK)"}},
		{spec.QKNorm{Kind: spec.NormRMS}, []string{"qk-norm: rms over each head (n = HeadDim = 128 values), weights of HeadDim values, ε 1e-06, before the rotation", "y_j = fl(fl(x_j·r)·w_j)"}},
		{spec.QKNorm{Kind: spec.NormGemma, Eps: 1e-5, Scope: spec.ScopeToken}, []string{"qk-norm: gemma over each token's heads as one vector (n = Heads·HeadDim values), weights of Heads·HeadDim values, ε 1e-05", "fl(1 + w_j)"}},
		{spec.QKNorm{Kind: spec.NormL2, After: true}, []string{"qk-norm: l2 over each head (n = HeadDim = 128 values), no weights", "after the rotation: ApplyNormQK normalizes the rotated vector", "y_j = fl(x_j·r)"}},
	} {
		s := spec.DefaultSpec()
		s.QKNorm = c.norm
		var b strings.Builder
		if err := Write(&b, s); err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%+v: explain lacks %q:\n%s", c.norm, w, b.String())
			}
		}
	}
}

// -explain prints the attention's q·k scale when the model's is not
// 1/sqrt(dim): DeepSeek-V3's 1/sqrt(192)·(0.1·ln 40 + 1)², not Llama's.
func TestExplainQKScale(t *testing.T) {
	for _, c := range []struct {
		file string
		want float64 // 0: no line
	}{
		{"deepseek-v3.json", 1 / math.Sqrt(192) * (0.1*math.Log(40) + 1) * (0.1*math.Log(40) + 1)},
		{"llama-3.1-8b.json", 0},
	} {
		s, err := spec.LoadHFConfig(filepath.Join(hfDir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		must(t, Write(&b, s))
		_, after, found := strings.Cut(b.String(), "\nq·k scale: ")
		if found != (c.want != 0) {
			t.Fatalf("%s: a q·k scale line: %v, want %v:\n%s", c.file, found, c.want != 0, b.String())
		}
		if !found {
			continue
		}
		v, err := strconv.ParseFloat(after[:strings.Index(after, ",")], 64)
		if err != nil || !relClose(v, c.want, 1e-15) {
			t.Errorf("%s: q·k scale line %q, want %.17g", c.file, after[:strings.Index(after, "\n")], c.want)
		}
	}
}
