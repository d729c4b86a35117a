package gen

import (
	"fmt"
	"go/format"
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
// of the layer, a vec.Arch in archs, lowers the whole list: asm/vec/purego
// into rope_generic.go (all but the rows kernels), asm/vec/amd64 into
// rope_amd64.s (AVX-512 and AVX2), asm/vec/arm64 into rope_arm64.s (NEON),
// asm/vec/riscv64 into rope_riscv64.s (RVV). Beside each assembly file a
// Go file declares its functions and dispatches: archBackends lists the
// levels the CPU has, each with a kernels value per shape
// (templates/rt/kernels.go's ABI), one assignment per kernel;
// rope_generic.go's genericBackend does the same for pure Go, and
// rope_noasm.go, built exactly where no assembly is, has no assembly
// backends.

// archs are the targets of the vector layer. One whose GOARCH is "" (pure
// Go) builds everywhere, into rope_generic.go; the others' files are
// rope_<GOARCH>.go and .s, with the build constraint "<GOARCH> && !purego".
var archs = []vec.Arch{purego.Arch{}, amd64.Arch{}, arm64.Arch{}, riscv64.Arch{}}

// elems are the vector layer's element types by -dtype and cache name.
var elems = map[string]vec.Elem{"f32": vec.F32, "f64": vec.F64, "f16": vec.F16, "bf16": vec.BF16, "e4m3": vec.E4M3, "e5m2": vec.E5M2, "q8_0": vec.Q8, "q4_0": vec.Q4_0, "q4_1": vec.Q4_1, "q5_0": vec.Q5_0, "q5_1": vec.Q5_1, "mxfp4": vec.MXFP4, "iq4_nl": vec.IQ4NL, "nvfp4": vec.NVFP4, "int8_per_token_head": vec.Int8PerTokenHead, "nvfp4_gs": vec.NVFP4GS}

// vshape is the shape as the vector layer spells it.
func (sh *shape) vshape() vec.Shape {
	return vec.Shape{HeadDim: sh.p.HeadDim, RotaryDim: sh.p.RotaryDim, NeoX: sh.p.Spec.Layout == "neox"}
}

// kernelFuncs are the kernels of every shape of the package, their Level
// unset, each once (a Headwise kind's Key serves every shape of its head
// dimension and Count): the rotations (and the table fill, which only amd64 lowers), the
// shape's QK-norms, and the kernels of its cache types (with the Hadamard
// transform of the caches' option where vec.HasHadamard). A cache type's
// storeShift and loadShift are left out when they would cover the whole
// head: its store and load serve (fields).
func (pk *pkg) kernelFuncs() []*vec.Func {
	var fs []*vec.Func
	x := elems[pk.dt.name]
	for _, sh := range pk.shapes {
		s := sh.vshape()
		add := func(k vec.Kind, x, c vec.Elem, n vec.NormVariant) {
			fs = vec.AppendKey(fs, vec.Func{Kind: k, Shape: s, X: x, Cache: c, Norm: n})
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
		if len(sh.caches) > 0 && vec.HasHadamard(s.HeadDim) {
			add(vec.Hadamard, vec.F32, vec.Elem{}, vec.NormVariant{})
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

// kernelFiles are the kernels of every target and their dispatch files.
func (pk *pkg) kernelFiles() ([]File, error) {
	funcs := pk.kernelFuncs()
	var files []File
	var asmArchs []string
	for _, a := range archs {
		arch := a.GOARCH()
		name, constraint := "rope_generic", ""
		if arch != "" {
			name, constraint = "rope_"+arch, arch+" && !purego"
			asmArchs = append(asmArchs, arch)
		}
		out, err := a.Lower(funcs, pk.header, constraint)
		if err != nil {
			return nil, fmt.Errorf("generating %s: %w", name, err)
		}
		f := jen.NewFile(pk.name)
		if a.CPU() != "" {
			f.ImportName(cpuPkg, "cpu")
		}
		pk.dispatch(f, a, out.Levels)
		for _, c := range out.Go {
			f.Line().Add(c)
		}
		src, err := goFile(f, pk.header, constraint)
		if err == nil && out.Asm != nil {
			for _, l := range out.Levels {
				for _, fn := range l.Funcs {
					src = append(append(src, '\n'), fn.Decl()...)
				}
			}
			src, err = format.Source(src)
		}
		if err != nil {
			return nil, fmt.Errorf("generating %s.go: %w", name, err)
		}
		files = append(files, File{name + ".go", src})
		if out.Asm != nil {
			files = append(files, File{name + ".s", out.Asm})
		}
	}
	f := jen.NewFile(pk.name)
	f.Comment("archBackends returns no assembly backends: this build has none.")
	f.Func().Id("archBackends").Params().Index().Id("backend").Block(jen.Return(jen.Nil()))
	noasm, err := goFile(f, pk.header, "(!"+strings.Join(asmArchs, " && !")+") || purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_noasm.go: %w", err)
	}
	return append(files, File{"rope_noasm.go", noasm}), nil
}

// dispatch adds to f the backends of a — archBackends, the levels whose
// features this CPU has, best first; for pure Go (GOARCH "") genericBackend
// — and for each level and shape the function that returns its kernels
// value, one assignment per kernel.
func (pk *pkg) dispatch(f *jen.File, a vec.Arch, levels []vec.Level) {
	id := jen.Id
	ctor := func(l vec.Level, sh *shape) string { return "kernels_" + sh.vshape().Suffix() + "_" + l.Name }
	value := func(l vec.Level) jen.Code {
		return id("backend").Values(jen.Dict{
			id("name"): jen.Lit(l.Name),
			id("shapes"): jen.Index().Id("kernels").ValuesFunc(func(g *jen.Group) {
				for _, sh := range pk.shapes {
					g.Id(ctor(l, sh)).Call()
				}
			}),
		})
	}
	if a.GOARCH() == "" {
		f.Comment("genericBackend returns the pure Go backend: its kernels for every shape.")
		f.Func().Id("genericBackend").Params().Id("backend").Block(jen.Return(value(levels[0])))
	} else {
		f.Comment("archBackends returns the assembly backends this CPU supports, best first.")
		f.Func().Id("archBackends").Params().Index().Id("backend").BlockFunc(func(g *jen.Group) {
			g.Var().Id("bs").Index().Id("backend")
			for _, l := range levels {
				cond := jen.Null()
				for i, ft := range l.Features {
					if i > 0 {
						cond.Op("&&")
					}
					cond.Qual(cpuPkg, a.CPU()).Dot(ft)
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
			f.Commentf("%s returns the %s kernels of the shape %d/%d/%s.", ctor(l, sh), l.Name, s.HeadDim, s.RotaryDim, sh.p.Spec.Layout)
			f.Func().Id(ctor(l, sh)).Params().Params(id("k").Id("kernels")).BlockFunc(func(g *jen.Group) {
				for _, fn := range l.Funcs {
					if fn.Serves(s) {
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
