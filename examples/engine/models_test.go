package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/gen"
	gw "github.com/ropegen/ropegen/internal/ggufwrite"
	"github.com/ropegen/ropegen/internal/qemu"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// The engine's models are compared with packages generated for each model
// alone, which are not checked in: generated/ keeps a package per model
// only where it tests a kernel shape nothing else does, or the README uses
// it. TestModelsMatchTheirOwnPackages generates them into a temporary
// module, with a test in each (templates/test/compare_test.go.tmpl, copied
// by package templates, the model named in the package's
// testdata/model.json) that loads the model into the engine package at run
// time and compares every entry point on every backend of the model's
// package, and runs them on this machine's backends: with AVX-512, AVX2 and
// pure Go as the engine's, and with -tags purego (on arm64: NEON and
// purego).

// servedModel is a model the engine serves and how to load it: its file,
// and the layer type (HF) or local layers (GGUF). It is the compare test's
// testdata/model.json.
type servedModel struct {
	Name  string
	Path  string // a config.json or GGUF file
	Layer string `json:",omitempty"` // HF: the layer type; "" for the default
	GGUF  bool   `json:",omitempty"`
	Local bool   `json:",omitempty"` // GGUF: the local layers
}

func (m servedModel) load() (spec.Spec, error) {
	if m.GGUF {
		s, _, err := spec.LoadGGUFWith(m.Path, spec.GGUFOptions{Local: m.Local})
		return s, err
	}
	s, _, err := spec.LoadHFConfigWith(m.Path, spec.HFOptions{LayerType: m.Layer})
	return s, err
}

