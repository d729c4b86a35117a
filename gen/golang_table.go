package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// tableAPI emits the run-time parameters and the tables built from them
// (docs/contract.md §12): Params, DefaultParams, Params.Validate,
// TableParams, the Table type, NewTable, NewTableParams, NewTableRange, Len,
// Start, Params, the row accessors and the position checks every entry point
// goes through, and Batch, the rows of one step of batched decoding.
//
// The kernels depend only on the shape (head and rotary dims, layout, types,
// number of axes); the frequencies, the attention factor and the axis map
// are data a Table is built from. A table covers the positions
// [Start(), Start()+Len()): row(pos) is row pos−Start, and checkPos and
// checkSeq are the only places positions are checked, so that every entry
// point, whatever its walk, works on a range table with absolute positions.
func (p *Plan) tableAPI(f *jen.File) {
	C, pkg := p.computeType(), p.Spec.Package
	id, lit := jen.Id, jen.Lit
	half := func() *jen.Statement { return jen.Index(id("RotaryDim").Op("/").Lit(2)) }
	tab := func() *jen.Statement { return id("t").Op("*").Id("Table") }
	multi := p.Axes > 1

	f.Line()
	shape, params := "the pair layout and the types", "the frequencies and the attention factor"
	if multi {
		shape, params = "the pair layout, the types and the number of axes", "the frequencies, the attention factor and the axis of each pair"
	}
	for _, l := range strings.Split(wrapDoc("Params are the numbers a Table is built from, beyond the shape the kernels are specialised for (HeadDim, RotaryDim, "+shape+"): "+params+". An engine that loads models at run time fills them for each model, for example from the Params of ropegen's spec package, which computes the numbers DefaultParams holds; a table built from DefaultParams is exactly NewTable's."), "\n") {
		f.Comment(l)
	}
	f.Type().Id("Params").StructFunc(func(g *jen.Group) {
		g.Id("Freqs").Add(half()).Float64().Comment("θ_i: pair i turns by pos·θ_i")
		g.Id("Attn").Float64().Comment("the attention factor A, folded into cos and sin")
		if multi {
			g.Id("Axis").Add(half()).Uint8().Comment("the axis whose position turns pair i")
		}
	})
	f.Line()
	f.Comment("DefaultParams are this package's spec: Freqs and AttentionFactor" + map[bool]string{true: ", and Axis.", false: "."}[multi])
	f.Var().Id("DefaultParams").Op("=").Id("Params").Values(jen.DictFunc(func(d jen.Dict) {
		d[id("Freqs")] = id("Freqs")
		d[id("Attn")] = id("AttentionFactor")
		if multi {
			d[id("Axis")] = id("Axis")
		}
	}))
	f.Line()
	f.Comment("Validate reports whether p can build a table: every θ_i finite and >= 0 (the")
	f.Comment("sines and cosines are computed for angles pos·θ_i >= 0, by the functions that")
	f.Comment("cover every finite angle with the same bits on every machine), and A finite")
	if multi {
		f.Comment("and > 0, and every Axis[i] < Axes.")
	} else {
		f.Comment("and > 0.")
	}
	f.Func().Params(id("p").Op("*").Id("Params")).Id("Validate").Params().Error().Block(
		jen.If(id("msg").Op(":=").Id("p").Dot("check").Call(), id("msg").Op("!=").Lit("")).Block(
			jen.Return(jen.Qual("errors", "New").Call(lit(pkg+".Params: ").Op("+").Id("msg"))),
		),
		jen.Return(jen.Nil()),
	)
	f.Line()
	f.Comment("check is Validate's message, without the package: \"\" for valid params.")
	f.Func().Params(id("p").Op("*").Id("Params")).Id("check").Params().String().BlockFunc(func(g *jen.Group) {
		g.For(jen.List(id("i"), id("v")).Op(":=").Range().Id("p").Dot("Freqs")).Block(
			jen.If(jen.Op("!").Parens(id("v").Op(">=").Lit(0)).Op("||").Qual("math", "IsInf").Call(id("v"), lit(1))).Block(
				jen.Return(jen.Qual("fmt", "Sprintf").Call(lit("Freqs[%d] = %v: want finite and >= 0"), id("i"), id("v"))),
			),
		)
		g.If(jen.Op("!").Parens(id("p").Dot("Attn").Op(">").Lit(0)).Op("||").Qual("math", "IsInf").Call(id("p").Dot("Attn"), lit(1))).Block(
			jen.Return(jen.Qual("fmt", "Sprintf").Call(lit("Attn = %v: want finite and > 0"), id("p").Dot("Attn"))),
		)
		if multi {
			g.For(jen.List(id("i"), id("a")).Op(":=").Range().Id("p").Dot("Axis")).Block(
				jen.If(jen.Int().Call(id("a")).Op(">=").Id("Axes")).Block(
					jen.Return(jen.Qual("fmt", "Sprintf").Call(lit("Axis[%d] = %d: want < Axes (%d)"), id("i"), id("a"), id("Axes"))),
				),
			)
		}
		g.Return(lit(""))
	})
	f.Line()
	f.Comment("TableParams returns the params NewTable(n) builds a table of n positions")
	switch {
	case p.LongFreqs != nil:
		f.Comment("from: DefaultParams, with LongFreqs for Freqs when n > OrigCtx (longrope).")
	case p.dynamic():
		f.Comment("from: DefaultParams, with the frequencies of dynamic NTK for a sequence of")
		f.Comment("n tokens when n > OrigCtx.")
	default:
		f.Comment("from: DefaultParams, for every n.")
	}
	f.Func().Id("TableParams").Params(id("n").Int()).Id("Params").BlockFunc(func(g *jen.Group) {
		g.Id("p").Op(":=").Id("DefaultParams")
		if p.LongFreqs != nil {
			g.If(id("n").Op(">").Id("OrigCtx")).Block(id("p").Dot("Freqs").Op("=").Id("LongFreqs"))
		}
		if p.dynamic() {
			g.If(id("n").Op(">").Id("OrigCtx")).Block(
				id("dynamicFreqs").Call(id("p").Dot("Freqs").Index(jen.Op(":")), id("Base"), id("dynamicFactor"), id("OrigCtx"), id("RotaryDim"), id("n")),
			)
		}
		g.Return(id("p"))
	})

	f.Line()
	f.Comment("Table holds cos and sin for the positions [Start(), Start()+Len()), from its")
	f.Comment("Params. It is read-only after it is built and safe for concurrent use.")
	f.Comment("Its methods take absolute positions; a position outside the table, or a")
	f.Comment("nil *Table, panics with a message.")
	f.Type().Id("Table").StructFunc(func(g *jen.Group) {
		g.Id("rows").Index().Id(C).Comment("Len() rows of rowLen values: row k is position start+k")
		g.Id("start").Int().Comment("the first position")
		g.Id("p").Id("Params").Comment("what the rows were filled from")
		g.Id("maxFreq").Float64().Comment("the largest of p.Freqs: every angle is at most pos·maxFreq")
		if multi {
			g.Comment("mix, for params whose Axis is not the package's, lists for each axis")
			g.Comment("the runs [lo, hi) of row indices < RotaryDim whose pairs it turns;")
			g.Comment("nil: mixAxis's, the package's own map.")
			g.Id("mix").Op("*").Index(id("Axes")).Index().Index(lit(2)).Int()
		}
	})
	f.Line()
	f.Comment("NewTable returns a table for the positions [0, maxPos), from")
	f.Comment("TableParams(maxPos). It panics if maxPos is negative.")
	if p.dynamic() {
		f.Comment("")
		f.Comment("A table of more than OrigCtx positions uses the dynamic NTK frequencies of")
		f.Comment("a sequence of maxPos tokens, as Hugging Face computes them for a sequence")
		f.Comment("of that length; a shorter one uses Freqs.")
	}
	if p.LongFreqs != nil {
		f.Comment("")
		f.Comment("A table of more than OrigCtx positions uses LongFreqs, the long factors,")
		f.Comment("for every position, as Hugging Face does for a sequence longer than the")
		f.Comment("original context; a shorter one uses Freqs.")
	}
	f.Func().Id("NewTable").Params(id("maxPos").Int()).Op("*").Id("Table").Block(
		jen.If(id("maxPos").Op("<").Lit(0)).Block(
			id("panicf").Call(lit(pkg+".NewTable: maxPos = %d: want maxPos >= 0"), id("maxPos")),
		),
		id("p").Op(":=").Id("TableParams").Call(id("maxPos")),
		jen.Return(id("newTable").Call(lit("NewTable"), jen.Op("&").Id("p"), lit(0), id("maxPos"))),
	)
	f.Line()
	f.Comment("NewTableParams returns a table for the positions [0, maxPos) from p:")
	f.Comment("NewTableParams(TableParams(n), n) is NewTable(n), bit for bit. It panics if")
	f.Comment("maxPos is negative or p is not valid (Params.Validate).")
	f.Func().Id("NewTableParams").Params(id("p").Id("Params"), id("maxPos").Int()).Op("*").Id("Table").Block(
		jen.If(id("maxPos").Op("<").Lit(0)).Block(
			id("panicf").Call(lit(pkg+".NewTableParams: maxPos = %d: want maxPos >= 0"), id("maxPos")),
		),
		jen.Return(id("newTable").Call(lit("NewTableParams"), jen.Op("&").Id("p"), lit(0), id("maxPos"))),
	)
	f.Line()
	f.Comment("NewTableRange returns a table for the positions [start, start+n) only, from")
	f.Comment("p: every entry point takes absolute positions in that range and gives the")
	f.Comment("bits a table from 0 would give there, so a window of a long context needs")
	f.Comment("rows for the window only (a full table holds rowLen values per position).")
	f.Comment("It panics if start or n is negative, start+n overflows, or p is not valid.")
	f.Func().Id("NewTableRange").Params(id("p").Id("Params"), jen.List(id("start"), id("n")).Int()).Op("*").Id("Table").Block(
		jen.Comment("start+n < 0: the sum overflows (Go's ints wrap)."),
		jen.If(id("start").Op("<").Lit(0).Op("||").Id("n").Op("<").Lit(0).Op("||").Id("start").Op("+").Id("n").Op("<").Lit(0)).Block(
			id("panicf").Call(lit(pkg+".NewTableRange: start = %d, n = %d: want start >= 0, n >= 0 and start+n without overflow"), id("start"), id("n")),
		),
		jen.Return(id("newTable").Call(lit("NewTableRange"), jen.Op("&").Id("p"), id("start"), id("n"))),
	)
	f.Line()
	f.Comment("newTable builds the table of positions [start, start+n) from p, checked")
	f.Comment("first: fn names the caller in a panic.")
	f.Func().Id("newTable").Params(id("fn").String(), id("p").Op("*").Id("Params"), jen.List(id("start"), id("n")).Int()).Op("*").Id("Table").BlockFunc(func(g *jen.Group) {
		g.If(id("msg").Op(":=").Id("p").Dot("check").Call(), id("msg").Op("!=").Lit("")).Block(
			id("panicf").Call(lit(pkg+".%s: p.%s"), id("fn"), id("msg")),
		)
		g.Id("t").Op(":=").Op("&").Id("Table").Values(jen.Dict{
			id("rows"):  jen.Make(jen.Index().Id(C), id("n").Op("*").Id("rowLen")),
			id("start"): id("start"),
			id("p"):     jen.Op("*").Id("p"),
		})
		g.For(jen.List(id("i"), id("v")).Op(":=").Range().Id("p").Dot("Freqs")).Block(
			jen.If(id("v").Op(">").Id("t").Dot("maxFreq")).Block(id("t").Dot("maxFreq").Op("=").Id("v")),
			jen.Comment("Every angle must be finite (and so has a sine and a cosine)."),
			jen.If(id("n").Op(">").Lit(0).Op("&&").Qual("math", "IsInf").Call(jen.Float64().Call(jen.Float64().Call(id("start").Op("+").Id("n").Op("-").Lit(1)).Op("*").Id("v")), lit(0))).Block(
				id("panicf").Call(lit(pkg+".%s: p.Freqs[%d] = %v: the angle at position %d overflows; want (start+n−1)·θ_i finite"), id("fn"), id("i"), id("v"), id("start").Op("+").Id("n").Op("-").Lit(1)),
			),
		)
		if multi {
			g.If(id("p").Dot("Axis").Op("!=").Id("Axis")).Block(
				id("t").Dot("mix").Op("=").Id("axisRuns").Call(jen.Op("&").Id("p").Dot("Axis")),
			)
		}
		g.For(id("k").Op(":=").Range().Id("n")).Block(
			id("pos").Op(":=").Id("start").Op("+").Id("k"),
			id("t").Dot("fill").Call(id("t").Dot("row").Call(id("pos")), id("pos")),
		)
		g.Return(id("t"))
	})
	f.Line()
	f.Comment("fill writes the row of position pos from the table's params.")
	f.Func().Params(tab()).Id("fill").Params(id("r").Op("*").Id("row"), id("pos").Int()).Block(
		id("fill").Call(id("r"), id("pos"), jen.Op("&").Id("t").Dot("p").Dot("Freqs"), id("t").Dot("p").Dot("Attn"), id("t").Dot("maxFreq")),
	)
	f.Line()
	f.Comment("Len returns the number of positions the table covers.")
	f.Func().Params(tab()).Id("Len").Params().Int().Block(
		id("t").Dot("checkNil").Call(lit("Table.Len")),
		jen.Return(jen.Len(id("t").Dot("rows")).Op("/").Id("rowLen")),
	)
	f.Line()
	f.Comment("Start returns the first position the table covers: 0 but for NewTableRange.")
	f.Func().Params(tab()).Id("Start").Params().Int().Block(
		id("t").Dot("checkNil").Call(lit("Table.Start")),
		jen.Return(id("t").Dot("start")),
	)
	f.Line()
	f.Comment("Params returns the params the table was built from.")
	f.Func().Params(tab()).Id("Params").Params().Id("Params").Block(
		id("t").Dot("checkNil").Call(lit("Table.Params")),
		jen.Return(id("t").Dot("p")),
	)
	f.Line()
	f.Comment("row returns the row of position pos, Start() <= pos < Start()+Len().")
	f.Func().Params(tab()).Id("row").Params(id("pos").Int()).Op("*").Id("row").Block(
		jen.Return(jen.Parens(jen.Op("*").Id("row")).Call(id("t").Dot("rows").Index(jen.Parens(id("pos").Op("-").Id("t").Dot("start")).Op("*").Id("rowLen").Op(":")))),
	)
	f.Line()
	f.Comment("rowsAt returns the rows of the m positions from pos on, consecutive.")
	f.Func().Params(tab()).Id("rowsAt").Params(jen.List(id("pos"), id("m")).Int()).Index().Id(C).Block(
		id("k").Op(":=").Id("pos").Op("-").Id("t").Dot("start"),
		jen.Return(id("t").Dot("rows").Index(id("k").Op("*").Id("rowLen").Op(":").Parens(id("k").Op("+").Id("m")).Op("*").Id("rowLen"))),
	)
	f.Line()
	f.Comment("checkNil panics, naming fn, if t is nil.")
	f.Func().Params(tab()).Id("checkNil").Params(id("fn").String()).Block(
		jen.If(id("t").Op("==").Nil()).Block(
			id("panicf").Call(lit(pkg+".%s: t = nil: want a table from NewTable, NewTableParams or NewTableRange"), id("fn")),
		),
	)
	f.Line()
	f.Comment("checkPos panics unless t covers pos.")
	f.Func().Params(tab()).Id("checkPos").Params(id("fn").String(), id("pos").Int()).Block(
		id("t").Dot("checkNil").Call(id("fn")),
		jen.If(jen.Uint().Call(id("pos").Op("-").Id("t").Dot("start")).Op(">=").Uint().Call(jen.Len(id("t").Dot("rows")).Op("/").Id("rowLen"))).Block(
			id("panicf").Call(lit(pkg+".%s: pos = %d: want %d <= pos < %d (the table's positions)"), id("fn"), id("pos"), id("t").Dot("start"), id("t").Dot("start").Op("+").Len(id("t").Dot("rows")).Op("/").Id("rowLen")),
		),
	)
	f.Line()
	f.Comment("checkSeq panics unless t covers pos[j] for every j, naming the first j")
	f.Comment("it does not. The loop only compares: formatting a message, or boxing j")
	f.Comment("for one, happens in panicSeq, on the way to the panic.")
	f.Func().Params(tab()).Id("checkSeq").Params(id("fn").String(), id("pos").Index().Int32()).Block(
		id("t").Dot("checkNil").Call(id("fn")),
		jen.List(id("s"), id("n")).Op(":=").List(id("t").Dot("start"), jen.Uint().Call(jen.Len(id("t").Dot("rows")).Op("/").Id("rowLen"))),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			jen.If(jen.Uint().Call(jen.Int().Call(id("p")).Op("-").Id("s")).Op(">=").Id("n")).Block(
				id("panicSeq").Call(id("fn"), id("j"), jen.Int().Call(id("p")), id("s"), id("s").Op("+").Int().Call(id("n"))),
			),
		),
	)
	f.Line()
	f.Func().Id("panicSeq").Params(id("fn").String(), jen.List(id("j"), id("p"), id("lo"), id("hi")).Int()).Block(
		id("panicf").Call(lit(pkg+".%s: pos[%d] = %d: want %d <= pos < %d (the table's positions)"), id("fn"), id("j"), id("p"), id("lo"), id("hi")),
	)
	if multi {
		p.axisRuns(f)
	}
	p.batchAPI(f)
}

