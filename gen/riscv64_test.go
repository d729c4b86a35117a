package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	iqemu "github.com/ropegen/ropegen/internal/qemu"
	"github.com/ropegen/ropegen/spec"
)

// TestRVVLengths runs every kernel family's verify checks on the RVV
// backend under qemu-riscv64-static at VLEN 512 (make riscv64 runs
// generated/ at 128; asm/vec's TestKernels runs every RVV kernel at 128,
// 256 and 512 against pure Go): the kernels are vector-length agnostic,
// and this is where that is checked on whole packages, at the longest
// vectors, where the most lanes sit past a head's end. Three packages: an f32 engine
// package of two shapes (both layouts, partial rotary) with three QK-norm
// variants (each scope, before and after the rotation) and every cache
// type, an f16 and an f64 package with a QK-norm. Without qemu it is skipped
// loudly, or fails with ROPEGEN_REQUIRE_RISCV64=1. qemu 7.2 has no
// riscv_hwprobe, so x/sys/cpu sees no V under it: ROPEGEN_RVV=1 makes the
// packages' tests register the RVV backend (qemu 8.1 and later report V).
func TestRVVLengths(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	t.Parallel() // its go commands and qemu runs overlap with the other package tests'
	qemu, err := exec.LookPath("qemu-riscv64-static")
	if err != nil {
		if os.Getenv("ROPEGEN_REQUIRE_RISCV64") == "1" {
			t.Fatalf("the RVV kernels cannot be tested: %v, and ROPEGEN_REQUIRE_RISCV64=1", err)
		}
		msg := "SKIPPED: RVV at VLEN 512 NOT TESTED: qemu-riscv64-static not found (install qemu-user-static; ROPEGEN_REQUIRE_RISCV64=1 makes this a failure)"
		fmt.Fprintf(os.Stderr, "%s\n## %s\n%s\n", strings.Repeat("#", 72), msg, strings.Repeat("#", 72))
		t.Skip(msg)
	}
	qk := func(kind spec.NormKind, scope string, after bool) spec.QKNorm {
		return spec.QKNorm{Kind: kind, Scope: scope, After: after}
	}
	const H, T = spec.ScopeHead, spec.ScopeToken
	engine, err := GenerateEngine(Engine{
		Package: "pc",
		Shapes: []EngineShape{
			{HeadDim: 128, RotaryDim: 128, Layout: spec.NeoX, Norms: []spec.QKNorm{qk(spec.NormRMS, H, false), qk(spec.NormL2, T, true)}},
			{HeadDim: 96, RotaryDim: 64, Layout: spec.Interleaved, Norms: []spec.QKNorm{qk(spec.NormGemma, H, true)}},
		},
		Caches: spec.CacheTypes(),
	}, Options{Command: "-test", Tests: true})
	must(t, err)
	dir := writeModule(t, []spec.Spec{
		normSpec(40, 36, spec.NeoX, "f16", spec.NormGemma, T, true),
		normSpec(80, 32, spec.Interleaved, "f64", spec.NormL2, H, false),
	}, true) // pa and pb; the engine package is pc, with the same imports
	must(t, os.Mkdir(filepath.Join(dir, "pc"), 0o755))
	for _, f := range engine {
		must(t, os.WriteFile(filepath.Join(dir, "pc", f.Name), f.Data, 0o644))
	}
	goCmd(t, dir, []string{"GOARCH=riscv64"}, "vet", "./...")
	for _, vlen := range []int{512} {
		t.Run(fmt.Sprintf("vlen%d", vlen), func(t *testing.T) {
			exe := qemu + " -cpu " + iqemu.RISCV64CPU(vlen)
			out := goCmd(t, dir, []string{"GOARCH=riscv64", "ROPEGEN_RVV=1", "ROPEGEN_WANT_BACKEND=rvv"}, "test", "-short", "-count=1", "-v", "-exec", exe,
				"-run", "^(TestVerify|TestNarrowExhaustive|TestCacheExhaustive|TestDispatch)$", "./...")
			if n := len(regexp.MustCompile(`(?m)^--- PASS: TestVerify \(`).FindAllString(out, -1)); n != 3 {
				t.Errorf("VLEN %d: TestVerify passed in %d packages, want 3:\n%s", vlen, n, out)
			}
			if n := strings.Count(out, "default backend: rvv"); n != 3 {
				t.Errorf("VLEN %d: the RVV backend was the default in %d packages, want 3:\n%s", vlen, n, out)
			}
			for _, want := range []string{"--- PASS: TestCacheExhaustive", "--- PASS: TestNarrowExhaustive", "normqk"} {
				if !strings.Contains(out, want) {
					t.Errorf("VLEN %d: no %q in the output:\n%s", vlen, want, out)
				}
			}
		})
	}
}
