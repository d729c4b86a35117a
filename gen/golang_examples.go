package gen

import "github.com/dave/jennifer/jen"

// examples emits the godoc Examples of the strided entry points into the
// test file: ApplyQK on a fused QKV row with grouped-query attention (Llama 3
// 8B's 32 query and 8 key/value heads), ApplyStrided at an offset inside
// wider heads (DeepSeek's MLA, the package generated for the rotary part),
// and, with an out dtype, ApplyStridedTo into a head-major half-precision KV
// cache. Each prints whether the result has the bits of the per-head calls,
// so `go test` checks what the documentation shows.
func (p *Plan) examples(f *jen.File) {
	T := p.elemType()
	id, lit := jen.Id, jen.Lit
	slices := func(fn string, args ...jen.Code) *jen.Statement { return jen.Qual("slices", fn).Call(args...) }
	println := func(args ...jen.Code) jen.Code { return jen.Qual("fmt", "Println").Call(args...) }
	fill := func(x string) jen.Code {
		return jen.For(id("i").Op(":=").Range().Id(x)).Block(id(x).Index(id("i")).Op("=").Id("exampleValue").Call(id("i")))
	}
	view := func(heads, head, token jen.Code) jen.Code {
		return id("Strides").Values(jen.Dict{id("Heads"): heads, id("Head"): head, id("Token"): token})
	}

	f.Line()
	f.Comment("exampleValue is a finite, non-zero value for element i of an example buffer.")
	var v jen.Code
	switch p.Spec.DType {
	case "f16":
		v = jen.Uint16().Call(lit(0x3c00).Op("+").Id("i").Op("%").Lit(512)) // 1 ≤ v < 1.5
	case "bf16":
		v = jen.Uint16().Call(lit(0x3f80).Op("+").Id("i").Op("%").Lit(64)) // 1 ≤ v < 1.5
	default:
		v = jen.Id(T).Call(id("i").Op("%").Lit(7)).Op("-").Lit(3).Op("+").Lit(0.5)
	}
	f.Func().Id("exampleValue").Params(id("i").Int()).Id(T).Block(jen.Return(v))

	f.Line()
	f.Comment("A decode step of a Llama 3 8B layer: the fused QKV projection of one token")
	f.Comment("holds 32 query, 8 key and 8 value heads. ApplyQK rotates the queries and the")
	f.Comment("keys in place, reading each table row once, and leaves the values alone.")
	f.Func().Id("ExampleTable_ApplyQK").Params().Block(
		jen.Const().Defs(id("hq").Op("=").Lit(32), id("hkv").Op("=").Lit(8), id("row").Op("=").Parens(id("hq").Op("+").Lit(2).Op("*").Id("hkv")).Op("*").Id("HeadDim")),
		id("tab").Op(":=").Id("NewTable").Call(lit(4096)),
		id("qkv").Op(":=").Make(jen.Index().Id(T), id("row")),
		fill("qkv"),
		id("want").Op(":=").Add(slices("Clone", id("qkv"))),
		jen.Line(),
		id("tab").Dot("ApplyQK").Call(
			id("qkv"), view(id("hq"), id("HeadDim"), id("row")),
			id("qkv").Index(id("hq").Op("*").Id("HeadDim").Op(":")), view(id("hkv"), id("HeadDim"), id("row")),
			jen.Index().Int32().Values(lit(42)),
		),
		jen.Line(),
		jen.Comment("The same as Apply on the query and key heads, which lie one after another."),
		id("tab").Dot("Apply").Call(id("want").Index(jen.Op(":").Parens(id("hq").Op("+").Id("hkv")).Op("*").Id("HeadDim")), lit(42)),
		println(lit("same bits as Apply on q and k:"), slices("Equal", id("qkv"), id("want"))),
		jen.Comment("Output: same bits as Apply on q and k: true"),
	)

	f.Line()
	f.Comment("DeepSeek-style MLA: each query head is 128 values without position followed")
	f.Comment("by the rotary part. This package is generated for the rotary part alone")
	f.Comment("(HeadDim = qk_rope_head_dim) and applied at offset 128 of every head.")
	f.Func().Id("ExampleTable_ApplyStrided").Params().Block(
		jen.Const().Defs(id("heads").Op("=").Lit(16), id("nope").Op("=").Lit(128), id("full").Op("=").Id("nope").Op("+").Id("HeadDim")),
		id("tab").Op(":=").Id("NewTable").Call(lit(16)),
		id("pos").Op(":=").Index().Int32().Values(lit(7), lit(8)),
		id("q").Op(":=").Make(jen.Index().Id(T), jen.Len(id("pos")).Op("*").Id("heads").Op("*").Id("full")),
		fill("q"),
		id("want").Op(":=").Add(slices("Clone", id("q"))),
		jen.Line(),
		id("tab").Dot("ApplyStrided").Call(id("q").Index(id("nope").Op(":")), view(id("heads"), id("full"), id("heads").Op("*").Id("full")), id("pos")),
		jen.Line(),
		jen.Comment("The same as Apply on each rotary part; the parts without position keep their bits."),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			jen.For(id("h").Op(":=").Range().Id("heads")).Block(
				id("o").Op(":=").Parens(id("j").Op("*").Id("heads").Op("+").Id("h")).Op("*").Id("full").Op("+").Id("nope"),
				id("tab").Dot("Apply").Call(id("want").Index(id("o").Op(":").Id("o").Op("+").Id("HeadDim")), jen.Int().Call(id("p"))),
			),
		),
		println(lit("same bits as Apply on each rotary part:"), slices("Equal", id("q"), id("want"))),
		jen.Comment("Output: same bits as Apply on each rotary part: true"),
	)

	if !p.narrowTo() {
		return
	}
	f.Line()
	f.Comment("Keys of 8 heads for 4 new tokens, token-major as a projection writes them,")
	f.Comment("rotated and narrowed into a head-major " + p.outDtype().about + " KV cache")
	f.Comment("[heads][capacity][HeadDim] at positions 16…19, without a copy in between.")
	f.Func().Id("ExampleTable_ApplyStridedTo").Params().Block(
		jen.Const().Defs(id("heads").Op("=").Lit(8), id("capacity").Op("=").Lit(64), id("start").Op("=").Lit(16)),
		id("tab").Op(":=").Id("NewTable").Call(id("capacity")),
		id("pos").Op(":=").Index().Int32().Values(lit(16), lit(17), lit(18), lit(19)),
		id("keys").Op(":=").Make(jen.Index().Id(T), jen.Len(id("pos")).Op("*").Id("heads").Op("*").Id("HeadDim")),
		fill("keys"),
		id("cache").Op(":=").Make(jen.Index().Id(p.outDtype().goType), id("heads").Op("*").Id("capacity").Op("*").Id("HeadDim")),
		jen.Line(),
		id("tab").Dot("ApplyStridedTo").Call(
			id("cache").Index(id("start").Op("*").Id("HeadDim").Op(":")), view(id("heads"), id("capacity").Op("*").Id("HeadDim"), id("HeadDim")),
			id("keys"), view(id("heads"), id("HeadDim"), id("heads").Op("*").Id("HeadDim")),
			id("pos"),
		),
		jen.Line(),
		jen.Comment("The same as ApplyTo head by head."),
		id("same").Op(":=").True(),
		id("d").Op(":=").Make(jen.Index().Id(p.outDtype().goType), id("HeadDim")),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			jen.For(id("h").Op(":=").Range().Id("heads")).Block(
				id("k").Op(":=").Parens(id("j").Op("*").Id("heads").Op("+").Id("h")).Op("*").Id("HeadDim"),
				id("tab").Dot("ApplyTo").Call(id("d"), id("keys").Index(id("k").Op(":").Id("k").Op("+").Id("HeadDim")), jen.Int().Call(id("p"))),
				id("c").Op(":=").Parens(id("h").Op("*").Id("capacity").Op("+").Int().Call(id("p"))).Op("*").Id("HeadDim"),
				id("same").Op("=").Id("same").Op("&&").Add(slices("Equal", id("d"), id("cache").Index(id("c").Op(":").Id("c").Op("+").Id("HeadDim")))),
			),
		),
		println(lit("cache rows as ApplyTo writes them:"), id("same")),
		jen.Comment("Output: cache rows as ApplyTo writes them: true"),
	)
}