// axisRuns emits axisRuns, which lists for an axis map the runs of row
// indices each axis turns, and Table.mixAxis, which copies an axis's values
// with them (or with the package's mixAxis for its own map).
func (p *Plan) axisRuns(f *jen.File) {
	id, lit := jen.Id, jen.Lit
	f.Line()
	f.Comment("axisRuns lists, for each axis, the runs [lo, hi) of row indices < RotaryDim")
	f.Comment("whose pairs the map axis puts on it.")
	pairOf := id("j").Op("/").Lit(2)
	if p.Spec.Layout == "neox" {
		pairOf = id("j").Op("%").Parens(id("RotaryDim").Op("/").Lit(2))
	}
	f.Func().Id("axisRuns").Params(id("axis").Op("*").Index(id("RotaryDim").Op("/").Lit(2)).Uint8()).Op("*").Index(id("Axes")).Index().Index(lit(2)).Int().Block(
		id("runs").Op(":=").New(jen.Index(id("Axes")).Index().Index(lit(2)).Int()),
		jen.For(id("lo").Op(":=").Lit(0), id("lo").Op("<").Id("RotaryDim"), jen.Empty()).Block(
			id("j").Op(":=").Id("lo"),
			id("a").Op(":=").Id("axis").Index(pairOf.Clone()),
			id("hi").Op(":=").Id("lo").Op("+").Lit(1),
			jen.For(id("hi").Op("<").Id("RotaryDim")).Block(
				id("j").Op("=").Id("hi"),
				jen.If(id("axis").Index(pairOf.Clone()).Op("!=").Id("a")).Block(jen.Break()),
				id("hi").Op("++"),
			),
			id("runs").Index(id("a")).Op("=").Append(id("runs").Index(id("a")), jen.Index(lit(2)).Int().Values(id("lo"), id("hi"))),
			id("lo").Op("=").Id("hi"),
		),
		jen.Return(id("runs")),
	)
	f.Line()
	f.Comment("mixAxis copies to dst, from src (the row of a position), the C and S values")
	f.Comment("of the pairs the table's axis map puts on axis a.")
	f.Func().Params(id("t").Op("*").Id("Table")).Id("mixAxis").Params(id("dst").Op("*").Id("row"), id("a").Int(), id("src").Op("*").Id("row")).Block(
		jen.If(id("t").Dot("mix").Op("==").Nil()).Block(
			id("mixAxis").Call(id("dst"), id("a"), id("src")),
			jen.Return(),
		),
		jen.For(jen.List(id("_"), id("r")).Op(":=").Range().Id("t").Dot("mix").Index(id("a"))).Block(
			jen.Copy(id("dst").Index(id("r").Index(lit(0)).Op(":").Id("r").Index(lit(1))), id("src").Index(id("r").Index(lit(0)).Op(":").Id("r").Index(lit(1)))),
			jen.Copy(id("dst").Index(id("RotaryDim").Op("+").Id("r").Index(lit(0)).Op(":").Id("RotaryDim").Op("+").Id("r").Index(lit(1))), id("src").Index(id("RotaryDim").Op("+").Id("r").Index(lit(0)).Op(":").Id("RotaryDim").Op("+").Id("r").Index(lit(1)))),
		),
	)
}

