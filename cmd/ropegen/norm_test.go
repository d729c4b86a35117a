package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// The QK-norm flags land in their fields.
func TestNormFlagsMapOntoSpec(t *testing.T) {
	c, err := parse(strings.Fields("-qk-norm gemma -qk-norm-eps 1e-5 -qk-norm-scope token -qk-norm-after"))
	if err != nil {
		t.Fatal(err)
	}
	want := spec.QKNorm{Kind: spec.NormGemma, Eps: 1e-5, Scope: spec.ScopeToken, After: true}
	if c.spec.QKNorm != want {
		t.Errorf("QKNorm %+v, want %+v", c.spec.QKNorm, want)
	}
}

// A bad QK-norm flag exits 2 with one line naming the flag, the value and
// what is accepted, and writes nothing.
func TestNormBadFlags(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-qk-norm", "rmsnorm"}, `ropegen: -qk-norm "rmsnorm": qk-norm must be one of "none", "rms", "gemma", "l2"` + "\n"},
		{[]string{"-qk-norm", "rms", "-qk-norm-eps", "-1"}, "ropegen: -qk-norm-eps -1: qk-norm-eps must be finite and ≥ 0 (0 means 1e-06)\n"},
		{[]string{"-qk-norm", "rms", "-qk-norm-eps", "x"}, `ropegen: -qk-norm-eps "x": want a number` + "\n"},
		{[]string{"-qk-norm", "rms", "-qk-norm-scope", "layer"}, `ropegen: -qk-norm-scope "layer": qk-norm-scope must be "head" or "token"` + "\n"},
		{[]string{"-qk-norm-after"}, "ropegen: -qk-norm-after true: needs -qk-norm rms, gemma, l2\n"},
		{[]string{"-qk-norm-eps", "1e-5"}, "ropegen: -qk-norm-eps 1e-05: needs -qk-norm rms, gemma, l2\n"},
		{[]string{"-dim", "100", "-qk-norm", "rms", "-qk-norm-scope", "token"}, `ropegen: -qk-norm-scope "token": a token-scope norm needs -dim a multiple of 8 (got 100)`},
	} {
		code, stdout, stderr := ropegenRun(t, append([]string{"-o", out}, c.args...)...)
		if code != exitUsage || stdout != "" || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("ropegen %q: exit %d, stdout %q, stderr\n\t%q\nwant exit %d and one line beginning\n\t%q", c.args, code, stdout, stderr, exitUsage, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Fatalf("ropegen %q wrote %s", c.args, out)
		}
	}
}

// -hf-config sets the norm, -explain says which, and flags override it:
// -qk-norm none turns it off with the ε and scope the config gave.
func TestNormHFConfig(t *testing.T) {
	cfg := filepath.Join("..", "..", "spec", "testdata", "hf", "olmo-2-1124-7b.json")
	code, stdout, stderr := ropegenRun(t, "-hf-config", cfg, "-explain")
	if code != exitOK || !strings.Contains(stdout, "note: qk-norm: rms over each token's heads as one vector") || !strings.Contains(stdout, "\nqk-norm: rms over each token's heads as one vector (n = Heads·HeadDim values), weights of Heads·HeadDim values, ε 1e-05") {
		t.Errorf("olmo2 -explain: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = ropegenRun(t, "-hf-config", cfg, "-explain", "-qk-norm", "none")
	if code != exitOK || !strings.Contains(stdout, "\nqk-norm: none (no ApplyNormQK)") {
		t.Errorf("olmo2 -qk-norm none: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = ropegenRun(t, "-hf-config", cfg, "-explain", "-qk-norm-eps", "3e-6", "-qk-norm-scope", "head")
	if code != exitOK || !strings.Contains(stdout, "\nqk-norm: rms over each head (n = HeadDim = 128 values), weights of HeadDim values, ε 3e-06") {
		t.Errorf("olmo2 with ε and scope flags: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	// A flag turning Qwen3's norm off drops the config's note on it.
	qwen3 := filepath.Join("..", "..", "spec", "testdata", "hf", "qwen3-8b.json")
	code, stdout, stderr = ropegenRun(t, "-hf-config", qwen3, "-explain", "-qk-norm", "none")
	if code != exitOK || strings.Contains(stdout, "ApplyNormQK does both") || !strings.Contains(stdout, "note: qk-norm: none (no ApplyNormQK), set by the caller over the config's rms") {
		t.Errorf("qwen3 -qk-norm none: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	// A norm forced on Llama 3.1 takes its rms_norm_eps 1e-05; -qk-norm-eps wins.
	llama := filepath.Join("..", "..", "spec", "testdata", "hf", "llama-3.1-8b.json")
	code, stdout, stderr = ropegenRun(t, "-hf-config", llama, "-explain", "-qk-norm", "rms")
	if code != exitOK || !strings.Contains(stdout, "\nqk-norm: rms over each head (n = HeadDim = 128 values), weights of HeadDim values, ε 1e-05,") {
		t.Errorf("llama-3.1 -qk-norm rms: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	code, stdout, stderr = ropegenRun(t, "-hf-config", llama, "-explain", "-qk-norm", "rms", "-qk-norm-eps", "3e-6")
	if code != exitOK || !strings.Contains(stdout, "\nqk-norm: rms over each head (n = HeadDim = 128 values), weights of HeadDim values, ε 3e-06,") {
		t.Errorf("llama-3.1 -qk-norm rms -qk-norm-eps 3e-6: exit %d, stderr %q, stdout\n%s", code, stderr, stdout)
	}
	// A flag turning the norm off while setting one of its fields is refused.
	code, _, stderr = ropegenRun(t, "-hf-config", cfg, "-explain", "-qk-norm", "none", "-qk-norm-after")
	if code != exitUsage || !strings.HasPrefix(stderr, "ropegen: -qk-norm-after true: needs -qk-norm") {
		t.Errorf("-qk-norm none -qk-norm-after: exit %d, stderr %q", code, stderr)
	}
}
