package gen

import (
	"fmt"
	"go/format"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/asm/vec/amd64"
	"github.com/ropegen/ropegen/asm/vec/arm64"
	"github.com/ropegen/ropegen/asm/vec/purego"
	"github.com/ropegen/ropegen/asm/vec/riscv64"
)

// The kernels of a package. Each is a vec.Func, a family of the vector
// layer (asm/vec) at one shape; kernelFuncs lists a package's. Every target
// of the layer lowers the whole list: asm/vec/amd64 into rope_amd64.s
// (AVX-512 and AVX2), asm/vec/arm64 into rope_arm64.s (NEON),
// asm/vec/riscv64 into rope_riscv64.s (RVV), asm/vec/purego into
// rope_generic.go (all but the rows kernels). Beside each assembly file a
// Go file declares its functions and dispatches: archBackends lists the levels the CPU has,
// each with a kernels value per shape (templates/rt/kernels.go's ABI), one
// assignment per kernel; rope_generic.go's genericBackend does the same
// for pure Go, and rope_noasm.go, built exactly where no assembly is, has
// no assembly backends.

// asmArchs are the architectures with assembly kernels, in file order: the
// build constraint of their files is "<arch> && !purego".
var asmArchs = []string{"amd64", "arm64", "riscv64"}

// cpuVars are the golang.org/x/sys/cpu variables of asmArchs' features.
var cpuVars = map[string]string{"amd64": "X86", "arm64": "ARM64", "riscv64": "RISCV64"}

// elems are the vector layer's element types by -dtype and cache name.
var elems = map[string]vec.Elem{"f32": vec.F32, "f64": vec.F64, "f16": vec.F16, "bf16": vec.BF16, "e4m3": vec.E4M3, "e5m2": vec.E5M2, "q8_0": vec.Q8}

// vshape is the shape as the vector layer spells it.
func (sh *shape) vshape() vec.Shape {
	return vec.Shape{HeadDim: sh.p.HeadDim, RotaryDim: sh.p.RotaryDim, NeoX: sh.p.Spec.Layout == "neox"}
}

// kernelFuncs are the kernels of every shape of the package, their Level
// unset: the rotations (and the table fill, which only amd64 lowers), the
// shape's QK-norms, and the kernels of its cache types. A cache type's
// storeShift and loadShift are left out when they would cover the whole
// head: its store and load serve (fields).
func (pk *pkg) kernelFuncs() []*vec.Func {
	var fs []*vec.Func
	x := elems[pk.dt.name]
	for _, sh := range pk.shapes {
		s := sh.vshape()
		add := func(k vec.Kind, x, c vec.Elem, n vec.NormVariant) {
			fs = append(fs, &vec.Func{Kind: k, Shape: s, X: x, Cache: c, Norm: n})
		}
		for _, k := range []vec.Kind{vec.Fwd, vec.Inv, vec.FwdRows, vec.InvRows, vec.Fill} {
			add(k, x, vec.Elem{}, vec.NormVariant{})
		}
		for _, n := range sh.norms {
			v := vec.NormVariant{Kind: n.Kind, Token: n.Token, After: n.After}
			add(vec.Norm, x, vec.Elem{}, v)
			add(vec.NormOnly, x, vec.Elem{}, v)
		}
		if sh.rotTo() {
			add(vec.RotTo, vec.F32, vec.Elem{}, vec.NormVariant{})
		}
		for _, c := range sh.caches {
			e := elems[c]
			if e == vec.F32 {
				continue
			}
			for _, k := range []vec.Kind{vec.Store, vec.StoreShift, vec.Load, vec.LoadShift} {
				if f := (vec.Func{Kind: k, Shape: s, X: vec.F32, Cache: e}); f.Count() < s.HeadDim || k == vec.Store || k == vec.Load {
					add(k, vec.F32, e, vec.NormVariant{})
				}
			}
			if e.Size == 2 {
				for _, k := range []vec.Kind{vec.To, vec.Shift, vec.ShiftInv} {
					add(k, vec.F32, e, vec.NormVariant{})
				}
			}
		}
	}
	return fs
}

// fields are where f goes in a kernels value: its own field, and for a
// store or load whose Shift form would cover the whole head (not emitted,
// kernelFuncs) that form's field too.
func fields(f *vec.Func) []string {
	fs := []string{f.Field()}
	if f.Kind == vec.Store || f.Kind == vec.Load {
		g := *f
		g.Kind += "Shift"
		if g.Count() == f.Shape.HeadDim {
			fs = append(fs, g.Field())
		}
	}
	return fs
}

// level is one backend: its name, the cpu.<arch> fields it needs (none:
// pure Go) and its kernels, their Level set.
type level struct {
	name  string
	feats []string
	funcs []*vec.Func
}

