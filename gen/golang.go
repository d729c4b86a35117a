package gen

import (
	"bytes"

	"strconv"
	"strings"

	"golang.org/x/tools/imports"

	"github.com/dave/jennifer/jen"
	"github.com/ropegen/ropegen/spec"
)

const cpuPkg = "golang.org/x/sys/cpu"

// goFile renders a jennifer file behind the ropegen header and an optional
// build constraint.
func goFile(f *jen.File, header, constraint string) ([]byte, error) {
	var body bytes.Buffer
	if err := f.Render(&body); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(header + "\n\n")
	if constraint != "" {
		b.WriteString("//go:build " + constraint + "\n\n")
	}
	b.Write(body.Bytes())
	// Verbatim code (the conversions, sincos, sincosDD, the view checks) names standard
	// packages jennifer cannot see: let goimports add them (and format).
	return imports.Process("", b.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: false})
}

// float renders v as a Go float literal that round-trips exactly.
func float(v float64) jen.Code {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return jen.Op(s)
}

func (p *Plan) pairFormula() string {
	if p.Spec.Layout == spec.NeoX {
		return "(i, i+RotaryDim/2)"
	}
	return "(2i, 2i+1)"
}

// pairExprs are Go expressions for the indices (a, b) of pair i.
func (p *Plan) pairExprs() (a, b jen.Code) {
	if p.Spec.Layout == spec.NeoX {
		return jen.Id("i"), jen.Id("i").Op("+").Id("RotaryDim").Op("/").Lit(2)
	}
	return jen.Lit(2).Op("*").Id("i"), jen.Lit(2).Op("*").Id("i").Op("+").Lit(1)
}

// genericUnrollMax is the longest run of values the pure Go kernels write
// out one statement per pair or value: the rotary values, or a "to"
// kernel's pass-through values. A longer run loops over blocks of
// genericBlockPairs pairs. It is asm/amd64's unrollMax: every head dimension
// in use (64…256) stays fully unrolled, as before, and a 4096-wide head's
// rope_generic.go is a few hundred lines, not 8,000 (which took jennifer
// and gofmt half a second to render, and ran no faster).
const genericUnrollMax = 256

// genericBlockPairs is the number of pairs in one block of a looped kernel.
const genericBlockPairs = 16

// genericBody is one head's rotation, pair by pair, docs/contract.md §5 written out:
// read values from array in, widened by widen; write to array out through
// narrow. The explicit conversions of the products stop the compiler fusing
// them into the sums.
//
// For more than genericUnrollMax rotary values the pairs go in blocks of
// genericBlockPairs, with the per-pair statements written out once in a
// loop over the blocks (genericLoop), then the remaining pairs one by one.
// The per-pair arithmetic is the unrolled one, and no index is checked.
func (p *Plan) genericBody(inverse bool, in, out string, widen, narrow func(jen.Code) jen.Code) []jen.Code {
	C := p.computeType()
	minus, plus := "-", "+"
	if inverse {
		minus, plus = "+", "-"
	}
	prod := func(u, v jen.Code) *jen.Statement { return jen.Id(C).Call(jen.Add(u).Op("*").Add(v)) }
	// pair is one pair's two statements: x_a, x_b read from ia, ib, the
	// results written to oa, ob, with c and s the row's values.
	pair := func(ia, ib, oa, ob, c, s *jen.Statement) []jen.Code {
		return []jen.Code{
			jen.List(jen.Id("a"), jen.Id("b")).Op("=").List(widen(ia), widen(ib)),
			jen.List(oa, ob).Op("=").List(
				narrow(prod(jen.Id("a"), c.Clone()).Op(minus).Add(prod(jen.Id("b"), s.Clone()))),
				narrow(prod(jen.Id("b"), c.Clone()).Op(plus).Add(prod(jen.Id("a"), s.Clone()))),
			),
		}
	}
	at := func(arr string, i int) *jen.Statement { return jen.Id(arr).Index(jen.Lit(i)) }
	var body []jen.Code
	first := 0
	if p.RotaryDim > genericUnrollMax {
		body, first = p.genericLoop(in, out, pair)
	}
	for i := first; i < p.Half; i++ {
		a, b := p.Pair(i)
		body = append(body, pair(at(in, a), at(in, b), at(out, a), at(out, b), at("r", a), at("r", p.RotaryDim+b))...)
	}
	return body
}

