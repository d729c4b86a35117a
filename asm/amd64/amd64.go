// Package amd64 emits the amd64 assembly of a ropegen kernel with avo, used
// as a library: one build.Context per package, compiled with pass.Compile and
// printed with avo's Go assembly printer.
//
// The emitter sees only the kernel's geometry and types (Kernel), never the
// spec: the frequencies live in the table, and the table row format is the
// one gen.Plan documents. Per position a row holds C[0:R] then S[0:R]
// (R = RotaryDim) in the compute type, and for every rotated index j with
// partner q the forward kernel computes
//
//	y_j = fl(fl(x_j·C[j]) + fl(x_q·S[j]))
//
// and the inverse the same with a subtraction: two rounded products and one
// rounded sum, no FMA (docs/contract.md §5). f16 and bf16 values widen exactly to
// float32 on load and narrow with round-to-nearest-even on store. The head
// dimension is known here, so the body over one head is fully unrolled and
// every tail (R not a multiple of the vector width) is decided at generation
// time; the only run-time loop is over heads, except in heads longer than
// unrollMax values, whose full-width blocks loop over chunks.
//
// The kernels rotate n heads at a run-time element stride (docs/contract.md;
// the run-time's kernel ABI, rt/kernels.go), every name ending in the
// level's suffix and then the shape's (Kernel.Suffix):
//
//	func applyAVX2S(x []T, stride, n int, r *C)           // fwd; inv alike
//	func applyRowsAVX2S(x []T, stride, n int, rows []C)   // a row per head; inv alike
//	func applyToF16AVX2S(dst []O, dstStride int, src []T, srcStride int, n int, r *C)
//
// and, for each of the shape's QK-norms (Kernel.Norms, norm.go), the fused
// norm and rotation and the norm alone:
//
//	func applyNormRMSHeadAVX2S(x []T, stride, n int, r *C, w []C, eps float64)
//	func applyNormOnlyRMSHeadAVX2S(x []T, stride, n int, r *C, w []C, eps float64)
//
// where r points at a table row of 2R values.
//
// Head h is x[h·stride:][:HeadDim]; a rows kernel turns it by the table row
// rows[h·2R:][:2R] (one head of a head-major view along consecutive
// positions; len(rows) is not read). Only the rotary values [0, R) of each
// head are read and written in place; a "to" kernel writes exactly
// [0, HeadDim) of each dst head. n = 0 returns at once; len(x) is not read.
package amd64

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// Kernel is the geometry and the types of one shape's kernels.
type Kernel struct {
	HeadDim   int      // values per head
	RotaryDim int      // leading values of each head that rotate
	NeoX      bool     // pairs (i, i+R/2) instead of (2i, 2i+1)
	DType     string   // element type of x: "f32", "f64", "f16", "bf16"
	Suffix    string   // appended to every function name (after the level's): the shape's, e.g. "H128N"
	Tos       []string // also emit a "to" kernel narrowing f32 into each of these ("f16", "bf16")
	Norms     []Norm   // also emit "norm" and "normonly" kernels for each (norm.go)

	out  string // the "to" kernel being emitted: its dst type
	norm *Norm  // the norm kernel being emitted
}

// Func is one assembly function and its Go declaration.
type Func struct {
	Name    string // Go name, e.g. "applyAVX2H128N"
	Stub    string // Go declaration, as avo derives it from the signature
	Kind    string // "fwd" (A·R·x), "inv" (A·Rᵀ·x), "fwdrows" and "invrows" (a table row per head), "to" (forward, narrowed into dst), "fill" (table values), "norm" (QK-norm and rotation, norm.go), "normonly" (the QK-norm alone), a cache kernel's (cache.go) or "stream"
	Level   string // dispatch level, e.g. "avx2"
	Shape   string // the Kernel's Suffix
	Variant string // "to": the dst type; "norm", "normonly": the Norm (Norm.Tag); a cache kernel: the cache type
}

