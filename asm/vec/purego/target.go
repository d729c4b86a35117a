// Package purego is the pure Go implementation of the vector layer
// (asm/vec), rendered with jennifer: a block is one pair or one value, so
// a kernel is a head written out pair by pair, docs/contract.md §5 in plain
// Go, as highway's scalar target is its ops one lane wide. Each product is
// converted explicitly (float32(a*b)), which stops the compiler fusing it
// into a sum; the conversions of f16, bf16, e4m3, e5m2 and q8_0 are the
// codec families of package vec (codec.go, cache.go) lowered once a
// package into helper functions (narrowF16, widenE5M2, q8Quantize, …,
// codec.go here) that the kernels call.
//
// Array accesses go through array pointers, (*[HeadDim]T)(x), so that the
// constant indices are checked once a head. A run of more than unrollMax
// values loops over chunks of chunkPairs pairs (2·chunkPairs values), each
// chunk's values through array pointers of its own.
package purego

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// unrollMax is the longest run of values written out pair by pair (value
// by value): every head dimension in use (64…256) stays unrolled, and a
// 4096-wide head's function is a few hundred lines.
const unrollMax = 256

// chunkPairs is how many pairs one iteration of a chunk loop rotates.
const chunkPairs = 16

// Target emits pure Go kernels.
type Target struct {
	f     *vec.Func
	fn    *scope // the function's body
	help  *scope // the body of the block helper being emitted (Blocks32), or nil
	cur   *scope // the innermost open block
	names int    // for fresh identifiers
	regs  int    // the current block's value variables in use
	used  int    // the most any block used
	ints  map[string]bool
	funcs []jen.Code

	helpers map[string]bool // the codec helpers emitted
}

// New returns a target.
func New() *Target { return &Target{} }

// Level is "generic".
func (t *Target) Level() string { return "generic" }

// Funcs are the functions emitted so far.
func (t *Target) Funcs() []jen.Code { return t.funcs }

// scope is a block of statements, with the declarations its first uses
// of arrays ask for ahead of them.
type scope struct {
	pre, body []jen.Code
	outer     *scope
}

func (t *Target) emit(c ...jen.Code) { t.cur.body = append(t.cur.body, c...) }

func (t *Target) open() *scope {
	t.cur = &scope{outer: t.cur}
	return t.cur
}

func (t *Target) close() []jen.Code {
	s := t.cur
	t.cur = s.outer
	return append(s.pre, s.body...)
}

func (t *Target) fresh(p string) string {
	t.names++
	return fmt.Sprintf("%s%d", p, t.names)
}

// Func emits f.
func (t *Target) Func(f *vec.Func, body func()) {
	t.f, t.names, t.used, t.ints = f, 0, 0, map[string]bool{}
	t.fn = t.open()
	body()
	if t.used > 0 {
		var vs []jen.Code
		for i := range t.used {
			vs = append(vs, jen.Id(fmt.Sprintf("v%d", i)))
		}
		t.fn.pre = append([]jen.Code{jen.Var().List(vs...).Id(t.f.C().Go)}, t.fn.pre...)
	}
	var params []jen.Code
	for _, p := range f.Params() {
		params = append(params, jen.Id(p.Name).Op(p.Type))
	}
	fn := jen.Comment(fmt.Sprintf("%s %s, in pure Go.", f.Name(), f.Doc())).Line().Func().Id(f.Name()).Params(params...)
	if r := f.Results(); r != nil {
		fn.Params(jen.Id(r[0].Name).Op(r[0].Type))
	}
	t.funcs = append(t.funcs, fn.Block(t.close()...))
}

// ptr is an array of the function: a slice or pointer argument, a copy
// of one, or a local array.
type ptr struct {
	name  string
	n     int    // values its view spans
	kind  string // "slice", "pointer" (r, through unsafe) or "array" (a local)
	scope *scope // where its view is declared: where its position last changed
	view  string // its view in scope, once asked for
}

// Ptr is the argument name.
func (t *Target) Ptr(name string, e vec.Elem) vec.Arr {
	p := &ptr{name: name, n: t.f.Shape.HeadDim, kind: "slice", scope: t.fn}
	if e.Size == 1 { // a head of bytes: a block format's blocks, int8_per_token_head's scale and values
		p.n = e.HeadBytes(t.f.Shape.HeadDim)
	}
	switch name {
	case "r":
		p.n, p.kind = 2*t.f.Shape.RotaryDim, "pointer"
	case "rows":
		p.n = 2 * t.f.Shape.RotaryDim
	}
	return vec.Arr{Name: name, Elem: e, P: p}
}

