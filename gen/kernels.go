package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"sort"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/amd64"
	"github.com/ropegen/ropegen/templates"
)

// The kernels of a package, per backend and shape: the pure Go ones
// (rope_generic.go), the amd64 ones (avo: rope_amd64.s, rope_cache_amd64.s)
// and the arm64 ones (templates: rope_arm64.s, rope_norm_arm64.s,
// rope_cache_arm64.s), and for each backend a function per shape that
// returns its kernels value (rt/kernels.go's ABI).

// kernelSet names one backend's kernels of one shape, by the fields of the
// run-time's kernels value.
type kernelSet struct {
	top   map[string]string // fwd, inv, fwdRows, invRows, fill, rotTo
	norms map[int][2]string // variant → norm, normOnly
	half  [2]map[string]string
	bytes [2]map[string]string
}

func newKernelSet() *kernelSet {
	return &kernelSet{top: map[string]string{}, norms: map[int][2]string{}}
}

// cacheField returns the map of cache type c's kernels: half[0] f16,
// half[1] bf16, bytes[0] e4m3, bytes[1] q8_0.
func (ks *kernelSet) cacheField(c string) map[string]string {
	slot := map[string]*map[string]string{"f16": &ks.half[0], "bf16": &ks.half[1], "e4m3": &ks.bytes[0], "q8_0": &ks.bytes[1]}[c]
	if *slot == nil {
		*slot = map[string]string{}
	}
	return *slot
}

// ctor emits fn, which returns the kernels value of ks; body statements
// first (the pure Go backend builds some of its kernels by calls).
func (ks *kernelSet) ctor(f *jen.File, fn, doc string, body ...jen.Code) {
	id := jen.Id
	dict := func(m map[string]string) jen.Dict {
		d := jen.Dict{}
		for k, v := range m {
			d[id(k)] = id(v)
		}
		return d
	}
	var stmts []jen.Code
	stmts = append(stmts, id("k").Op(":=").Id("kernels").Values(dict(ks.top)))
	stmts = append(stmts, body...)
	var vs []int
	for v := range ks.norms {
		vs = append(vs, v)
	}
	sort.Ints(vs)
	for _, v := range vs {
		n := ks.norms[v]
		stmts = append(stmts, jen.List(id("k").Dot("norm").Index(jen.Lit(v)), id("k").Dot("normOnly").Index(jen.Lit(v))).Op("=").List(id(n[0]), id(n[1])))
	}
	for i, m := range ks.half {
		if m != nil {
			stmts = append(stmts, id("k").Dot("half").Index(jen.Lit(i)).Op("=").Id("halfKernels").Values(dict(m)))
		}
	}
	for i, m := range ks.bytes {
		if m != nil {
			stmts = append(stmts, id("k").Dot("bytes").Index(jen.Lit(i)).Op("=").Id("byteKernels").Values(dict(m)))
		}
	}
	stmts = append(stmts, jen.Return(id("k")))
	f.Line()
	f.Comment(doc)
	f.Func().Id(fn).Params().Id("kernels").Block(stmts...)
}

// shapeWords spells a shape for doc comments: "128/128/neox".
func (sh *shape) words() string {
	return fmt.Sprintf("%d/%d/%s", sh.p.HeadDim, sh.p.RotaryDim, sh.p.Spec.Layout)
}

