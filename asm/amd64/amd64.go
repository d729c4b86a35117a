// Package amd64 emits the amd64 assembly of a ropegen kernel with avo, used
// as a library: one build.Context per package, compiled with pass.Compile and
// printed with avo's Go assembly printer.
//
// The emitter sees only the kernel's geometry (Kernel), never the spec: the
// frequencies live in the table, and the table row format is the one gen.Plan
// documents. Per position a row holds C[0:R] then S[0:R] (R = RotaryDim), and
// for every rotated index j with partner q the forward kernel computes
//
//	y_j = fl(fl(x_j·C[j]) + fl(x_q·S[j]))
//
// and the inverse the same with a subtraction: two rounded products and one
// rounded sum, no FMA (ROPE.md §5). The head dimension is known here, so the
// body over one head is fully unrolled and every tail (R not a multiple of
// the vector width) is decided at generation time; the only run-time loop is
// over heads.
package amd64

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// Kernel is the geometry of one generated kernel.
type Kernel struct {
	HeadDim   int  // values per head
	RotaryDim int  // leading values of each head that rotate
	NeoX      bool // pairs (i, i+R/2) instead of (2i, 2i+1)
}

// Func is one assembly function and its Go declaration.
type Func struct {
	Name    string // Go name, e.g. "applyAVX2"
	Stub    string // Go declaration, as avo derives it from the signature
	Inverse bool   // computes A·R^T·x rather than A·R·x
	Level   string // dispatch level, e.g. "avx2"
}

// Output is the result of Generate.
type Output struct {
	Asm   []byte // the .s file, beginning with the given header
	Funcs []Func
}

// elem is the size in bytes of a float32.
const elem = 4

// level is one instruction-set level: the widest register, how many vector
// registers there are, and whether tails use an opmask.
type level struct {
	name   string // dispatch level: "avx512", "avx2"
	suffix string // function name suffix
	width  int    // float32 lanes in the widest register
	regs   int    // vector registers
	masked bool   // one masked block for the tail (AVX-512) instead of narrower registers
}

var levels = []level{
	{name: "avx512", suffix: "AVX512", width: 16, regs: 32, masked: true},
	{name: "avx2", suffix: "AVX2", width: 8, regs: 16},
}

