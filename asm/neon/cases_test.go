package neon

import (
	"os"
	"os/exec"
	"testing"
)

// form describes one encoder for table-driven tests.
type form struct {
	name   string
	arrs   []Arrangement
	kind   int // kind3, kind2, kindElem, kindShift
	enc3   func(Arrangement, Reg, Reg, Reg) (Inst, error)
	enc2   func(Arrangement, Reg, Reg) (Inst, error)
	encIdx func(Arrangement, Reg, Reg, Reg, int) (Inst, error)
	encSh  func(Arrangement, Reg, Reg, int) (Inst, error)
}

const (
	kind3 = iota
	kind2
	kindElem
	kindShift
)

var (
	fpArrs  = []Arrangement{A2S, A4S, A2D}
	cvtArrs = []Arrangement{A4S, A2D}
	intArrs = []Arrangement{A8H, A4S, A2D}
)

var forms = []form{
	{name: "fadd", arrs: fpArrs, kind: kind3, enc3: FADD},
	{name: "fsub", arrs: fpArrs, kind: kind3, enc3: FSUB},
	{name: "fmul", arrs: fpArrs, kind: kind3, enc3: FMUL},
	{name: "fcmeq", arrs: fpArrs, kind: kind3, enc3: FCMEQ},
	{name: "fneg", arrs: fpArrs, kind: kind2, enc2: FNEG},
	{name: "faddp", arrs: []Arrangement{A2S, A2D}, kind: kind2, enc2: FADDP},
	{name: "fmul (by element)", arrs: fpArrs, kind: kindElem, encIdx: FMULElem},
	{name: "fcvtl", arrs: cvtArrs, kind: kind2, enc2: FCVTL},
	{name: "fcvtl2", arrs: cvtArrs, kind: kind2, enc2: FCVTL2},
	{name: "fcvtn", arrs: cvtArrs, kind: kind2, enc2: FCVTN},
	{name: "fcvtn2", arrs: cvtArrs, kind: kind2, enc2: FCVTN2},
	{name: "xtn", arrs: intArrs, kind: kind2, enc2: XTN},
	{name: "xtn2", arrs: intArrs, kind: kind2, enc2: XTN2},
	{name: "shll", arrs: intArrs, kind: kind2, enc2: SHLL},
	{name: "shll2", arrs: intArrs, kind: kind2, enc2: SHLL2},
	{name: "shrn", arrs: intArrs, kind: kindShift, encSh: SHRN},
	{name: "shrn2", arrs: intArrs, kind: kindShift, encSh: SHRN2},
}

// maxIndex is the largest by-element lane index for a.
func maxIndex(a Arrangement) int {
	if a == A2D {
		return 1
	}
	return 3
}

// narrowBits is the narrow element size (the SHRN shift limit) for a wide
// integer arrangement.
func narrowBits(a Arrangement) int {
	switch a {
	case A8H:
		return 8
	case A4S:
		return 16
	}
	return 32
}

// regTuples returns n deterministic (d, n, m) tuples: first every corner of
// {0, 31}^3, then a spread over 0..31 from coprime strides.
func regTuples(count int) [][3]Reg {
	var out [][3]Reg
	for c := 0; c < 8 && len(out) < count; c++ {
		var t [3]Reg
		for k := 0; k < 3; k++ {
			if c>>k&1 == 1 {
				t[k] = 31
			}
		}
		out = append(out, t)
	}
	for i := 0; len(out) < count; i++ {
		out = append(out, [3]Reg{Reg((7*i + 3) % 32), Reg((13*i + 5) % 32), Reg((19*i + 11) % 32)})
	}
	return out
}

// allCases encodes every form over every arrangement it accepts, with at
// least 24 operand combinations per arrangement (all lane indices, all
// shifts). It returns the instructions grouped by form name.
func allCases(t testing.TB) (names []string, byForm map[string][]Inst) {
	byForm = map[string][]Inst{}
	for _, f := range forms {
		names = append(names, f.name)
		for _, a := range f.arrs {
			n := 24
			if f.kind == kindShift && narrowBits(a)+8 > n {
				n = narrowBits(a) + 8
			}
			for j, r := range regTuples(n) {
				var in Inst
				var err error
				switch f.kind {
				case kind3:
					in, err = f.enc3(a, r[0], r[1], r[2])
				case kind2:
					in, err = f.enc2(a, r[0], r[1])
				case kindElem:
					in, err = f.encIdx(a, r[0], r[1], r[2], j%(maxIndex(a)+1))
				case kindShift:
					// j%bits+1 walks 1..bits; the corners get 1..8 too.
					sh := j%narrowBits(a) + 1
					if j == 1 {
						sh = narrowBits(a)
					}
					in, err = f.encSh(a, r[0], r[1], sh)
				}
				if err != nil {
					t.Fatalf("%s %s %v: unexpected error: %v", f.name, a, r, err)
				}
				byForm[f.name] = append(byForm[f.name], in)
			}
		}
	}
	return names, byForm
}

// requireTool returns the path of an external tool, or skips the test
// loudly; with ROPEGEN_REQUIRE_ARM64=1 a missing tool is a failure.
func requireTool(t *testing.T, tool, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err == nil {
		return p
	}
	if os.Getenv("ROPEGEN_REQUIRE_ARM64") == "1" {
		t.Fatalf("FAILED: %s not found; install %s (ROPEGEN_REQUIRE_ARM64=1 requires it)", tool, pkg)
	}
	t.Skipf("SKIPPED: %s not found; install %s", tool, pkg)
	return ""
}
