package gen

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/spec"
)

// normSpec is specOf with a dtype and a QK-norm.
func normSpec(dim, rotary int, layout spec.Layout, dtype string, kind spec.NormKind, scope string, after bool) spec.Spec {
	s := specOf(dim, rotary, layout)
	s.DType = dtype
	s.QKNorm = spec.QKNorm{Kind: kind, Scope: scope, After: after}
	return s
}

// normShapes are the QK-norm packages the tests generate: the models'
// shapes (Qwen3, Llama 4, OLMo 2, Gemma 3, HunYuan), heads with every tail
// of every backend (AVX-512's masked block, AVX2's 8/4/2 values, NEON's
// 2-pair and 1-pair blocks and its 2-value tail, the sum's last group of 2,
// 4 or 6 values), partial rotary dims, heads past unrollMax (the kernels'
// loops), every dtype, kind, scope and placement; one with -out-dtype and
// one multi-axis.
func normShapes() []spec.Spec {
	const H, T = spec.ScopeHead, spec.ScopeToken
	I, N := spec.Interleaved, spec.NeoX
	ss := []spec.Spec{
		normSpec(128, 0, N, "f32", spec.NormRMS, H, false),    // Qwen3
		normSpec(128, 0, I, "f32", spec.NormL2, H, true),      // Llama 4
		normSpec(128, 0, N, "f32", spec.NormRMS, T, false),    // OLMo 2
		normSpec(256, 0, N, "f32", spec.NormGemma, H, false),  // Gemma 3
		normSpec(128, 0, N, "f32", spec.NormRMS, H, true),     // HunYuan
		normSpec(2, 0, I, "f32", spec.NormRMS, H, false),      // one pair
		normSpec(6, 0, N, "f32", spec.NormGemma, H, true),     // 3 pairs: 2 + 1
		normSpec(10, 0, I, "f32", spec.NormL2, H, false),      // sum tail 2
		normSpec(30, 22, I, "f32", spec.NormRMS, H, true),     // partial rotary, tail 6
		normSpec(40, 36, N, "f32", spec.NormRMS, T, false),    // token, partial rotary
		normSpec(100, 64, I, "f32", spec.NormGemma, H, false), // tail 4, pass-through 36
		normSpec(264, 0, N, "f32", spec.NormRMS, T, true),     // past unrollMax
		normSpec(520, 516, I, "f32", spec.NormRMS, H, false),  // past unrollMax, odd tails
		normSpec(128, 0, N, "f16", spec.NormRMS, H, false),
		normSpec(10, 0, I, "f16", spec.NormGemma, H, true),
		normSpec(24, 8, N, "f16", spec.NormL2, T, false),
		normSpec(128, 0, N, "bf16", spec.NormGemma, H, false),
		normSpec(14, 0, N, "bf16", spec.NormRMS, H, true),
		normSpec(40, 0, I, "bf16", spec.NormRMS, T, false),
		normSpec(128, 0, N, "f64", spec.NormRMS, H, false),
		normSpec(8, 0, I, "f64", spec.NormRMS, T, true),
		normSpec(18, 0, I, "f64", spec.NormGemma, H, true),
		normSpec(264, 0, N, "f64", spec.NormL2, H, false),
	}
	out := normSpec(64, 0, N, "f32", spec.NormRMS, H, false)
	out.Caches = []spec.CacheType{spec.CacheF16}
	vl := axesSpec(normSpec(128, 0, N, "f32", spec.NormRMS, H, false), spec.AxesInterleaved, 24, 20, 20) // Qwen3-VL
	return append(ss, out, vl)
}

// Every QK-norm shape generates, vets for every architecture and tag, and
// passes the norm checks (and its Example) on every backend this machine
// has, with each assembly level switched off, with purego, and on arm64
// (NEON) under qemu.
func TestNormPackagesVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	t.Parallel() // its go commands and qemu runs overlap with the other package tests'
	shapes := normShapes()
	dir := writeModule(t, shapes, true)
	goCmd(t, dir, nil, "vet", "./...")
	goCmd(t, dir, []string{"GOARCH=arm64"}, "vet", "./...")
	goCmd(t, dir, []string{"GOARCH=riscv64"}, "vet", "./...")
	goCmd(t, dir, nil, "vet", "-tags", "purego", "./...")
	run := "TestVerify/normqk|Example|TestDispatch"
	out := goCmd(t, dir, nil, "test", "-short", "-count=1", "-v", "-run", run, "./...")
	if n := len(regexp.MustCompile(`(?m)^    --- PASS: TestVerify/normqk \(`).FindAllString(out, -1)); n != len(shapes) {
		t.Errorf("TestVerify/normqk passed in %d packages, want %d:\n%s", n, len(shapes), out)
	}
	if n := len(regexp.MustCompile(`(?m)^--- PASS: ExampleTable_ApplyNormQK \(`).FindAllString(out, -1)); n != len(shapes) {
		t.Errorf("ExampleTable_ApplyNormQK passed in %d packages, want %d", n, len(shapes))
	}
	// verify's norm checks run every backend this CPU has, AVX2 beside
	// AVX-512; purego builds the packages without assembly.
	if runtime.GOARCH == "amd64" && !strings.Contains(out, "backends=[avx512 avx2 generic]") {
		t.Logf("this CPU lacks AVX-512 or AVX2: not every amd64 norm kernel was run")
	}
	goCmd(t, dir, nil, "test", "-short", "-count=1", "-tags", "purego", "-run", "TestVerify/normqk", "./...")
	if runtime.GOARCH != "arm64" {
		qemu, err := exec.LookPath("qemu-aarch64-static")
		if err != nil {
			if os.Getenv("ROPEGEN_REQUIRE_ARM64") == "1" {
				t.Fatalf("the NEON norm kernels cannot be tested: %v, and ROPEGEN_REQUIRE_ARM64=1", err)
			}
			t.Skip("SKIPPED: the NEON norm kernels NOT TESTED: qemu-aarch64-static not found")
		}
		out = goCmd(t, dir, []string{"GOARCH=arm64"}, "test", "-short", "-count=1", "-v", "-exec", qemu, "-run", run, "./...")
		if n := strings.Count(out, "backends=[neon generic]"); n != len(shapes) {
			t.Errorf("the neon backend ran in %d packages, want %d", n, len(shapes))
		}
		if n := len(regexp.MustCompile(`(?m)^    --- PASS: TestVerify/normqk \(`).FindAllString(out, -1)); n != len(shapes) {
			t.Errorf("under qemu TestVerify/normqk passed in %d packages, want %d:\n%s", n, len(shapes), out)
		}
	}
}

