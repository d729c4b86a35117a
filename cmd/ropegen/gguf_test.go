package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gw "github.com/ropegen/ropegen/internal/ggufwrite"
)

// llamaGGUF is a Llama 3.2 1B shaped GGUF file (head dim 64, base 500000,
// a rope_freqs tensor), written by the test writer.
func llamaGGUF(extra ...gw.KV) []byte {
	factors := make([]float32, 32)
	for i := range factors {
		factors[i] = 1 + float32(i)/4
	}
	kv := []gw.KV{
		gw.Str("general.architecture", "llama"),
		gw.U32("llama.context_length", 131072),
		gw.U32("llama.embedding_length", 2048),
		gw.U32("llama.attention.head_count", 32),
		gw.U32("llama.attention.key_length", 64),
		gw.U32("llama.rope.dimension_count", 64),
		gw.F32("llama.rope.freq_base", 500000),
		gw.Strs("tokenizer.ggml.tokens", "<s>", "</s>"),
	}
	// extra replaces the entry with its key, or is added.
	for _, e := range extra {
		i := slices.IndexFunc(kv, func(k gw.KV) bool { return k.Key == e.Key })
		if i < 0 {
			kv = append(kv, e)
		} else {
			kv[i] = e
		}
	}
	f := &gw.File{
		KV: kv,
		Tensors: []gw.Tensor{
			gw.F32Tensor("rope_freqs.weight", factors),
			{Name: "token_embd.weight", Dims: []uint64{8, 4}, Type: gw.TypeF16, Data: bytes.Repeat([]byte{0, 0x3c}, 32)},
		},
	}
	return f.Bytes()
}