// Level is a dispatch level and the golang.org/x/sys/cpu X86 fields that
// must all be set for its functions to run.
type Level struct {
	Name     string
	Features []string
}

// Output is the result of Generate.
type Output struct {
	Asm    []byte // the .s file, beginning with the given header
	Funcs  []Func
	Levels []Level // best first
}

// level is one instruction-set level.
type level struct {
	name     string // dispatch level: "avx512", "avx2"
	suffix   string // function name suffix
	bytes    int    // bytes in the widest register
	regs     int    // vector registers
	masked   bool   // one masked block for the tail (AVX-512) instead of narrower registers
	twoHeads bool   // the head loop rotates two heads per iteration, sharing table loads
}

// At AVX2 two heads per iteration are 6–8% faster in L1 (BENCHMARKS.md); at
// AVX-512, where the table is preloaded, they gain nothing in L1 and lose
// ~25% on a sequence streaming from L3.
var levels = []level{
	{name: "avx512", suffix: "AVX512", bytes: 64, regs: 32, masked: true},
	{name: "avx2", suffix: "AVX2", bytes: 32, regs: 16, twoHeads: true},
}

// features are the cpu.X86 fields a level needs for a kernel's types.
func (l level) features(k Kernel) []string {
	half := func(d string) bool { return d == "f16" || d == "bf16" }
	if l.masked {
		f := []string{"HasAVX512F"}
		if half(k.DType) {
			f = append(f, "HasAVX512BW") // masked 16-bit loads (VMOVDQU16)
		}
		return f
	}
	f := []string{"HasAVX2"}
	if k.DType == "f16" || slices.Contains(k.Tos, "f16") {
		f = append(f, "HasF16C")
	}
	return f
}

// union adds to f the features of g it lacks, in g's order.
func union(f, g []string) []string {
	for _, x := range g {
		if !slices.Contains(f, x) {
			f = append(f, x)
		}
	}
	return f
}

// Generate emits the kernels of every shape of ks at every level, best
// level first, into one file: one avo context, so that the data they share
// (the fill kernels' constants) is emitted once. A level's features are
// those every shape needs. header replaces avo's own "Code generated" line;
// constraint is the file's build constraint in avo's "+build" form
// ("amd64,!purego").
func Generate(ks []Kernel, header, constraint string) (*Output, error) {
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	out := &Output{}
	var funcs []Func
	var fillTab operand.Mem
	for _, k := range ks {
		if k.RotaryDim <= 0 || k.RotaryDim%2 != 0 || k.RotaryDim > k.HeadDim {
			return nil, fmt.Errorf("amd64: bad geometry %+v", k)
		}
		x, ok := codecs[k.DType]
		if !ok {
			return nil, fmt.Errorf("amd64: unknown dtype %q", k.DType)
		}
		if x.compute().size == 4 && fillTab.Symbol.Name == "" {
			fillTab = emitFillTable(c)
		}
	}
	for _, l := range levels {
		lv := Level{Name: l.name}
		for _, k := range ks {
			lv.Features = union(lv.Features, l.features(k))
			funcs = append(funcs, emitShape(c, l, k, fillTab)...)
		}
		out.Levels = append(out.Levels, lv)
	}

	if err := finish(c, out, funcs, "rope", header); err != nil {
		return nil, err
	}
	return out, nil
}

