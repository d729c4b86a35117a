package gen

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// longSpecs are heads whose pure Go kernels loop over blocks of pairs: full
// width, a tail of pairs after the last block (neox and interleaved), a
// cache type whose rotate-and-narrow kernel goes through them, and every
// element type.
// The first four are small enough for TestLongHeadsVerify.
func longSpecs() []spec.Spec {
	nx := specOf(600, 262, spec.NeoX) // 131 pairs: 8 blocks and 3 more; 338 pass-through values
	nx.Caches = []spec.CacheType{spec.CacheF16}
	b16 := specOf(520, 0, spec.Interleaved) // 260 pairs: 16 blocks and 4 more
	b16.DType = "bf16"
	f64 := specOf(576, 0, spec.NeoX) // 288 pairs: 18 blocks
	f64.DType = "f64"
	h16 := specOf(300, 258, spec.Interleaved) // 129 pairs: 8 blocks and 1 more; 42 pass-through values
	h16.DType = "f16"
	il := specOf(4096, 0, spec.Interleaved)
	il.Caches = []spec.CacheType{spec.CacheBF16}
	nx64 := specOf(4096, 0, spec.NeoX)
	nx64.DType = "f64"
	return []spec.Spec{nx, b16, f64, h16, il, nx64}
}

// genericSource is rope_generic.go of the package generated for s.
func genericSource(t *testing.T, s spec.Spec) string {
	t.Helper()
	for _, f := range generate(t, s, false) {
		if f.Name == "rope_generic.go" {
			return string(f.Data)
		}
	}
	t.Fatalf("%+v: no rope_generic.go", s)
	return ""
}

// The pure Go kernels write a head out value by value (pair by pair) up to
// 256 values and loop over chunks past that (asm/vec/purego's unrollMax), so
// that a 4096-wide head's kernels stay a few dozen lines each (8,000
// unrolled, which took half a second to render): rope_generic.go has at
// most 2·min(HeadDim, 256) + 60 lines a kernel.
func TestGenericKernelLoopsLongHeads(t *testing.T) {
	for _, s := range append(shapes, longSpecs()...) {
		src := genericSource(t, s)
		kernels := strings.Count(src, "\nfunc ") - 1 - 1 // genericBackend and the kernels value
		if lines := strings.Count(src, "\n"); kernels < 2 || lines > kernels*(2*min(s.HeadDim, 256)+60) {
			t.Errorf("%+v: rope_generic.go has %d lines for %d kernels", s, lines, kernels)
		}
	}
}

// The looped kernels pass package verify's suite: against the float64
// rotation, and bit for bit against every assembly backend this machine has
// (each of which computes every pair as the unrolled pure Go kernel does).
func TestLongHeadsVerify(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	// Its go commands and qemu runs overlap with the other package tests'.
	t.Parallel()
	specs := longSpecs()[:4] // 4096-wide heads take minutes
	dir := writeModule(t, specs, true)
	out := goCmd(t, dir, nil, "test", "-short", "-v", "-run", "TestVerify", "./...")
	if n := len(regexp.MustCompile(`(?m)^--- PASS: TestVerify \(`).FindAllString(out, -1)); n != len(specs) {
		t.Errorf("TestVerify passed in %d packages, want %d:\n%s", n, len(specs), out)
	}
}
