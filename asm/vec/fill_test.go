package vec_test

import (
	"go/scanner"
	"go/token"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFillConstants checks that the table fill (fill.go) computes with the
// constants of the run-time's sincos: every float literal of rt's sincos
// (sincos.go up to sincosDD) but sincosMax is one of fill's, and every
// float literal of fill's is one of sincos's. (That the fill kernels give
// sincos's bits is checked by TestKernels and by the verify suite, which
// compares Rotate on every backend with the pure Go one.)
func TestFillConstants(t *testing.T) {
	lits := func(path, from, to string) map[float64]bool {
		b, err := os.ReadFile(path)
		must(t, err)
		i := strings.Index(string(b), from)
		if i < 0 {
			t.Fatalf("%s: no %q", path, from)
		}
		src := string(b)[i:]
		if j := strings.Index(src, to); to != "" && j >= 0 {
			src = src[:j]
		}
		fs := token.NewFileSet()
		var sc scanner.Scanner
		sc.Init(fs.AddFile(path, -1, len(src)), []byte(src), nil, 0)
		out := map[float64]bool{}
		for {
			_, tok, lit := sc.Scan()
			if tok == token.EOF {
				return out
			}
			if tok == token.FLOAT {
				v, err := strconv.ParseFloat(lit, 64)
				must(t, err)
				out[math.Abs(v)] = true
			}
		}
	}
	sincos := lits("../../templates/rt/sincos.go", "\n// sincosMax is", "\n// sincosDD returns")
	delete(sincos, 0x1p31) // sincosMax: the run-time checks it, not the kernels
	fill := lits("fill.go", "\nfunc fill(", "")
	for v := range sincos {
		if !fill[v] {
			t.Errorf("sincos has the constant %v; fill does not", v)
		}
	}
	for v := range fill {
		if !sincos[v] {
			t.Errorf("fill has the constant %v; sincos does not", v)
		}
	}
	if len(fill) < 18 {
		t.Errorf("fill has %d float constants, want the 18 of the reduction and the polynomials", len(fill))
	}
}