// emitShape emits the kernels of the shape k at level l: fwd, inv, their
// rows forms, a "to" kernel per k.Tos, a norm and a normonly kernel per
// k.Norms and, for float32 tables, the fill kernel (fillTab its constants).
func emitShape(c *build.Context, l level, k Kernel, fillTab operand.Mem) []Func {
	x := codecs[k.DType]
	tab := x.compute()
	rowSig := "r *" + tab.goType
	var funcs []Func
	type kernel struct{ kind, out string }
	kinds := []kernel{{kind: "fwd"}, {kind: "inv"}, {kind: "fwdrows"}, {kind: "invrows"}}
	for _, o := range k.Tos {
		kinds = append(kinds, kernel{"to", o})
	}
	for _, kk := range kinds {
		var name, doc, sig string
		sfx := l.suffix + k.Suffix
		switch kk.kind {
		case "fwd":
			name, doc = "apply"+sfx, "rotates the n heads of x, stride values apart, forward (A·R_p·x)"
			sig = fmt.Sprintf("func(x []%s, stride, n int, %s)", x.goType, rowSig)
		case "inv":
			name, doc = "applyInverse"+sfx, "rotates the n heads of x, stride values apart, backward (A·R_pᵀ·x)"
			sig = fmt.Sprintf("func(x []%s, stride, n int, %s)", x.goType, rowSig)
		case "fwdrows":
			name, doc = "applyRows"+sfx, "rotates the n heads of x, stride values apart, forward (A·R_p·x)"
			sig = fmt.Sprintf("func(x []%s, stride, n int, rows []%s)", x.goType, tab.goType)
		case "invrows":
			name, doc = "applyInverseRows"+sfx, "rotates the n heads of x, stride values apart, backward (A·R_pᵀ·x)"
			sig = fmt.Sprintf("func(x []%s, stride, n int, rows []%s)", x.goType, tab.goType)
		case "to":
			name, doc = "applyTo"+strings.ToUpper(kk.out)+sfx, "rotates the n heads of src, srcStride values apart, forward into the heads of dst, dstStride values apart, narrowed to "+kk.out+","
			sig = fmt.Sprintf("func(dst []%s, dstStride int, src []%s, srcStride int, n int, %s)", codecs[kk.out].goType, x.goType, rowSig)
		}
		c.Function(name)
		c.Attributes(attr.NOSPLIT)
		c.SignatureExpr(sig)
		with := fmt.Sprintf("table row r (%d values)", 2*k.RotaryDim)
		if strings.HasSuffix(kk.kind, "rows") {
			with = fmt.Sprintf("head h's own table row, rows[h·%d:][:%d]", 2*k.RotaryDim, 2*k.RotaryDim)
		}
		c.Doc(fmt.Sprintf("%s %s with %s, using %s.", name, doc, with, strings.ToUpper(l.name)))
		c.Pragma("noescape")
		ek := k
		ek.out = kk.out
		emitFunc(c, l, ek, kk.kind)
		funcs = append(funcs, Func{Name: name, Kind: kk.kind, Level: l.name, Shape: k.Suffix, Variant: kk.out})
	}
	for i := range k.Norms {
		nk := k
		nk.norm = &k.Norms[i]
		funcs = append(funcs, emitNormFunc(c, l, nk, "norm"), emitNormFunc(c, l, nk, "normonly"))
	}
	if tab.size == 4 {
		name := fillName(l) + k.Suffix
		c.Function(name)
		c.Attributes(attr.NOSPLIT)
		c.SignatureExpr(fillSig())
		c.Doc(fmt.Sprintf("%s writes the table values of pairs [0, n) of row r, n = %d, using %s: fillRow's bits.", name, k.RotaryDim/2-k.RotaryDim/2%(l.bytes/8), strings.ToUpper(l.name)))
		c.Pragma("noescape")
		emitFill(c, l, k, fillTab)
		funcs = append(funcs, Func{Name: name, Kind: "fill", Level: l.name, Shape: k.Suffix})
	}
	return funcs
}

