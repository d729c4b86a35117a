package vec_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/asm/vec/amd64"
	"github.com/ropegen/ropegen/asm/vec/arm64"
	"github.com/ropegen/ropegen/asm/vec/purego"
	"github.com/ropegen/ropegen/asm/vec/riscv64"
	iqemu "github.com/ropegen/ropegen/internal/qemu"
)

// TestKernels emits the kernels of every family for a set of shapes (every
// element type, both layouts, rotary dims below the head's, heads past
// 256 values, heads that are no multiple of any register: every tail
// path; the twelve norm variants; every cache type) into packages of a
// temporary directory, one package an element type with several shapes
// each, and runs their check (testdata/check_test.go.txt): every kernel at
// every level this CPU has against the contract's arithmetic written out
// there, bit for bit. At AVX-512 it runs again at AVX2 (GODEBUG), with
// ROPEGEN_ARM64=1 under arm64 too (qemu-aarch64-static; =only: arm64
// alone), and under qemu-riscv64-static at three vector lengths
// (testRISCV64). ROPEGEN_CACHE=name keeps only the kernels of that cache
// type (e.g. int8_per_token_head), for a quick run.
func TestKernels(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests generated packages")
	}
	root, err := filepath.Abs("../..")
	must(t, err)
	dir, err := os.MkdirTemp(filepath.Join(root, "asm", "vec"), "_kt") // _: out of ./... patterns
	must(t, err)
	if os.Getenv("ROPEGEN_KEEP") == "" {
		t.Cleanup(func() { os.RemoveAll(dir) })
	} else {
		t.Logf("packages kept in %s", dir)
	}
	var pkgs []string
	for _, p := range kernelPackages() {
		if c := os.Getenv("ROPEGEN_CACHE"); c != "" {
			p.funcs = slices.DeleteFunc(p.funcs, func(f *vec.Func) bool { return f.Cache.Name != c })
			if len(p.funcs) == 0 {
				continue
			}
		}
		pd := filepath.Join(dir, p.name)
		must(t, os.Mkdir(pd, 0o755))
		for name, data := range p.files(t, root) {
			must(t, os.WriteFile(filepath.Join(pd, name), data, 0o644))
		}
		pkgs = append(pkgs, "./asm/vec/"+filepath.Base(dir)+"/"+p.name)
	}
	run := func(t *testing.T, env []string, args ...string) (out string) {
		t.Helper()
		cmd := exec.Command("go", append(args, pkgs...)...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), env...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s go %s: %v\n%s", strings.Join(env, " "), strings.Join(args, " "), err, b)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, "kernels checked") {
				t.Logf("%s %s", strings.Join(env, " "), strings.TrimSpace(l))
			}
		}
		return string(b)
	}
	arm := os.Getenv("ROPEGEN_ARM64")
	if arm != "only" {
		run(t, nil, "vet")
		run(t, nil, "test", "-count=1", "-v", "-run", "TestKernels")
		if runtime.GOARCH == "amd64" {
			run(t, []string{"GODEBUG=cpu.avx512f=off"}, "test", "-count=1", "-v", "-run", "TestKernels")
		}
	}
	if arm != "" {
		run(t, []string{"GOARCH=arm64"}, "vet")
		run(t, []string{"GOARCH=arm64"}, "test", "-count=1", "-v", "-exec", "qemu-aarch64-static", "-run", "TestKernels")
	}
	if arm != "only" {
		t.Run("riscv64", func(t *testing.T) { testRISCV64(t, run) })
	}
}

