package gen

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/constant"
	"go/format"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/ropegen/ropegen/internal/explain"
	"github.com/ropegen/ropegen/spec"
)

// ---- the fuzzed arguments ----------------------------------------------------------

// specArgs are FuzzSpec's arguments, in order: every Spec field, the lists
// described by a length code, a first value and a step (see list).
type specArgs struct {
	Dim, Rotary                                 int
	Base                                        float64
	DType, OutDType, Layout, Pkg, Scaling       string
	Factor                                      float64
	OrigCtx                                     int
	BetaFast, BetaSlow, Attn, MScale, MScaleAll float64
	Truncate                                    bool
	Low, High                                   float64
	ShortN                                      int
	ShortV                                      float64
	LongN                                       int
	LongV                                       float64
	FFN                                         int
	FFV, Step                                   float64
}

// values returns a's fields in FuzzSpec's argument order.
func (a specArgs) values() []any {
	return []any{a.Dim, a.Rotary, a.Base, a.DType, a.OutDType, a.Layout, a.Pkg, a.Scaling,
		a.Factor, a.OrigCtx, a.BetaFast, a.BetaSlow, a.Attn, a.MScale, a.MScaleAll, a.Truncate,
		a.Low, a.High, a.ShortN, a.ShortV, a.LongN, a.LongV, a.FFN, a.FFV, a.Step}
}

// list turns a length code into a per-pair list: 0 is none, 1 is exactly
// half values (the valid length, which random lengths would rarely hit),
// any other code |code| mod 64 values; value i is v + i·step.
func list(code int, v, step float64, half int) []float64 {
	n := 0
	switch {
	case code == 0:
		return nil
	case code == 1:
		n = half
	default:
		n = int(uint(code) % 64)
	}
	l := make([]float64, n)
	for i := range l {
		l[i] = v + float64(i)*step
	}
	return l
}

// spec is the spec.Spec that a describes.
func (a specArgs) spec() spec.Spec {
	r := a.Rotary
	if r == 0 {
		r = a.Dim
	}
	half := max(0, min(r, spec.MaxHeadDim)/2)
	return spec.Spec{
		HeadDim: a.Dim, RotaryDim: a.Rotary, Base: a.Base,
		DType: a.DType, Caches: spec.ParseCaches(a.OutDType), Layout: spec.Layout(a.Layout), Package: a.Pkg,
		Scaling: spec.Scaling{
			Type: a.Scaling, Factor: a.Factor, OrigCtx: a.OrigCtx,
			BetaFast: a.BetaFast, BetaSlow: a.BetaSlow, AttnFactor: a.Attn,
			MScale: a.MScale, MScaleAllDim: a.MScaleAll, Truncate: a.Truncate,
			LowFreqFactor: a.Low, HighFreqFactor: a.High,
			ShortFactor: list(a.ShortN, a.ShortV, a.Step, half),
			LongFactor:  list(a.LongN, a.LongV, a.Step, half),
			FreqFactors: list(a.FFN, a.FFV, a.Step, half),
		},
	}
}

// flagNames are the CLI flags a spec.SpecError may name (cmd/ropegen's spec flags).
var flagNames = map[string]bool{
	"dim": true, "rotary-dim": true, "base": true, "dtype": true, "out-dtype": true,
	"layout": true, "pkg": true, "scaling": true, "factor": true, "orig-ctx": true,
	"beta-fast": true, "beta-slow": true, "attn-factor": true, "mscale": true,
	"mscale-all-dim": true, "truncate": true, "low-freq-factor": true,
	"high-freq-factor": true, "short-factor": true, "long-factor": true, "freq-factors": true,
}

// ---- FuzzSpec ------------------------------------------------------------------------

