package gen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	iqemu "github.com/ropegen/ropegen/internal/qemu"
)

// modelPackages are the packages generated/ no longer keeps:
// generated/ holds what the README, the examples and the Makefile's bench
// lists import; these shapes and specs are generated here instead, by
// ropegen itself with the command each package's header recorded, from the
// same configs (spec/testdata/hf), so that each is the package it was.
// What each is the one package of: GPT-J's interleaved partial rotary
// (256/64), GPT-NeoX's neox partial rotary of a quarter (96/24), Phi-2's
// (80/32), Phi-3's longrope (both factor sets), Pixtral's 2-D axes,
// Qwen3.5's interleaved M-RoPE on a partial interleaved head (256/64),
// Gemma 4's proportional RoPE on a 512 head, the bf16 KV cache, and f64.
var modelPackages = []struct {
	name, config string // config: a file of spec/testdata/hf, or ""
	args         string
}{
	{"gemma4global", "gemma-4-31b-it.json", "-hf-config config.json -pkg gemma4global -tests"},
	{"gptj", "gpt-j-6b.json", "-hf-config config.json -pkg gptj -tests"},
	{"kv128bf16", "", "-dim 128 -base 10000 -out-dtype bf16 -pkg kv128bf16 -tests"},
	{"neox20b", "gpt-neox-20b.json", "-hf-config config.json -pkg neox20b -tests"},
	{"phi2", "phi-2.json", "-hf-config config.json -pkg phi2 -tests"},
	{"phi3mini", "phi-3-mini-128k-instruct.json", "-hf-config config.json -pkg phi3mini -tests"},
	{"pixtral", "devstral-small-2-24b-instruct-2512.json", "-hf-config config.json -hf-part vision -pkg pixtral -tests"},
	{"qwen35", "qwen3.5-9b.json", "-hf-config config.json -pkg qwen35 -tests"},
	{"rope128f64", "", "-dim 128 -base 10000 -dtype f64 -pkg rope128f64 -tests"},
}