// testRISCV64 vets the packages for riscv64 and runs their check under
// qemu-riscv64-static at VLEN 128 (every level), 256 and 512 (the RVV
// kernels only), tails and masked-off lanes agnostic made all ones (so a
// kernel relying on them fails), and fails unless every RVV kernel
// passed. Without qemu it is skipped loudly, or fails with
// ROPEGEN_REQUIRE_RISCV64=1. qemu 7.2 has no riscv_hwprobe, so x/sys/cpu
// sees no V under it: ROPEGEN_RVV=1 registers the RVV level
// (kernels_riscv64.go); qemu 8.1 and later report V.
func testRISCV64(t *testing.T, run func(*testing.T, []string, ...string) string) {
	qemu, err := exec.LookPath("qemu-riscv64-static")
	if err != nil {
		if os.Getenv("ROPEGEN_REQUIRE_RISCV64") == "1" {
			t.Fatalf("the RVV kernels cannot be tested: %v, and ROPEGEN_REQUIRE_RISCV64=1", err)
		}
		msg := "SKIPPED: riscv64 RVV kernels NOT TESTED: qemu-riscv64-static not found (install qemu-user-static; ROPEGEN_REQUIRE_RISCV64=1 makes this a failure)"
		fmt.Fprintf(os.Stderr, "%s\n## %s\n%s\n", strings.Repeat("#", 72), msg, strings.Repeat("#", 72))
		t.Skip(msg)
	}
	run(t, []string{"GOARCH=riscv64"}, "vet")
	want := 0
	for _, p := range kernelPackages() {
		for _, f := range implemented(p.funcs, "riscv64") {
			if c := os.Getenv("ROPEGEN_CACHE"); f.Kind != vec.Fill && (c == "" || f.Cache.Name == c) {
				want++
			}
		}
	}
	for _, vlen := range []int{128, 256, 512} {
		sel := "TestKernels"
		if vlen > 128 {
			sel = "TestKernels/.*_rvv$"
		}
		exe := qemu + " -cpu " + iqemu.RISCV64CPU(vlen)
		out := run(t, []string{"GOARCH=riscv64", "ROPEGEN_RVV=1"}, "test", "-count=1", "-v", "-exec", exe, "-run", sel)
		if n := len(regexp.MustCompile(`--- PASS: TestKernels/\w+_rvv `).FindAllString(out, -1)); n != want {
			t.Errorf("VLEN %d: %d RVV kernels passed, want %d", vlen, n, want)
		}
	}
}

// pending are the cache elements a target does not lower yet: its
// kernels of them are not generated, and the check runs them at the other
// levels (pure Go on that architecture). None since NEON (298a2d7) and
// RVV (9a06b62) lower the minifloat family, e5m2 included; a new element
// a target does not have yet goes here until it does. None for the qn
// family (q4_0, q4_1, q5_0, q5_1) either: every target lowers vec.Packer.
var pending = map[string][]vec.Elem{}

// implemented are the funcs the target arch lowers.
func implemented(funcs []*vec.Func, arch string) []*vec.Func {
	return slices.DeleteFunc(slices.Clone(funcs), func(f *vec.Func) bool { return slices.Contains(pending[arch], f.Cache) })
}

type kernelPackage struct {
	name  string
	x     vec.Elem
	funcs []*vec.Func
}

