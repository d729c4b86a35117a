package gen

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/spec"
)

// apiFile is rope.go: the package doc, the shapes, the conversions between
// the element and the compute type, and for a per-spec package its
// constants and the numbers of its default model.
func (pk *pkg) apiFile() ([]byte, error) {
	f := jen.NewFile(pk.name)
	f.PackageComment(pk.packageDoc())
	id, lit := jen.Id, jen.Lit
	d := pk.dt
	f.Comment("pkgName begins every panic message and error; dtypeName names the")
	f.Comment("element type as -dtype does.")
	f.Const().Defs(id("pkgName").Op("=").Lit(pk.name), id("dtypeName").Op("=").Lit(pk.dt.name))
	f.Line()
	f.Comment("shapeList holds the shapes the package has kernels for, in the order of")
	f.Comment("each backend's kernels.")
	f.Var().Id("shapeList").Op("=").Index().Id("Shape").ValuesFunc(func(g *jen.Group) {
		for _, s := range pk.shapes {
			g.Values(jen.Dict{id("HeadDim"): lit(s.p.HeadDim), id("RotaryDim"): lit(s.p.RotaryDim), id("Layout"): lit(string(s.p.Spec.Layout))})
		}
	})
	f.Line()
	f.Comment("widen converts an element to the compute type, exactly; narrow rounds a")
	f.Comment("computed value to an element, to nearest even.")
	conv := func(fn string) jen.Code {
		if fn == "" {
			return id("v")
		}
		return id(fn).Call(id("v"))
	}
	f.Func().Id("widen").Params(id("v").Id(d.goType)).Id(d.compute).Block(jen.Return(conv(d.widen)))
	f.Func().Id("narrow").Params(id("v").Id(d.compute)).Id(d.goType).Block(jen.Return(conv(d.narrow)))
	if pk.def != nil {
		pk.def.constants(f, pk.caches)
	}
	return goFile(f, pk.header, "")
}