// batchAPI emits Batch: the rows of one step of batched decoding, one per
// token at whatever position, and the sequence entry points on them.
func (p *Plan) batchAPI(f *jen.File) {
	T, W, pkg := p.elemType(), p.weightType(), p.Spec.Package
	id, lit := jen.Id, jen.Lit
	f.Line()
	f.Comment("Batch holds the table rows of one step of batched decoding, where each")
	f.Comment("token sits at its own position, as the sequences of a batch do: Set fills")
	f.Comment("one row per token, for any positions, and the methods turn token j of their")
	f.Comment("input by the position Set gave it. A table would need a row for every")
	f.Comment("position up to the largest; a Batch holds one per token, filled once a step")
	f.Comment("and used by every layer's calls. Its rows have Rotate's bits, which are")
	f.Comment("Table.Apply's. Set must not run concurrently with anything else on the")
	f.Comment("Batch; the other methods may. A bad view or length panics as the Table")
	f.Comment("method of the same name does, and names it.")
	f.Type().Id("Batch").Struct(
		id("t").Id("Table").Comment("row j is token j's: its methods get the positions idx"),
		id("pos").Index().Int32().Comment("the positions Set was given"),
		id("idx").Index().Int32().Comment("0, 1, …, capacity−1"),
	)
	f.Line()
	f.Comment("NewBatch returns a Batch for up to capacity tokens a step, with params p. It")
	f.Comment("panics if capacity is negative or p is not valid (Params.Validate).")
	f.Func().Id("NewBatch").Params(id("p").Id("Params"), id("capacity").Int()).Op("*").Id("Batch").Block(
		jen.If(id("capacity").Op("<").Lit(0)).Block(
			id("panicf").Call(lit(pkg+".NewBatch: capacity = %d: want capacity >= 0"), id("capacity")),
		),
		jen.Comment("A table of no positions: p checked, maxFreq and the axis map set."),
		id("t").Op(":=").Id("newTable").Call(lit("NewBatch"), jen.Op("&").Id("p"), lit(0), lit(0)),
		id("b").Op(":=").Op("&").Id("Batch").Values(jen.Dict{
			id("t"):   jen.Op("*").Id("t"),
			id("idx"): jen.Make(jen.Index().Int32(), id("capacity")),
			id("pos"): jen.Make(jen.Index().Int32(), lit(0), id("capacity")),
		}),
		id("b").Dot("t").Dot("rows").Op("=").Make(jen.Index().Id(p.computeType()), lit(0), id("capacity").Op("*").Id("rowLen")),
		jen.For(id("i").Op(":=").Range().Id("b").Dot("idx")).Block(
			id("b").Dot("idx").Index(id("i")).Op("=").Int32().Call(id("i")),
		),
		jen.Return(id("b")),
	)
	f.Line()
	f.Comment("Set fills the rows of the tokens of the next calls: token j at position")
	f.Comment("pos[j]. It panics, before changing anything, if len(pos) is more than the")
	f.Comment("capacity, a position is negative, or an angle pos[j]·θ_i overflows.")
	f.Func().Params(id("b").Op("*").Id("Batch")).Id("Set").Params(id("pos").Index().Int32()).Block(
		jen.If(jen.Len(id("pos")).Op(">").Len(id("b").Dot("idx"))).Block(
			id("panicf").Call(lit(pkg+".Batch.Set: len(pos) = %d: want at most the capacity, %d"), jen.Len(id("pos")), jen.Len(id("b").Dot("idx"))),
		),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			jen.If(id("p").Op("<").Lit(0).Op("||").Qual("math", "IsInf").Call(jen.Float64().Call(jen.Float64().Call(id("p")).Op("*").Id("b").Dot("t").Dot("maxFreq")), lit(0))).Block(
				id("panicf").Call(lit(pkg+".Batch.Set: pos[%d] = %d: want pos >= 0 with every angle pos·θ_i finite"), id("j"), id("p")),
			),
		),
		id("b").Dot("t").Dot("rows").Op("=").Id("b").Dot("t").Dot("rows").Index(jen.Op(":").Len(id("pos")).Op("*").Id("rowLen")),
		id("b").Dot("pos").Op("=").Append(id("b").Dot("pos").Index(jen.Op(":").Lit(0)), id("pos").Op("...")),
		jen.For(jen.List(id("j"), id("p")).Op(":=").Range().Id("pos")).Block(
			id("b").Dot("t").Dot("fill").Call(id("b").Dot("t").Dot("row").Call(id("j")), jen.Int().Call(id("p"))),
		),
	)
	f.Line()
	f.Comment("Len returns the number of tokens of the step: len(pos) of the last Set.")
	f.Func().Params(id("b").Op("*").Id("Batch")).Id("Len").Params().Int().Block(jen.Return(jen.Len(id("b").Dot("pos"))))
	f.Line()
	f.Comment("Pos returns the positions of the step, as Set was given them; the slice")
	f.Comment("belongs to the Batch.")
	f.Func().Params(id("b").Op("*").Id("Batch")).Id("Pos").Params().Index().Int32().Block(jen.Return(id("b").Dot("pos")))
	f.Line()
	f.Comment("tokens are the positions b's table methods take: 0…Len()−1, row j token j's.")
	f.Func().Params(id("b").Op("*").Id("Batch")).Id("tokens").Params().Index().Int32().Block(jen.Return(id("b").Dot("idx").Index(jen.Op(":").Len(id("b").Dot("pos")))))
	x := id("x").Index().Id(T)
	type method struct {
		name   string
		params []jen.Code
		args   []jen.Code
		doc    string
	}
	st := id("Strides")
	methods := []method{
		{"ApplySeq", []jen.Code{x.Clone()}, []jen.Code{id("x")}, "ApplySeq rotates token j of x, len(x)/Len() values, by the position of token j."},
		{"ApplyInverseSeq", []jen.Code{x.Clone()}, []jen.Code{id("x")}, "ApplyInverseSeq is ApplySeq's backward pass (A·R_posᵀ)."},
		{"ApplyStrided", []jen.Code{x.Clone(), id("s").Add(st.Clone())}, []jen.Code{id("x"), id("s")}, "ApplyStrided rotates the heads of token j of the view s of x by the position of token j, as Table.ApplyStrided does."},
		{"ApplyInverseStrided", []jen.Code{x.Clone(), id("s").Add(st.Clone())}, []jen.Code{id("x"), id("s")}, "ApplyInverseStrided is ApplyStrided's backward pass."},
		{"ApplyQK", []jen.Code{id("q").Index().Id(T), id("qs").Add(st.Clone()), id("k").Index().Id(T), id("ks").Add(st.Clone())}, []jen.Code{id("q"), id("qs"), id("k"), id("ks")}, "ApplyQK rotates the queries and keys of token j, as Table.ApplyQK does, by the position of token j."},
	}
	if p.Norm != nil {
		methods = append(methods, method{
			"ApplyNormQK",
			[]jen.Code{id("q").Index().Id(T), id("qs").Add(st.Clone()), id("qw").Index().Id(W), id("k").Index().Id(T), id("ks").Add(st.Clone()), id("kw").Index().Id(W)},
			[]jen.Code{id("q"), id("qs"), id("qw"), id("k"), id("ks"), id("kw")},
			"ApplyNormQK normalizes and rotates the queries and keys of token j, as Table.ApplyNormQK does, by the position of token j.",
		})
	}
	for _, m := range methods {
		f.Line()
		f.Comment(m.doc)
		f.Func().Params(id("b").Op("*").Id("Batch")).Id(m.name).Params(m.params...).Block(
			id("b").Dot("t").Dot(m.name).Call(append(m.args, id("b").Dot("tokens").Call())...),
		)
	}
}

