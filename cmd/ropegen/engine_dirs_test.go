package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestEngineFromTwoDirs: the same engine generated from the same model
// files lying in two different directories, named by absolute paths in one
// run and by relative ones in the other, is the same bytes; the package
// names each file by its base name (a config with its SHA-256, a GGUF file
// with its size), never by where it lay.
func TestEngineFromTwoDirs(t *testing.T) {
	hf := filepath.Join("..", "..", "spec", "testdata", "hf")
	var files [2][]byte
	for i, n := range []string{"qwen3-8b.json", "gemma-3-4b-it.json"} {
		b, err := os.ReadFile(filepath.Join(hf, n))
		mustOK(t, err)
		files[i] = b
	}
	g := llamaGGUF()

	out := t.TempDir()
	var runs [2]map[string]string
	var dirs [2]string
	for i := range runs {
		dirs[i] = filepath.Join(t.TempDir(), []string{"a", "models/somewhere/else"}[i])
		mustOK(t, os.MkdirAll(dirs[i], 0o755))
		mustOK(t, os.WriteFile(filepath.Join(dirs[i], "qwen3-8b.json"), files[0], 0o644))
		mustOK(t, os.WriteFile(filepath.Join(dirs[i], "config.json"), files[1], 0o644))
		mustOK(t, os.WriteFile(filepath.Join(dirs[i], "llama.gguf"), g, 0o644))
		path := func(n string) string { return filepath.Join(dirs[i], n) }
		if i == 1 {
			t.Chdir(filepath.Dir(dirs[i]))
			path = func(n string) string { return filepath.Join("else", n) }
		}
		o := filepath.Join(out, "eng") // the same output path: only the inputs move
		code, stdout, stderr := ropegenRun(t, "-engine", "-o", o, "-pkg", "eng",
			"-hf-config", path("qwen3-8b.json"), "-hf-config="+path("config.json"), "-gguf", path("llama.gguf"))
		if code != 0 || stdout != "" || stderr != "" {
			t.Fatalf("ropegen -engine (run %d): exit %d, stdout %q, stderr %q", i, code, stdout, stderr)
		}
		runs[i] = snapshot(t, o)
		mustOK(t, os.RemoveAll(o))
	}
	if d := diffSnapshots(runs[0], runs[1]); len(d) > 0 {
		t.Errorf("the engine generated from %s and from %s differ: %v", dirs[0], dirs[1], d)
	}
	doc := runs[0]["rope.go"]
	for _, w := range []string{
		`"ropegen -engine -o ` + filepath.Join(out, "eng") + ` -pkg eng -hf-config qwen3-8b.json -hf-config=config.json -gguf llama.gguf"`,
		"qwen3-8b.json sha256:", "config.json sha256:", "llama.gguf, " + strconv.Itoa(len(g)) + " bytes (GGUF llama)",
	} {
		if !strings.Contains(doc, w) {
			t.Errorf("rope.go does not say %q", w)
		}
	}
	for name, content := range runs[0] {
		for _, d := range dirs {
			if strings.Contains(content, filepath.Dir(d)) || strings.Contains(content, "somewhere") {
				t.Errorf("%s names the directory the models lay in", name)
			}
		}
	}
}
