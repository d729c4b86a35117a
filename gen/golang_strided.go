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
		return id("t").Dot("checkSeq").Call(lit(fn), id("pos"))
	}
	// checkView checks a view: at once where smallView vouches for it (a
	// token-major view of small fields, a decode step's usual case), else by
	// checkView's full rules.
	checkView := func(fn, what, x, s string) jen.Code {
		return jen.If(jen.Op("!").Id("smallView").Call(id(s), jen.Len(id(x)), jen.Len(id("pos")), id("HeadDim"))).Block(
			id("checkView").Call(lit(pkg+"."+fn), lit(what), id(s), jen.Len(id(x)), jen.Len(id("pos")), id("HeadDim")),
		)
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
			id("t").Dot("strided").Call(id("active").Dot(e.kern), id("active").Dot(e.kern+"Rows"), id("x"), id("s"), id("pos")),
		)
	}

	f.Line()
	f.Comment("strided applies kern to the view s of x, token by token: one call per")
	f.Comment("token over its s.Heads heads. With rows (a backend's fwdRows or invRows) and")
	f.Comment("a view that keeps a head's tokens closer together than a token's heads (a")
	f.Comment("head-major cache: s.Token < s.Head), or of one head, it walks head by head")
	f.Comment("instead along every run of consecutive positions, up to runMax tokens, each")
	f.Comment("token with its own table row: each call then streams through one head's")
	f.Comment("consecutive tokens rather than touching every head, s.Head apart, for one")
	f.Comment("token. Heads are disjoint, so the order changes no bit.")
	f.Func().Params(id("t").Op("*").Id("Table")).Id("strided").Params(
		id("kern").Add(p.kernType()), id("rows").Add(p.rowsKernType()), id("x").Index().Id(T), id("s").Id("Strides"), posP.Clone(),
	).Block(
		jen.If(id("rows").Op("==").Nil().Op("||").Id("s").Dot("Heads").Op(">").Lit(1).Op("&&").Id("s").Dot("Token").Op(">=").Id("s").Dot("Head")).Block(
			jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
				id("kern").Call(at("x", "s"), id("s").Dot("Head"), id("s").Dot("Heads"), row.Clone()),
			),
			jen.Return(),
		),
		jen.For(id("j").Op(":=").Lit(0), id("j").Op("<").Len(id("pos")), jen.Empty()).Block(
			id("p").Op(":=").Int().Call(id("pos").Index(id("j"))),
			id("m").Op(":=").Lit(1),
			jen.For(id("j").Op("+").Id("m").Op("<").Len(id("pos")).Op("&&").Id("m").Op("<").Id("runMax").Op("&&").Int().Call(id("pos").Index(id("j").Op("+").Id("m"))).Op("==").Id("p").Op("+").Id("m")).Block(
				id("m").Op("++"),
			),
			jen.If(id("m").Op("==").Lit(1)).Block(
				id("kern").Call(at("x", "s"), id("s").Dot("Head"), id("s").Dot("Heads"), id("t").Dot("row").Call(id("p"))),
			).Else().Block(
				id("rs").Op(":=").Id("t").Dot("rowsAt").Call(id("p"), id("m")),
				jen.For(id("h").Op(":=").Range().Id("s").Dot("Heads")).Block(
					id("rows").Call(id("x").Index(id("j").Op("*").Id("s").Dot("Token").Op("+").Id("h").Op("*").Id("s").Dot("Head").Op(":")), id("s").Dot("Token"), id("m"), id("rs")),
				),
			),
			id("j").Op("+=").Id("m"),
		),
	)
	f.Line()
	f.Comment("runMax is the most tokens strided walks a head along in one call: their")
	f.Comment("table rows, read again for every head, stay in the L1 cache.")
	f.Const().Id("runMax").Op("=").Lit(p.runMax())

	fn := "Table.ApplyQK"
	f.Line()
	f.Comment("ApplyQK rotates the queries and the keys of a step in one call: for every")
	f.Comment("token j, the qs.Heads heads of q and the ks.Heads heads of k (grouped-query")
	f.Comment("attention: the counts may differ) by position pos[j], as ApplyStrided(q, qs,")
	f.Comment("pos) and ApplyStrided(k, ks, pos) would, with the same bits; token-major")
	f.Comment("views in one pass over the table rows, and a fused row whose k heads follow")
	f.Comment("its q heads in one kernel call per token. q and k may be two buffers or")
	f.Comment("views of one (a fused QKV projection: q = x, k = x[Hq·HeadDim:], both with")
	f.Comment("Token = (Hq+2·Hkv)·HeadDim), as long as no head of q overlaps a head of k;")
	f.Comment("that, and everything ApplyStrided checks, panics before anything is touched.")
	method("ApplyQK", id("q").Index().Id(T), id("qs").Id("Strides"), id("k").Index().Id(T), id("ks").Id("Strides"), posP.Clone()).Block(
		jen.Comment("A fused QKV row: k's heads continue q's, so they are one view."),
		jen.If(jen.List(id("m"), id("ok")).Op(":=").Id("adjacent").Call(id("q"), id("qs"), id("k"), id("ks"), jen.Len(id("pos")), id("HeadDim")), id("ok")).Block(
			checkPos(fn),
			jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
				id("active").Dot("fwd").Call(at("q", "m"), id("m").Dot("Head"), id("m").Dot("Heads"), row.Clone()),
			),
			jen.Return(),
		),
		checkView(fn, "qs", "q", "qs"),
		checkView(fn, "ks", "k", "ks"),
		jen.If(jen.List(id("d"), id("ok")).Op(":=").Id("sharedOffset").Call(lit(pkg+"."+fn), id("q"), id("k")), id("ok")).Block(
			id("checkApart").Call(lit(pkg+"."+fn), id("qs"), id("ks"), id("d"), jen.Len(id("pos")), id("HeadDim")),
		),
		checkPos(fn),
		jen.If(id("active").Dot("fwdRows").Op("!=").Nil().Op("&&").Parens(id("qs").Dot("Token").Op("<").Id("qs").Dot("Head").Op("||").Id("ks").Dot("Token").Op("<").Id("ks").Dot("Head"))).Block(
			jen.Comment("Head-major views: each walked head by head."),
			id("t").Dot("strided").Call(id("active").Dot("fwd"), id("active").Dot("fwdRows"), id("q"), id("qs"), id("pos")),
			id("t").Dot("strided").Call(id("active").Dot("fwd"), id("active").Dot("fwdRows"), id("k"), id("ks"), id("pos")),
			jen.Return(),
		),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("r").Op(":=").Add(row.Clone()),
			id("active").Dot("fwd").Call(at("q", "qs"), id("qs").Dot("Head"), id("qs").Dot("Heads"), id("r")),
			id("active").Dot("fwd").Call(at("k", "ks"), id("ks").Dot("Head"), id("ks").Dot("Heads"), id("r")),
		),
	)

	if p.narrowTo() {
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

// runMax is the most tokens the strided walk takes a head along in one
// kernel call: their table rows fill about 12 KiB, which stay in the L1
// cache from one head to the next. On a 32-head head-major prefill of
// HeadDim 128 (BENCHMARKS.md), 12 rows measured 107 µs at AVX-512 and
// 145 µs at AVX2; 16 rows 105 and 162 µs; 32 rows 130 and 175 µs; 64 rows
// 250 and 231 µs.
func (p *Plan) runMax() int {
	size := 4
	if p.computeType() == "float64" {
		size = 8
	}
	return max(2, 12288/(2*p.RotaryDim*size))
}