// Int is the int argument name: itself the first time, then a copy taken
// at the function's start (a loop counts its count down).
func (t *Target) Int(name string) vec.Int {
	if !t.ints[name] {
		t.ints[name] = true
		return jen.Id(name)
	}
	c := t.fresh(name)
	t.fn.pre = append(t.fn.pre, jen.Id(c).Op(":=").Id(name))
	return jen.Id(c)
}

// Imm is k.
func (t *Target) Imm(k int) vec.Int { return jen.Lit(k) }

// MulInt is a·k.
func (t *Target) MulInt(a vec.Int, k int) vec.Int { return jen.Add(a.(jen.Code)).Op("*").Lit(k) }

// Copy is a new slice at a.
func (t *Target) Copy(a vec.Arr) vec.Arr {
	p := *a.P.(*ptr)
	c := t.fresh(p.name)
	t.emit(jen.Id(c).Op(":=").Id(p.name))
	p.name, p.scope, p.view = c, t.cur, ""
	a.P = &p
	return a
}

// Local is an array of n values of e, declared at the function's start
// (at the block helper's, in one).
func (t *Target) Local(n int, e vec.Elem) vec.Arr {
	name := t.fresh("scratch")
	s := t.fn
	if t.help != nil { // in a block helper (the nvfp4 family's scratch): its own
		s = t.help
	}
	s.pre = append(s.pre, jen.Var().Id(name).Index(jen.Lit(n)).Id(e.Go))
	return vec.Arr{Name: name, Elem: e, P: &ptr{name: name, n: n, kind: "array", scope: s, view: name}}
}

// viewOf is the array pointer through which a's values are read: declared
// ahead of the scope where a's position last changed, at its first use.
func (t *Target) viewOf(a vec.Arr) string {
	p := a.P.(*ptr)
	if p.view == "" {
		p.view = t.fresh("h")
		typ := jen.Op("*").Index(jen.Lit(p.n)).Id(a.Elem.Go)
		src := jen.Id(p.name)
		if p.kind == "pointer" {
			src = jen.Qual("unsafe", "Pointer").Call(src)
		}
		p.scope.pre = append(p.scope.pre, jen.Id(p.view).Op(":=").Parens(typ).Call(src))
	}
	return p.view
}

// Heads runs body over the n heads, one at a time.
func (t *Target) Heads(n vec.Int, walks []vec.Walk, _ *vec.Arr, body func(vec.Head)) {
	t.Loop(n, walks, body)
}

// Loop is for ; n > 0; n-- { body; the walks }, the last head's slices
// not moved on (they may end with it). The conditions on the lengths (true
// for the run-time's checked calls) let the compiler prove every access of
// a head in bounds: there is no bounds check.
func (t *Target) Loop(n vec.Int, walks []vec.Walk, body func(vec.Head)) {
	s := t.open()
	for _, w := range walks {
		p := w.A.P.(*ptr)
		p.scope, p.view = s, ""
	}
	body(&head{t: t})
	cond, last := jen.Add(n.(jen.Code)).Op(">").Lit(0), jen.Add(n.(jen.Code)).Op("==").Lit(1)
	var adv []jen.Code
	for _, w := range walks {
		p := w.A.P.(*ptr)
		step := jen.Lit(w.Step)
		if w.Stride != nil {
			step = jen.Add(w.Stride.(jen.Code))
		}
		cond.Op("&&").Len(jen.Id(p.name)).Op(">=").Lit(p.n)
		last.Op("||").Add(step).Op("<").Lit(0).Op("||").Add(step).Op(">").Len(jen.Id(p.name))
		adv = append(adv, jen.Id(p.name).Op("=").Id(p.name).Index(step.Clone().Op(":")))
	}
	stmts := append(t.close(), jen.If(last).Block(jen.Break()))
	t.emit(jen.For(jen.Op(";").Add(cond).Op(";").Add(n.(jen.Code)).Op("--")).Block(append(stmts, adv...)...))
	for _, w := range walks {
		p := w.A.P.(*ptr)
		p.scope, p.view = t.cur, ""
	}
}
