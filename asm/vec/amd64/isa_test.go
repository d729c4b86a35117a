package amd64

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
)

// These tests came from asm/amd64 (the emitter this target replaced), now
// over every family.

// provides maps a golang.org/x/sys/cpu X86 field to the ISA extensions (as
// avo names them in "Requires:" lines) that a set field guarantees. AVX-512F
// and AVX2 imply the OS saves the AVX state, so AVX itself is usable.
var provides = map[string][]string{
	"HasAVX2":     {"AVX", "AVX2"},
	"HasF16C":     {"F16C"},
	"HasAVX512F":  {"AVX", "AVX512F"},
	"HasAVX512BW": {"AVX512BW"},
	"HasAVX512VL": {"AVX512VL"},
}

// isaFuncs are every family at every element type, on shapes with tails
// (masked, narrower registers) and partial rotary dims.
func isaFuncs() []*vec.Func {
	var fs []*vec.Func
	add := func(f vec.Func) { fs = append(fs, &f) }
	shapes := []vec.Shape{{HeadDim: 128, RotaryDim: 128}, {HeadDim: 30, RotaryDim: 22, NeoX: true}, {HeadDim: 96, RotaryDim: 64, NeoX: true}}
	for _, x := range []vec.Elem{vec.F32, vec.F64, vec.F16, vec.BF16} {
		for _, s := range shapes {
			for _, k := range []vec.Kind{vec.Fwd, vec.Inv, vec.FwdRows, vec.InvRows, vec.Fill} {
				add(vec.Func{Kind: k, Shape: s, X: x})
			}
			for _, n := range vec.NormKinds {
				v := vec.NormVariant{Kind: n, Token: s.HeadDim%8 == 0, After: n != "gemma"}
				add(vec.Func{Kind: vec.Norm, Shape: s, X: x, Norm: v})
				add(vec.Func{Kind: vec.NormOnly, Shape: s, X: x, Norm: v})
			}
			if x != vec.F32 {
				continue
			}
			add(vec.Func{Kind: vec.RotTo, Shape: s, X: x})
			for _, c := range []vec.Elem{vec.F16, vec.BF16, vec.E4M3, vec.Q8, vec.Q4_0, vec.Q4_1, vec.Q5_0, vec.Q5_1, vec.MXFP4, vec.IQ4NL, vec.NVFP4, vec.Int8PerTokenHead, vec.NVFP4GS} {
				if bv := c.BlockValues(); bv != 0 && s.HeadDim%bv != 0 || c == vec.Int8PerTokenHead && s.HeadDim%32 != 0 {
					continue
				}
				for _, k := range []vec.Kind{vec.Store, vec.StoreShift, vec.Load, vec.LoadShift} {
					add(vec.Func{Kind: k, Shape: s, X: x, Cache: c})
				}
				if c.Size == 2 {
					for _, k := range []vec.Kind{vec.To, vec.Shift, vec.ShiftInv} {
						add(vec.Func{Kind: k, Shape: s, X: x, Cache: c})
					}
				}
			}
		}
	}
	return fs
}

// texts are the functions of asm in order, as Generate returns their
// kernels (names repeat across element types); texts[i] ends at the next
// TEXT line, with that function's "Requires" comment.
func texts(t *testing.T, asm []byte, ks []Kernel) []string {
	parts := strings.Split(string(asm), "\nTEXT ")[1:]
	if len(parts) != len(ks) {
		t.Fatalf("%d TEXT lines for %d kernels", len(parts), len(ks))
	}
	for i, k := range ks {
		if !strings.HasPrefix(parts[i], "·"+k.Name()+"(SB)") {
			t.Fatalf("TEXT %d is not %s", i, k.Name())
		}
	}
	return parts
}

