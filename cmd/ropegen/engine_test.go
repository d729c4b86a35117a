package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEngine writes an engine package for two models and a bare shape and
// checks what it says: one q8_0 note per shape without q8_0 kernels (the
// head-80 shape of Phi-2 and of the bare -shape once), the models and
// shapes in the package doc, and each distinct shape's kernels once.
func TestEngine(t *testing.T) {
	out := filepath.Join(t.TempDir(), "eng")
	hf := filepath.Join("..", "..", "spec", "testdata", "hf")
	code, stdout, stderr := ropegenRun(t, "-engine", "-o", out, "-pkg", "eng",
		"-hf-config", filepath.Join(hf, "qwen3-8b.json"),
		"-hf-config", filepath.Join(hf, "phi-2.json"),
		"-shape", "80,32,neox", "-shape", "128,128,neox,l2/head/after",
		"-out-dtype", "f16,q8_0")
	if code != 0 || stdout != "" {
		t.Fatalf("ropegen -engine: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	want := "ropegen: note: -out-dtype q8_0: the shape 80/32/neox has no q8_0 kernels (its head dim is not a multiple of 32)\n"
	if stderr != want {
		t.Errorf("stderr = %q, want the one note %q", stderr, want)
	}
	doc, err := os.ReadFile(filepath.Join(out, "rope.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"qwen3-8b.json", "phi-2.json", "-shape 80,32,neox", "-shape 128,128,neox,l2/head/after",
		"80/32/neox: no QK-norm; caches f16\n", "128/128/neox: norms rms/head, l2/head/after; caches f16, q8_0\n"} {
		if !strings.Contains(string(doc), w) {
			t.Errorf("rope.go does not mention %q", w)
		}
	}
	if strings.Contains(string(doc), "DefaultParams") || strings.Contains(string(doc), "func Default(") {
		t.Errorf("an engine package has a default model:\n%s", doc)
	}
	// Qwen3-8B (128 neox, rms/head) and the bare 128,128,neox are one
	// shape; Phi-2 and the bare 80,32,neox another.
	if n := strings.Count(string(doc), "\tHeadDim:"); n != 2 {
		t.Errorf("rope.go's shapeList has %d shapes, want 2:\n%s", n, doc)
	}
}