// llamaGGUF writes a GGUF file of a Llama 3.1 8B-like model: head 128
// (4096/32), base 500000, llama.cpp's norm (interleaved) rope, the llama3
// frequency factors in rope_freqs.
func llamaGGUF(t *testing.T, path string) {
	t.Helper()
	factors := make([]float32, 64)
	for i := range factors {
		// llama3's factors: 1 at high frequencies, 8 at low ones, a ramp between.
		factors[i] = float32(1 + 7*math.Max(0, math.Min(1, float64(i-20)/24)))
	}
	f := &gw.File{
		KV: []gw.KV{
			gw.Str("general.architecture", "llama"),
			gw.Str("general.name", "llama-gguf-test"),
			gw.U64("llama.context_length", 131072),
			gw.U32("llama.embedding_length", 4096),
			gw.U32("llama.attention.head_count", 32),
			gw.U32("llama.attention.head_count_kv", 8),
			gw.U32("llama.rope.dimension_count", 128),
			gw.F32("llama.rope.freq_base", 500000),
		},
		Tensors: []gw.Tensor{gw.F32Tensor("rope_freqs.weight", factors)},
	}
	if err := os.WriteFile(path, f.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// servedModels are the models the test serves, files written into dir
// where needed: Llama 3.1, Qwen3, Gemma 3's global and sliding layers,
// OLMo 2, Llama 4 Scout, DeepSeek-V3, Phi-3 (longrope), Qwen2.5-VL (M-RoPE),
// a GGUF Llama, and Qwen3 with an ε of its own (rms_norm_eps 1e-5, which no
// package's default is: the engine must run it with its own ε); and
// Qwen2.5 with YaRN, InternLM2.5 (dynamic NTK) and Qwen3-VL (interleaved
// M-RoPE and a QK-norm), whose packages generated/ no longer holds.
func servedModels(t *testing.T, dir string) []servedModel {
	hf := func(f string) string {
		p, err := filepath.Abs(filepath.Join("..", "..", "spec", "testdata", "hf", f))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	gguf := filepath.Join(dir, "llama.gguf")
	llamaGGUF(t, gguf)
	q3, err := os.ReadFile(hf("qwen3-8b.json"))
	if err != nil {
		t.Fatal(err)
	}
	q3eps := bytes.Replace(q3, []byte(`"rms_norm_eps": 1e-06`), []byte(`"rms_norm_eps": 1e-05`), 1)
	if bytes.Equal(q3, q3eps) {
		t.Fatal(`qwen3-8b.json has no "rms_norm_eps": 1e-06 to change`)
	}
	q3epsPath := filepath.Join(dir, "qwen3-eps.json")
	if err := os.WriteFile(q3epsPath, q3eps, 0o644); err != nil {
		t.Fatal(err)
	}
	return []servedModel{
		{Name: "Llama 3.1 8B", Path: hf("llama-3.1-8b.json")},
		{Name: "Qwen3-8B", Path: hf("qwen3-8b.json")},
		{Name: "Gemma 3 4B, global layers", Path: hf("gemma-3-4b-it.json"), Layer: "full_attention"},
		{Name: "Gemma 3 4B, sliding layers", Path: hf("gemma-3-4b-it.json"), Layer: "sliding_attention"},
		{Name: "OLMo 2 7B", Path: hf("olmo-2-1124-7b.json")},
		{Name: "Llama 4 Scout", Path: hf("llama-4-scout-17b-16e-instruct.json")},
		{Name: "DeepSeek-V3 (MLA)", Path: hf("deepseek-v3.json")},
		{Name: "Phi-3 mini 128k (longrope)", Path: hf("phi-3-mini-128k-instruct.json")},
		{Name: "Qwen2.5-VL 7B (M-RoPE)", Path: hf("qwen2.5-vl-7b-instruct.json")},
		{Name: "a GGUF Llama", Path: gguf, GGUF: true},
		{Name: "Qwen3-8B with rms_norm_eps 1e-5", Path: q3epsPath},
		{Name: "Qwen2.5 7B (YaRN)", Path: hf("qwen2.5-7b-instruct-yarn.json")},
		{Name: "InternLM2.5 7B (dynamic NTK)", Path: hf("internlm2.5-7b-chat.json")},
		{Name: "Qwen3-VL 8B", Path: hf("qwen3-vl-8b-instruct.json")},
	}
}

func TestModelsMatchTheirOwnPackages(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("SKIPPED: no go command: %v", err)
	}
	dir := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "mod")
	write := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(mod, "go.mod"), []byte("module example.com/enginecmp\n\ngo 1.26\n\nrequire github.com/ropegen/ropegen v0.0.0\n\nreplace github.com/ropegen/ropegen => "+root+"\n"))
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(mod, "go.sum"), sum)
	models := servedModels(t, dir)
	for i, m := range models {
		s, err := m.load()
		if err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		s.Package = fmt.Sprintf("m%02d", i)
		for _, c := range []spec.CacheType{spec.CacheF32, spec.CacheF16, spec.CacheQ8_0} {
			if f, _ := c.Format(); s.HeadDim%f.BlockValues == 0 { // q8_0 where the head is whole blocks
				s.Caches = append(s.Caches, c)
			}
		}
		files, err := gen.Generate(s, gen.Options{Command: "(examples/engine's test)"})
		if err != nil {
			t.Fatalf("%s: generating its package: %v", m.Name, err)
		}
		for _, f := range files {
			write(filepath.Join(mod, s.Package, f.Name), f.Data)
		}
		cmp, err := templates.Copy("test/compare_test.go.tmpl", &templates.Data{Package: s.Package, Elem: "float32", Comp: "float32", DType: "f32"})
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(mod, s.Package, "zz_compare_test.go"), cmp)
		js, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(mod, s.Package, "testdata", "model.json"), js)
	}

	goCmd := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s (%s): %v\n%s", strings.Join(args, " "), strings.Join(env, " "), err, out)
		}
		return string(out)
	}
	goCmd(nil, "mod", "tidy")
	type run struct {
		env  []string
		args []string
		want string // a backend every comparison must have run on
	}
	var runs []run
	switch runtime.GOARCH {
	case "amd64":
		runs = []run{
			{nil, nil, ""},
			{[]string{"GODEBUG=cpu.avx512f=off"}, nil, ""},
			{[]string{"GODEBUG=cpu.avx512f=off,cpu.avx2=off"}, nil, "generic"},
			{nil, []string{"-tags", "purego"}, "generic"},
		}
	case "arm64":
		// Under qemu-user (make arm64) the inner tests run under it too.
		var exe []string
		if q, err := exec.LookPath("qemu-aarch64-static"); err == nil {
			exe = []string{"-exec", q}
		}
		runs = []run{
			{[]string{"GOARCH=arm64"}, exe, "neon"},
			{[]string{"GOARCH=arm64"}, append([]string{"-tags", "purego"}, exe...), "generic"},
		}
	case "riscv64":
		// Under qemu-user (make riscv64) the inner tests run under it too,
		// with the V extension, which ROPEGEN_RVV=1 makes the compared
		// packages use (see the template's init).
		var exe []string
		if q, err := exec.LookPath("qemu-riscv64-static"); err == nil {
			exe = []string{"-exec", q + " -cpu " + qemu.RISCV64CPU(128)}
		}
		runs = []run{
			{[]string{"GOARCH=riscv64", "ROPEGEN_RVV=1"}, exe, "rvv"},
		}
	default:
		runs = []run{{nil, nil, ""}}
	}
	okLine := regexp.MustCompile(`(?m)^ok  \texample\.com/enginecmp/`)
	for _, r := range runs {
		args := append([]string{"test", "-count=1", "-v", "-run", "TestEngineMatches"}, r.args...)
		out := goCmd(r.env, append(args, "./...")...)
		if n := len(okLine.FindAllString(out, -1)); n != len(models) {
			t.Fatalf("%s: %d packages passed, want %d:\n%s", strings.Join(append(r.env, r.args...), " "), n, len(models), out)
		}
		for _, m := range models {
			if !strings.Contains(out, m.Name+": ") {
				t.Errorf("%s: no comparison of %s ran", strings.Join(append(r.env, r.args...), " "), m.Name)
			}
		}
		var logs []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "the engine's bits on backends") {
				logs = append(logs, strings.TrimSpace(l))
			}
		}
		if len(logs) != len(models) {
			t.Errorf("%s: %d comparisons logged their backends, want %d", strings.Join(append(r.env, r.args...), " "), len(logs), len(models))
		}
		for _, l := range logs {
			if r.want != "" && !strings.Contains(l, r.want) {
				t.Errorf("%s: not compared on %s: %s", strings.Join(append(r.env, r.args...), " "), r.want, l)
			}
		}
		t.Logf("%s: %d models, each the bits of its own package:\n%s", strings.Join(append(r.env, r.args...), " "), len(models), strings.Join(logs, "\n"))
	}
}