// constants emits a per-spec package's constants and defaultParams, the
// numbers of its default model: the spec's, as spec.Runtime gives them.
func (p *Plan) constants(f *jen.File, caches []string) {
	id, lit := jen.Id, jen.Lit
	rt := p.Params.Runtime()
	f.Line()
	f.Comment("HeadDim is the number of values in one head vector.")
	f.Const().Id("HeadDim").Op("=").Lit(p.HeadDim)
	f.Comment("RotaryDim is the number of leading values of each head that are rotated;")
	f.Comment("the rest pass through unchanged.")
	f.Const().Id("RotaryDim").Op("=").Lit(p.RotaryDim)
	f.Comment("Base is the frequency base: before scaling θ_i = Base^(−2i/RotaryDim).")
	f.Const().Id("Base").Op("=").Add(float(p.Spec.Base))
	f.Comment("AttentionFactor is the factor A folded into the table: a forward call")
	f.Comment("computes A·R_p·x and an inverse call A·R_pᵀ·x.")
	f.Const().Id("AttentionFactor").Op("=").Add(float(p.Attn))
	if n := p.Spec.MaxPositions; n > 0 {
		f.Comment("MaxPositions is the model's context length (its config's")
		f.Comment("max_position_embeddings): the positions it was trained for. It bounds")
		f.Comment("nothing here; size tables with it, or use NewTableRange for a window.")
		f.Const().Id("MaxPositions").Op("=").Lit(n)
	}
	floats := func(name string, v []float64) {
		f.Var().Id(name).Op("=").Index(jen.Id("RotaryDim").Op("/").Lit(2)).Float64().ValuesFunc(func(g *jen.Group) {
			for _, x := range v {
				g.Line().Add(float(x))
			}
			g.Line()
		})
	}
	f.Line()
	f.Comment("Freqs holds θ_i, the angle per position of pair i, after scaling.")
	floats("Freqs", p.Freqs)
	if p.LongFreqs != nil {
		f.Line()
		f.Comment("LongFreqs holds θ_i with the long factors (longrope): a Table of more than")
		f.Comment("OrigCtx positions uses them; a shorter Table, Rotate and RotateInverse use")
		f.Comment("Freqs.")
		floats("LongFreqs", p.LongFreqs)
	}
	if rt.OrigCtx > 0 {
		f.Line()
		if p.dynamic() {
			f.Comment("OrigCtx is the original context length L of dynamic NTK scaling: Freqs")
			f.Comment("serve a Table of at most OrigCtx positions (and Rotate); a longer Table")
			f.Comment("takes the base Base·((s·n/L) − (s − 1))^(R/(R−2)) for its length n.")
		} else {
			f.Comment("OrigCtx is the original context length L of the longrope scaling.")
		}
		f.Const().Id("OrigCtx").Op("=").Lit(rt.OrigCtx)
	}
	if p.Axes > 1 {
		f.Line()
		f.Comment("Axes is the number of positions of a token: every sequence entry point")
		f.Comment("takes Axes positions per token (" + p.Spec.AxesDescription() + ").")
		f.Const().Id("Axes").Op("=").Lit(p.Axes)
		f.Line()
		f.Comment("Axis[i] is the axis whose position turns pair i: pair i of token j turns")
		f.Comment("by pos[j·Axes + Axis[i]]·Freqs[i].")
		f.Var().Id("Axis").Op("=").Index(jen.Id("RotaryDim").Op("/").Lit(2)).Uint8().ValuesFunc(func(g *jen.Group) {
			for _, a := range p.Axis {
				g.Lit(int(a))
			}
		})
	}
	if p.Norm != nil {
		f.Line()
		f.Comment("NormEps is the default ε of the QK-norm (the model's): DefaultParams.NormEps.")
		f.Comment("A model's own ε is data, Params.NormEps.")
		f.Const().Id("NormEps").Op("=").Add(float(p.Norm.Eps))
	}
	if len(caches) == 1 {
		c := cacheTypes[caches[0]]
		f.Line()
		if sf, _ := spec.CacheType(caches[0]).Format(); sf.Type == spec.CacheInt8PerTokenHead {
			f.Comment("CacheHead is the bytes one head takes in an int8_per_token_head cache:")
			f.Comment("HeadDim+4, " + c.about + ".")
			f.Comment("The scale of head h of row slot is the float32 at byte slot·Token +")
			f.Comment("h·Head. Strides of the cache count bytes: a token-major cache of h heads")
			f.Comment("is Strides{Heads: h, Head: CacheHead, Token: h·CacheHead}.")
			f.Const().Id("CacheHead").Op("=").Lit(sf.HeadBytes(p.HeadDim))
		} else if c.blocks {
			f.Commentf("CacheHead is the bytes one head takes in a %s cache: HeadDim/%d blocks of", caches[0], sf.BlockValues)
			origin := c.origin
			if origin == "" {
				origin = "ggml's block_" + caches[0]
			}
			f.Commentf("%d bytes, each %s (%s). Strides of a %s cache count", sf.BlockBytes, c.about, origin, caches[0])
			f.Comment("bytes: a token-major cache of h heads is Strides{Heads: h, Head: CacheHead,")
			f.Comment("Token: h·CacheHead}.")
			f.Const().Id("CacheHead").Op("=").Lit(p.HeadDim / sf.BlockValues * sf.BlockBytes)
		} else {
			f.Comment("CacheHead is the elements one head takes in the cache: HeadDim " + c.about + " values.")
			f.Const().Id("CacheHead").Op("=").Lit(p.HeadDim)
		}
	}
	f.Line()
	f.Comment("defaultParams returns the numbers of this package's spec.")
	fields := map[string]jen.Code{
		"HeadDim":   id("HeadDim"),
		"RotaryDim": id("RotaryDim"),
		"Layout":    lit(rt.Layout),
		"Freqs":     jen.Qual("slices", "Clone").Call(id("Freqs").Index(jen.Op(":"))),
		"Attn":      id("AttentionFactor"),
		"Axes":      lit(rt.Axes),
		"QKScale":   float(rt.QKScale),
	}
	if p.Axes > 1 {
		fields["Axes"] = id("Axes")
		fields["Axis"] = jen.Qual("slices", "Clone").Call(id("Axis").Index(jen.Op(":")))
	}
	if p.LongFreqs != nil {
		fields["LongFreqs"] = jen.Qual("slices", "Clone").Call(id("LongFreqs").Index(jen.Op(":")))
	}
	if rt.OrigCtx > 0 {
		fields["OrigCtx"] = id("OrigCtx")
	}
	if rt.DynamicFactor != 0 {
		fields["DynamicFactor"], fields["DynamicBase"] = float(rt.DynamicFactor), id("Base")
	}
	if rt.NormKind != "" {
		fields["NormKind"], fields["NormEps"], fields["NormScope"] = lit(rt.NormKind), id("NormEps"), lit(rt.NormScope)
		if rt.NormAfter {
			fields["NormAfter"] = jen.True()
		}
	}
	if rt.MaxPositions > 0 {
		fields["MaxPositions"] = id("MaxPositions")
	}
	d := jen.Dict{}
	for k, v := range fields {
		d[id(k)] = v
	}
	f.Func().Id("defaultParams").Params().Id("Params").Block(jen.Return(id("Params").Values(d)))
}