// kernelPackages are the packages TestKernels checks.
func kernelPackages() []kernelPackage {
	sh := func(h, r int, neox bool) vec.Shape { return vec.Shape{HeadDim: h, RotaryDim: r, NeoX: neox} }
	var norms []vec.NormVariant
	for _, k := range vec.NormKinds {
		for _, token := range []bool{false, true} {
			for _, after := range []bool{false, true} {
				norms = append(norms, vec.NormVariant{Kind: k, Token: token, After: after})
			}
		}
	}
	pkg := func(name string, x vec.Elem, shapes []vec.Shape, allNorms int) kernelPackage {
		p := kernelPackage{name: name, x: x}
		add := func(f vec.Func) { p.funcs = vec.AppendKey(p.funcs, f) } // each kernel once, as in gen
		for i, s := range shapes {
			for _, k := range []vec.Kind{vec.Fwd, vec.Inv, vec.FwdRows, vec.InvRows, vec.Fill} {
				add(vec.Func{Kind: k, Shape: s, X: x})
			}
			for j, v := range norms {
				if (i >= allNorms && j%5 != i%5) || v.Token && s.HeadDim%8 != 0 {
					continue
				}
				add(vec.Func{Kind: vec.Norm, Shape: s, X: x, Norm: v})
				add(vec.Func{Kind: vec.NormOnly, Shape: s, X: x, Norm: v})
			}
			if x != vec.F32 {
				continue
			}
			add(vec.Func{Kind: vec.RotTo, Shape: s, X: x})
			if vec.HasHadamard(s.HeadDim) {
				add(vec.Func{Kind: vec.Hadamard, Shape: s, X: x})
			}
			for _, c := range []vec.Elem{vec.F16, vec.BF16, vec.E4M3, vec.E5M2, vec.Q8, vec.Q4_0, vec.Q4_1, vec.Q5_0, vec.Q5_1, vec.MXFP4, vec.IQ4NL, vec.NVFP4, vec.Int8PerTokenHead, vec.NVFP4GS} {
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
		if x == vec.F32 { // the Hadamard family's other blocks: 16 … 256 values (80: five of 16)
			for _, h := range []int{16, 32, 64, 80, 256} {
				add(vec.Func{Kind: vec.Hadamard, Shape: sh(h, h, true), X: x})
			}
		}
		return p
	}
	return []kernelPackage{
		pkg("f32", vec.F32, []vec.Shape{sh(128, 128, true), sh(128, 64, false), sh(96, 64, true), sh(40, 40, true), sh(30, 30, false), sh(6, 4, true), sh(576, 576, false), sh(512, 320, true), sh(264, 258, true)}, 2),
		pkg("f64", vec.F64, []vec.Shape{sh(128, 128, true), sh(128, 64, false), sh(80, 32, true), sh(14, 14, false), sh(512, 512, true)}, 1),
		pkg("f16", vec.F16, []vec.Shape{sh(128, 128, false), sh(96, 64, true), sh(30, 30, false), sh(512, 512, false)}, 1),
		pkg("bf16", vec.BF16, []vec.Shape{sh(128, 128, true), sh(80, 32, false), sh(22, 22, true)}, 1),
	}
}

// files are the package's files: the kernels of every target, their
// table, the run-time's helpers, and the check.
func (p kernelPackage) files(t *testing.T, root string) map[string][]byte {
	files := map[string][]byte{}
	header := "// Code generated by TestKernels; DO NOT EDIT.\n"
	asm, ks, err := amd64.Generate(implemented(p.funcs, "amd64"), header, "amd64")
	must(t, err)
	files["kernels_amd64.s"] = asm

	base := func(f *vec.Func) string { return strings.TrimSuffix(f.Name(), "_"+f.Level) }
	var b bytes.Buffer
	b.WriteString(header + "\n//go:build amd64\n\npackage " + p.name + "\n\nimport \"golang.org/x/sys/cpu\"\n\nfunc init() {\n")
	levels := map[string][]amd64.Kernel{}
	for _, k := range ks {
		levels[k.Level] = append(levels[k.Level], k)
	}
	for _, l := range amd64.Levels {
		var cond []string
		for _, k := range levels[l.Name] {
			for _, ft := range k.Features {
				if !slices.Contains(cond, "cpu.X86."+ft) {
					cond = append(cond, "cpu.X86."+ft)
				}
			}
		}
		fmt.Fprintf(&b, "\tif %s {\n\t\tadd(%q, map[string]any{\n", strings.Join(cond, " && "), l.Name)
		for _, k := range levels[l.Name] {
			fmt.Fprintf(&b, "\t\t\t%q: %s,\n", base(k.Func), k.Name())
		}
		b.WriteString("\t\t})\n\t}\n")
	}
	b.WriteString("}\n\n")
	for _, k := range ks {
		b.WriteString(k.Decl() + "\n")
	}
	files["kernels_amd64.go"] = append([]byte(nil), b.Bytes()...)

	neon, nfs, stubs, err := arm64.Generate(implemented(p.funcs, "arm64"), header, "arm64")
	must(t, err)
	files["kernels_arm64.s"] = neon
	b.Reset()
	b.WriteString(header + "\n//go:build arm64\n\npackage " + p.name + "\n\nfunc init() {\n\tadd(\"neon\", map[string]any{\n")
	for _, f := range nfs {
		fmt.Fprintf(&b, "\t\t%q: %s,\n", base(f), f.Name())
	}
	b.WriteString("\t})\n}\n\n" + stubs)
	files["kernels_arm64.go"] = append([]byte(nil), b.Bytes()...)

	rv, rfs, rstubs, err := riscv64.Generate(implemented(p.funcs, "riscv64"), header, "riscv64")
	must(t, err)
	files["kernels_riscv64.s"] = rv
	b.Reset()
	b.WriteString(header + "\n//go:build riscv64\n\npackage " + p.name + "\n\nimport (\n\t\"os\"\n\n\t\"golang.org/x/sys/cpu\"\n)\n\n")
	b.WriteString("// ROPEGEN_RVV=1: the V extension where x/sys/cpu cannot see it (qemu 7.2).\nfunc init() {\n")
	b.WriteString("\tif cpu.RISCV64.HasV || os.Getenv(\"ROPEGEN_RVV\") == \"1\" {\n\t\tadd(\"rvv\", map[string]any{\n")
	for _, f := range rfs {
		fmt.Fprintf(&b, "\t\t\t%q: %s,\n", base(f), f.Name())
	}
	b.WriteString("\t\t})\n\t}\n}\n\n" + rstubs)
	files["kernels_riscv64.go"] = append([]byte(nil), b.Bytes()...)

	tg, gs := purego.Generate(p.funcs)
	f := jen.NewFile(p.name)
	for _, c := range tg.Funcs() {
		f.Add(c).Line()
	}
	c := p.x.Compute().Go
	f.Type().Id("E").Op("=").Id(p.x.Go)
	f.Type().Id("C").Op("=").Id(c)
	f.Const().Id("bits16").Op("=").Lit(p.x.Size == 2)
	f.Const().Id("bf16Elem").Op("=").Lit(p.x == vec.BF16)
	w, n := "return "+c+"(v)", "return "+p.x.Go+"(v)"
	switch p.x {
	case vec.F16:
		w, n = "return f16w(v)", "return f16n(float32(v))"
	case vec.BF16:
		w, n = "return bf16w(v)", "return bf16n(float32(v))"
	}
	f.Func().Id("widenRef").Params(jen.Id("v").Id("E")).Float64().Block(jen.Id("return float64(func() C {" + w + "}())"))
	f.Func().Id("narrowRef").Params(jen.Id("v").Float64()).Id("E").Block(jen.Id(n))
	f.Comment("kernel is one function of the package, at every level.")
	f.Id(`type kernel struct {
	Name, Kind, Cache, Norm string
	H, R                    int
	NeoX, Token, After      bool
	Fns                     map[string]any
}`)
	var list []jen.Code
	for _, g := range gs {
		list = append(list, jen.Values(jen.Dict{
			jen.Id("Name"): jen.Lit(base(g)), jen.Id("Kind"): jen.Lit(string(g.Kind)), jen.Id("Cache"): jen.Lit(g.Cache.Name),
			jen.Id("Norm"): jen.Lit(g.Norm.Kind), jen.Id("Token"): jen.Lit(g.Norm.Token), jen.Id("After"): jen.Lit(g.Norm.After),
			jen.Id("H"): jen.Lit(g.Shape.HeadDim), jen.Id("R"): jen.Lit(g.Shape.RotaryDim), jen.Id("NeoX"): jen.Lit(g.Shape.NeoX),
			jen.Id("Fns"): jen.Map(jen.String()).Any().Values(jen.Dict{jen.Lit("generic"): jen.Id(g.Name())}),
		}))
	}
	for _, fl := range p.funcs {
		if fl.Kind == vec.Fill && fl.C() == vec.F32 { // no pure Go fill
			list = append(list, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(strings.TrimSuffix(fl.Name(), "_")), jen.Id("Kind"): jen.Lit("fill"),
				jen.Id("H"): jen.Lit(fl.Shape.HeadDim), jen.Id("R"): jen.Lit(fl.Shape.RotaryDim), jen.Id("NeoX"): jen.Lit(fl.Shape.NeoX),
				jen.Id("Fns"): jen.Map(jen.String()).Any().Values()}))
		}
	}
	f.Var().Id("kernels").Op("=").Index().Op("*").Id("kernel").Values(list...)
	f.Id(`// add registers a level's functions by name.
func add(level string, fns map[string]any) {
	for _, k := range kernels {
		if fn, ok := fns[k.Name]; ok {
			k.Fns[level] = fn
		}
	}
}`)
	for _, src := range helpers(t, root) {
		f.Id(src)
	}
	var gb bytes.Buffer
	must(t, f.Render(&gb))
	src, err := imports.Process("", gb.Bytes(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, gb.Bytes())
	}
	files["kernels.go"] = src
	chk, err := os.ReadFile("testdata/check_test.go.txt")
	must(t, err)
	files["check_test.go"] = bytes.Replace(chk, []byte("package kt"), []byte("package "+p.name), 1)
	return files
}

