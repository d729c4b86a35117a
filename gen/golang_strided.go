package gen

import "github.com/dave/jennifer/jen"

// stridedAPI emits the strided entry points (ApplyStrided,
// ApplyInverseStrided, ApplyQK and, with an out dtype, ApplyStridedTo) and,
// verbatim from strides.go, the Strides type and the view checks they share.
// Each checks its views and every position before it touches anything, then
// calls the active backend once per token with the view's head stride.
func (p *Plan) stridedAPI(f *jen.File) {
	T, pkg := p.elemType(), p.Spec.Package
	id, lit := jen.Id, jen.Lit
	checkPos := func(fn string) jen.Code {
		return jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("t").Dot("checkPos").Call(lit(fn), lit("pos[%d]"), jen.Int().Call(id("p")), id("j")),
		)
	}
	checkView := func(fn, what, x, s string) jen.Code {
		return id("checkView").Call(lit(pkg+"."+fn), lit(what), id(s), jen.Len(id(x)), jen.Len(id("pos")), id("HeadDim"))
	}
	// at is x[j·s.Token:], the first head of token j.
	at := func(x, s string) jen.Code { return id(x).Index(id("j").Op("*").Id(s).Dot("Token").Op(":")) }
	row := id("t").Dot("row").Call(jen.Int().Call(id("p")))
	method := func(name string, params ...jen.Code) *jen.Statement {
		return f.Func().Params(id("t").Op("*").Id("Table")).Id(name).Params(params...)
	}
	posP := id("pos").Index().Int32()

	for _, e := range []struct{ name, kern, plain, what string }{
		{"ApplyStrided", "fwd", "Apply", "x ← A·R_pos·x"},
		{"ApplyInverseStrided", "inv", "ApplyInverse", "x ← A·R_posᵀ·x"},
	} {
		fn := "Table." + e.name
		f.Line()
		f.Comment(e.name + " is " + e.plain + " for heads inside a larger buffer (" + e.what + "): for every")
		f.Comment("token j and every h < s.Heads it rotates the head x[j·s.Token + h·s.Head :][:HeadDim]")
		f.Comment("by position pos[j], in place. Only the rotary values of those heads are read")
		f.Comment("and written; every other element of x keeps its bits. The result is bit for")
		f.Comment("bit that of copying each head out, calling " + e.plain + " on it and copying it back.")
		f.Comment("A field of s that is not positive, heads that overlap, a view that reaches")
		f.Comment("past len(x) and a position outside the table panic before x is touched.")
		method(e.name, id("x").Index().Id(T), id("s").Id("Strides"), posP.Clone()).Block(
			checkView(fn, "s", "x", "s"),
			checkPos(fn),
			jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
				id("active").Dot(e.kern).Call(at("x", "s"), id("s").Dot("Head"), id("s").Dot("Heads"), row.Clone()),
			),
		)
	}

	fn := "Table.ApplyQK"
	f.Line()
	f.Comment("ApplyQK rotates the queries and the keys of a step in one pass over the")
	f.Comment("table rows: for every token j, the qs.Heads heads of q and the ks.Heads heads")
	f.Comment("of k (grouped-query attention: the counts may differ) by position pos[j], as")
	f.Comment("ApplyStrided(q, qs, pos) and ApplyStrided(k, ks, pos) would, with the same")
	f.Comment("bits. q and k may be two buffers or views of one (a fused QKV projection:")
	f.Comment("q = x, k = x[Hq·HeadDim:], both with Token = (Hq+2·Hkv)·HeadDim), as long")
	f.Comment("as no head of q overlaps a head of k; that, and everything ApplyStrided")
	f.Comment("checks, panics before anything is touched.")
	method("ApplyQK", id("q").Index().Id(T), id("qs").Id("Strides"), id("k").Index().Id(T), id("ks").Id("Strides"), posP.Clone()).Block(
		checkView(fn, "qs", "q", "qs"),
		checkView(fn, "ks", "k", "ks"),
		jen.If(jen.List(id("d"), id("ok")).Op(":=").Id("sharedOffset").Call(lit(pkg+"."+fn), id("q"), id("k")), id("ok")).Block(
			id("checkApart").Call(lit(pkg+"."+fn), id("qs"), id("ks"), id("d"), jen.Len(id("pos")), id("HeadDim")),
		),
		checkPos(fn),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("r").Op(":=").Add(row.Clone()),
			id("active").Dot("fwd").Call(at("q", "qs"), id("qs").Dot("Head"), id("qs").Dot("Heads"), id("r")),
			id("active").Dot("fwd").Call(at("k", "ks"), id("ks").Dot("Head"), id("ks").Dot("Heads"), id("r")),
		),
	)

	if p.Spec.OutDType != "" {
		fn := "Table.ApplyStridedTo"
		f.Line()
		f.Comment("ApplyStridedTo is ApplyTo for heads inside larger buffers: for every token")
		f.Comment("j and h < ss.Heads it rotates src[j·ss.Token + h·ss.Head :][:HeadDim] by")
		f.Comment("position pos[j] and stores it narrowed, values past RotaryDim narrowed")
		f.Comment("unrotated, in dst[j·ds.Token + h·ds.Head :][:HeadDim]: for writing keys")
		f.Comment("from a fused projection straight into a half-precision cache of any layout")
		f.Comment("(a head-major cache: ds.Head = capacity·HeadDim, ds.Token = HeadDim). No")
		f.Comment("other element of dst is written. ds.Heads must equal ss.Heads; bad views")
		f.Comment("and positions panic, as in ApplyStrided, before dst is written.")
		method("ApplyStridedTo", id("dst").Index().Id(p.outDtype().goType), id("ds").Id("Strides"), id("src").Index().Id(T), id("ss").Id("Strides"), posP.Clone()).Block(
			checkView(fn, "ds", "dst", "ds"),
			checkView(fn, "ss", "src", "ss"),
			jen.If(id("ds").Dot("Heads").Op("!=").Id("ss").Dot("Heads")).Block(
				id("panicf").Call(lit(pkg+"."+fn+": ds.Heads = %d: want ss.Heads (%d)"), id("ds").Dot("Heads"), id("ss").Dot("Heads")),
			),
			checkPos(fn),
			jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
				id("active").Dot("to").Call(at("dst", "ds"), id("ds").Dot("Head"), at("src", "ss"), id("ss").Dot("Head"), id("ss").Dot("Heads"), row.Clone()),
			),
		)
	}
	f.Line()
	f.Id(stridesSource())
}