// FuzzSpec fuzzes every Spec field: each spec either fails Validate with a
// *spec.SpecError that names a flag (and then Generate and explain.Write fail too), or
// explain.Write and Generate succeed and the files are gofmt'd, carry the header,
// parse, and type-check for linux/amd64, linux/arm64, purego and 386 (no
// assembly), rope_test.go included, with the constants and methods the spec
// asks for.
//
// Go's fuzzing engine gives a worker about a second to stop when -fuzztime
// runs out and records the input in hand as a crasher if it has not, so an
// execution must stay well below a second: a valid spec with a head or
// rotary dim above fuzzGenMaxDim (where Generate takes from a second up to
// tens of seconds, in avo's register allocator) is only validated here. The
// seed corpus, testdata/fuzz/FuzzSpec, covers the large dims, and
// TestFuzzSpecCorpus checks every seed in full and builds a sample of them.
func FuzzSpec(f *testing.F) {
	f.Fuzz(func(t *testing.T, dim, rotary int, base float64, dtype, outDType, layout, pkg, scaling string,
		factor float64, origCtx int, betaFast, betaSlow, attn, mscale, mscaleAll float64, truncate bool,
		low, high float64, shortN int, shortV float64, longN int, longV float64, ffN int, ffV, step float64) {
		a := specArgs{dim, rotary, base, dtype, outDType, layout, pkg, scaling, factor, origCtx,
			betaFast, betaSlow, attn, mscale, mscaleAll, truncate, low, high, shortN, shortV, longN, longV, ffN, ffV, step}
		s := a.spec()
		if s.HeadDim > fuzzGenMaxDim && s.Validate() == nil {
			return // valid, and too slow to generate in a fuzz execution
		}
		checkSpec(t, s)
	})
}

// fuzzGenMaxDim is the largest head dim FuzzSpec generates (about 0.3 s).
const fuzzGenMaxDim = 256

// checkSpec checks one spec as FuzzSpec describes and reports whether it is
// valid.
func checkSpec(t *testing.T, s spec.Spec) bool {
	t.Helper()
	err := s.Validate()
	if err != nil {
		var se *spec.SpecError
		if !errors.As(err, &se) {
			t.Fatalf("Validate(%+v) = %v (%T), want a *spec.SpecError", s, err, err)
		}
		if !flagNames[se.Field] {
			t.Fatalf("Validate(%+v): spec.SpecError names %q, not one of ropegen's flags", s, se.Field)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "-"+se.Field+" ") {
			t.Fatalf("Validate(%+v): message %q does not begin with -%s", s, msg, se.Field)
		}
		if _, gerr := Generate(s, Options{Command: "-fuzz"}); gerr == nil || !errors.As(gerr, &se) {
			t.Fatalf("Validate(%+v) = %v but Generate gives %v", s, err, gerr)
		}
		if eerr := explain.Write(io.Discard, s); eerr == nil || !errors.As(eerr, &se) {
			t.Fatalf("Validate(%+v) = %v but explain.Write gives %v", s, err, eerr)
		}
		return false
	}
	if err := explain.Write(io.Discard, s); err != nil {
		t.Fatalf("Validate(%+v) = nil but Explain: %v", s, err)
	}
	files, err := Generate(s, Options{Command: "-fuzz", Tests: true})
	if err != nil {
		t.Fatalf("Validate(%+v) = nil but Generate: %v", s, err)
	}
	typeCheck(t, s, files)
	return true
}

// targets are the configurations FuzzSpec type-checks: GOARCH and whether
// the purego tag is set.
var targets = []struct {
	arch   string
	purego bool
}{{"amd64", false}, {"arm64", false}, {"amd64", true}, {"386", false}}

var archSuffix = regexp.MustCompile(`_(amd64|arm64|386|arm|riscv64|ppc64le|s390x|wasm|loong64|mips64)(_test)?\.go$`)