// verifyParams describes the run-time parameters, range tables and Batch to
// verify (docs/contract.md §12), in kernel() of rope_test.go.
func (p *Plan) verifyParams() jen.Code {
	id := jen.Id
	T := p.elemType()
	tab := jen.Qual(verifyPkg, "Table").Types(id(T))
	batch := jen.Qual(verifyPkg, "Batch").Types(id(T))
	vs := jen.Qual(verifyPkg, "Strides")
	fa := []jen.Code{id("freqs").Index().Float64(), id("attn").Float64(), id("axis").Index().Uint8()}
	args := func(extra ...jen.Code) []jen.Code { return append(append([]jen.Code{}, fa...), extra...) }
	mk := id("paramsOf").Call(id("freqs"), id("attn"), id("axis"))
	conv := func(s string) jen.Code { return id("Strides").Call(id(s)) }
	return jen.Block(
		id("k").Dot("NewTableParams").Op("=").Func().Params(args(id("n").Int())...).Add(tab.Clone()).Block(
			jen.Return(id("NewTableParams").Call(mk.Clone(), id("n"))),
		),
		id("k").Dot("NewTableRange").Op("=").Func().Params(args(id("start"), id("n").Int())...).Add(tab.Clone()).Block(
			jen.Return(id("NewTableRange").Call(mk.Clone(), id("start"), id("n"))),
		),
		id("k").Dot("TableParams").Op("=").Func().Params(id("n").Int()).Params(jen.Index().Float64(), jen.Float64()).Block(
			id("p").Op(":=").Id("TableParams").Call(id("n")),
			jen.Return(id("p").Dot("Freqs").Index(jen.Op(":")), id("p").Dot("Attn")),
		),
		id("k").Dot("NilTable").Op("=").Parens(jen.Op("*").Id("Table")).Call(jen.Nil()),
		id("k").Dot("NewBatch").Op("=").Func().Params(args(id("capacity").Int())...).Add(batch.Clone()).Block(
			jen.Return(id("NewBatch").Call(mk.Clone(), id("capacity"))),
		),
		id("k").Dot("BatchApplyQK").Op("=").Func().Params(id("b").Add(batch.Clone()), id("q").Index().Id(T), id("qs").Add(vs.Clone()), id("kk").Index().Id(T), id("ks").Add(vs.Clone())).Block(
			id("b").Assert(jen.Op("*").Id("Batch")).Dot("ApplyQK").Call(id("q"), conv("qs"), id("kk"), conv("ks")),
		),
		id("k").Dot("BatchApplyStrided").Op("=").Func().Params(id("b").Add(batch.Clone()), id("x").Index().Id(T), id("s").Add(vs.Clone())).Block(
			id("b").Assert(jen.Op("*").Id("Batch")).Dot("ApplyStrided").Call(id("x"), conv("s")),
		),
	)
}

// paramsOfFunc emits paramsOf, which builds Params from verify's slices.
func (p *Plan) paramsOfFunc(f *jen.File) {
	id := jen.Id
	f.Line()
	f.Comment("paramsOf returns the Params of freqs, attn and (multi-axis) axis, as verify")
	f.Comment("describes them.")
	f.Func().Id("paramsOf").Params(id("freqs").Index().Float64(), id("attn").Float64(), id("axis").Index().Uint8()).Id("Params").BlockFunc(func(g *jen.Group) {
		g.Id("p").Op(":=").Id("Params").Values(jen.Dict{id("Attn"): id("attn")})
		g.Copy(id("p").Dot("Freqs").Index(jen.Op(":")), id("freqs"))
		if p.Axes > 1 {
			g.Copy(id("p").Dot("Axis").Index(jen.Op(":")), id("axis"))
		}
		g.Return(id("p"))
	})
}