func writeGGUF(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGGUF: the file gives the spec; flags given override it; -explain
// prints its notes.
func TestGGUF(t *testing.T) {
	root := t.TempDir()
	model := writeGGUF(t, root, "llama.gguf", llamaGGUF())
	code, stdout, stderr := ropegenRun(t, "-gguf", model, "-explain")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, w := range []string{
		`note: pairs (2i, 2i+1): llama.cpp runs "llama" with LLAMA_ROPE_TYPE_NORM`,
		"note: per-pair factors: the float32 tensor rope_freqs.weight",
		"spec: dim 64, rotary-dim 64, base 500000, layout interleaved",
		"f_i 8.75", // the last factor, 1 + 31/4
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("-explain lacks %q:\n%s", w, stdout)
		}
	}
	for _, tc := range []struct {
		flags         []string
		headDim, base string
	}{
		{nil, "64", "500000"},
		{[]string{"-base", "20000"}, "64", "20000"},
	} {
		out := t.TempDir()
		args := append([]string{"-gguf", model, "-o", out}, tc.flags...)
		code, _, stderr := ropegenRun(t, args...)
		if code != 0 {
			t.Fatalf("ropegen %s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		if got := genConst(t, out, "HeadDim"); got != tc.headDim {
			t.Errorf("ropegen %s: HeadDim = %s, want %s", strings.Join(args, " "), got, tc.headDim)
		}
		if got := genConst(t, out, "Base"); got != tc.base {
			t.Errorf("ropegen %s: Base = %s, want %s", strings.Join(args, " "), got, tc.base)
		}
	}
	// -layout overrides the file's layout.
	code, stdout, _ = ropegenRun(t, "-gguf", model, "-layout", "neox", "-explain")
	if code != 0 || !strings.Contains(stdout, "layout neox") {
		t.Errorf("-layout neox: exit %d:\n%s", code, stdout)
	}
	// An architecture outside ropegen's table is read with -layout.
	other := writeGGUF(t, root, "new.gguf", llamaGGUF(gw.Str("general.architecture", "newarch"), gw.U32("newarch.attention.key_length", 64)))
	code, stdout, stderr = ropegenRun(t, "-gguf", other, "-layout", "neox", "-explain")
	if code != 0 || !strings.Contains(stdout, "spec: dim 64, rotary-dim 64, base 10000, layout neox") {
		t.Errorf("unknown arch with -layout: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
	// -rope-local with a two-RoPE architecture.
	gemma := writeGGUF(t, root, "gemma.gguf", (&gw.File{KV: []gw.KV{
		gw.Str("general.architecture", "gemma3"), gw.U32("gemma3.attention.key_length", 256),
		gw.F32("gemma3.rope.freq_base", 1e6), gw.Str("gemma3.rope.scaling.type", "linear"), gw.F32("gemma3.rope.scaling.factor", 8),
	}}).Bytes())
	code, stdout, stderr = ropegenRun(t, "-gguf", gemma, "-rope-local", "-explain")
	if code != 0 || !strings.Contains(stdout, "base 10000, layout neox") || !strings.Contains(stdout, "scaling: none") || !strings.Contains(stdout, "note: two RoPEs: this is the local") {
		t.Errorf("-rope-local: exit %d, stderr %q:\n%s", code, stderr, stdout)
	}
}

// TestGGUFBadInvocations: a bad -gguf exits 2 with one line naming -gguf,
// the file and what is wrong, prints nothing on stdout and writes nothing.
func TestGGUFBadInvocations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		data  []byte // the file's contents; nil: no file
		dir   bool   // the path is a directory
		args  []string
		want  []string
		notIn []string
	}{
		{name: "missing", want: []string{`-gguf "$F": cannot open the file: no such file or directory`}},
		{name: "directory", dir: true, want: []string{`-gguf "$F": not a regular file`}},
		{name: "not GGUF", data: []byte(`{"model_type": "llama"}`), want: []string{`-gguf "$F": at byte 0: not a GGUF file: it begins with "{\"mo", want "GGUF"`}},
		{name: "truncated", data: llamaGGUF()[:200], want: []string{`-gguf "$F": `, "the file ends (size 200) inside"}},
		{name: "unknown arch", data: llamaGGUF(gw.Str("general.architecture", "newarch")),
			want: []string{`-gguf "$F": key "general.architecture": "newarch" is not in ropegen's table`, "give -layout interleaved if"}},
		{name: "bad rope_freqs", data: llamaGGUF(gw.U32("llama.rope.dimension_count", 32)),
			want: []string{`-gguf "$F": tensor "rope_freqs.weight" at byte `, "32 values: want RotaryDim/2 = 16"}},
		{name: "spec from the file", data: llamaGGUF(gw.F32("llama.rope.freq_base", 0.5)),
			want: []string{`-gguf "$F": the file gives -base 0.5: base must be finite and > 1`}},
		{name: "with -hf-config", data: llamaGGUF(), args: []string{"-hf-config", "c.json"},
			want: []string{`-gguf "$F" and -hf-config "c.json": give one of them, not both`}},
		{name: "-rope-local, one RoPE", data: llamaGGUF(), args: []string{"-rope-local"},
			want: []string{`-gguf "$F": -rope-local: llama.cpp gives every layer of "llama" one RoPE`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, out := fixture(t)
			path := filepath.Join(root, "model.gguf")
			switch {
			case tc.dir:
				if err := os.Mkdir(path, 0o777); err != nil {
					t.Fatal(err)
				}
			case tc.data != nil:
				writeGGUF(t, root, "model.gguf", tc.data)
			}
			for _, explain := range []bool{false, true} {
				args := append([]string{"-o", out, "-gguf", path}, tc.args...)
				if explain {
					args = append(args, "-explain")
				}
				before := snapshot(t, root)
				code, stdout, stderr := ropegenRun(t, args...)
				if code != exitUsage || stdout != "" {
					t.Errorf("ropegen %s: exit %d, stdout %q (stderr %q); want exit %d and nothing", strings.Join(args, " "), code, stdout, stderr, exitUsage)
				}
				var want []string
				for _, w := range tc.want {
					want = append(want, strings.ReplaceAll(w, "$F", path))
				}
				checkOneLine(t, stderr, want...)
				if d := diffSnapshots(before, snapshot(t, root)); len(d) > 0 {
					t.Errorf("the directory changed: %v", d)
				}
			}
		})
	}
}

func TestSourceError(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"m.gguf: at byte 0: not a GGUF file", `-gguf "m.gguf": at byte 0: not a GGUF file`},
		{`key "llama.rope.freq_base" at byte 8: bad`, `-gguf "m.gguf": key "llama.rope.freq_base" at byte 8: bad`},
		{`-gguf "m.gguf": bad`, `-gguf "m.gguf": bad`},
	} {
		if got := sourceError("-gguf", "m.gguf", errString(tc.msg)); got != tc.want {
			t.Errorf("sourceError(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}

type errString string

func (e errString) Error() string { return string(e) }