// TestModelPackages generates modelPackages into one temporary module and
// runs their own tests as make test ran them when they were under
// generated/: every backend this CPU has (unit), the exhaustive narrowing
// and cache checks (test-exhaustive), the dispatch at AVX2, without AVX2
// and with the purego tag (dispatch), and under qemu-user (cross.sh): NEON,
// RVV at VLEN 128 and riscv64 without V. Without qemu the cross runs are
// skipped loudly, or fail with ROPEGEN_REQUIRE_ARM64=1 /
// ROPEGEN_REQUIRE_RISCV64=1. The subtests amd64, arm64 and riscv64 can be
// run alone (-run 'TestModelPackages/arm64').
func TestModelPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	t.Parallel() // its go commands and qemu runs overlap with the other package tests'
	root := moduleRoot(t)
	dir := t.TempDir()
	ropegen := filepath.Join(dir, "ropegen.exe")
	goCmd(t, root, nil, "build", "-o", ropegen, "./cmd/ropegen")
	gomod := "module example.com/gentest\n\ngo 1.24\n\nrequire github.com/ropegen/ropegen v0.0.0\n\nreplace github.com/ropegen/ropegen => " + root + "\n"
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(gomod), 0o644))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	for _, p := range modelPackages {
		pd := filepath.Join(dir, p.name)
		must(t, os.Mkdir(pd, 0o755))
		if p.config != "" {
			data, err := os.ReadFile(filepath.Join(hfTestdata, p.config))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(pd, "config.json"), data, 0o644))
		}
		cmd := exec.Command(ropegen, strings.Fields(p.args)...)
		cmd.Dir = pd
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: ropegen %s: %v\n%s", p.name, p.args, err, out)
		}
	}
	must(t, os.Remove(ropegen))
	goCmd(t, dir, nil, "mod", "tidy")
	// passed checks that TestVerify passed in every package.
	passed := func(t *testing.T, out string) {
		t.Helper()
		if n := len(regexp.MustCompile(`(?m)^--- PASS: TestVerify \(`).FindAllString(out, -1)); n != len(modelPackages) {
			t.Errorf("TestVerify passed in %d packages, want %d:\n%s", n, len(modelPackages), out)
		}
	}

	t.Run("amd64", func(t *testing.T) {
		t.Parallel()
		if runtime.GOARCH != "amd64" {
			t.Skip("the amd64 levels need an amd64 CPU")
		}
		goCmd(t, dir, nil, "vet", "./...")
		goCmd(t, dir, nil, "vet", "-tags", "purego", "./...")
		passed(t, goCmd(t, dir, nil, "test", "-count=1", "-v", "./..."))
		goCmd(t, dir, nil, "test", "-count=1", "-tags", "purego", "./...")
		goCmd(t, dir, []string{"ROPEGEN_EXHAUSTIVE=1"}, "test", "-count=1", "-run", "TestNarrowExhaustive|TestCacheExhaustive", "./...")
		goCmd(t, dir, []string{"GODEBUG=cpu.avx512f=off", "ROPEGEN_WANT_BACKEND=avx2"}, "test", "-count=1", "-run", "TestDispatch", "./...")
		goCmd(t, dir, []string{"GODEBUG=cpu.avx512f=off,cpu.avx2=off", "ROPEGEN_WANT_BACKEND=generic"}, "test", "-count=1", "-run", "TestDispatch", "./...")
		goCmd(t, dir, []string{"ROPEGEN_WANT_BACKEND=generic"}, "test", "-count=1", "-tags", "purego", "-run", "TestDispatch", "./...")
	})
	// qemu returns the path of name, skipping loudly without it (failing
	// when the environment variable require is 1).
	qemu := func(t *testing.T, name, require string) string {
		q, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv(require) == "1" {
				t.Fatalf("%s: %v, and %s=1", name, err, require)
			}
			msg := fmt.Sprintf("SKIPPED: the model packages NOT TESTED under %s: not found (install qemu-user-static; %s=1 makes this a failure)", name, require)
			fmt.Fprintf(os.Stderr, "%s\n## %s\n%s\n", strings.Repeat("#", 72), msg, strings.Repeat("#", 72))
			t.Skip(msg)
		}
		return q
	}
	t.Run("arm64", func(t *testing.T) {
		t.Parallel()
		q := qemu(t, "qemu-aarch64-static", "ROPEGEN_REQUIRE_ARM64")
		goCmd(t, dir, []string{"GOARCH=arm64"}, "vet", "./...")
		out := goCmd(t, dir, []string{"GOARCH=arm64", "ROPEGEN_WANT_BACKEND=neon"}, "test", "-short", "-count=1", "-v", "-exec", q, "./...")
		passed(t, out)
		if n := strings.Count(out, "default backend: neon"); n != len(modelPackages) {
			t.Errorf("the NEON backend was the default in %d packages, want %d:\n%s", n, len(modelPackages), out)
		}
	})
	t.Run("riscv64", func(t *testing.T) {
		t.Parallel()
		q := qemu(t, "qemu-riscv64-static", "ROPEGEN_REQUIRE_RISCV64")
		goCmd(t, dir, []string{"GOARCH=riscv64"}, "vet", "./...")
		// qemu 7.2 has no riscv_hwprobe, so x/sys/cpu sees no V under it:
		// ROPEGEN_RVV=1 makes the packages' tests register the RVV backend
		// (cross.sh). Later qemus report V, hence a CPU without it for the
		// pure Go dispatch.
		exe := q + " -cpu " + iqemu.RISCV64CPU(128)
		out := goCmd(t, dir, []string{"GOARCH=riscv64", "ROPEGEN_RVV=1", "ROPEGEN_WANT_BACKEND=rvv"}, "test", "-short", "-count=1", "-v", "-exec", exe, "./...")
		passed(t, out)
		if n := strings.Count(out, "default backend: rvv"); n != len(modelPackages) {
			t.Errorf("the RVV backend was the default in %d packages, want %d:\n%s", n, len(modelPackages), out)
		}
		goCmd(t, dir, []string{"GOARCH=riscv64", "ROPEGEN_WANT_BACKEND=generic"}, "test", "-count=1", "-exec", q+" -cpu "+iqemu.RISCV64NoV, "-run", "TestDispatch", "./...")
	})
}