// Generate emits the kernels for k at every level, best level first.
// header replaces avo's own "Code generated" line; constraint is the file's
// build constraint in avo's "+build" form ("amd64,!purego").
func Generate(k Kernel, header, constraint string) (*Output, error) {
	if k.RotaryDim <= 0 || k.RotaryDim%2 != 0 || k.RotaryDim > k.HeadDim {
		return nil, fmt.Errorf("amd64: bad geometry %+v", k)
	}
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	sig := fmt.Sprintf("func(x []float32, r *[%d]float32)", 2*k.RotaryDim)

	var funcs []Func
	for _, l := range levels {
		for _, inverse := range []bool{false, true} {
			name, doc := "apply"+l.suffix, "forward (A·R_p·x)"
			if inverse {
				name, doc = "applyInverse"+l.suffix, "backward (A·R_pᵀ·x)"
			}
			c.Function(name)
			c.Attributes(attr.NOSPLIT)
			c.SignatureExpr(sig)
			c.Doc(fmt.Sprintf("%s rotates each head of x %s with table row r, using %s.", name, doc, strings.ToUpper(l.name)))
			c.Pragma("noescape")
			emitFunc(c, l, k, inverse)
			funcs = append(funcs, Func{Name: name, Inverse: inverse, Level: l.name})
		}
	}

	f, err := c.Result()
	if err != nil {
		return nil, fmt.Errorf("amd64: %w", err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, fmt.Errorf("amd64: %w", err)
	}
	src, err := printer.NewGoAsm(printer.Config{Name: "ropegen", Pkg: "rope"}).Print(f)
	if err != nil {
		return nil, fmt.Errorf("amd64: %w", err)
	}
	// avo's first line is its own "Code generated" comment: use ours.
	_, rest, _ := bytes.Cut(src, []byte("\n"))
	out := &Output{Asm: append([]byte(header+"\n"), rest...)}
	for i, fn := range f.Functions() {
		funcs[i].Stub = stub(fn)
		out.Funcs = append(out.Funcs, funcs[i])
	}
	return out, nil
}

// stub is the Go declaration of fn, with its doc comment and pragmas.
func stub(fn *ir.Function) string {
	var b strings.Builder
	for _, d := range fn.Doc {
		b.WriteString("// " + d + "\n")
	}
	for _, p := range fn.Pragmas {
		b.WriteString("//go:" + p.Directive + "\n")
	}
	b.WriteString(fn.Stub() + "\n")
	return b.String()
}

// block is a run of w consecutive rotated values starting at index j.
// Interleaved blocks hold whole pairs (w even) and find each partner by
// swapping adjacent lanes; neox blocks cover j…j+w−1 in the first half and
// j+R/2… in the second, each the other's partner.
type block struct{ j, w int }

// blocks splits one head's rotary part into runs for level l: full-width
// runs, then the tail as one masked run (AVX-512) or as narrower registers,
// widest first (AVX2: 4, 2, 1 values).
func blocks(l level, k Kernel) []block {
	span := k.RotaryDim
	if k.NeoX {
		span = k.RotaryDim / 2
	}
	var bs []block
	for j := 0; j < span; {
		w := l.width
		if !l.masked {
			for w > span-j {
				w /= 2
			}
		} else if w > span-j {
			w = span - j
		}
		bs = append(bs, block{j, w})
		j += w
	}
	return bs
}

// emitter emits one function at one level.
type emitter struct {
	c       *build.Context
	l       level
	k       Kernel
	inverse bool
	mask    reg.OpmaskVirtual // AVX-512: lanes of the tail block
	x, r    operand.Mem
}

// emitFunc emits a loop over the heads of x. The table row is the same for
// every head, so where its blocks fit in registers (leaving room for the
// working set) they are loaded once, before the loop.
//
// The neox kernel uses only the first half of the row: C[j+h] = C[j] and
// S[j+h] = −S[j], and fl(u·(−s)) = −fl(u·s) exactly, so the second half's
// y_j = fl(x_j·C[j]) ± fl(x_q·S[j]) is computed with the opposite sign.
func emitFunc(c *build.Context, l level, k Kernel, inverse bool) {
	e := &emitter{c: c, l: l, k: k, inverse: inverse}
	e.x = operand.Mem{Base: c.Load(c.Param("x").Base(), c.GP64())}
	n := c.Load(c.Param("x").Len(), c.GP64())
	e.r = operand.Mem{Base: c.Load(c.Param("r"), c.GP64())}

	bs := blocks(l, k)
	if l.masked && bs[len(bs)-1].w < l.width {
		e.mask = c.K()
		m := c.GP32()
		c.MOVL(operand.U32(1<<bs[len(bs)-1].w-1), m)
		c.KMOVW(m, e.mask)
	}
	// Preload the table when it fits: 2 registers a block, and at most half
	// the register file, so the heads' working set keeps the rest.
	var tab []tableRegs
	if 2*len(bs) <= l.regs/2 {
		for _, b := range bs {
			tab = append(tab, tableRegs{e.load(e.r.Offset(b.j*elem), b.w), e.load(e.sOff(b.j), b.w)})
		}
	}

	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	c.Label("head")
	for i, b := range bs {
		var t *tableRegs
		if tab != nil {
			t = &tab[i]
		}
		e.block(b, t)
	}
	c.ADDQ(operand.U32(k.HeadDim*elem), e.x.Base)
	c.SUBQ(operand.U32(k.HeadDim), n)
	c.JNZ(operand.LabelRef("head"))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// tableRegs holds a block's C and S values in registers.
type tableRegs struct{ c, s reg.VecVirtual }

func (e *emitter) sOff(j int) operand.Mem { return e.r.Offset((e.k.RotaryDim + j) * elem) }

// reg returns a register for w values: ZMM at AVX-512 (tails are masked),
// else YMM for 8 values and XMM for fewer.
func (e *emitter) reg(w int) reg.VecVirtual {
	switch {
	case e.l.width == 16:
		return e.c.ZMM()
	case w == 8:
		return e.c.YMM()
	}
	return e.c.XMM()
}

// load reads exactly w values at m: nothing past a head or a table row is
// read (masked-off lanes do not fault).
func (e *emitter) load(m operand.Mem, w int) reg.VecVirtual {
	d := e.reg(w)
	switch {
	case e.l.masked && w < e.l.width:
		e.c.VMOVUPS_Z(m, e.mask, d)
	case w >= 4:
		e.c.VMOVUPS(m, d)
	case w == 2:
		e.c.VMOVSD(m, d)
	default:
		e.c.VMOVSS(m, d)
	}
	return d
}

// store writes exactly w values of s at m.
func (e *emitter) store(s reg.VecVirtual, m operand.Mem, w int) {
	switch {
	case e.l.masked && w < e.l.width:
		e.c.VMOVUPS(s, e.mask, m)
	case w >= 4:
		e.c.VMOVUPS(s, m)
	case w == 2:
		e.c.VMOVSD(s, m)
	default:
		e.c.VMOVSS(s, m)
	}
}

// operand returns the table values at m for a block of w values: the
// preloaded register, the memory itself where a full-width read stays in the
// row, or a fresh exact-width load.
func (e *emitter) operand(pre reg.VecVirtual, m operand.Mem, w int) operand.Op {
	if pre != nil {
		return pre
	}
	full := w == e.l.width || (!e.l.masked && w == 4)
	if full {
		return m
	}
	return e.load(m, w)
}

// mul returns a·t.
func (e *emitter) mul(a reg.VecVirtual, t operand.Op, w int) reg.VecVirtual {
	d := e.reg(w)
	e.c.VMULPS(t, a, d)
	return d
}

// sum returns a+b, or a−b when sub.
func (e *emitter) sum(a, b reg.VecVirtual, sub bool) reg.VecVirtual {
	if sub {
		e.c.VSUBPS(b, a, a)
	} else {
		e.c.VADDPS(b, a, a)
	}
	return a
}

func (e *emitter) block(b block, t *tableRegs) {
	var pc, ps reg.VecVirtual
	if t != nil {
		pc, ps = t.c, t.s
	}
	x := func(j int) operand.Mem { return e.x.Offset(j * elem) }
	if !e.k.NeoX {
		e.c.Commentf("pairs %d…%d", b.j/2, (b.j+b.w)/2-1)
		a := e.load(x(b.j), b.w)
		q := e.reg(b.w)
		e.c.VPERMILPS(operand.U8(0xb1), a, q) // swap adjacent lanes: each value's partner
		y := e.sum(e.mul(a, e.operand(pc, e.r.Offset(b.j*elem), b.w), b.w), e.mul(q, e.operand(ps, e.sOff(b.j), b.w), b.w), e.inverse)
		e.store(y, x(b.j), b.w)
		return
	}
	h := e.k.RotaryDim / 2
	e.c.Commentf("pairs %d…%d", b.j, b.j+b.w-1)
	lo := e.load(x(b.j), b.w)
	hi := e.load(x(b.j+h), b.w)
	cj := e.operand(pc, e.r.Offset(b.j*elem), b.w)
	if _, ok := cj.(operand.Mem); ok && t == nil {
		cj = e.load(e.r.Offset(b.j*elem), b.w) // used twice: load once
	}
	sj := e.operand(ps, e.sOff(b.j), b.w)
	if _, ok := sj.(operand.Mem); ok && t == nil {
		sj = e.load(e.sOff(b.j), b.w)
	}
	ylo := e.sum(e.mul(lo, cj, b.w), e.mul(hi, sj, b.w), e.inverse)
	yhi := e.sum(e.mul(hi, cj, b.w), e.mul(lo, sj, b.w), !e.inverse)
	e.store(ylo, x(b.j), b.w)
	e.store(yhi, x(b.j+h), b.w)
}