// kernelFiles are the kernels of every target and their dispatch files.
func (pk *pkg) kernelFiles() ([]File, error) {
	funcs := pk.kernelFuncs()
	// The pure Go backend walks a head-major view token by token (its
	// kernels are compute-bound): no rows kernels.
	var gen []*vec.Func
	for _, f := range funcs {
		if f.Kind != vec.FwdRows && f.Kind != vec.InvRows {
			gen = append(gen, f)
		}
	}
	t, gfs := purego.Generate(gen)
	f := jen.NewFile(pk.name)
	pk.dispatch(f, "", []level{{name: t.Level(), funcs: gfs}})
	for _, c := range t.Funcs() {
		f.Line().Add(c)
	}
	generic, err := goFile(f, pk.header, "")
	if err != nil {
		return nil, fmt.Errorf("generating rope_generic.go: %w", err)
	}
	f = jen.NewFile(pk.name)
	f.Comment("archBackends returns no assembly backends: this build has none.")
	f.Func().Id("archBackends").Params().Index().Id("backend").Block(jen.Return(jen.Nil()))
	noasm, err := goFile(f, pk.header, "(!"+strings.Join(asmArchs, " && !")+") || purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_noasm.go: %w", err)
	}
	files := []File{{"rope_generic.go", generic}, {"rope_noasm.go", noasm}}
	for _, arch := range asmArchs {
		asm, levels, err := pk.lower(arch, lowered(funcs, arch))
		if err != nil {
			return nil, fmt.Errorf("generating rope_%s.s: %w", arch, err)
		}
		f := jen.NewFile(pk.name)
		f.ImportName(cpuPkg, "cpu")
		pk.dispatch(f, arch, levels)
		src, err := goFile(f, pk.header, arch+" && !purego")
		for _, l := range levels {
			for _, fn := range l.funcs {
				src = append(append(src, '\n'), fn.Decl()...)
			}
		}
		if err == nil {
			src, err = format.Source(src)
		}
		if err != nil {
			return nil, fmt.Errorf("generating rope_%s.go: %w", arch, err)
		}
		files = append(files, File{"rope_" + arch + ".go", src}, File{"rope_" + arch + ".s", asm})
	}
	return files, nil
}

// unlowered are the cache elements an assembly target does not lower yet
// (asm/vec's kernels_test.go keeps the same list, pending): their kernels
// are left out of that architecture's files, and the run-time gives the
// backend the pure Go ones in their place (templates/rt/kernels.go), the
// same bits. Every target lowers every cache element today.
var unlowered = map[string][]vec.Elem{}

// lowered are the funcs of funcs arch's target lowers.
func lowered(funcs []*vec.Func, arch string) []*vec.Func {
	return slices.DeleteFunc(slices.Clone(funcs), func(f *vec.Func) bool { return slices.Contains(unlowered[arch], f.Cache) })
}

// lower returns arch's assembly of funcs and its levels, best first.
func (pk *pkg) lower(arch string, funcs []*vec.Func) ([]byte, []level, error) {
	constraint := arch + " && !purego"
	switch arch {
	case "amd64":
		asm, ks, err := amd64.Generate(funcs, pk.header, strings.ReplaceAll(constraint, " && ", ","))
		var levels []level
		for _, l := range amd64.Levels {
			lv := level{name: l.Name}
			for _, k := range ks {
				if k.Level == l.Name {
					lv.funcs = append(lv.funcs, k.Func)
					for _, ft := range k.Features {
						if !slices.Contains(lv.feats, ft) {
							lv.feats = append(lv.feats, ft)
						}
					}
				}
			}
			levels = append(levels, lv)
		}
		return asm, levels, err
	case "arm64":
		asm, fs, _, err := arm64.Generate(funcs, pk.header, constraint)
		// Advanced SIMD is part of every arm64 CPU Go runs on: the check
		// keeps the structure of the other architectures and costs nothing.
		return asm, []level{{name: "neon", feats: []string{"HasASIMD"}, funcs: fs}}, err
	case "riscv64":
		asm, fs, _, err := riscv64.Generate(funcs, pk.header, constraint)
		return asm, []level{{name: "rvv", feats: []string{"HasV"}, funcs: fs}}, err
	}
	panic("gen: no target for " + arch)
}

// dispatch adds to f the backends of arch — archBackends, the levels whose
// features this CPU has, best first; for pure Go (arch "") genericBackend —
// and for each level and shape the function that returns its kernels
// value, one assignment per kernel.
func (pk *pkg) dispatch(f *jen.File, arch string, levels []level) {
	id := jen.Id
	ctor := func(l level, sh *shape) string { return "kernels_" + sh.vshape().Suffix() + "_" + l.name }
	value := func(l level) jen.Code {
		return id("backend").Values(jen.Dict{
			id("name"): jen.Lit(l.name),
			id("shapes"): jen.Index().Id("kernels").ValuesFunc(func(g *jen.Group) {
				for _, sh := range pk.shapes {
					g.Id(ctor(l, sh)).Call()
				}
			}),
		})
	}
	if arch == "" {
		f.Comment("genericBackend returns the pure Go backend: its kernels for every shape.")
		f.Func().Id("genericBackend").Params().Id("backend").Block(jen.Return(value(levels[0])))
	} else {
		f.Comment("archBackends returns the assembly backends this CPU supports, best first.")
		f.Func().Id("archBackends").Params().Index().Id("backend").BlockFunc(func(g *jen.Group) {
			g.Var().Id("bs").Index().Id("backend")
			for _, l := range levels {
				cond := jen.Null()
				for i, ft := range l.feats {
					if i > 0 {
						cond.Op("&&")
					}
					cond.Qual(cpuPkg, cpuVars[arch]).Dot(ft)
				}
				g.If(cond).Block(id("bs").Op("=").Append(id("bs"), value(l)))
			}
			g.Return(id("bs"))
		})
	}
	for _, l := range levels {
		for _, sh := range pk.shapes {
			s := sh.vshape()
			f.Line()
			f.Commentf("%s returns the %s kernels of the shape %d/%d/%s.", ctor(l, sh), l.name, s.HeadDim, s.RotaryDim, sh.p.Spec.Layout)
			f.Func().Id(ctor(l, sh)).Params().Params(id("k").Id("kernels")).BlockFunc(func(g *jen.Group) {
				for _, fn := range l.funcs {
					if fn.Shape == s {
						for _, fd := range fields(fn) {
							g.Id("k." + fd).Op("=").Id(fn.Name())
						}
					}
				}
				g.Return(id("k"))
			})
		}
	}
}