// Every instruction a function uses must be guaranteed by the cpu feature
// bits its level checks (Level.Features): avo derives what each function
// requires.
func TestFeaturesCoverRequiredISA(t *testing.T) {
	asm, ks, err := Generate(isaFuncs(), "// test", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	requires := regexp.MustCompile(`(?m)^// Requires: (.*)$`)
	fns := texts(t, asm, ks)
	for i, k := range ks {
		ok := map[string]bool{}
		for _, feat := range k.Features {
			for _, isa := range provides[feat] {
				ok[isa] = true
			}
		}
		// The "Requires" comment sits just above the TEXT line.
		before, _, _ := strings.Cut(string(asm), "\nTEXT ")
		if i > 0 {
			before = fns[i-1]
		}
		m := requires.FindAllStringSubmatch(before, -1)
		if len(m) == 0 {
			t.Fatalf("%s: no Requires line", k.Name())
		}
		for _, isa := range strings.Split(m[len(m)-1][1], ", ") {
			if !ok[isa] {
				t.Errorf("%s, x %v (features %v) uses %s", k.Name(), k.X, k.Features, isa)
			}
		}
	}
}

// The AVX2 level must not touch AVX-512 state (ZMM, opmask, the upper
// sixteen XMM/YMM registers), and AVX-512 tails must be masked rather
// than scalar (the rotations and the conversions; q8_0's NaN path and the
// norm's scale are scalar by design).
func TestLevelsKeepToTheirRegisters(t *testing.T) {
	asm, ks, err := Generate(isaFuncs(), "// test", "amd64")
	if err != nil {
		t.Fatal(err)
	}
	fns := texts(t, asm, ks)
	for i, k := range ks {
		body := fns[i]
		body = body[:strings.LastIndex(body, "RET")]
		if k.Level == "avx2" && regexp.MustCompile(`\bZ\d+\b|\bK\d\b`).MatchString(body) {
			t.Errorf("%s uses ZMM or opmask registers", k.Name())
		}
		// avo allocates from all 32 vector registers and reports no ISA
		// for X16–X31, Y16–Y31 (EVEX only): AVX2 code must not need them.
		if k.Level == "avx2" && regexp.MustCompile(`\b[XY](1[6-9]|2\d|3[01])\b`).MatchString(body) {
			t.Errorf("%s uses X16–X31 or Y16–Y31 (AVX-512 registers)", k.Name())
		}
		if k.Level == "avx512" && (k.Kind.Rotates() || k.Cache.Size == 2 || k.Cache == vec.E4M3) && regexp.MustCompile(`\bVMOVSS\b|\bVMOVSD\b|\bMOVWLZX\b`).MatchString(body) {
			t.Errorf("%s has a scalar tail", k.Name())
		}
	}
}

// Heads up to unrollMax values stay fully unrolled; longer ones loop, so
// that a function (and avo's register allocation, quadratic in its length)
// stays as short as a head of a few hundred values.
func TestLongHeadsLoop(t *testing.T) {
	lines := func(f vec.Func) (int, bool) {
		asm, _, err := Generate([]*vec.Func{&f}, "// test", "amd64")
		if err != nil {
			t.Fatalf("%s: %v", f.Name(), err)
		}
		return strings.Count(string(asm), "\n"), strings.Contains(string(asm), "\nchunk")
	}
	sh := func(h, r int, neox bool) vec.Shape { return vec.Shape{HeadDim: h, RotaryDim: r, NeoX: neox} }
	for _, f := range []vec.Func{
		{Kind: vec.To, Shape: sh(256, 256, false), X: vec.F32, Cache: vec.BF16},
		{Kind: vec.Fwd, Shape: sh(256, 256, true), X: vec.F64},
	} {
		if _, looped := lines(f); looped {
			t.Errorf("%s: a head of %d values loops, want it unrolled", f.Name(), f.Shape.RotaryDim)
		}
	}
	short, _ := lines(vec.Func{Kind: vec.To, Shape: sh(256, 256, true), X: vec.F32, Cache: vec.BF16})
	for _, f := range []vec.Func{
		{Kind: vec.To, Shape: sh(4096, 4096, true), X: vec.F32, Cache: vec.BF16},
		{Kind: vec.To, Shape: sh(4096, 64, false), X: vec.F32, Cache: vec.F16},
		{Kind: vec.Fwd, Shape: sh(4096, 4094, false), X: vec.BF16},
		{Kind: vec.Fwd, Shape: sh(4096, 4096, false), X: vec.F64},
		{Kind: vec.Norm, Shape: sh(4096, 4096, true), X: vec.F32, Norm: vec.NormVariant{Kind: "rms"}},
	} {
		if n, looped := lines(f); !looped && f.Shape.RotaryDim > unrollMax || n > 2*short {
			t.Errorf("%s: %d lines of assembly (looped: %v), want a loop and at most %d lines (twice HeadDim 256's)", f.Name(), n, looped, 2*short)
		}
	}
}