// genericFile is rope_generic.go: per shape the pure Go rotation kernels,
// unrolled over the pairs of one head (a head of more than
// genericUnrollMax rotary values loops over blocks of pairs, see
// genericBody), each pair docs/contract.md §5 written out, the explicit
// conversions stopping the compiler fusing a product into the sum; and the
// pure Go backend, whose norm and cache kernels are rt's (genericNorms,
// genericF16, …).
func (pk *pkg) genericFile() ([]byte, error) {
	f := jen.NewFile(pk.name)
	id := jen.Id
	f.Comment("genericBackend returns the pure Go backend: its kernels for every shape.")
	f.Func().Id("genericBackend").Params().Id("backend").BlockFunc(func(g *jen.Group) {
		g.Return(id("backend").Values(jen.Dict{
			id("name"): jen.Lit("generic"),
			id("shapes"): jen.Index().Id("kernels").ValuesFunc(func(g *jen.Group) {
				for _, sh := range pk.shapes {
					g.Id("generic" + sh.sfx).Call()
				}
			}),
		}))
	})
	for _, sh := range pk.shapes {
		p := sh.p
		ks := newKernelSet()
		ks.top["fwd"], ks.top["inv"] = "applyGeneric"+sh.sfx, "applyInverseGeneric"+sh.sfx
		neox := jen.Lit(p.Spec.Layout == "neox")
		shapeArgs := []jen.Code{jen.Lit(p.HeadDim), jen.Lit(p.RotaryDim)}
		var body []jen.Code
		if len(sh.norms) > 0 {
			args := append(append([]jen.Code{}, shapeArgs...), neox)
			for _, n := range sh.norms {
				args = append(args, jen.Lit(n.variant()))
			}
			body = append(body, jen.List(id("k").Dot("norm"), id("k").Dot("normOnly")).Op("=").Id("genericNorms").Call(args...))
		}
		for _, c := range sh.caches {
			switch c {
			case "f16", "bf16":
				i := map[string]int{"f16": 0, "bf16": 1}[c]
				body = append(body, id("k").Dot("half").Index(jen.Lit(i)).Op("=").Id("generic"+strings.ToUpper(c)).Call(append(append([]jen.Code{}, shapeArgs...), id("k").Dot("fwd"))...))
			case "e4m3":
				body = append(body, id("k").Dot("bytes").Index(jen.Lit(0)).Op("=").Id("genericE4M3").Call(shapeArgs...))
			case "q8_0":
				body = append(body, id("k").Dot("bytes").Index(jen.Lit(1)).Op("=").Id("genericQ80").Call(shapeArgs...))
			}
		}
		ks.ctor(f, "generic"+sh.sfx, "generic"+sh.sfx+" returns the pure Go kernels of the shape "+sh.words()+".", body...)
	}
	for _, sh := range pk.shapes {
		sh.genericKernels(f)
	}
	return goFile(f, pk.header, "")
}

// genericKernels emits the shape's pure Go rotation kernels.
func (sh *shape) genericKernels(f *jen.File) {
	p := sh.p
	T, C := p.elemType(), p.computeType()
	d := p.dtype()
	id, lit := jen.Id, jen.Lit
	wrap := func(fn string, v jen.Code) *jen.Statement {
		if fn == "" {
			return jen.Add(v)
		}
		return jen.Id(fn).Call(v)
	}
	for _, inverse := range []bool{false, true} {
		name, dir := "applyGeneric"+sh.sfx, "forward"
		if inverse {
			name, dir = "applyInverseGeneric"+sh.sfx, "backward"
		}
		f.Line()
		f.Comment(fmt.Sprintf("%s rotates n heads of x %s with the table row at rp (%d values), head h at x[h·stride:], in pure Go.", name, dir, p.RowLen))
		body := p.genericBody(inverse, "h", "h", func(v jen.Code) jen.Code { return wrap(d.widen, v) }, func(v jen.Code) jen.Code { return wrap(d.narrow, v) })
		f.Func().Id(name).Params(id("x").Index().Id(T), jen.List(id("stride"), id("n")).Int(), id("rp").Op("*").Id(C)).Block(
			id("r").Op(":=").Parens(jen.Op("*").Index(lit(p.RowLen)).Id(C)).Call(jen.Qual("unsafe", "Pointer").Call(id("rp"))),
			jen.Var().List(id("a"), id("b")).Id(C),
			jen.For(jen.Op(";").Id("n").Op(">").Lit(0).Op("&&").Len(id("x")).Op(">=").Lit(p.HeadDim).Op(";").Id("n").Op("--")).Block(
				append(append([]jen.Code{id("h").Op(":=").Parens(jen.Op("*").Index(lit(p.HeadDim)).Id(T)).Call(id("x"))}, body...),
					jen.If(id("n").Op("==").Lit(1).Op("||").Id("stride").Op("<").Lit(0).Op("||").Id("stride").Op(">").Len(id("x"))).Block(jen.Break()),
					id("x").Op("=").Id("x").Index(id("stride").Op(":")),
				)...,
			),
		)
	}
}