// typeCheck checks that each Go file of the package is formatted and has the
// header, and that the package with its test file type-checks for every
// target and declares the constants and functions of docs/contract.md §7.
func typeCheck(t *testing.T, s spec.Spec, files []File) {
	t.Helper()
	checkMu.Lock()
	defer checkMu.Unlock()
	fset := token.NewFileSet()
	type parsed struct {
		name string
		file *ast.File
		expr constraint.Expr
	}
	var all []parsed
	for _, f := range files {
		if !bytes.HasPrefix(f.Data, []byte(Header("-fuzz"))) {
			t.Fatalf("%+v: %s does not begin with the header", s, f.Name)
		}
		if !strings.HasSuffix(f.Name, ".go") {
			continue
		}
		if fm, err := format.Source(f.Data); err != nil || !bytes.Equal(fm, f.Data) {
			t.Fatalf("%+v: %s is not gofmt'd (%v)", s, f.Name, err)
		}
		af, err := parser.ParseFile(fset, f.Name, f.Data, parser.ParseComments)
		if err != nil {
			t.Fatalf("%+v: %s does not parse: %v", s, f.Name, err)
		}
		if af.Name.Name != s.Package {
			t.Fatalf("%+v: %s is package %s", s, f.Name, af.Name.Name)
		}
		p := parsed{name: f.Name, file: af}
		for _, cg := range af.Comments {
			for _, c := range cg.List {
				if constraint.IsGoBuild(c.Text) {
					if p.expr, err = constraint.Parse(c.Text); err != nil {
						t.Fatalf("%+v: %s: %v", s, f.Name, err)
					}
				}
			}
		}
		all = append(all, p)
	}
	for _, tg := range targets {
		var fs []*ast.File
		var names []string
		for _, p := range all {
			if m := archSuffix.FindStringSubmatch(p.name); m != nil && m[1] != tg.arch {
				continue
			}
			if p.expr != nil && !p.expr.Eval(func(tag string) bool {
				return tag == tg.arch || tag == "linux" || tag == "unix" || tag == "gc" || tag == "purego" && tg.purego
			}) {
				continue
			}
			fs, names = append(fs, p.file), append(names, p.name)
		}
		conf := types.Config{Importer: exportImporter(), Sizes: types.SizesFor("gc", tg.arch)}
		pkg, err := conf.Check(s.Package, fset, fs, nil)
		if err != nil {
			t.Fatalf("%+v: %s purego=%v: %v does not type-check: %v", s, tg.arch, tg.purego, names, err)
		}
		checkAPI(t, s, pkg, tg.arch)
	}
}

// checkMu serialises type checks: the importer is not safe for concurrent
// use.
var checkMu sync.Mutex

// exportImporter returns one importer for the process: it reads the
// compiler's export data of the imports (golang.org/x/sys/cpu, package
// verify, testing, …), which go list -export builds or finds in the build
// cache, and remembers the packages by path.
func exportImporter() types.Importer {
	importerOnce.Do(func() {
		exports := map[string]string{}
		var mu sync.Mutex
		lookup := func(path string) (io.ReadCloser, error) {
			mu.Lock()
			defer mu.Unlock()
			if exports[path] == "" {
				out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", path).Output()
				if err != nil {
					return nil, fmt.Errorf("go list -export %s: %v", path, err)
				}
				for _, l := range strings.Split(string(out), "\n") {
					if p, f, ok := strings.Cut(l, "\t"); ok && f != "" {
						exports[p] = f
					}
				}
			}
			if exports[path] == "" {
				return nil, fmt.Errorf("no export data for %s", path)
			}
			return os.Open(exports[path])
		}
		expImporter = &cachedImporter{
			from: importer.ForCompiler(token.NewFileSet(), "gc", lookup).(types.ImporterFrom),
			pkgs: map[string]*types.Package{},
		}
	})
	return expImporter
}

var (
	importerOnce sync.Once
	expImporter  *cachedImporter
)

// cachedImporter is a types.ImporterFrom that remembers packages by import
// path: every generated package is type-checked from the same directory.
type cachedImporter struct {
	from types.ImporterFrom
	pkgs map[string]*types.Package
}

func (c *cachedImporter) Import(path string) (*types.Package, error) {
	return c.ImportFrom(path, ".", 0)
}

func (c *cachedImporter) ImportFrom(path, dir string, mode types.ImportMode) (*types.Package, error) {
	if p := c.pkgs[path]; p != nil {
		return p, nil
	}
	p, err := c.from.ImportFrom(path, dir, mode)
	if err == nil {
		c.pkgs[path] = p
	}
	return p, err
}

