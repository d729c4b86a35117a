package amd64

import (
	"regexp"
	"strings"
	"testing"
)

// provides maps a golang.org/x/sys/cpu X86 field to the ISA extensions (as
// avo names them in "Requires:" lines) that a set field guarantees. AVX-512F
// and AVX2 imply the OS saves the AVX state, so AVX itself is usable.
var provides = map[string][]string{
	"HasAVX2":     {"AVX", "AVX2"},
	"HasF16C":     {"F16C"},
	"HasAVX512F":  {"AVX", "AVX512F"},
	"HasAVX512BW": {"AVX512BW"},
}

var kernels = []Kernel{
	{HeadDim: 128, RotaryDim: 128, DType: "f32"},
	{HeadDim: 128, RotaryDim: 128, NeoX: true, DType: "f32"},
	{HeadDim: 30, RotaryDim: 22, DType: "f32", Tos: []string{"f16"}},
	{HeadDim: 30, RotaryDim: 26, NeoX: true, DType: "f32", Tos: []string{"bf16"}},
	{HeadDim: 6, RotaryDim: 6, NeoX: true, DType: "f16"},
	{HeadDim: 40, RotaryDim: 34, DType: "bf16"},
	{HeadDim: 10, RotaryDim: 10, NeoX: true, DType: "f64"},
	{HeadDim: 2, RotaryDim: 2, DType: "f64"},
}

// Every instruction a function uses must be guaranteed by the cpu feature
// bits its dispatch level checks: avo derives what each function requires.
func TestDispatchCoversRequiredISA(t *testing.T) {
	requires := regexp.MustCompile(`(?m)^// Requires: (.*)$`)
	for _, k := range kernels {
		out, err := Generate([]Kernel{k}, "// test", "amd64,!purego")
		if err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
		levelOf := map[string]Level{}
		for _, l := range out.Levels {
			levelOf[l.Name] = l
		}
		for _, text := range strings.Split(string(out.Asm), "\nTEXT ")[1:] {
			name := text[len("·"):strings.Index(text, "(SB)")]
			var fn Func
			for _, f := range out.Funcs {
				if f.Name == name {
					fn = f
				}
			}
			ok := map[string]bool{}
			for _, feat := range levelOf[fn.Level].Features {
				for _, isa := range provides[feat] {
					ok[isa] = true
				}
			}
			// The "Requires" comment sits just above the TEXT line.
			before := string(out.Asm)[:strings.Index(string(out.Asm), "TEXT ·"+name+"(SB)")]
			m := requires.FindAllStringSubmatch(before, -1)
			if len(m) == 0 {
				t.Fatalf("%+v: %s: no Requires line", k, name)
			}
			for _, isa := range strings.Split(m[len(m)-1][1], ", ") {
				if !ok[isa] {
					t.Errorf("%+v: %s (level %s, features %v) uses %s", k, name, fn.Level, levelOf[fn.Level].Features, isa)
				}
			}
		}
	}
}

// The AVX2 level must not touch AVX-512 state, and AVX-512 tails must be
// masked rather than scalar.
func TestLevelsKeepToTheirRegisters(t *testing.T) {
	for _, k := range kernels {
		out, err := Generate([]Kernel{k}, "// test", "amd64,!purego")
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range strings.Split(string(out.Asm), "\nTEXT ")[1:] {
			body := text[:strings.Index(text, "RET")]
			avx2 := strings.Contains(text[:40], "AVX2(SB)")
			if avx2 && regexp.MustCompile(`\bZ\d+\b|\bK\d\b`).MatchString(body) {
				t.Errorf("%+v: AVX2 function uses ZMM or opmask registers:\n%s", k, body)
			}
			if !avx2 && regexp.MustCompile(`\bVMOVSS\b|\bVMOVSD\b|\bMOVWLZX\b`).MatchString(body) {
				t.Errorf("%+v: AVX-512 function has a scalar tail:\n%s", k, body)
			}
		}
	}
}