// noasmFile is rope_noasm.go, built exactly where no assembly is.
func (pk *pkg) noasmFile() ([]byte, error) {
	f := jen.NewFile(pk.name)
	f.Comment("archBackends returns no assembly backends: this build has none.")
	f.Func().Id("archBackends").Params().Index().Id("backend").Block(jen.Return(jen.Nil()))
	return goFile(f, pk.header, "(!amd64 && !arm64) || purego")
}

// backendsFunc emits archBackends for the assembly levels (name, the
// cpu.<arch> fields it needs), each with its kernels function per shape,
// <level><suffix>.
func (pk *pkg) backendsFunc(f *jen.File, arch string, levels []amd64.Level, doc ...string) {
	f.Comment("archBackends returns the assembly backends this CPU supports, best first.")
	for _, d := range doc {
		f.Comment(d)
	}
	f.Func().Id("archBackends").Params().Index().Id("backend").BlockFunc(func(g *jen.Group) {
		g.Var().Id("bs").Index().Id("backend")
		for _, l := range levels {
			cond := jen.Null()
			for i, feat := range l.Features {
				if i > 0 {
					cond.Op("&&")
				}
				cond.Qual(cpuPkg, arch).Dot(feat)
			}
			g.If(cond).Block(
				jen.Id("bs").Op("=").Append(jen.Id("bs"), jen.Id("backend").Values(jen.Dict{
					jen.Id("name"): jen.Lit(l.Name),
					jen.Id("shapes"): jen.Index().Id("kernels").ValuesFunc(func(g *jen.Group) {
						for _, sh := range pk.shapes {
							g.Id(l.Name + sh.sfx).Call()
						}
					}),
				})),
			)
		}
		g.Return(jen.Id("bs"))
	})
}

// amd64Files are rope_amd64.s, the rotation, fill and norm kernels of every
// shape (asm/amd64.Generate, one avo context), rope_cache_amd64.s, their
// cache kernels (asm/amd64.GenerateCache), and rope_amd64.go: archBackends,
// each level's kernels per shape, and every declaration. A level's
// cpu.X86 features are those every kernel of it needs.
func (pk *pkg) amd64Files() ([]File, error) {
	var ks []amd64.Kernel
	var cks []amd64.CacheKernel
	for _, sh := range pk.shapes {
		k := amd64.Kernel{HeadDim: sh.p.HeadDim, RotaryDim: sh.p.RotaryDim, NeoX: sh.p.Spec.Layout == "neox", DType: pk.dt.name, Suffix: sh.sfx, Tos: sh.halfCaches()}
		for _, n := range sh.norms {
			k.Norms = append(k.Norms, amd64.Norm{Kind: n.Kind, Token: n.Token, After: n.After})
		}
		ks = append(ks, k)
		rotTo := sh.rotTo()
		for _, c := range sh.caches {
			if c == "f32" {
				continue
			}
			cp := sh.withCache(c)
			cks = append(cks, amd64.CacheKernel{
				Kernel:      amd64.Kernel{HeadDim: sh.p.HeadDim, RotaryDim: sh.p.RotaryDim, NeoX: k.NeoX, DType: "f32", Suffix: sh.sfx},
				Cache:       c,
				ShiftValues: cp.shiftValues(),
				RotTo:       rotTo,
			})
			rotTo = false
		}
	}
	out, err := amd64.Generate(ks, pk.header, "amd64,!purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_amd64.s: %w", err)
	}
	files := []File{{"rope_amd64.s", out.Asm}}
	funcs, levels := out.Funcs, out.Levels
	if len(cks) > 0 {
		cout, err := amd64.GenerateCache(cks, pk.header, "amd64,!purego")
		if err != nil {
			return nil, fmt.Errorf("generating rope_cache_amd64.s: %w", err)
		}
		files = append(files, File{"rope_cache_amd64.s", cout.Asm})
		funcs = append(funcs, cout.Funcs...)
		for i := range levels {
			levels[i].Features = unionOf(levels[i].Features, cout.Levels[i].Features)
		}
	}
	f := jen.NewFile(pk.name)
	f.ImportName(cpuPkg, "cpu")
	pk.backendsFunc(f, "X86", levels)
	for _, l := range levels {
		for _, sh := range pk.shapes {
			ks := newKernelSet()
			for _, fn := range funcs {
				if fn.Level == l.Name && fn.Shape == sh.sfx {
					ks.add(fn.Kind, fn.Variant, fn.Name)
				}
			}
			ks.shiftDefaults()
			ks.ctor(f, l.Name+sh.sfx, l.Name+sh.sfx+" returns the "+strings.ToUpper(l.Name)+" kernels of the shape "+sh.words()+".")
		}
	}
	src, err := goFile(f, pk.header, "amd64 && !purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_amd64.go: %w", err)
	}
	for _, fn := range funcs {
		src = append(append(src, '\n'), fn.Stub...)
	}
	if src, err = format.Source(src); err != nil {
		return nil, fmt.Errorf("generating rope_amd64.go: %w", err)
	}
	return append(files, File{"rope_amd64.go", src}), nil
}

