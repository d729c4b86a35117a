package gen

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// apiPackages are packages of every element type and feature: a plain one
// per dtype, QK-norms, every cache type, multi-axis, dynamic NTK, longrope,
// and an engine package of several shapes, norms and caches.
func apiPackages(t *testing.T) map[string][]File {
	t.Helper()
	pkgs := map[string][]File{}
	add := func(name string, files []File, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pkgs[name] = files
	}
	for _, dt := range []string{"f32", "f64", "f16", "bf16"} {
		s := specOf(128, 0, spec.NeoX)
		s.DType = dt
		files, err := Generate(s, Options{Tests: true})
		add(dt, files, err)
		n := normSpec(64, 32, spec.Interleaved, dt, spec.NormRMS, spec.ScopeToken, false)
		files, err = Generate(n, Options{Tests: true})
		add(dt+"/norm", files, err)
	}
	c := normSpec(64, 0, spec.NeoX, "f32", spec.NormGemma, spec.ScopeHead, true)
	c.Caches = []spec.CacheType{spec.CacheF32, spec.CacheF16, spec.CacheBF16, spec.CacheE4M3, spec.CacheQ8_0}
	files, err := Generate(c, Options{Tests: true})
	add("caches", files, err)
	for _, s := range shapes {
		if s.Axes != "" || s.Scaling.Type != "" {
			files, err := Generate(s, Options{Tests: true})
			add(fmt.Sprintf("%d/%s/%s", s.HeadDim, s.Axes, s.Scaling.Type), files, err)
		}
	}
	e := Engine{Package: "engine", Caches: []spec.CacheType{spec.CacheF32, spec.CacheF16, spec.CacheQ8_0}, Shapes: []EngineShape{
		{HeadDim: 128, RotaryDim: 128, Layout: spec.NeoX, Norms: []spec.QKNorm{{Kind: spec.NormRMS}}},
		{HeadDim: 64, RotaryDim: 64, Layout: spec.Interleaved},
	}}
	files, err = GenerateEngine(e, Options{Tests: true})
	add("engine", files, err)
	return pkgs
}

// go doc of every generated package names only exported or predeclared
// types (and those of other packages): no alias of the run-time's.
func TestAPINamesExportedTypes(t *testing.T) {
	for name, files := range apiPackages(t) {
		src := map[string][]byte{}
		for _, f := range files {
			src[f.Name] = f.Data
		}
		for _, bad := range unexportedInAPI(t, src) {
			t.Errorf("%s: %s", name, bad)
		}
	}
}

// The packages checked into generated/ pass the same check.
func TestCheckedInAPINamesExportedTypes(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("..", "generated", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no generated packages: %v", err)
	}
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		src := map[string][]byte{}
		for _, n := range names {
			if src[filepath.Base(n)], err = os.ReadFile(n); err != nil {
				t.Fatal(err)
			}
		}
		for _, bad := range unexportedInAPI(t, src) {
			t.Errorf("%s: %s", dir, bad)
		}
	}
}

// unexportedInAPI returns every unexported type name that go doc shows in
// the package of the Go files src (its tests and go:generate file aside):
// in an exported function's or method's signature, an exported type's
// definition (its exported fields and methods), an exported variable's or
// constant's declared type.
func unexportedInAPI(t *testing.T, src map[string][]byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	var files []*ast.File
	for name, data := range src {
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "gen.go" {
			continue
		}
		f, err := parser.ParseFile(fset, name, data, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "example.com/p")
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	check := func(where string, e ast.Expr) {
		for _, n := range typeNames(e) {
			if !ast.IsExported(n) && !predeclared[n] {
				bad = append(bad, fmt.Sprintf("%s names the unexported type %s", where, n))
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			where := f.Name
			if f.Recv != "" {
				where = f.Recv + "." + f.Name
			}
			check(where, f.Decl.Type)
		}
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			for _, s := range v.Decl.Specs {
				if vs := s.(*ast.ValueSpec); vs.Type != nil {
					check(strings.Join(v.Names, ", "), vs.Type)
				}
			}
		}
	}
	funcs(p.Funcs)
	values(p.Consts)
	values(p.Vars)
	for _, ty := range p.Types {
		for _, s := range ty.Decl.Specs {
			check(ty.Name, s.(*ast.TypeSpec).Type)
		}
		funcs(ty.Funcs)
		funcs(ty.Methods)
		values(ty.Consts)
		values(ty.Vars)
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// typeNames returns the unqualified identifiers of the type expression e,
// as go doc shows it: a struct's exported fields and an interface's
// exported methods only, and no parameter names or array lengths.
func typeNames(e ast.Expr) []string {
	var out []string
	fields := func(l *ast.FieldList, exportedOnly bool) {
		if l == nil {
			return
		}
		for _, f := range l.List {
			if exportedOnly && len(f.Names) > 0 && !slices.ContainsFunc(f.Names, func(n *ast.Ident) bool { return n.IsExported() }) {
				continue
			}
			out = append(out, typeNames(f.Type)...)
		}
	}
	switch e := e.(type) {
	case *ast.Ident:
		out = append(out, e.Name)
	case *ast.SelectorExpr: // another package's type
	case *ast.StarExpr:
		out = typeNames(e.X)
	case *ast.ArrayType:
		out = typeNames(e.Elt)
	case *ast.MapType:
		out = append(typeNames(e.Key), typeNames(e.Value)...)
	case *ast.ChanType:
		out = typeNames(e.Value)
	case *ast.Ellipsis:
		out = typeNames(e.Elt)
	case *ast.ParenExpr:
		out = typeNames(e.X)
	case *ast.IndexExpr:
		out = append(typeNames(e.X), typeNames(e.Index)...)
	case *ast.IndexListExpr:
		out = typeNames(e.X)
		for _, i := range e.Indices {
			out = append(out, typeNames(i)...)
		}
	case *ast.FuncType:
		fields(e.TypeParams, false)
		fields(e.Params, false)
		fields(e.Results, false)
	case *ast.StructType:
		fields(e.Fields, true)
	case *ast.InterfaceType:
		fields(e.Methods, true)
	}
	return out
}

// predeclared are Go's predeclared types.
var predeclared = map[string]bool{
	"any": true, "bool": true, "byte": true, "comparable": true, "complex64": true, "complex128": true,
	"error": true, "float32": true, "float64": true, "int": true, "int8": true, "int16": true,
	"int32": true, "int64": true, "rune": true, "string": true, "uint": true, "uint8": true,
	"uint16": true, "uint32": true, "uint64": true, "uintptr": true,
}

// The check sees what it must: an unexported alias in a signature, a field
// or a method of an exported type, and nothing in unexported fields,
// parameter names or array lengths.
func TestUnexportedInAPISees(t *testing.T) {
	src := map[string][]byte{"a.go": []byte(`package p

type elem = uint16

// F is f.
func F(x []elem, n [n]int) {}

// T is t.
type T struct {
	A   *comp
	b   elem
}

// I is i.
type I interface{ M(x map[string]elem) }

// V is v.
var V []elem

func (T) G() (w comp) { return 0 }
`)}
	got := unexportedInAPI(t, src)
	want := []string{
		"F names the unexported type elem",
		"I names the unexported type elem",
		"T names the unexported type comp",
		"T.G names the unexported type comp",
		"V names the unexported type elem",
	}
	if !slices.Equal(got, want) {
		t.Errorf("unexportedInAPI = %q, want %q", got, want)
	}
}