// Every backend of a QK-norm package has its norm kernels: each
// architecture's dispatch file assigns the vector layer's norm and
// normOnly of the variant at every level, and a package without a norm has
// none.
func TestNormKernelsEveryBackend(t *testing.T) {
	levels := map[string][]string{"rope_amd64.go": {"avx512", "avx2"}, "rope_arm64.go": {"neon"}, "rope_riscv64.go": {"rvv"}, "rope_generic.go": {"generic"}}
	for _, s := range normShapes() {
		byName := map[string]string{}
		for _, f := range generate(t, s, false) {
			byName[f.Name] = string(f.Data)
		}
		n := newNormPlan(s)
		x := elems[s.DType]
		for file, ls := range levels {
			for _, l := range ls {
				for _, k := range []vec.Kind{vec.Norm, vec.NormOnly} {
					f := vec.Func{Kind: k, Shape: vec.Shape{HeadDim: s.HeadDim, RotaryDim: s.Rotary(), NeoX: s.Layout == spec.NeoX}, X: x,
						Norm: vec.NormVariant{Kind: n.Kind, Token: n.Token, After: n.After}, Level: l}
					if want := fmt.Sprintf("k.%s = %s\n", f.Field(), f.Name()); !strings.Contains(byName[file], want) {
						t.Errorf("%+v: %s: no %q", s.QKNorm, file, want)
					}
				}
			}
		}
	}
	// Without a norm: no norm kernels (rope_norm.go's ApplyNormQK only
	// rotates there).
	for _, f := range generate(t, specOf(128, 0, spec.NeoX), false) {
		if regexp.MustCompile(`k\.norm(Only)?\[\d+\] = `).Match(f.Data) {
			t.Errorf("a spec without -qk-norm has norm code in %s", f.Name)
		}
	}
}

// NormBound's constants follow its derivation: K = 4 (the rotation) + c_r +
// c_y + 1, c_r = 1 for float32 compute and ⌈n/8⌉+4 for float64, c_y the
// roundings after r (rms 2, gemma 3, l2 1), and 6 more after the rotation.
func TestNormBound(t *testing.T) {
	for _, c := range []struct {
		dtype     string
		kind      spec.NormKind
		after     bool
		n         int
		rot, pass int
	}{
		{"f32", spec.NormRMS, false, 128, 8, 4},
		{"f16", spec.NormGemma, false, 128, 9, 5},
		{"bf16", spec.NormL2, false, 128, 7, 3},
		{"f32", spec.NormRMS, true, 128, 14, 10},
		{"f32", spec.NormL2, true, 64, 13, 9},
		{"f64", spec.NormRMS, false, 128, 4 + 20 + 2 + 1, 20 + 2 + 1},
		{"f64", spec.NormGemma, true, 4096, 4 + 6 + 516 + 3 + 1, 6 + 516 + 3 + 1},
	} {
		p, err := NewPlan(normSpec(128, 0, spec.NeoX, c.dtype, c.kind, spec.ScopeHead, c.after))
		if err != nil {
			t.Fatal(err)
		}
		if rot, pass := p.NormBound(c.n); rot != c.rot || pass != c.pass {
			t.Errorf("%s %s after=%v n=%d: K = %d, %d; want %d, %d", c.dtype, c.kind, c.after, c.n, rot, pass, c.rot, c.pass)
		}
	}
	// The package doc states it.
	for _, f := range generate(t, normSpec(128, 0, spec.NeoX, "f32", spec.NormRMS, spec.ScopeHead, false), false) {
		if f.Name == "rope.go" && !strings.Contains(string(f.Data), "K = 8 (rotated values), 4 (values past RotaryDim)") {
			t.Errorf("rope.go's package doc does not state the bound:\n%s", f.Data[:min(len(f.Data), 4000)])
		}
	}

}