// unionOf adds to f the strings of g it lacks.
func unionOf(f, g []string) []string {
	for _, x := range g {
		if !containsString(f, x) {
			f = append(f, x)
		}
	}
	return f
}

func containsString(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// add files the kernel name of kind (an asm/amd64 or template kind) and
// variant (a "to" kernel's dst type, a norm's tag, a cache kernel's type).
func (ks *kernelSet) add(kind, variant, name string) {
	switch kind {
	case "fwd", "inv", "fill", "rotTo":
		ks.top[kind] = name
	case "fwdrows", "fwdRows":
		ks.top["fwdRows"] = name
	case "invrows", "invRows":
		ks.top["invRows"] = name
	case "to":
		ks.cacheField(variant)["to"] = name
	case "norm", "normonly":
		v := normTagVariant(variant)
		n := ks.norms[v]
		n[map[string]int{"norm": 0, "normonly": 1}[kind]] = name
		ks.norms[v] = n
	case "store", "storeShift", "load", "loadShift", "shift":
		ks.cacheField(variant)[kind] = name
	case "shiftInverse":
		ks.cacheField(variant)["shiftInv"] = name
	default:
		panic("gen: kernel kind " + strconv.Quote(kind))
	}
}

// shiftDefaults makes the cache types whose Shift touches every value use
// their store and load kernels for it.
func (ks *kernelSet) shiftDefaults() {
	for _, m := range append(ks.half[:], ks.bytes[:]...) {
		for _, k := range []string{"store", "load"} {
			if m != nil && m[k+"Shift"] == "" && m[k] != "" {
				m[k+"Shift"] = m[k]
			}
		}
	}
}

// normTagVariant returns the variant of a norm's tag (amd64.Norm.Tag).
func normTagVariant(tag string) int {
	for _, k := range []string{"rms", "gemma", "l2"} {
		for _, token := range []bool{false, true} {
			for _, after := range []bool{false, true} {
				n := amd64.Norm{Kind: k, Token: token, After: after}
				if n.Tag() == tag {
					return NormPlan{Kind: k, Token: token, After: after}.variant()
				}
			}
		}
	}
	panic("gen: norm tag " + strconv.Quote(tag))
}

// arm64Files are the NEON kernels of every shape: rope_arm64.s (rotation),
// rope_norm_arm64.s (the QK-norms), rope_cache_arm64.s (the cache types'
// stores and loads), each the templates' outputs of every shape one after
// another, and rope_arm64.go: archBackends, the kernels per shape and
// every declaration.
func (pk *pkg) arm64Files() ([]File, error) {
	var rot, norm, cache [][]byte
	var decls []byte
	f := jen.NewFile(pk.name)
	f.ImportName(cpuPkg, "cpu")
	pk.backendsFunc(f, "ARM64", []amd64.Level{{Name: "neon", Features: []string{"HasASIMD"}}},
		"Advanced SIMD (NEON) is part of every arm64 CPU Go runs on; the check",
		"keeps the structure of the other architectures and costs nothing.")
	for _, sh := range pk.shapes {
		k := sh.neonKernel(pk.header)
		ks := newKernelSet()
		asm, err := templates.Execute("rope_arm64.s.tmpl", k)
		if err != nil {
			return nil, fmt.Errorf("generating rope_arm64.s: %w", err)
		}
		rot = append(rot, asm)
		d, err := templates.Execute("rope_arm64.go.tmpl", k)
		if err != nil {
			return nil, fmt.Errorf("generating rope_arm64.go: %w", err)
		}
		decls = append(decls, d...)
		for _, fn := range k.Funcs {
			ks.add(fn.Kind, fn.Body.Out.Name, fn.Name)
		}
		for _, n := range k.Norms {
			n.Header = pk.header
			asm, err := templates.ExecuteNorm(n)
			if err != nil {
				return nil, fmt.Errorf("generating rope_norm_arm64.s: %w", err)
			}
			norm = append(norm, asm)
			v := NormPlan{Kind: n.Kind, Token: n.Token, After: n.After}.variant()
			ks.norms[v] = [2]string{n.Name, n.OnlyName}
		}
		for _, c := range sh.caches {
			if c == "f32" {
				continue
			}
			ck := sh.withCache(c).cacheKernel(pk.header, sh.sfx)
			asm, err := templates.ExecuteCache("cache_arm64.s.tmpl", ck)
			if err != nil {
				return nil, fmt.Errorf("generating rope_cache_arm64.s: %w", err)
			}
			cache = append(cache, asm)
			d, err := templates.ExecuteCache("cache_arm64.go.tmpl", ck)
			if err != nil {
				return nil, fmt.Errorf("generating rope_arm64.go: %w", err)
			}
			decls = append(decls, d...)
			for _, fn := range ck.Funcs {
				ks.add(fn.Kind, c, fn.Name)
			}
		}
		ks.shiftDefaults()
		ks.ctor(f, "neon"+sh.sfx, "neon"+sh.sfx+" returns the NEON kernels of the shape "+sh.words()+".")
	}
	src, err := goFile(f, pk.header, "arm64 && !purego")
	if err != nil {
		return nil, fmt.Errorf("generating rope_arm64.go: %w", err)
	}
	src = append(src, decls...)
	if src, err = format.Source(src); err != nil {
		return nil, fmt.Errorf("generating rope_arm64.go: %w", err)
	}
	files := []File{{"rope_arm64.go", src}, {"rope_arm64.s", joinAsm(rot)}}
	if norm != nil {
		files = append(files, File{"rope_norm_arm64.s", joinAsm(norm)})
	}
	if cache != nil {
		files = append(files, File{"rope_cache_arm64.s", joinAsm(cache)})
	}
	return files, nil
}

// textflag is the line after which a template's assembly is its functions.
const textflag = "#include \"textflag.h\"\n"

// joinAsm joins the assembly files parts: the first whole, the others from
// after their #include line (the header, build constraint and include
// once).
func joinAsm(parts [][]byte) []byte {
	var b bytes.Buffer
	for i, p := range parts {
		if i > 0 {
			if _, rest, ok := bytes.Cut(p, []byte(textflag)); ok {
				p = rest
			}
		}
		b.Write(p)
	}
	return b.Bytes()
}
