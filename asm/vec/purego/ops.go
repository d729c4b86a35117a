package purego

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// val is one lane: a Go expression of the compute type.
type val struct {
	e   jen.Code
	sum bool // a sum or difference: parenthesized inside another operation
	v   bool // a variable: no work to read again
	// big is set for a U32 constant of 2³¹ or more, which Gt32 writes
	// as its int32 (int32 of the uint32 literal does not compile).
	big bool
	k   uint32
}

func (x *val) operand() jen.Code {
	if x.sum {
		return jen.Parens(x.e)
	}
	return x.e
}

// conv is the compute type's conversion of e: it rounds a product, so the
// compiler cannot fuse it into a sum.
func (t *Target) conv(e jen.Code) *val { return &val{e: jen.Id(t.f.C().Go).Call(e)} }

func (t *Target) Mul(a, b vec.V) vec.V {
	return t.conv(jen.Add(a.(*val).operand()).Op("*").Add(b.(*val).operand()))
}

func (t *Target) Div(a, b vec.V) vec.V {
	return t.conv(jen.Add(a.(*val).operand()).Op("/").Add(b.(*val).operand()))
}

func (t *Target) Add(a, b vec.V) vec.V {
	return &val{e: jen.Add(a.(*val).e).Op("+").Add(b.(*val).operand()), sum: true}
}

func (t *Target) Sub(a, b vec.V) vec.V {
	return &val{e: jen.Add(a.(*val).e).Op("-").Add(b.(*val).operand()), sum: true}
}

// Const is v, an untyped constant.
func (t *Target) Const(v float64) vec.V { return &val{e: jen.Lit(v), v: true} }

// Broadcast is the argument name.
func (t *Target) Broadcast(name string, _ vec.Elem) vec.V { return &val{e: jen.Id(name), v: true} }

// Scalar is the argument name.
func (t *Target) Scalar(name string) vec.S { return jen.Id(name) }

// convert is e's conversion of the expression v to the compute type
// (widening) or to e (narrowing): nothing for float32 and float64, the
// minifloat family's helpers for the cache elements.
func (t *Target) widen(e vec.Elem, v jen.Code) jen.Code {
	if _, ok := vec.Minifloats[e]; ok {
		return t.widenCall(e, v)
	}
	return v
}

func (t *Target) narrow(e vec.Elem, v jen.Code) jen.Code {
	if _, ok := vec.Minifloats[e]; ok {
		return t.narrowCall(e, v)
	}
	return v
}

// materialize assigns the lanes xs that are expressions to block
// variables, in one statement, and returns them as variables.
func (t *Target) materialize(xs []vec.V) []vec.V {
	var lhs, rhs []jen.Code
	out := make([]vec.V, len(xs))
	for i, x := range xs {
		if x.(*val).v {
			out[i] = x
			continue
		}
		name := fmt.Sprintf("v%d", t.regs)
		t.regs++
		t.used = max(t.used, t.regs)
		lhs, rhs = append(lhs, jen.Id(name)), append(rhs, x.(*val).e)
		out[i] = &val{e: jen.Id(name), v: true}
	}
	if lhs != nil {
		t.emit(jen.List(lhs...).Op("=").List(rhs...))
	}
	return out
}

// sums are a norm's 8 partial sums: float64 variables.
type sums []string

func (t *Target) Acc() vec.V {
	var s sums
	var ids []jen.Code
	for range 8 {
		s = append(s, t.fresh("s"))
		ids = append(ids, jen.Id(s[len(s)-1]))
	}
	t.emit(jen.Var().List(ids...).Float64())
	return s
}

// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)).
func (t *Target) Reduce(a vec.V) vec.S {
	s := a.(sums)
	pair := func(i, j int) jen.Code { return jen.Parens(jen.Id(s[i]).Op("+").Id(s[j])) }
	return jen.Parens(jen.Add(pair(0, 4)).Op("+").Add(pair(2, 6))).Op("+").Parens(jen.Add(pair(1, 5)).Op("+").Add(pair(3, 7)))
}

// Scale is r = C(1/sqrt(ss/count + eps)), each float64 operation rounded.
func (t *Target) Scale(ss vec.S, count vec.Int, eps vec.S) vec.V {
	r := t.fresh("r")
	q := jen.Qual("math", "Sqrt").Call(jen.Parens(ss.(jen.Code)).Op("/").Float64().Call(count.(jen.Code)).Op("+").Add(eps.(jen.Code)))
	t.emit(jen.Id(r).Op(":=").Id(t.f.C().Go).Call(jen.Lit(1).Op("/").Add(q)))
	return &val{e: jen.Id(r), v: true}
}

// SumSquares adds the squares of a's values to the sums, eight values an
// iteration (lane k of value j ≡ k mod 8), the last ones written out.
func (h *head) SumSquares(acc vec.V, a vec.Arr) {
	t, s := h.t, acc.(sums)
	H, view := t.f.Shape.HeadDim, t.viewOf(a)
	// squares adds the squares of vs, values j0… of the head.
	squares := func(j0 int, vs []jen.Code) []jen.Code {
		var as, ws, out []jen.Code
		for i, v := range vs {
			as, ws = append(as, jen.Id(fmt.Sprintf("a%d", i))), append(ws, jen.Float64().Call(t.widen(a.Elem, v)))
		}
		out = append(out, jen.List(as...).Op(":=").List(ws...))
		for i := range vs {
			out = append(out, jen.Id(s[(j0+i)%8]).Op("+=").Float64().Call(jen.Add(as[i]).Op("*").Add(as[i])))
		}
		return out
	}
	full := H / 8
	if full > 0 {
		g := t.fresh("g")
		var vs []jen.Code
		for k := range 8 {
			vs = append(vs, jen.Id("v").Index(jen.Lit(k)))
		}
		body := append([]jen.Code{jen.Id("v").Op(":=").Parens(jen.Op("*").Index(jen.Lit(8)).Id(a.Elem.Go)).Call(jen.Id(view).Index(jen.Lit(8).Op("*").Id(g).Op(":")))}, squares(0, vs)...)
		t.emit(jen.For(jen.Id(g).Op(":=").Range().Lit(full)).Block(body...))
	}
	if H%8 != 0 {
		var vs []jen.Code
		for j := 8 * full; j < H; j++ {
			vs = append(vs, jen.Id(view).Index(jen.Lit(a.Off+j)))
		}
		t.emit(jen.Block(squares(8*full, vs)...))
	}
}

// blocks is for b := range blocks { fn(dst block b, src block b) }.
func (h *head) blocks(fn string, dst vec.Arr, dn int, src vec.Arr, sn int, blocks int, scaled bool) {
	t := h.t
	b := t.fresh("b")
	at := func(a vec.Arr, n int) jen.Code {
		return jen.Parens(jen.Op("*").Index(jen.Lit(n)).Id(a.Elem.Go)).Call(jen.Id(a.P.(*ptr).name).Index(jen.Lit(n).Op("*").Id(b).Op(":")))
	}
	args := []jen.Code{at(dst, dn), at(src, sn)}
	if scaled { // the helper takes the kernel's tensor scale
		args = append(args, jen.Id("scale"))
	}
	t.emit(jen.For(jen.Id(b).Op(":=").Range().Lit(blocks)).Block(jen.Id(fn).Call(args...)))
}