// checkAPI checks the package's constants and entry points against s.
func checkAPI(t *testing.T, s spec.Spec, pkg *types.Package, arch string) {
	t.Helper()
	sc := pkg.Scope()
	intConst := func(name string) int64 {
		c, ok := sc.Lookup(name).(*types.Const)
		if !ok {
			t.Fatalf("%+v (%s): no constant %s", s, arch, name)
		}
		v, ok := constant.Int64Val(constant.ToInt(c.Val()))
		if !ok {
			t.Fatalf("%+v (%s): %s = %v is not an integer", s, arch, name, c.Val())
		}
		return v
	}
	if hd := intConst("HeadDim"); hd != int64(s.HeadDim) {
		t.Fatalf("%+v (%s): HeadDim = %d", s, arch, hd)
	}
	if rd := intConst("RotaryDim"); rd != int64(s.Rotary()) {
		t.Fatalf("%+v (%s): RotaryDim = %d, want %d", s, arch, rd, s.Rotary())
	}
	if c, ok := sc.Lookup("Base").(*types.Const); !ok {
		t.Fatalf("%+v (%s): no constant Base", s, arch)
	} else if b, _ := constant.Float64Val(c.Val()); b != s.Base {
		t.Fatalf("%+v (%s): Base = %v, want %v", s, arch, c.Val(), s.Base)
	}
	for _, name := range []string{"New", "Default", "NewTable", "Rotate", "RotateInverse", "Table", "Freqs", "AttentionFactor", "Params", "DefaultParams", "Rotary", "Shape", "Shapes", "Batch", "NewBatch", "Strides"} {
		if sc.Lookup(name) == nil {
			t.Fatalf("%+v (%s): no %s", s, arch, name)
		}
	}
	for _, name := range []string{"NewTableParams", "TableParams", "NewTableRange", "ApplyTo", "ApplySeqTo"} {
		if sc.Lookup(name) != nil {
			t.Fatalf("%+v (%s): %s is still there", s, arch, name)
		}
	}
	tab := sc.Lookup("Table").Type()
	ms := types.NewMethodSet(types.NewPointer(tab))
	// ApplyNormQK is every package's: without a QK-norm it only rotates.
	want := []string{"Apply", "ApplyInverse", "ApplyInverseSeq", "ApplyInverseSeqParallel", "ApplyInverseStrided", "ApplyNormQK", "ApplyQK", "ApplySeq", "ApplySeqParallel", "ApplyStrided", "Len", "Rotary", "Start"}
	if sc.Lookup("Rows") == nil {
		t.Fatalf("%+v (%s): no Rows", s, arch)
	}
	if len(s.Caches) > 0 {
		want = append(want, "ApplyStore", "Prep", "Shift")
		for _, name := range []string{"Store", "Load", "CacheHead", "Cache", "NewCache", "Step", "CacheRows"} {
			if sc.Lookup(name) == nil {
				t.Fatalf("%+v (%s): no %s", s, arch, name)
			}
		}
		// A typed constructor for each of the package's cache types, and
		// none for the others.
		for c, ctor := range cacheCtors {
			if has := slices.Contains(s.Caches, spec.CacheType(c)); has != (sc.Lookup(ctor) != nil) {
				t.Fatalf("%+v (%s): cache type %s listed %v, constructor %s present %v", s, arch, c, has, ctor, !has)
			}
		}
	}
	sort.Strings(want)
	if (s.Axes != spec.AxesNone) != (sc.Lookup("Axes") != nil) {
		t.Fatalf("%+v (%s): Axes %v", s, arch, sc.Lookup("Axes"))
	}
	var got []string
	for i := range ms.Len() {
		if m := ms.At(i).Obj(); m.Exported() {
			got = append(got, m.Name())
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("%+v (%s): *Table has methods %v, want %v", s, arch, got, want)
	}
}

// ---- the seed corpus -------------------------------------------------------------------

var updateCorpus = flag.Bool("fuzzcorpus", false, "rewrite testdata/fuzz/FuzzSpec from fuzzSeeds")

// seedArgs is the default spec as specArgs, for the seeds to modify.
func seedArgs(mod func(*specArgs)) specArgs {
	a := specArgs{Dim: 128, Base: 10000, DType: "f32", Layout: string(spec.Interleaved), Pkg: "rope", Scaling: "none", Truncate: true, Step: 0.5}
	mod(&a)
	return a
}

// fuzzSeeds are FuzzSpec's seed corpus: every dtype, out-dtype, layout and
// scaling type, the edge dims (2, 4096, odd, rotary < head) and bad values
// of each field. valid says whether Validate must accept the seed.
var fuzzSeeds = []struct {
	name  string
	valid bool
	args  specArgs
}{
	{"default", true, seedArgs(func(a *specArgs) {})},
	{"f64", true, seedArgs(func(a *specArgs) { a.DType = "f64"; a.Dim = 64 })},
	{"f16-neox", true, seedArgs(func(a *specArgs) { a.DType = "f16"; a.Layout = string(spec.NeoX) })},
	{"bf16-partial", true, seedArgs(func(a *specArgs) { a.DType = "bf16"; a.Dim, a.Rotary = 96, 64 })},
	{"out-f16", true, seedArgs(func(a *specArgs) { a.OutDType = "f16"; a.Dim = 64; a.Layout = string(spec.NeoX) })},
	{"out-bf16", true, seedArgs(func(a *specArgs) { a.OutDType = "bf16"; a.Dim, a.Rotary = 40, 36 })},
	{"out-e4m3", true, seedArgs(func(a *specArgs) { a.OutDType = "e4m3"; a.Dim, a.Rotary = 30, 22; a.Layout = string(spec.NeoX) })},
	{"out-e5m2", true, seedArgs(func(a *specArgs) { a.OutDType = "e5m2"; a.Dim, a.Rotary = 30, 22; a.Layout = string(spec.Interleaved) })},
	{"out-q8", true, seedArgs(func(a *specArgs) { a.OutDType = "q8_0"; a.Dim, a.Rotary = 96, 40 })},
	{"dim2", true, seedArgs(func(a *specArgs) { a.Dim = 2 })},
	{"dim2-neox-f16", true, seedArgs(func(a *specArgs) { a.Dim = 2; a.Layout = string(spec.NeoX); a.DType = "f16" })},
	{"dim4096", true, seedArgs(func(a *specArgs) { a.Dim = 4096; a.Rotary = 64; a.Layout = string(spec.NeoX) })},
	{"rotary2-of-6", true, seedArgs(func(a *specArgs) { a.Dim, a.Rotary = 6, 2; a.DType = "bf16" })},
	{"rotary22-of-30", true, seedArgs(func(a *specArgs) { a.Dim, a.Rotary = 30, 22 })},
	{"linear", true, seedArgs(func(a *specArgs) { a.Scaling = "linear"; a.Factor = 4; a.Dim = 64 })},
	{"ntk", true, seedArgs(func(a *specArgs) { a.Scaling = "ntk"; a.Factor = 8; a.Dim = 80; a.Layout = string(spec.NeoX) })},
	{"yarn", true, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.Dim, a.Base, a.Layout = "yarn", 4, 32768, 128, 1e6, string(spec.NeoX)
	})},
	{"yarn-mscale", true, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.Dim, a.MScale, a.MScaleAll, a.Truncate, a.DType = "yarn", 40, 4096, 64, 0.707, 0.707, false, "f64"
	})},
	{"llama3", true, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.Low, a.High, a.Base, a.Layout = "llama3", 8, 8192, 1, 4, 500000, string(spec.NeoX)
	})},
	{"longrope", true, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.Dim, a.ShortN, a.ShortV, a.LongN, a.LongV, a.Layout = "longrope", 32, 4096, 48, 1, 1, 1, 1.5, string(spec.NeoX)
	})},
	{"freq-factors", true, seedArgs(func(a *specArgs) { a.FFN, a.FFV, a.Dim, a.DType = 1, 1, 32, "f16" })},
	{"pkg-unicode", true, seedArgs(func(a *specArgs) { a.Pkg = "π"; a.Dim = 8 })},
	{"base-tiny", true, seedArgs(func(a *specArgs) { a.Base = 1.0000001; a.Dim = 16 })},
	// Invalid: every field.
	{"dim-odd", false, seedArgs(func(a *specArgs) { a.Dim = 7 })},
	{"dim-zero", false, seedArgs(func(a *specArgs) { a.Dim = 0 })},
	{"dim-4098", false, seedArgs(func(a *specArgs) { a.Dim = 4098 })},
	{"dim-negative", false, seedArgs(func(a *specArgs) { a.Dim = -2 })},
	{"rotary-odd", false, seedArgs(func(a *specArgs) { a.Rotary = 63 })},
	{"rotary-above", false, seedArgs(func(a *specArgs) { a.Dim, a.Rotary = 64, 128 })},
	{"base-one", false, seedArgs(func(a *specArgs) { a.Base = 1 })},
	{"base-nan", false, seedArgs(func(a *specArgs) { a.Base = math.NaN() })},
	{"base-inf", false, seedArgs(func(a *specArgs) { a.Base = math.Inf(1) })},
	{"dtype-unknown", false, seedArgs(func(a *specArgs) { a.DType = "f8" })},
	{"out-with-f64", false, seedArgs(func(a *specArgs) { a.DType, a.OutDType = "f64", "f16" })},
	{"out-unknown", false, seedArgs(func(a *specArgs) { a.OutDType = "f8" })},
	{"out-q8-dim", false, seedArgs(func(a *specArgs) { a.OutDType = "q8_0"; a.Dim = 80 })},
	{"layout-case", false, seedArgs(func(a *specArgs) { a.Layout = "NeoX" })},
	{"pkg-keyword", false, seedArgs(func(a *specArgs) { a.Pkg = "func" })},
	{"pkg-empty", false, seedArgs(func(a *specArgs) { a.Pkg = "" })},
	{"pkg-blank", false, seedArgs(func(a *specArgs) { a.Pkg = "_" })},
	{"pkg-newline", false, seedArgs(func(a *specArgs) { a.Pkg = "rope\n" })},
	{"scaling-unknown", false, seedArgs(func(a *specArgs) { a.Scaling = "dynamic"; a.Factor = 2 })},
	{"factor-unused", false, seedArgs(func(a *specArgs) { a.Factor = 2 })},
	{"factor-negative", false, seedArgs(func(a *specArgs) { a.Scaling = "linear"; a.Factor = -1 })},
	{"ntk-overflow", false, seedArgs(func(a *specArgs) { a.Scaling = "ntk"; a.Factor = 1e300; a.Dim = 4 })},
	{"yarn-no-ctx", false, seedArgs(func(a *specArgs) { a.Scaling = "yarn"; a.Factor = 4 })},
	{"yarn-betas", false, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.BetaFast, a.BetaSlow = "yarn", 4, 4096, 1, 32
	})},
	{"yarn-mscale-alone", false, seedArgs(func(a *specArgs) { a.Scaling, a.Factor, a.OrigCtx, a.MScale = "yarn", 4, 4096, 1 })},
	{"llama3-bands", false, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.Low, a.High = "llama3", 8, 8192, 4, 1
	})},
	{"longrope-short-list", false, seedArgs(func(a *specArgs) {
		a.Scaling, a.Factor, a.OrigCtx, a.ShortN, a.ShortV, a.LongN, a.LongV = "longrope", 32, 4096, 3, 1, 1, 1
	})},
	{"freq-factors-zero", false, seedArgs(func(a *specArgs) { a.FFN, a.FFV, a.Step = 1, 0, 0 })},
	{"freq-factors-underflow", false, seedArgs(func(a *specArgs) { a.FFN, a.FFV, a.Step, a.Base = 1, 1e-300, 1e300, 1e300 })},
}

