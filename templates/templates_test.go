package templates

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/ with Copy's output")

// goldenData are the packages the test template's golden files describe: a
// per-spec package without caches or a norm, one with a norm and every
// cache type, an f64 one with a norm after the rotation, and an engine
// package of three shapes.
var goldenData = map[string]*Data{
	"spec": {Header: "// header", Package: "p", Elem: "float32", Comp: "float32", DType: "f32",
		Spec: &Spec{Freqs: "none"}},
	"spec_norm_caches": {Header: "// header", Package: "p", Elem: "float32", Comp: "float32", DType: "f32",
		Spec: &Spec{Freqs: "yarn", Norm: &Norm{Kind: "rms", Scope: "head", K: [2]int{8, 4}}},
		Caches: []Cache{
			{DType: "f32", Elem: "float32", New: "F32Cache", Hadamard: true},
			{DType: "f16", Elem: "uint16", New: "F16Cache"},
			{DType: "bf16", Elem: "uint16", New: "BF16Cache"},
			{DType: "e4m3", Elem: "uint8", New: "E4M3Cache", Scale: true, HeadScale: true},
			{DType: "q8_0", Elem: "uint8", New: "Q80Cache", Block: 32},
		}},
	"spec_f64": {Header: "// header", Package: "p", Elem: "float64", Comp: "float64", DType: "f64",
		Spec: &Spec{Freqs: "none", Norm: &Norm{Kind: "l2", Scope: "token", After: true, K: [2]int{13, 9}}}},
	"engine": {Header: "// header", Package: "p", Elem: "float32", Comp: "float32", DType: "f32",
		Shapes: []Shape{{}, {Norms: []Norm{{Kind: "rms", Scope: "head", K: [2]int{8, 4}}, {Kind: "rms", Scope: "token", K: [2]int{8, 4}}}}, {}},
		Caches: []Cache{{DType: "f16", Elem: "uint16", New: "F16Cache", Hadamard: true}, {DType: "q8_0", Elem: "uint8", New: "Q80Cache", Block: 32, Hadamard: true}}},
}

// TestTestTemplateGolden executes test/rope_test.go.tmpl for goldenData
// and compares with testdata/rope_test.<name>.golden (go test -update
// rewrites them).
func TestTestTemplateGolden(t *testing.T) {
	for name, d := range goldenData {
		t.Run(name, func(t *testing.T) {
			got, err := Copy("test/rope_test.go.tmpl", d)
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "rope_test."+name+".golden")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Copy's output differs from %s (go test -update rewrites it after a change you meant)", golden)
			}
		})
	}
}

// Every Go file of FS copies, and a file without elem or comp, copied into
// a package of float32 elements, is the source with only its package
// clause and header changed: Copy reprints, it does not reformat.
func TestCopyKeepsSource(t *testing.T) {
	d := &Data{Header: "// header", Package: "p", Elem: "uint16", Comp: "float32"}
	err := fs.WalkDir(FS, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || slices.Contains(rtOnly, path) {
			return err
		}
		src, err := FS.ReadFile(path)
		if err != nil {
			return err
		}
		got, err := Copy(path, d)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		pkg := "package " + filepath.Base(filepath.Dir(path)) + "\n"
		body, ok := bytes.CutPrefix(src, []byte(pkg))
		if !ok {
			t.Errorf("%s does not begin with %q", path, pkg)
			return nil
		}
		want := append([]byte("// header\n\npackage p\n"), body...)
		if !bytes.Contains(src, []byte("elem")) && !bytes.Contains(src, []byte("comp")) && !bytes.Equal(got, want) {
			t.Errorf("%s: Copy changed more than the package clause and the header", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Copy refuses a file where elem or comp is not the type it stands for.
func TestRetypeRefuses(t *testing.T) {
	for _, src := range []string{
		"package rt\n\nfunc f() { elem := 1; _ = elem }\n",
		"package rt\n\ntype s struct{ comp int }\n",
		"package rt\n\nvar _ = x.elem\n",
		"package rt\n\nvar _ = s{comp: 1}\n",
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := retype(f, map[string]string{"elem": "float32", "comp": "float32"}); err == nil {
			t.Errorf("retype accepted %q", src)
		}
	}
}

// Nothing copied is test-only: every unexported function, method, type
// and variable a copied file of rt declares (constants, which compile to
// nothing, aside) is reached from rt's exported API, its init functions,
// the files only rt has (rtOnly), or what generated code calls
// (usedByGenerated), through rt's code (its tests aside). A name only tests
// reach belongs in a _test.go file, which packages get only with -tests.
func TestNothingCopiedIsTestOnly(t *testing.T) {
	fset := token.NewFileSet()
	type decl struct {
		file string
		uses []string
	}
	decls := map[string][]decl{} // by name: a method and a function may share one
	var roots []string
	entries, err := FS.ReadDir("rt")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := "rt/" + e.Name()
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		add := func(id *ast.Ident, n ast.Node) {
			var uses []string
			ast.Inspect(n, func(n ast.Node) bool {
				if u, ok := n.(*ast.Ident); ok && u != id {
					uses = append(uses, u.Name)
				}
				return true
			})
			decls[id.Name] = append(decls[id.Name], decl{name, uses})
			if id.IsExported() || id.Name == "_" || id.Name == "init" || slices.Contains(rtOnly, name) {
				roots = append(roots, id.Name)
			}
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				add(d.Name, d)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						add(s.Name, s)
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if d.Tok == token.CONST {
								roots = append(roots, n.Name)
							}
							add(n, s)
						}
					}
				}
			}
		}
	}
	live := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if live[n] {
			return
		}
		live[n] = true
		for _, d := range decls[n] {
			for _, u := range d.uses {
				walk(u)
			}
		}
	}
	for _, n := range append(roots, usedByGenerated...) {
		walk(n)
	}
	var dead []string
	for n, ds := range decls {
		if !live[n] {
			dead = append(dead, ds[0].file+": "+n)
		}
	}
	slices.Sort(dead)
	for _, d := range dead {
		t.Errorf("%s: nothing but tests reaches it: move it into a _test.go file", d)
	}
}

// usedByGenerated are the names of the run-time only generated code uses:
// the conversions rope.go's widen and narrow and the pure Go cache kernels
// (asm/vec/purego) call.
var usedByGenerated = []string{"f16to32", "f32to16", "bf16to32", "f32tobf16", "e4m3to32", "f32toe4m3"}