// packageDoc is the generated package's doc comment: what it holds, the
// arithmetic and its error bound.
func (pk *pkg) packageDoc() string {
	var b strings.Builder
	if p := pk.def; p != nil {
		s := p.Spec
		fmt.Fprintf(&b, "Package %s applies rotary position embeddings (RoPE) to head vectors of\n", s.Package)
		fmt.Fprintf(&b, "%d %s values, generated by ropegen for exactly this spec:\n\n", p.HeadDim, pk.dt.about)
		fmt.Fprintf(&b, "\thead dim     %d\n", p.HeadDim)
		fmt.Fprintf(&b, "\trotary dim   %d\n", p.RotaryDim)
		fmt.Fprintf(&b, "\tbase         %s\n", strconv.FormatFloat(s.Base, 'g', -1, 64))
		fmt.Fprintf(&b, "\tdtype        %s\n", s.DType)
		fmt.Fprintf(&b, "\tlayout       %s\n", s.Layout)
		sc := s.Scaling.Type
		if sc == "" {
			sc = "none"
		}
		fmt.Fprintf(&b, "\tscaling      %s\n", sc)
		fmt.Fprintf(&b, "\tattention A  %s\n\n", strconv.FormatFloat(p.Attn, 'g', -1, 64))
		b.WriteString(wrapDoc("Default() is this spec's Rotary (New(DefaultParams)), and NewTable, NewBatch, Rotate, RotateInverse" + map[bool]string{true: ", Store and Load", false: ""}[len(pk.caches) > 0] + " are its methods at package level. New takes any model of the same shape: its frequencies, attention factor, axis map and QK-norm are data."))
		b.WriteString("\n\n")
		a, b2 := p.Pair(1)
		fmt.Fprintf(&b, "Pair i of a head is (a, b) = %s (pair 1 is (%d, %d)); values at\n", p.pairFormula(), a, b2)
		b.WriteString("indices ≥ RotaryDim pass through unchanged.")
	} else {
		b.WriteString(pk.engineDoc())
		b.WriteString(wrapDoc("Pair i of a head is (2i, 2i+1) in the interleaved layout and (i, i+RotaryDim/2) in the neox layout; values at indices ≥ RotaryDim pass through unchanged."))
	}
	b.WriteString(" A forward call computes, per pair,\n\n")
	b.WriteString("\ty_a = fl(fl(x_a·c) − fl(x_b·s))\n")
	b.WriteString("\ty_b = fl(fl(x_b·c) + fl(x_a·s))\n\n")
	b.WriteString("with c = A·cos(p·θ_i) and s = A·sin(p·θ_i) computed from p·θ_i in float64 and\n")
	fmt.Fprintf(&b, "rounded once to %s: two rounded products and one rounded sum, no fused\n", pk.dt.compute)
	b.WriteString("multiply-add, so every backend (pure Go, AVX2, …) returns the same bits.\n")
	b.WriteString("The inverse (backward) call negates s. Against the exact rotation in float64\n")
	fmt.Fprintf(&b, "the result satisfies %s,\n", pk.errorBound())
	b.WriteString("at every position below 2²⁴.\n\n")
	b.WriteString(pk.cachePackageDoc())
	b.WriteString("ApplySeqParallel and ApplyInverseSeqParallel split a sequence of at\n")
	b.WriteString("least 2·ParallelMin bytes into runs of whole tokens rotated on concurrent\n")
	b.WriteString("goroutines, with the same bits; shorter ones are rotated serially.\n\n")
	b.WriteString("Build with -tags purego to use only the pure Go kernels.")
	b.WriteString(pk.normDoc())
	return b.String()
}

// errorBound is the documented per-pair bound of docs/contract.md §6, as
// text.
func (pk *pkg) errorBound() string {
	u := "2⁻²⁴"
	if pk.dt.compute == "float64" {
		u = "2⁻⁵³"
	}
	return fmt.Sprintf("|y − y_ref| ≤ 4·%s·A·(|x_a| + |x_b|)%s per pair", u, pk.dt.ulp)
}