// helpers are the run-time's functions the pure Go kernels and the check
// call, copied from rt as the generated packages carry them: the f16 and
// bf16 conversions, e4m3's, and sincos (sincos.go whole).
func helpers(t *testing.T, root string) []string {
	want := map[string]bool{"f16to32": true, "f32to16": true, "bf16to32": true, "f32tobf16": true,
		"f32toe4m3": true, "e4m3to32": true}
	var out []string
	for _, name := range []string{"convert.go", "cache_e4m3.go", "sincos.go"} {
		path := filepath.Join(root, "templates", "rt", name)
		src, err := os.ReadFile(path)
		must(t, err)
		fs := token.NewFileSet()
		file, err := parser.ParseFile(fs, path, src, parser.ParseComments)
		must(t, err)
		for _, d := range file.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
				continue
			}
			if fd, ok := d.(*ast.FuncDecl); name != "sincos.go" && (!ok || !want[fd.Name.Name]) {
				continue
			}
			out = append(out, string(src[fs.Position(d.Pos()).Offset:fs.Position(d.End()).Offset]))
		}
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestDeterministic: every target writes the same bytes twice.
func TestDeterministic(t *testing.T) {
	root, err := filepath.Abs("../..")
	must(t, err)
	p := kernelPackages()[0]
	a, b := p.files(t, root), p.files(t, root)
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two runs", name)
		}
	}
}