// marshalSeed writes a in go test's corpus file format.
func marshalSeed(a specArgs) []byte {
	var b bytes.Buffer
	b.WriteString("go test fuzz v1\n")
	for _, v := range a.values() {
		switch v := v.(type) {
		case int:
			fmt.Fprintf(&b, "int(%d)\n", v)
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				fmt.Fprintf(&b, "math.Float64frombits(0x%x)\n", math.Float64bits(v))
			} else {
				fmt.Fprintf(&b, "float64(%s)\n", strconv.FormatFloat(v, 'g', -1, 64))
			}
		case string:
			fmt.Fprintf(&b, "string(%s)\n", strconv.Quote(v))
		case bool:
			fmt.Fprintf(&b, "bool(%v)\n", v)
		}
	}
	return b.Bytes()
}

// corpusDir is where go test keeps FuzzSpec's seed corpus.
const corpusDir = "testdata/fuzz/FuzzSpec"

// buildSample are the valid seeds TestFuzzSpecCorpus builds and tests by
// default: the dtypes, out-dtypes and scaling types (an attention factor
// other than 1) that TestGeneratedPackagesVerify's f32 shapes do not reach.
// ROPEGEN_FUZZSPEC_BUILD set to anything builds every valid seed (about a
// minute more).
var buildSample = map[string]bool{"f16-neox": true, "out-bf16": true, "yarn-mscale": true, "longrope": true}

