package spec

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An engine imports spec at run time: it must need nothing but the standard
// library (and ropegen's own templates/exact, itself standard library only).
func TestStandardLibraryOnly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	allowed := map[string]bool{
		"github.com/ropegen/ropegen/spec":            true,
		"github.com/ropegen/ropegen/templates/exact": true,
	}
	for _, p := range strings.Fields(string(out)) {
		if !allowed[p] {
			t.Errorf("spec depends on %s: it must import only the standard library", p)
		}
	}
}

// What ropegen prints and draws of a spec (-explain, -svg) lives in
// internal/explain, not in the package an engine imports: no file of spec
// declares it.
func TestNoExplainCode(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for name := range af.Scope.Objects {
			l := strings.ToLower(name)
			if strings.Contains(l, "svg") || strings.Contains(l, "explain") || strings.Contains(l, "figure") {
				t.Errorf("%s declares %s: the explain and SVG code belongs to internal/explain", f, name)
			}
		}
		for _, im := range af.Imports {
			if im.Path.Value == `"encoding/xml"` {
				t.Errorf("%s imports encoding/xml: the SVG code belongs to internal/explain", f)
			}
		}
	}
}