// finish compiles the functions of c (funcs describes them, in order) and
// sets out.Asm, under header instead of avo's own first line, and
// out.Funcs, each with the stub avo derived.
func finish(c *build.Context, out *Output, funcs []Func, pkg, header string) error {
	f, err := c.Result()
	if err != nil {
		return fmt.Errorf("amd64: %w", err)
	}
	if err := pass.Compile.Execute(f); err != nil {
		return fmt.Errorf("amd64: %w", err)
	}
	src, err := printer.NewGoAsm(printer.Config{Name: "ropegen", Pkg: pkg}).Print(f)
	if err != nil {
		return fmt.Errorf("amd64: %w", err)
	}
	// avo's first line is its own "Code generated" comment: use ours.
	_, rest, _ := bytes.Cut(src, []byte("\n"))
	out.Asm = append([]byte(header+"\n"), rest...)
	for i, fn := range f.Functions() {
		funcs[i].Stub = stub(fn)
		out.Funcs = append(out.Funcs, funcs[i])
	}
	return nil
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

// block is a run of w consecutive values starting at index j. Interleaved
// blocks hold whole pairs (w even) and find each partner by swapping adjacent
// lanes; neox blocks cover j…j+w−1 in the first half and j+R/2… in the
// second, each the other's partner; copy blocks (the pass-through values of a
// "to" kernel) are only converted.
type block struct{ j, w int }

// split cuts span values starting at index start into runs of at most lanes
// values: full-width runs, then the tail as one masked run or as narrower
// registers, widest first.
func split(start, span, lanes int, masked bool) []block {
	var bs []block
	for j := 0; j < span; {
		w := lanes
		if !masked {
			for w > span-j {
				w /= 2
			}
		} else if w > span-j {
			w = span - j
		}
		bs = append(bs, block{start + j, w})
		j += w
	}
	return bs
}

// emitter emits one function at one level.
type emitter struct {
	c       *build.Context
	l       level
	k       Kernel
	kind    string
	in, out codec // how x (src) is read and y (dst) written
	tab     codec // the table's values: the compute type
	lanes   int   // compute values in the widest register
	masks   map[int]reg.OpmaskVirtual
	consts  map[uint32]reg.VecVirtual
	src     operand.Mem   // the current head of x, or of src for "to"
	dst     operand.Mem   // the current head of x, or of dst for "to"
	srcStep reg.GPVirtual // bytes from one head of src to the next
	dstStep reg.GPVirtual // bytes from one head of dst to the next
	// src2 and dst2 hold the second head of a two-head iteration in a
	// register of its own (Base nil otherwise): a store addressed
	// base+index cannot use the simple store AGU (port 7 on Intel cores
	// since Haswell), which cost AVX2's prefill 5–7%.
	src2, dst2 operand.Mem
	r          operand.Mem
}

// at returns the address of value j of head o (0 or 1) after the current
// one: the second head of an iteration is addressed as base+step.
func at(m operand.Mem, step reg.GPVirtual, o, j, size int) operand.Mem {
	m = m.Offset(j * size)
	if o > 0 {
		m.Index, m.Scale = step, 1
	}
	return m
}

func (e *emitter) srcAt(o, j int) operand.Mem {
	if o > 0 && e.src2.Base != nil {
		return e.src2.Offset(j * e.in.size)
	}
	return at(e.src, e.srcStep, o, j, e.in.size)
}

func (e *emitter) dstAt(o, j int) operand.Mem {
	if o > 0 && e.dst2.Base != nil {
		return e.dst2.Offset(j * e.out.size)
	}
	return at(e.dst, e.dstStep, o, j, e.out.size)
}

// toBytes turns the element stride in s into bytes for elements of size
// bytes.
func (e *emitter) toBytes(s reg.GPVirtual, size int) {
	shift := map[int]uint8{2: 1, 4: 2, 8: 3}[size]
	e.c.SHLQ(operand.U8(shift), s)
}

// emitFunc emits a loop over the n heads of x, stride values apart (for
// "to": the heads of src, srcStride apart, into those of dst, dstStride
// apart). n = 0 returns at once. The table row is the same for every head,
// so where its blocks fit in registers (leaving room for the working set)
// they are loaded once, before the loop; otherwise, at a level with
// twoHeads, the loop rotates two heads per iteration, the second addressed
// as base+stride, and loads each table block once for both (then the odd
// head, if any, alone). Per head the instructions are those of a kernel with
// a fixed stride: only the pointer updates use the run-time stride.
//
// The neox kernel uses only the first half of the row: C[j+h] = C[j] and
// S[j+h] = −S[j], and fl(u·(−s)) = −fl(u·s) exactly, so the second half's
// y_j = fl(x_j·C[j]) ± fl(x_q·S[j]) is computed with the opposite sign.
//
// The rows kinds ("fwdrows", "invrows") are fwd and inv with a table row
// per head, rows[h·2R:][:2R] for head h: the table pointer advances with
// the head pointer, so nothing is preloaded and each head is rotated alone.
func emitFunc(c *build.Context, l level, k Kernel, kind string) {
	rows := strings.HasSuffix(kind, "rows")
	kind = strings.TrimSuffix(kind, "rows")
	if rows {
		l.twoHeads = false
	}
	in := codecs[k.DType]
	e := &emitter{c: c, l: l, k: k, kind: kind, in: in, out: in, tab: in.compute(),
		masks: map[int]reg.OpmaskVirtual{}, consts: map[uint32]reg.VecVirtual{}}
	e.lanes = l.bytes / e.tab.size
	n := c.GP64()
	c.Load(c.Param("n"), n)
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	if kind == "to" {
		e.out = codecs[k.out]
		e.dst = operand.Mem{Base: c.Load(c.Param("dst").Base(), c.GP64())}
		e.dstStep = c.Load(c.Param("dstStride"), c.GP64()).(reg.GPVirtual)
		e.src = operand.Mem{Base: c.Load(c.Param("src").Base(), c.GP64())}
		e.srcStep = c.Load(c.Param("srcStride"), c.GP64()).(reg.GPVirtual)
		e.toBytes(e.dstStep, e.out.size)
		e.toBytes(e.srcStep, e.in.size)
	} else {
		e.src = operand.Mem{Base: c.Load(c.Param("x").Base(), c.GP64())}
		e.dst = e.src
		e.srcStep = c.Load(c.Param("stride"), c.GP64()).(reg.GPVirtual)
		e.dstStep = e.srcStep
		e.toBytes(e.srcStep, e.in.size)
	}
	if rows {
		e.r = operand.Mem{Base: c.Load(c.Param("rows").Base(), c.GP64())}
	} else {
		e.r = operand.Mem{Base: c.Load(c.Param("r"), c.GP64())}
	}

	span := k.RotaryDim
	if k.NeoX {
		span /= 2
	}
	bs := split(0, span, e.lanes, l.masked)
	var copies []block
	if kind == "to" {
		copies = split(k.RotaryDim, k.HeadDim-k.RotaryDim, e.lanes, l.masked)
	}
	for _, b := range append(append([]block{}, bs...), copies...) {
		e.mask(b.w) // create masks and constants before the loop
	}
	e.in.setup(e)
	e.out.setup(e)
	// Preload the table when it fits: 2 registers a block, and at most half
	// the register file, so the heads' working set keeps the rest.
	var tab []tableRegs
	if !rows && 2*len(bs)+len(e.consts) <= l.regs/2 {
		for _, b := range bs {
			tab = append(tab, tableRegs{e.tload(e.cOff(b.j), b.w), e.tload(e.sOff(b.j), b.w)})
		}
	}

	// heads emits the body for h heads at once and advances past them.
	heads := func(h int) {
		if h == 2 {
			second := func(m operand.Mem, step reg.GPVirtual) operand.Mem {
				p := c.GP64()
				c.LEAQ(operand.Mem{Base: m.Base, Index: step, Scale: 1}, p)
				return operand.Mem{Base: p}
			}
			e.src2 = second(e.src, e.srcStep)
			e.dst2 = e.src2
			if kind == "to" {
				e.dst2 = second(e.dst, e.dstStep)
			}
		}
		if tab != nil || !e.loop(bs, fmt.Sprintf("rotate%d", h), true, func(b block) { e.block(b, nil, h) }) {
			for i, b := range bs {
				var t *tableRegs
				if tab != nil {
					t = &tab[i]
				}
				e.block(b, t, h)
			}
		}
		pass := func(o int, b block) {
			c.Commentf("values %d…%d pass through", b.j, b.j+b.w-1)
			e.store(e.load(e.srcAt(o, b.j), b.w), e.dstAt(o, b.j), b.w)
		}
		if !e.loop(copies, fmt.Sprintf("pass%d", h), false, func(b block) {
			for o := range h {
				pass(o, b)
			}
		}) {
			for o := range h {
				for _, b := range copies {
					pass(o, b)
				}
			}
		}
		advance := func(p operand.Mem, step reg.GPVirtual) {
			if h == 2 {
				c.LEAQ(operand.Mem{Base: p.Base, Index: step, Scale: 2}, p.Base)
			} else {
				c.ADDQ(step, p.Base)
			}
		}
		e.src2, e.dst2 = operand.Mem{}, operand.Mem{}
		advance(e.src, e.srcStep)
		if rows {
			c.ADDQ(operand.U32(2*k.RotaryDim*e.tab.size), e.r.Base)
		}
		if kind == "to" {
			advance(e.dst, e.dstStep)
		}
		if h == 1 {
			c.DECQ(n)
		} else {
			c.SUBQ(operand.U8(h), n)
		}
	}
	if l.twoHeads {
		c.CMPQ(n, operand.U8(2))
		c.JB(operand.LabelRef("head"))
		c.Label("pair")
		c.Comment("two heads at a time")
		heads(2)
		c.CMPQ(n, operand.U8(2))
		c.JAE(operand.LabelRef("pair"))
		c.TESTQ(n, n)
		c.JZ(operand.LabelRef("done"))
	}
	c.Label("head")
	heads(1)
	c.JNZ(operand.LabelRef("head"))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// unrollMax is the longest run of values (the rotary values of a head, or
// the pass-through values a "to" kernel copies) emitted fully unrolled.
// Longer runs loop over chunks of loopBlocks full-width blocks: avo's
// register allocation takes time quadratic in the length of a function
// (HeadDim 4096, fully unrolled: ~4 s for f32, ~20 s for neox with a bf16
// "to" kernel), while a loop keeps every function as short as a head of a
// few hundred values. 256 keeps every head dimension in use (64…256)
// unrolled, with no loop overhead.
const unrollMax = 256

// loopBlocks is how many full-width blocks one iteration of a loop over a
// long run handles: at AVX2 f32, 64 values of each head, so the pointer
// updates and the branch are a few instructions among ~60 per head.
const loopBlocks = 8

// loop emits body for the blocks bs, consecutive, in a run-time loop when
// they span more than unrollMax values: the leading full-width blocks run
// loopBlocks at a time with src, dst (and, when table, r) moved to the
// current chunk, so that body sees blocks indexed from the chunk's start;
// the rest follows unrolled as usual. It reports whether it emitted
// anything; if not, the caller unrolls bs itself. The loop uses label.
func (e *emitter) loop(bs []block, label string, table bool, body func(block)) bool {
	if len(bs) == 0 {
		return false
	}
	values := bs[len(bs)-1].j + bs[len(bs)-1].w - bs[0].j
	if table && e.k.NeoX {
		values *= 2 // each block also rotates its partners R/2 on
	}
	if values <= unrollMax {
		return false
	}
	full := 0
	for full < len(bs) && bs[full].w == e.lanes {
		full++
	}
	times := full / loopBlocks
	if times < 2 {
		return false
	}
	c := e.c
	start, step := bs[0].j, loopBlocks*e.lanes
	src, dst, r, src2, dst2 := e.src, e.dst, e.r, e.src2, e.dst2
	move := func(m operand.Mem, size int) operand.Mem {
		p := c.GP64()
		if start == 0 {
			c.MOVQ(m.Base, p)
		} else {
			c.LEAQ(m.Offset(start*size), p)
		}
		return operand.Mem{Base: p}
	}
	e.src = move(src, e.in.size)
	e.dst = e.src
	if e.kind == "to" {
		e.dst = move(dst, e.out.size)
	}
	if table {
		e.r = move(r, e.tab.size)
	}
	if src2.Base != nil {
		e.src2 = move(src2, e.in.size)
		e.dst2 = e.src2
		if e.kind == "to" {
			e.dst2 = move(dst2, e.out.size)
		}
	}
	count := c.GP64()
	c.MOVQ(operand.U32(times), count)
	c.Label(label)
	c.Commentf("values %d…%d, %d at a time: indices from the current %d", start, start+times*step-1, step, step)
	for i := range loopBlocks {
		body(block{i * e.lanes, e.lanes})
	}
	c.ADDQ(operand.U32(step*e.in.size), e.src.Base)
	if e.kind == "to" {
		c.ADDQ(operand.U32(step*e.out.size), e.dst.Base)
	}
	if table {
		c.ADDQ(operand.U32(step*e.tab.size), e.r.Base)
	}
	if src2.Base != nil {
		c.ADDQ(operand.U32(step*e.in.size), e.src2.Base)
		if e.kind == "to" {
			c.ADDQ(operand.U32(step*e.out.size), e.dst2.Base)
		}
	}
	c.DECQ(count)
	c.JNZ(operand.LabelRef(label))
	e.src, e.dst, e.r, e.src2, e.dst2 = src, dst, r, src2, dst2
	for _, b := range bs[times*loopBlocks:] {
		body(b)
	}
	return true
}

// tableRegs holds a block's C and S values in registers.
type tableRegs struct{ c, s reg.VecVirtual }

func (e *emitter) cOff(j int) operand.Mem { return e.r.Offset(j * e.tab.size) }
func (e *emitter) sOff(j int) operand.Mem { return e.r.Offset((e.k.RotaryDim + j) * e.tab.size) }

// reg returns a register for w compute values: ZMM at AVX-512 (tails are
// masked), else the narrowest that holds them.
func (e *emitter) reg(w int) reg.VecVirtual {
	switch {
	case e.l.masked:
		return e.c.ZMM()
	case w*e.tab.size > 16:
		return e.c.YMM()
	}
	return e.c.XMM()
}

// full reports whether a block of w values fills its register, so that a
// memory operand of the register's width reads exactly the block.
func (e *emitter) full(w int) bool {
	b := w * e.tab.size
	if e.l.masked {
		return w == e.lanes
	}
	return b == 32 || b == 16
}

// mask returns the opmask selecting the low w lanes (AVX-512 tails only).
func (e *emitter) mask(w int) reg.OpmaskVirtual {
	if !e.l.masked || w == e.lanes {
		return nil
	}
	if k, ok := e.masks[w]; ok {
		return k
	}
	k := e.c.K()
	g := e.c.GP32()
	e.c.MOVL(operand.U32(1<<w-1), g)
	e.c.KMOVW(g, k)
	e.masks[w] = k
	return k
}

// constant returns a register holding v in every 32-bit lane, made once per
// function.
func (e *emitter) constant(v uint32) reg.VecVirtual {
	if r, ok := e.consts[v]; ok {
		return r
	}
	g := e.c.GP32()
	e.c.MOVL(operand.U32(v), g)
	r := e.reg(e.lanes)
	if e.l.masked {
		e.c.VPBROADCASTD(g, r)
	} else {
		e.c.VMOVD(g, r.AsX())
		e.c.VPBROADCASTD(r.AsX(), r)
	}
	e.consts[v] = r
	return r
}

// load reads w values at m and returns them widened to the compute type.
// Nothing past the run is read (masked-off lanes do not fault).
func (e *emitter) load(m operand.Mem, w int) reg.VecVirtual { return e.in.load(e, m, w) }

// store narrows w values of v to the output type and writes exactly them.
func (e *emitter) store(v reg.VecVirtual, m operand.Mem, w int) { e.out.store(e, v, m, w) }

// tload reads w table values at m.
func (e *emitter) tload(m operand.Mem, w int) reg.VecVirtual { return e.tab.load(e, m, w) }

// operand returns the table values at m for a block of w values: the
// preloaded register, the memory itself where a register-wide read stays in
// the run, or a fresh exact-width load.
func (e *emitter) operand(pre reg.VecVirtual, m operand.Mem, w int) operand.Op {
	if pre != nil {
		return pre
	}
	if e.full(w) {
		return m
	}
	return e.tload(m, w)
}

// mul returns a·t.
func (e *emitter) mul(a reg.VecVirtual, t operand.Op, w int) reg.VecVirtual {
	d := e.reg(w)
	if e.tab.size == 8 {
		e.c.VMULPD(t, a, d)
	} else {
		e.c.VMULPS(t, a, d)
	}
	return d
}

// sum returns a+b, or a−b when sub.
func (e *emitter) sum(a, b reg.VecVirtual, sub bool) reg.VecVirtual {
	switch {
	case e.tab.size == 8 && sub:
		e.c.VSUBPD(b, a, a)
	case e.tab.size == 8:
		e.c.VADDPD(b, a, a)
	case sub:
		e.c.VSUBPS(b, a, a)
	default:
		e.c.VADDPS(b, a, a)
	}
	return a
}

// swap returns a with adjacent lanes exchanged: each value's partner.
func (e *emitter) swap(a reg.VecVirtual, w int) reg.VecVirtual {
	q := e.reg(w)
	if e.tab.size == 8 {
		e.c.VPERMILPD(operand.U8(0x55), a, q)
	} else {
		e.c.VPERMILPS(operand.U8(0xb1), a, q)
	}
	return q
}

// block rotates the block b of h consecutive heads (1 or 2). The table
// values come from t when preloaded, else from memory: as operands for one
// head, loaded once into registers for two.
func (e *emitter) block(b block, t *tableRegs, h int) {
	var pc, ps reg.VecVirtual
	if t != nil {
		pc, ps = t.c, t.s
	}
	inverse := e.kind == "inv"
	src, dst := e.srcAt, e.dstAt
	if !e.k.NeoX {
		e.c.Commentf("pairs %d…%d", b.j/2, (b.j+b.w)/2-1)
		var cop, sop operand.Op
		if h > 1 && t == nil {
			cop, sop = e.tload(e.cOff(b.j), b.w), e.tload(e.sOff(b.j), b.w)
		} else {
			cop, sop = e.operand(pc, e.cOff(b.j), b.w), e.operand(ps, e.sOff(b.j), b.w)
		}
		var ys []reg.VecVirtual
		for o := range h {
			a := e.load(src(o, b.j), b.w)
			q := e.swap(a, b.w)
			ys = append(ys, e.sum(e.mul(a, cop, b.w), e.mul(q, sop, b.w), inverse))
		}
		for o, y := range ys {
			e.store(y, dst(o, b.j), b.w)
		}
		return
	}
	half := e.k.RotaryDim / 2
	e.c.Commentf("pairs %d…%d", b.j, b.j+b.w-1)
	cj, sj := operand.Op(pc), operand.Op(ps)
	if t == nil { // used twice: load once
		cj, sj = e.tload(e.cOff(b.j), b.w), e.tload(e.sOff(b.j), b.w)
	}
	for o := range h {
		lo := e.load(src(o, b.j), b.w)
		hi := e.load(src(o, b.j+half), b.w)
		ylo := e.sum(e.mul(lo, cj, b.w), e.mul(hi, sj, b.w), inverse)
		yhi := e.sum(e.mul(hi, cj, b.w), e.mul(lo, sj, b.w), !inverse)
		e.store(ylo, dst(o, b.j), b.w)
		e.store(yhi, dst(o, b.j+half), b.w)
	}
}
