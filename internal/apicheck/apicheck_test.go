package apicheck

import (
	"flag"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

var update = flag.Bool("update", false, "rewrite api/*.txt from the packages' current APIs")

const module = "github.com/ropegen/ropegen"

// public lists the packages whose API is recorded in api/, by path inside
// the module: the module's public packages and the checked-in generated
// packages that are kept.
var public = []string{
	"spec",
	"verify",
	"verify/codec",
	"generated/engine",
	"generated/rope128",
	"generated/qwen3",
	"generated/kv128f16",
	"generated/kv128q8",
	"generated/kv128e4m3",
	"generated/rope128f16",
	"generated/rope128bf16",
}

// apiFile is the listing's file: api/generated_engine.txt for
// generated/engine.
func apiFile(root, rel string) string {
	return filepath.Join(root, "api", strings.ReplaceAll(rel, "/", "_")+".txt")
}

const updateCmd = "go test ./internal/apicheck/ -update"

// TestAPI fails when a public package's API differs from its api/ file,
// naming the lines added and removed.
func TestAPI(t *testing.T) {
	root := filepath.Join("..", "..")
	paths := make([]string, len(public))
	for i, rel := range public {
		paths[i] = module + "/" + rel
	}
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root}
	pkgs, err := packages.Load(cfg, paths...)
	if err != nil {
		t.Fatal(err)
	}
	if packages.PrintErrors(pkgs) > 0 {
		t.Fatal("the public packages do not load")
	}
	byPath := map[string]*packages.Package{}
	for _, p := range pkgs {
		byPath[p.PkgPath] = p
	}
	want := map[string]bool{}
	for _, rel := range public {
		p := byPath[module+"/"+rel]
		if p == nil || p.Types == nil {
			t.Fatalf("package %s did not load", rel)
		}
		file := apiFile(root, rel)
		want[filepath.Base(file)] = true
		got := Listing(p.Types, rel)
		if *update {
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(strings.Join(got, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: %v\nthe API of %s is not recorded; if it is public, run\n\t%s", file, err, rel, updateCmd)
			continue
		}
		recorded := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
		if !slices.IsSorted(recorded) {
			t.Errorf("%s is not sorted; run\n\t%s", file, updateCmd)
			continue
		}
		removed, added := Diff(recorded, got)
		if len(removed)+len(added) == 0 {
			continue
		}
		var b strings.Builder
		for _, l := range removed {
			b.WriteString("\n- " + l)
		}
		for _, l := range added {
			b.WriteString("\n+ " + l)
		}
		t.Errorf("the API of %s differs from api/%s (- recorded only, + current only):%s\nIf the change is intended, say what a user writes instead in CHANGELOG.md and run\n\t%s",
			rel, filepath.Base(file), b.String(), updateCmd)
	}
	// A file of a package no longer public is stale.
	files, _ := filepath.Glob(filepath.Join(root, "api", "*.txt"))
	for _, f := range files {
		if want[filepath.Base(f)] {
			continue
		}
		if *update {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s lists a package that is not in apicheck's public list; remove it, or run\n\t%s", f, updateCmd)
	}
}

// TestListing checks the listing of a small package written here, line
// by line, so that the format is pinned independently of the module's
// packages.
func TestListing(t *testing.T) {
	const src = `package p

import "strings"

const Big = 1 << 40
const Typed Kind = 3
const unexported = 1

var V []strings.Builder

type Kind uint8

func (Kind) String() string { return "" }
func (*Kind) Set(s string, v ...int) (bool, error) { return false, nil }
func (Kind) hidden() {}

type Alias = Kind

type S struct {
	A int
	b int
	*Kind
	Fn func(int) string
}

type I interface {
	M(x int) (y float32)
	m()
}

type Elem interface{ ~float32 | ~uint16 }

type G[T Elem] struct{ X []T }

func (g *G[T]) Get(i int) T { return g.X[i] }

func F[T Elem](xs []T, n int) T { return xs[n] }

func hidden() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"pkg p, const Big untyped int = 1099511627776",
		"pkg p, const Typed Kind = 3",
		"pkg p, func F[T Elem]([]T, int) T",
		"pkg p, method (*G[T]) Get(int) T",
		"pkg p, method (*Kind) Set(string, ...int) (bool, error)",
		"pkg p, method (S) Set(string, ...int) (bool, error)", // S embeds *Kind
		"pkg p, method (Kind) String() string",
		"pkg p, method (S) String() string",
		"pkg p, type Alias = Kind",
		"pkg p, type Elem interface",
		"pkg p, type Elem interface, embedded ~float32 | ~uint16",
		"pkg p, type G[T Elem] struct",
		"pkg p, type G[T Elem] struct, X []T",
		"pkg p, type I interface",
		"pkg p, type I interface, M(int) float32",
		"pkg p, type I interface, unexported methods",
		"pkg p, type Kind uint8",
		"pkg p, type S struct",
		"pkg p, type S struct, A int",
		"pkg p, type S struct, Fn func(int) string",
		"pkg p, type S struct, embedded *Kind",
		"pkg p, var V []strings.Builder",
	}
	slices.Sort(want)
	got := Listing(pkg, "p")
	removed, added := Diff(want, got)
	for _, l := range removed {
		t.Errorf("missing: %s", l)
	}
	for _, l := range added {
		t.Errorf("unexpected: %s", l)
	}
}

// TestDiff checks Diff on lists that differ at the start, middle and end.
func TestDiff(t *testing.T) {
	removed, added := Diff([]string{"a", "c", "d", "f"}, []string{"b", "c", "e", "f", "g"})
	if !slices.Equal(removed, []string{"a", "d"}) || !slices.Equal(added, []string{"b", "e", "g"}) {
		t.Errorf("Diff: removed %q, added %q; want [a d], [b e g]", removed, added)
	}
}