// genericLoop is the loop over blocks of genericBody for a long head, and
// the number of pairs it rotates. spec.Interleaved, block k is the values
// [w·k, w·(k+1)) of the head, w = 2·genericBlockPairs, and the same of the
// row's C and S; neox, block k is the first members [w·k, w·(k+1)) of its
// pairs, w = genericBlockPairs, and the second members Half further on.
// Each block is an array pointer, (*[w]T)(h[w*k:]): k ranges over a
// constant count and every offset is constant, so the compiler proves the
// conversions and the constant indices into the blocks in bounds.
func (p *Plan) genericLoop(in, out string, pair func(ia, ib, oa, ob, c, s *jen.Statement) []jen.Code) ([]jen.Code, int) {
	T, C := p.elemType(), p.computeType()
	ot := T
	if in != out {
		ot = p.outDtype().goType
	}
	blocks := p.Half / genericBlockPairs
	neox := p.Spec.Layout == spec.NeoX
	w := 2 * genericBlockPairs
	if neox {
		w = genericBlockPairs
	}
	// block is (*[w]typ)(arr[lo+w*k:]).
	block := func(typ, arr string, lo int) jen.Code {
		off := jen.Lit(w).Op("*").Id("k")
		if lo != 0 {
			off = jen.Lit(lo).Op("+").Add(off)
		}
		return jen.Parens(jen.Op("*").Index(jen.Lit(w)).Id(typ)).Call(jen.Id(arr).Index(off.Op(":")))
	}
	el := func(arr string, j int) *jen.Statement { return jen.Id(arr).Index(jen.Lit(j)) }
	var stmts []jen.Code
	if neox {
		stmts = append(stmts, jen.List(jen.Id("cos"), jen.Id("sin")).Op(":=").List(block(C, "r", 0), block(C, "r", p.RotaryDim+p.Half)))
		stmts = append(stmts, jen.List(jen.Id(in+"a"), jen.Id(in+"b")).Op(":=").List(block(T, in, 0), block(T, in, p.Half)))
		if in != out {
			stmts = append(stmts, jen.List(jen.Id(out+"a"), jen.Id(out+"b")).Op(":=").List(block(ot, out, 0), block(ot, out, p.Half)))
		}
		for j := range w {
			stmts = append(stmts, pair(el(in+"a", j), el(in+"b", j), el(out+"a", j), el(out+"b", j), el("cos", j), el("sin", j))...)
		}
	} else {
		stmts = append(stmts, jen.List(jen.Id("cos"), jen.Id("sin")).Op(":=").List(block(C, "r", 0), block(C, "r", p.RotaryDim)))
		if in != out {
			stmts = append(stmts, jen.List(jen.Id(in+"v"), jen.Id(out+"v")).Op(":=").List(block(T, in, 0), block(ot, out, 0)))
		} else {
			stmts = append(stmts, jen.Id(in+"v").Op(":=").Add(block(T, in, 0)))
		}
		for j := 0; j < w; j += 2 {
			stmts = append(stmts, pair(el(in+"v", j), el(in+"v", j+1), el(out+"v", j), el(out+"v", j+1), el("cos", j), el("sin", j+1))...)
		}
	}
	return []jen.Code{jen.For(jen.Id("k").Op(":=").Range().Lit(blocks)).Block(stmts...)}, blocks * genericBlockPairs
}

// dynamic reports whether the plan's tables take their frequencies from
// their length (dynamic NTK).
func (p *Plan) dynamic() bool { return p.Spec.Scaling.Kind() == spec.ScalingDynamic }