// TestFuzzSpecCorpus keeps testdata/fuzz/FuzzSpec equal to fuzzSeeds (go
// test ./gen -run TestFuzzSpecCorpus -fuzzcorpus rewrites it), checks each
// seed as FuzzSpec does, with the validity it is meant to have, and then,
// without -short, compiles, vets (amd64, arm64, riscv64, purego) and runs go test
// -short -run TestVerify on the packages of buildSample (of every valid
// seed with ROPEGEN_FUZZSPEC_BUILD set).
func TestFuzzSpecCorpus(t *testing.T) {
	if *updateCorpus {
		must(t, os.RemoveAll(corpusDir))
		must(t, os.MkdirAll(corpusDir, 0o755))
		for _, s := range fuzzSeeds {
			must(t, os.WriteFile(filepath.Join(corpusDir, "seed-"+s.name), marshalSeed(s.args), 0o644))
		}
	}
	ents, err := os.ReadDir(corpusDir)
	must(t, err)
	files := map[string]bool{}
	for _, e := range ents {
		files[e.Name()] = true
	}
	var build []spec.Spec
	for _, seed := range fuzzSeeds {
		name := "seed-" + seed.name
		data, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil || !bytes.Equal(data, marshalSeed(seed.args)) {
			t.Errorf("%s/%s is missing or stale (%v): run go test ./gen -run TestFuzzSpecCorpus -fuzzcorpus", corpusDir, name, err)
		}
		delete(files, name)
		s := seed.args.spec()
		valid := s.Validate() == nil
		if valid != seed.valid {
			t.Errorf("seed %s: Validate accepts it: %v, want %v (%v)", seed.name, valid, seed.valid, s.Validate())
		}
		t.Run(seed.name, func(t *testing.T) { checkSpec(t, s) })
		if valid && (buildSample[seed.name] || os.Getenv("ROPEGEN_FUZZSPEC_BUILD") != "") {
			build = append(build, s)
		}
	}
	for name := range files {
		if strings.HasPrefix(name, "seed-") {
			t.Errorf("%s/%s is not in fuzzSeeds", corpusDir, name)
		}
	}
	if testing.Short() {
		t.Skipf("-short: not building the %d valid seeds", len(build))
	}
	buildSpecs(t, build)
}

// buildSpecs writes the packages of specs into a module (26 to a module:
// writeModule names them pa…pz), then vets them for amd64, arm64, riscv64 and
// purego and runs their verify suite with -short.
func buildSpecs(t *testing.T, specs []spec.Spec) {
	t.Helper()
	for len(specs) > 0 {
		n := min(len(specs), 26)
		dir := writeModule(t, specs[:n], true)
		specs = specs[n:]
		goCmd(t, dir, nil, "build", "./...")
		goCmd(t, dir, nil, "vet", "./...")
		goCmd(t, dir, []string{"GOARCH=arm64"}, "vet", "./...")
		goCmd(t, dir, []string{"GOARCH=riscv64"}, "vet", "./...")
		goCmd(t, dir, nil, "vet", "-tags", "purego", "./...")
		out := goCmd(t, dir, nil, "test", "-short", "-count=1", "-run", "TestVerify", "./...")
		if got := strings.Count(out, "ok  \t"); got != n {
			t.Errorf("%d of %d packages passed:\n%s", got, n, out)
		}
	}
}