// The Go side declares the kernels with these parameter names and types,
// and the frames are the ones docs/contract.md lays out (argsize 48 and 80).
func TestStubs(t *testing.T) {
	out, err := Generate([]Kernel{Kernel{HeadDim: 30, RotaryDim: 22, DType: "bf16"}}, "// test", "amd64,!purego")
	if err != nil {
		t.Fatal(err)
	}
	to, err := Generate([]Kernel{{HeadDim: 30, RotaryDim: 22, DType: "f32", Tos: []string{"f16"}}}, "// test", "amd64,!purego")
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{
		"applyAVX512":        "func applyAVX512(x []uint16, stride int, n int, r *float32)\n",
		"applyInverseAVX2":   "func applyInverseAVX2(x []uint16, stride int, n int, r *float32)\n",
		"applyInverseAVX512": "func applyInverseAVX512(x []uint16, stride int, n int, r *float32)\n",
	}, {
		"applyAVX2":        "func applyAVX2(x []float32, stride int, n int, r *float32)\n",
		"applyToF16AVX512": "func applyToF16AVX512(dst []uint16, dstStride int, src []float32, srcStride int, n int, r *float32)\n",
		"applyToF16AVX2":   "func applyToF16AVX2(dst []uint16, dstStride int, src []float32, srcStride int, n int, r *float32)\n",
	}}
	frame := map[string]string{"fwd": "$0-48", "inv": "$0-48", "to": "$0-80"}
	seen := 0
	for i, o := range []*Output{out, to} {
		for _, f := range o.Funcs {
			if w, ok := want[i][f.Name]; ok {
				seen++
				if !strings.HasSuffix(f.Stub, w) {
					t.Errorf("%s: stub\n%s\nwant it to end with\n%s", f.Name, f.Stub, w)
				}
			}
			if fr, ok := frame[f.Kind]; ok && !strings.Contains(string(o.Asm), "TEXT ·"+f.Name+"(SB), NOSPLIT, "+fr+"\n") {
				t.Errorf("%s: frame is not %s", f.Name, fr)
			}
		}
	}
	if seen != len(want[0])+len(want[1]) {
		t.Errorf("checked %d stubs, want %d", seen, len(want))
	}
}

// Heads up to unrollMax values stay fully unrolled; longer ones loop, so
// that the function (and avo's register allocation, quadratic in its
// length) stays as short as a head of a few hundred values.
func TestLongHeadsLoop(t *testing.T) {
	lines := func(k Kernel) (int, bool) {
		out, err := Generate([]Kernel{k}, "// test", "amd64,!purego")
		if err != nil {
			t.Fatalf("%+v: %v", k, err)
		}
		return strings.Count(string(out.Asm), "\n"), strings.Contains(string(out.Asm), "\nrotate1:")
	}
	for _, k := range []Kernel{
		{HeadDim: 256, RotaryDim: 256, DType: "f32", Tos: []string{"bf16"}},
		{HeadDim: 256, RotaryDim: 256, NeoX: true, DType: "f64"},
	} {
		if _, looped := lines(k); looped {
			t.Errorf("%+v: head of %d values loops, want it unrolled", k, k.RotaryDim)
		}
	}
	short, _ := lines(Kernel{HeadDim: 256, RotaryDim: 256, NeoX: true, DType: "f32", Tos: []string{"bf16"}})
	for _, k := range []Kernel{
		{HeadDim: 4096, RotaryDim: 4096, NeoX: true, DType: "f32", Tos: []string{"bf16"}},
		{HeadDim: 4096, RotaryDim: 64, DType: "f32", Tos: []string{"f16"}},
		{HeadDim: 4096, RotaryDim: 4094, DType: "bf16"},
		{HeadDim: 4096, RotaryDim: 4096, DType: "f64"},
	} {
		if n, looped := lines(k); !looped && k.RotaryDim > unrollMax || n > short {
			t.Errorf("%+v: %d lines of assembly (looped: %v), want a loop and at most %d lines (HeadDim 256)", k, n, looped, short)
		}
	}
}
