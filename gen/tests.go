package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/spec"
)

const (
	verifyPkg = "github.com/ropegen/ropegen/verify"
	specPkg   = "github.com/ropegen/ropegen/spec"
)

// testFiles are the package's tests (-tests): rope_test.go, generated, and
// the test glue and examples copied from rt (rope_glue*_test.go,
// rope_example*_test.go), which describe the package to ropegen's verify
// suite through its API. rope_test.go runs the suite on the package's
// default model (a per-spec package) or on a model of every shape and
// QK-norm (an engine package), on every backend the CPU has, and
// benchmarks them.
func (pk *pkg) testFiles() ([]File, error) {
	glue := []string{"glue_test.go"}
	examples := []string{}
	if pk.hasNorms() {
		glue = append(glue, "glue_norm_test.go")
	}
	if len(pk.caches) > 0 {
		glue = append(glue, "glue_cache_test.go")
	}
	if pk.def != nil {
		examples = append(examples, "example_test.go")
		if pk.def.Norm != nil {
			examples = append(examples, "example_norm_test.go")
		}
		if len(pk.caches) > 0 {
			examples = append(examples, "example_prep_test.go")
		}
	}
	var files []File
	for _, n := range append(glue, examples...) {
		f, err := pk.copyRT(n, "rope_"+n)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	t, err := pk.testFile()
	if err != nil {
		return nil, fmt.Errorf("generating rope_test.go: %w", err)
	}
	return append(files, File{"rope_test.go", t}), nil
}

// testFile is rope_test.go.
func (pk *pkg) testFile() ([]byte, error) {
	f := jen.NewFile(pk.name)
	id, lit := jen.Id, jen.Lit
	vk := jen.Qual(verifyPkg, "Kernel").Types(id("elem"))
	tT := jen.Op("*").Qual("testing", "T")
	f.Comment("Params has spec.Runtime's fields, in its order: an engine converts a model")
	f.Comment("it loads with Params(p.Runtime()).")
	f.Var().Id("_").Op("=").Id("Params").Call(jen.Qual(specPkg, "Runtime").Values())
	f.Line()
	f.Comment("ROPEGEN_RVV=1 says the CPU has the V extension where golang.org/x/sys/cpu")
	f.Comment("cannot see it (qemu-user 7.2 has no riscv_hwprobe): the tests then run the")
	f.Comment("RVV backend too. Only the tests read it; the package dispatches on")
	f.Comment("cpu.RISCV64.HasV alone.")
	f.Func().Id("init").Params().Block(
		jen.If(jen.Qual("runtime", "GOARCH").Op("==").Lit("riscv64").Op("&&").Qual("os", "Getenv").Call(jen.Lit("ROPEGEN_RVV")).Op("==").Lit("1").Op("&&").Op("!").Qual(cpuPkg, "RISCV64").Dot("HasV")).Block(
			jen.Qual(cpuPkg, "RISCV64").Dot("HasV").Op("=").True(),
			jen.Id("backends").Op("=").Id("complete").Call(jen.Append(jen.Id("archBackends").Call(), jen.Id("genericBackend").Call())),
			jen.Id("active").Op("=").Op("&").Id("backends").Index(jen.Lit(0)),
		),
	)

	// caches describes the cache types of r's shape.
	if len(pk.caches) > 0 {
		f.Line()
		f.Comment("caches describes r's forms of every cache type the package has at r's shape.")
		f.Func().Id("caches").Params(id("r").Op("*").Id("Rotary")).Index().Qual(verifyPkg, "CacheForms").BlockFunc(func(g *jen.Group) {
			g.Var().Id("cs").Index().Qual(verifyPkg, "CacheForms")
			for _, c := range pk.caches {
				ct := cacheTypes[c]
				goType, ctor := ct.goType, map[string]string{"f32": "F32Cache", "f16": "F16Cache", "bf16": "BF16Cache", "e4m3": "E4M3Cache", "q8_0": "Q80Cache"}[c]
				if c == "f32" {
					goType = "float32"
				}
				args := []jen.Code{id("b"), id("s")}
				scale := id("_")
				if c == "e4m3" {
					args, scale = append(args, id("scale")), id("scale")
				}
				add := id("cs").Op("=").Append(id("cs"), id("cacheOf").Call(id("r"), lit(c),
					jen.Func().Params(id("b").Index().Id(goType), id("s").Id("Strides"), scale.Float32()).Id("Cache").Block(jen.Return(id(ctor).Call(args...)))))
				if c == "q8_0" {
					g.If(id("r").Dot("Shape").Call().Dot("HeadDim").Op("%").Lit(spec.Q8Block).Op("==").Lit(0)).Block(add)
				} else {
					g.Add(add)
				}
			}
			g.Return(id("cs"))
		})
	}

	if pk.def != nil && len(pk.caches) > 0 {
		c := pk.caches[0]
		goType, ctor := cacheTypes[c].goType, map[string]string{"f32": "F32Cache", "f16": "F16Cache", "bf16": "BF16Cache", "e4m3": "E4M3Cache", "q8_0": "Q80Cache"}[c]
		if c == "f32" {
			goType = "float32"
		}
		args := []jen.Code{jen.Make(jen.Index().Id(goType), id("rows").Op("*").Id("heads").Op("*").Id("hd")), jen.Id("Strides").Values(jen.Dict{id("Heads"): id("heads"), id("Head"): id("hd"), id("Token"): id("heads").Op("*").Id("hd")})}
		if c == "e4m3" {
			args = append(args, lit(1))
		}
		f.Line()
		article := "a"
		if c[0] == 'f' || c[0] == 'e' {
			article = "an"
		}
		f.Comment("exampleCache is " + article + " " + c + " cache of rows rows of heads heads for the examples.")
		f.Func().Id("exampleCache").Params(id("r").Op("*").Id("Rotary"), jen.List(id("rows"), id("heads")).Int()).Id("Cache").Block(
			id("hd").Op(":=").Id("r").Dot("CacheHead").Call(lit(c)),
			jen.Return(id(ctor).Call(args...)),
		)
		f.Line()
		turn := id("tab").Dot("ApplyQK").Call(id("q"), id("qs"), id("k"), id("ks"), id("pos"))
		f.Comment("exampleTurnQK is what Prep does to the queries and keys: ApplyQK.")
		if pk.def.Norm != nil {
			turn = id("tab").Dot("ApplyNormQK").Call(id("q"), id("qs"), id("qw"), id("k"), id("ks"), id("kw"), id("pos"))
			f.Comment("exampleTurnQK is what Prep does to the queries and keys: ApplyNormQK.")
		}
		f.Func().Id("exampleTurnQK").Params(id("tab").Op("*").Id("Table"), id("q").Index().Float32(), id("qs").Id("Strides"), id("qw").Index().Float32(),
			id("k").Index().Float32(), id("ks").Id("Strides"), id("kw").Index().Float32(), id("pos").Index().Int32()).Block(turn)
	}

	if pk.def != nil {
		pk.defaultTests(f)
	} else {
		pk.engineTests(f)
	}

	f.Line()
	f.Comment("TestDispatch checks the backend list: unique names, pure Go last, and,")
	f.Comment("when ROPEGEN_WANT_BACKEND is set, that the default backend is the one it")
	f.Comment("names (make test sets it with GODEBUG=cpu.avx2=off and with -tags purego).")
	f.Func().Id("TestDispatch").Params(id("t").Add(tT)).Block(
		id("seen").Op(":=").Map(jen.String()).Bool().Values(),
		jen.For(jen.List(id("_"), id("b")).Op(":=").Range().Id("backends")).Block(
			jen.If(id("seen").Index(id("b").Dot("name"))).Block(
				id("t").Dot("Errorf").Call(lit("backend %q listed twice"), id("b").Dot("name")),
			),
			id("seen").Index(id("b").Dot("name")).Op("=").True(),
			jen.If(jen.Len(id("b").Dot("shapes")).Op("!=").Len(id("shapeList"))).Block(
				id("t").Dot("Errorf").Call(lit("backend %q has kernels for %d shapes, want %d"), id("b").Dot("name"), jen.Len(id("b").Dot("shapes")), jen.Len(id("shapeList"))),
			),
		),
		jen.If(id("last").Op(":=").Id("backends").Index(jen.Len(id("backends")).Op("-").Lit(1)).Dot("name"), id("last").Op("!=").Lit("generic")).Block(
			id("t").Dot("Errorf").Call(lit("last backend is %q, want generic"), id("last")),
		),
		id("want").Op(":=").Qual("os", "Getenv").Call(lit("ROPEGEN_WANT_BACKEND")),
		jen.If(id("want").Op("!=").Lit("").Op("&&").Op("!").Id("seen").Index(id("want"))).Block(
			id("t").Dot("Skipf").Call(lit("SKIPPED: this CPU has no %q backend (ROPEGEN_WANT_BACKEND)"), id("want")),
		),
		jen.If(id("want").Op("!=").Lit("").Op("&&").Id("backends").Index(lit(0)).Dot("name").Op("!=").Id("want")).Block(
			id("t").Dot("Fatalf").Call(lit("default backend is %q, want %q (ROPEGEN_WANT_BACKEND)"), id("backends").Index(lit(0)).Dot("name"), id("want")),
		),
		id("t").Dot("Logf").Call(lit("default backend: %s"), id("backends").Index(lit(0)).Dot("name")),
	)

	var half []string
	var values []string
	for _, c := range pk.caches {
		if c == "f16" || c == "bf16" {
			half = append(half, c)
		}
		if c != "f32" && c != "q8_0" {
			values = append(values, c)
		}
	}
	if len(half) > 0 {
		f.Line()
		f.Comment("TestNarrowExhaustive checks every assembly backend's rotate-and-narrow")
		f.Comment("kernel (" + strings.Join(half, ", ") + ") against package verify's own rounding, on every float32")
		f.Comment("bit pattern with ROPEGEN_EXHAUSTIVE=1, else on a sample strided across them.")
		f.Func().Id("TestNarrowExhaustive").Params(id("t").Add(tT)).BlockFunc(func(g *jen.Group) {
			for _, c := range half {
				g.Id("t").Dot("Run").Call(lit(c), jen.Func().Params(id("t").Add(tT)).Block(
					jen.Qual(verifyPkg, "NarrowExhaustive").Call(id("t"), id("narrowOf").Call(pk.someRotary(), lit(c))),
				))
			}
		})
	}
	if len(values) > 0 {
		f.Line()
		f.Comment("TestCacheExhaustive stores float32 values into the " + strings.Join(values, ", ") + " cache with Store")
		f.Comment("(scale 1) on every backend and compares them with package verify's own")
		f.Comment("rounding: every float32 bit pattern with ROPEGEN_EXHAUSTIVE=1, else a")
		f.Comment("sample strided across them.")
		f.Func().Id("TestCacheExhaustive").Params(id("t").Add(tT)).Block(
			id("k").Op(":=").Id("kernelOf").Call(pk.someRotary(), lit(10000.0), lit("none")),
			id("k").Dot("Caches").Op("=").Id("caches").Call(pk.someRotary()),
			jen.Qual(verifyPkg, "CacheExhaustive").Call(id("t"), id("k")),
		)
	}

	f.Line()
	f.Comment("FuzzKernel checks that every backend gives the pure Go bits for the")
	f.Comment("vectors and positions the fuzzer finds.")
	f.Func().Id("FuzzKernel").Params(id("f").Op("*").Qual("testing", "F")).Block(
		jen.Qual(verifyPkg, "Fuzz").Call(id("f"), pk.firstKernel()),
	)
	f.Line()
	f.Comment("FuzzStrided checks the strided entry points on the views, positions and")
	f.Comment("values the fuzzer finds: every backend against copying each head out and")
	f.Comment("back, with every element outside the heads left as it was.")
	f.Func().Id("FuzzStrided").Params(id("f").Op("*").Qual("testing", "F")).Block(
		jen.Qual(verifyPkg, "FuzzStrided").Call(id("f"), pk.firstKernel()),
	)
	if nk := pk.normKernel(); nk != nil {
		f.Line()
		f.Comment("FuzzNormQK checks ApplyNormQK on the views, positions, values and weights")
		f.Comment("the fuzzer finds: every backend against docs/contract.md §10's arithmetic,")
		f.Comment("with every element outside the heads left as it was.")
		f.Func().Id("FuzzNormQK").Params(id("f").Op("*").Qual("testing", "F")).Block(
			jen.Qual(verifyPkg, "FuzzNormQK").Call(id("f"), nk),
		)
	}
	if len(pk.caches) > 0 && pk.dt.name == "f32" {
		k := pk.normKernel()
		if k == nil {
			k = pk.firstKernel()
		}
		f.Line()
		f.Comment("FuzzPrep checks Prep on the steps, values and cache types the fuzzer")
		f.Comment("finds: every backend against ApplyNormQK (or ApplyQK) and Store.")
		f.Func().Id("FuzzPrep").Params(id("f").Op("*").Qual("testing", "F")).Block(
			jen.Qual(verifyPkg, "FuzzPrep").Call(id("f"), k),
		)
	}
	f.Line()
	f.Comment("BenchmarkRope measures every backend against a plain Go loop.")
	f.Func().Id("BenchmarkRope").Params(id("b").Op("*").Qual("testing", "B")).Block(
		jen.Qual(verifyPkg, "Bench").Call(id("b"), pk.firstKernel()),
	)
	_ = vk
	return goFile(f, pk.header, "")
}

// someRotary is a Rotary of the package: Default() for a per-spec package,
// a model of the first shape for an engine package.
func (pk *pkg) someRotary() jen.Code {
	if pk.def != nil {
		return jen.Id("Default").Call()
	}
	return jen.Id("model").Call(jen.Lit(0), jen.Lit(-1))
}

// normKernel is a kernel with a QK-norm, for FuzzNormQK and FuzzPrep: the
// default model's, or an engine package's first shape with norms with its
// first; nil for a package without norms.
func (pk *pkg) normKernel() jen.Code {
	if pk.def != nil {
		if pk.def.Norm == nil {
			return nil
		}
		return jen.Id("kernel").Call()
	}
	for i, sh := range pk.shapes {
		if len(sh.norms) > 0 {
			return jen.Id("kernel").Call(jen.Lit(i), jen.Lit(0))
		}
	}
	return nil
}

// firstKernel is the kernel the fuzz targets and benchmarks use.
func (pk *pkg) firstKernel() jen.Code {
	if pk.def != nil {
		return jen.Id("kernel").Call()
	}
	return jen.Id("kernel").Call(jen.Lit(0), jen.Lit(-1))
}

// defaultTests are a per-spec package's kernel() and TestVerify, and with
// a QK-norm TestNormEps.
func (pk *pkg) defaultTests(f *jen.File) {
	id, lit := jen.Id, jen.Lit
	p := pk.def
	tT := jen.Op("*").Qual("testing", "T")
	f.Line()
	f.Comment("kernel describes this package's default model to package verify.")
	f.Func().Id("kernel").Params().Qual(verifyPkg, "Kernel").Types(id("elem")).BlockFunc(func(g *jen.Group) {
		g.Id("r").Op(":=").Id("Default").Call()
		g.Id("k").Op(":=").Id("kernelOf").Call(id("r"), id("Base"), lit(p.Spec.FreqsLabel()))
		if p.Norm != nil {
			rot, pass := p.NormBound(0)
			g.Id("k").Dot("Norm").Op("=").Id("normOf").Call(id("r"), jen.Index(lit(2)).Int().Values(lit(rot), lit(pass)), lit(p.computeType() == "float64"))
		}
		if len(pk.caches) > 0 {
			g.Id("k").Dot("Caches").Op("=").Id("caches").Call(id("r"))
		}
		g.Return(id("k"))
	})
	f.Line()
	f.Comment("TestVerify runs package verify's property suite: accuracy against a dense")
	f.Comment("float64 rotation, the rotation identities, and bit-identical backends.")
	f.Func().Id("TestVerify").Params(id("t").Add(tT)).Block(
		jen.Qual(verifyPkg, "Run").Call(id("t"), id("kernel").Call()),
	)
	if p.Norm == nil {
		return
	}
	rot, pass := p.NormBound(0)
	f.Line()
	f.Comment("TestNormEps runs the suite's QK-norm checks (and Prep's, with caches) on")
	f.Comment("this package's model with another ε: ε is data (Params.NormEps), not the")
	f.Comment("package's NormEps.")
	f.Func().Id("TestNormEps").Params(id("t").Add(tT)).Block(
		id("p").Op(":=").Id("Default").Call().Dot("Params").Call(),
		id("p").Dot("NormEps").Op("=").Lit(0.25),
		jen.List(id("r"), id("err")).Op(":=").Id("New").Call(id("p")),
		jen.If(id("err").Op("!=").Nil()).Block(id("t").Dot("Fatal").Call(id("err"))),
		id("k").Op(":=").Id("kernelOf").Call(id("r"), id("Base"), lit(p.Spec.FreqsLabel())),
		id("k").Dot("Norm").Op("=").Id("normOf").Call(id("r"), jen.Index(lit(2)).Int().Values(lit(rot), lit(pass)), lit(p.computeType() == "float64")),
		jen.Do(func(s *jen.Statement) {
			if len(pk.caches) > 0 {
				s.Id("k").Dot("Caches").Op("=").Id("caches").Call(id("r"))
			}
		}),
		jen.Qual(verifyPkg, "RunNorm").Call(id("t"), id("k")),
	)
}

// engineTests are an engine package's model, kernel and TestVerify: a
// model of every shape, base 10000, with each of the shape's QK-norms; the
// whole suite on each shape's first, the QK-norm checks on the others.
func (pk *pkg) engineTests(f *jen.File) {
	id, lit := jen.Id, jen.Lit
	tT := jen.Op("*").Qual("testing", "T")
	f.Line()
	f.Comment("engineNorms are the QK-norms of each shape, as spec.QKNorm, and their")
	f.Comment("bounds K, as the package doc states them.")
	f.Var().Id("engineNorms").Op("=").Index().Index().Struct(
		id("n").Qual(specPkg, "QKNorm"),
		id("k").Index(lit(2)).Int(),
	).ValuesFunc(func(g *jen.Group) {
		for _, sh := range pk.shapes {
			g.ValuesFunc(func(g *jen.Group) {
				for _, n := range sh.norms {
					rot, pass := sh.withNorm(n).NormBound(0)
					scope := spec.ScopeHead
					if n.Token {
						scope = spec.ScopeToken
					}
					g.Values(jen.Dict{
						id("n"): jen.Qual(specPkg, "QKNorm").Values(jen.Dict{id("Kind"): lit(n.Kind), id("Scope"): lit(scope), id("After"): lit(n.After)}),
						id("k"): jen.Index(lit(2)).Int().Values(lit(rot), lit(pass)),
					})
				}
			})
		}
	})
	f.Line()
	f.Comment("model returns a model of shape i with base 10000 and the shape's QK-norm")
	f.Comment("n (−1: none), through ropegen's spec package as an engine makes one.")
	f.Func().Id("model").Params(jen.List(id("i"), id("n")).Int()).Op("*").Id("Rotary").Block(
		id("sh").Op(":=").Id("shapeList").Index(id("i")),
		id("s").Op(":=").Qual(specPkg, "DefaultSpec").Call(),
		jen.List(id("s").Dot("HeadDim"), id("s").Dot("RotaryDim"), id("s").Dot("Layout"), id("s").Dot("DType")).Op("=").List(id("sh").Dot("HeadDim"), id("sh").Dot("RotaryDim"), jen.Qual(specPkg, "Layout").Call(id("sh").Dot("Layout")), id("dtypeName")),
		jen.If(id("n").Op(">=").Lit(0)).Block(id("s").Dot("QKNorm").Op("=").Id("engineNorms").Index(id("i")).Index(id("n")).Dot("n")),
		jen.List(id("p"), id("err")).Op(":=").Qual(specPkg, "Resolve").Call(id("s")),
		jen.If(id("err").Op("!=").Nil()).Block(jen.Panic(id("err"))),
		jen.List(id("r"), id("err")).Op(":=").Id("New").Call(id("Params").Call(id("p").Dot("Runtime").Call())),
		jen.If(id("err").Op("!=").Nil()).Block(jen.Panic(id("err"))),
		jen.Return(id("r")),
	)
	f.Line()
	f.Comment("kernel describes model(i, n) to package verify.")
	f.Func().Id("kernel").Params(jen.List(id("i"), id("n")).Int()).Qual(verifyPkg, "Kernel").Types(id("elem")).BlockFunc(func(g *jen.Group) {
		g.Id("r").Op(":=").Id("model").Call(id("i"), id("n"))
		g.Id("k").Op(":=").Id("kernelOf").Call(id("r"), lit(10000.0), lit("none"))
		if pk.hasNorms() {
			g.If(id("n").Op(">=").Lit(0)).Block(
				id("k").Dot("Norm").Op("=").Id("normOf").Call(id("r"), id("engineNorms").Index(id("i")).Index(id("n")).Dot("k"), lit(pk.dt.compute == "float64")),
			)
		}
		if len(pk.caches) > 0 {
			g.Id("k").Dot("Caches").Op("=").Id("caches").Call(id("r"))
		}
		g.Return(id("k"))
	})
	f.Line()
	f.Comment("TestVerify runs package verify's property suite on every shape without a")
	f.Comment("QK-norm, and the suite's QK-norm checks (and Prep's) with each of its norms.")
	f.Func().Id("TestVerify").Params(id("t").Add(tT)).Block(
		jen.For(jen.List(id("i"), id("sh")).Op(":=").Range().Id("shapeList")).Block(
			id("t").Dot("Run").Call(id("sh").Dot("String").Call(), jen.Func().Params(id("t").Add(tT)).Block(
				jen.Qual(verifyPkg, "Run").Call(id("t"), id("kernel").Call(id("i"), lit(-1))),
			)),
			jen.For(id("n").Op(":=").Lit(0), id("n").Op("<").Len(id("engineNorms").Index(id("i"))), id("n").Op("++")).Block(
				id("t").Dot("Run").Call(id("sh").Dot("String").Call().Op("+").Lit("/norm").Op("+").Qual("strconv", "Itoa").Call(id("n")), jen.Func().Params(id("t").Add(tT)).Block(
					jen.Qual(verifyPkg, "RunNorm").Call(id("t"), id("kernel").Call(id("i"), id("n"))),
				)),
			),
		),
	)
}
