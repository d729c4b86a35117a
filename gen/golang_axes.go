package gen

import (
	"github.com/dave/jennifer/jen"
)

// axesAPI emits, for a multi-axis plan, Axes and Axis, ApplyAxes and
// ApplyInverseAxes, and mixRow, which assembles a token's table row from the
// rows of its positions: the values of pair i from the row of pos[Axis[i]].
// A token whose positions are all equal uses its row as it is, so it gets
// exactly the bits of 1-D RoPE at that position.
func (p *Plan) axesAPI(f *jen.File) {
	if p.Axes <= 1 {
		return
	}
	T, pkg := p.elemType(), p.Spec.Package
	id, lit := jen.Id, jen.Lit
	f.Line()
	f.Comment("Axes is the number of positions of a token: ApplyAxes takes Axes positions")
	f.Comment("per token (" + p.axesNames() + ").")
	f.Const().Id("Axes").Op("=").Lit(p.Axes)
	f.Line()
	f.Comment("Axis[i] is the axis whose position turns pair i: pair i of token j turns")
	f.Comment("by pos[j·Axes + Axis[i]]·Freqs[i].")
	f.Var().Id("Axis").Op("=").Index(id("RotaryDim").Op("/").Lit(2)).Uint8().ValuesFunc(func(g *jen.Group) {
		for _, a := range p.Axis {
			g.Lit(int(a))
		}
	})
	for _, e := range []struct{ name, kern, plain string }{
		{"ApplyAxes", "fwd", "ApplySeq"},
		{"ApplyInverseAxes", "inv", "ApplyInverseSeq"},
	} {
		fn := "Table." + e.name
		f.Line()
		f.Comment(e.name + " is " + e.plain + " for tokens with a position on each axis: token j of x,")
		f.Comment("len(x)/(len(pos)/Axes) values holding a whole number of heads, has the")
		f.Comment("positions pos[j·Axes : (j+1)·Axes], and pair i of each of its heads turns by")
		f.Comment("the position on axis Axis[i]. A token whose positions are all equal gets")
		f.Comment("exactly the bits " + e.plain + " gives at that position. Every position is")
		f.Comment("checked before x is touched.")
		f.Func().Params(id("t").Op("*").Id("Table")).Id(e.name).Params(id("x").Index().Id(T), id("pos").Index().Int32()).Block(
			jen.If(jen.Len(id("pos")).Op("%").Id("Axes").Op("!=").Lit(0)).Block(
				id("panicf").Call(lit(pkg+"."+fn+": len(pos) = %d: want a multiple of Axes (%d)"), jen.Len(id("pos")), id("Axes")),
			),
			id("n").Op(":=").Id("seqLen").Call(lit(fn), jen.Len(id("x")), jen.Len(id("pos")).Op("/").Id("Axes")),
			id("t").Dot("checkSeq").Call(lit(fn), id("pos")),
			id("t").Dot("axes").Call(id("active").Dot(e.kern), id("x"), id("pos"), id("n")),
		)
	}
	f.Line()
	f.Comment("axes applies kern to the tokens of x (n values each) with the rows their")
	f.Comment("positions pos (Axes a token) make. A token whose positions are all equal")
	f.Comment("uses its table row as is; any other gets mixed, the row of pairs taken")
	f.Comment("from the rows of their axes' positions, where only the axes whose")
	f.Comment("position differs from the last mixed token's are copied again (an image")
	f.Comment("row's patches share their time and height).")
	f.Func().Params(id("t").Op("*").Id("Table")).Id("axes").Params(id("kern").Add(p.kernType()), id("x").Index().Id(T), id("pos").Index().Int32(), id("n").Int()).Block(
		id("mixed").Op(":=").Id("rowPool").Dot("Get").Call().Assert(jen.Op("*").Id("row")),
		jen.Comment("have[a] is the position whose axis-a values mixed holds; −1: none."),
		jen.Var().Id("have").Index(id("Axes")).Int32(),
		jen.For(id("a").Op(":=").Range().Id("have")).Block(
			id("have").Index(id("a")).Op("=").Lit(-1),
		),
		jen.For(id("j").Op(":=").Lit(0), id("j").Op("<").Len(id("pos")).Op("/").Id("Axes"), id("j").Op("++")).Block(
			id("p").Op(":=").Id("pos").Index(id("j").Op("*").Id("Axes").Op(":").Parens(id("j").Op("+").Lit(1)).Op("*").Id("Axes")),
			id("r").Op(":=").Id("t").Dot("row").Call(jen.Int().Call(id("p").Index(lit(0)))),
			id("same").Op(":=").True(),
			jen.For(id("a").Op(":=").Lit(1), id("a").Op("<").Id("Axes"), id("a").Op("++")).Block(
				id("same").Op("=").Id("same").Op("&&").Id("p").Index(id("a")).Op("==").Id("p").Index(lit(0)),
			),
			jen.If(jen.Op("!").Id("same")).Block(
				jen.For(id("a").Op(":=").Range().Id("have")).Block(
					jen.If(id("p").Index(id("a")).Op("!=").Id("have").Index(id("a"))).Block(
						id("t").Dot("mixAxis").Call(id("mixed"), id("a"), id("t").Dot("row").Call(jen.Int().Call(id("p").Index(id("a"))))),
						id("have").Index(id("a")).Op("=").Id("p").Index(id("a")),
					),
				),
				id("r").Op("=").Id("mixed"),
			),
			id("kern").Call(id("x").Index(id("j").Op("*").Id("n").Op(":").Parens(id("j").Op("+").Lit(1)).Op("*").Id("n")), id("HeadDim"), id("n").Op("/").Id("HeadDim"), id("r")),
		),
		id("rowPool").Dot("Put").Call(id("mixed")),
	)

	// Runs of row indices whose pairs are on the same axis: one array
	// assignment each (inline moves, no call), element by element for
	// short runs.
	axisOfIndex := make([]int, p.RotaryDim)
	for i := 0; i < p.Half; i++ {
		a, b := p.Pair(i)
		axisOfIndex[a], axisOfIndex[b] = int(p.Axis[i]), int(p.Axis[i])
	}
	f.Line()
	f.Comment("mixAxis copies to dst, from src (the row of a position), the C and S values")
	f.Comment("of the pairs i with Axis[i] = a.")
	f.Func().Id("mixAxis").Params(id("dst").Op("*").Id("row"), id("a").Int(), id("src").Op("*").Id("row")).Block(
		jen.Switch(id("a")).BlockFunc(func(sw *jen.Group) {
			for axis := 0; axis < p.Axes; axis++ {
				sw.Case(lit(axis)).BlockFunc(func(g *jen.Group) {
					for _, half := range []int{0, p.RotaryDim} {
						for lo := 0; lo < p.RotaryDim; {
							a := axisOfIndex[lo]
							hi := lo + 1
							for hi < p.RotaryDim && axisOfIndex[hi] == a {
								hi++
							}
							if a == axis {
								if hi-lo <= 4 {
									for j := lo; j < hi; j++ {
										g.Id("dst").Index(lit(half + j)).Op("=").Id("src").Index(lit(half + j))
									}
								} else {
									arr := func(v string) *jen.Statement {
										return jen.Parens(jen.Op("*").Index(lit(hi - lo)).Id(p.computeType())).Call(id(v).Index(lit(half + lo).Op(":").Lit(half + hi)))
									}
									g.Op("*").Add(arr("dst")).Op("=").Op("*").Add(arr("src"))
								}
							}
							lo = hi
						}
					}
				})
			}
		}),
	)
}

// axesNames says in words what the axes of the plan's scheme are.
func (p *Plan) axesNames() string { return p.Spec.AxesDescription() }
