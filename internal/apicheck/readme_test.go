package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestREADMEPrograms type-checks every Go code block of README.md that is
// a whole program (it starts "package main"), or a fragment that starts
// with its one import line (checked as the body of main), against the
// module's packages as they are, so that the front page cannot drift from
// the API it shows.
func TestREADMEPrograms(t *testing.T) {
	root := filepath.Join("..", "..")
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var progs []string
	for _, block := range strings.Split(string(data), "```go\n")[1:] {
		code, _, ok := strings.Cut(block, "```")
		switch {
		case !ok:
		case strings.HasPrefix(code, "package main\n"):
			progs = append(progs, code)
		case strings.HasPrefix(code, "import "):
			imp, body, _ := strings.Cut(code, "\n")
			progs = append(progs, "package main\n\n"+imp+"\n\nfunc main() {\n"+body+"}\n")
		}
	}
	if len(progs) < 2 {
		t.Fatalf("README.md has %d Go programs and fragments (go blocks starting \"package main\" or \"import\"); want the rotated vector and the engine", len(progs))
	}
	for i, src := range progs {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "README.md program", src, 0)
		if err != nil {
			t.Errorf("README.md program %d: %v", i+1, err)
			continue
		}
		var paths []string
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			paths = append(paths, p)
		}
		pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: root}, paths...)
		if err != nil {
			t.Fatal(err)
		}
		if packages.PrintErrors(pkgs) > 0 {
			t.Fatalf("README.md program %d: its imports do not load", i+1)
		}
		byPath := map[string]*types.Package{}
		for _, p := range pkgs {
			byPath[p.PkgPath] = p.Types
		}
		conf := types.Config{Importer: importerFunc(func(path string) (*types.Package, error) {
			if p := byPath[path]; p != nil {
				return p, nil
			}
			return nil, os.ErrNotExist
		})}
		if _, err := conf.Check("main", fset, []*ast.File{f}, nil); err != nil {
			t.Errorf("README.md program %d does not compile: %v", i+1, err)
		}
	}
}

type importerFunc func(string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
