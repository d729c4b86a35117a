// Package amd64 is the AVX-512 and AVX2 implementation of the vector layer
// (asm/vec), through avo used as a library: one build.Context for every
// kernel of a package (its DATA symbols emitted once), compiled with
// pass.Compile and printed with avo's Go assembly printer.
//
// A head is fully unrolled: its blocks are split at generation time into
// full-width registers and a tail, one masked register at AVX-512 (masked
// lanes neither read nor fault) or narrower registers and scalar moves at
// AVX2, so that no byte outside a head is touched. A run longer than
// unrollMax values loops over chunks of loopBlocks registers instead. The
// hooks of a level: AVX2 rotates two heads per iteration, sharing each
// block's table loads, the second head addressed through a register of its
// own (a store addressed base+index cannot use the simple store AGU, port 7
// on Intel cores since Haswell, which cost AVX2's prefill 5–7%); a shared
// table row is kept in registers across heads when it fits in half the
// register file; a head-scope norm takes 8 (4) heads through each pass.
// The cache codecs are package vec's families over this target's vec.Codec
// and vec.Quantizer operations (codecops.go, quantizer.go), F16C its
// Native hook for f16.
package amd64

import (
	"fmt"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// Level is one instruction-set level.
type Level struct {
	Name     string // "avx512", "avx2"
	bytes    int    // bytes in the widest register
	regs     int    // vector registers
	masked   bool   // tails are one masked register (AVX-512)
	twoHeads bool   // heads with a shared row go two per iteration
}

// At AVX2 two heads per iteration are 6–8% faster in L1 (BENCHMARKS.md); at
// AVX-512, where the table is preloaded, they gain nothing in L1 and lose
// ~25% on a sequence streaming from L3.
var (
	AVX512 = Level{Name: "avx512", bytes: 64, regs: 32, masked: true}
	AVX2   = Level{Name: "avx2", bytes: 32, regs: 16, twoHeads: true}
	Levels = []Level{AVX512, AVX2}
)

// features maps an instruction set extension, as avo names the ones a
// function requires, to the golang.org/x/sys/cpu X86 field that guarantees
// it: "" for amd64's baseline and for AVX, which AVX2 and AVX-512F imply
// (the level's own field is always checked).
var features = map[string]string{
	"SSE": "", "SSE2": "", "CMOV": "", "AVX": "",
	"AVX2": "HasAVX2", "F16C": "HasF16C",
	"AVX512F": "HasAVX512F", "AVX512BW": "HasAVX512BW", "AVX512VL": "HasAVX512VL",
}

// base is the cpu.X86 field of the level itself.
func (l Level) base() string {
	if l.masked {
		return "HasAVX512F"
	}
	return "HasAVX2"
}

// Target emits kernels at one level into a build.Context.
type Target struct {
	c  *build.Context
	l  Level
	f  *vec.Func
	fn *ir.Function

	mark   int // where hoisted constants go in fn.Nodes; −1 before the first loop
	labels int
	consts map[uint64]reg.VecVirtual
	masks  map[int]reg.OpmaskVirtual
	cur    map[*ptr]operand.Mem  // a pointer's current address inside a chunk loop
	pre    map[int][2]*value     // the shared row's preloaded blocks, by first pair
	scaled map[reg.GPVirtual]int // strides turned into bytes, by element size
	tab    *table                // the constants read from memory
}

// New returns a target emitting into c at level l; tab holds the constants
// its kernels read from memory, shared by the targets of c.
func New(c *build.Context, l Level, tab *table) *Target { return &Target{c: c, l: l, tab: tab} }

// Level is l's name.
func (t *Target) Level() string { return t.l.Name }

// ptr is a pointer: a register, or the stack (Base nil: a Local).
type ptr struct{ m operand.Mem }

// lanes is how many values of the compute type the widest register holds.
func (t *Target) lanes() int { return t.l.bytes / t.f.C().Size }

// Func emits f.
func (t *Target) Func(f *vec.Func, body func()) {
	t.f, t.mark, t.labels = f, -1, 0
	t.consts, t.masks, t.cur, t.pre = map[uint64]reg.VecVirtual{}, map[int]reg.OpmaskVirtual{}, map[*ptr]operand.Mem{}, nil
	t.scaled = map[reg.GPVirtual]int{}
	c := t.c
	c.Function(f.Name())
	file, _ := c.Result()
	fns := file.Functions()
	t.fn = fns[len(fns)-1]
	c.SignatureExpr(f.Signature())
	body()
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
	if t.fn.LocalSize <= nosplitFrame {
		t.fn.Attributes = attr.NOSPLIT
	}
}

// nosplitFrame is the largest frame a NOSPLIT function here may have:
// scratch heads (a norm after the rotation) need a stack check.
const nosplitFrame = 256

// hoist emits what emit emits at the function's mark, before its first
// loop: the constants and masks a loop body asks for are made once.
func (t *Target) hoist(emit func()) {
	n := len(t.fn.Nodes)
	emit()
	if t.mark < 0 {
		return
	}
	moved := append([]ir.Node(nil), t.fn.Nodes[n:]...)
	rest := append(moved, t.fn.Nodes[t.mark:n]...)
	t.fn.Nodes = append(t.fn.Nodes[:t.mark], rest...)
	t.mark += len(moved)
}

// startLoop sets the mark before the function's first loop.
func (t *Target) startLoop() {
	if t.mark < 0 {
		t.mark = len(t.fn.Nodes)
	}
}

func (t *Target) label(p string) string {
	t.labels++
	return fmt.Sprintf("%s%d", p, t.labels)
}

// Ptr is the pointer argument name.
func (t *Target) Ptr(name string, e vec.Elem) vec.Arr {
	p := t.c.Param(name)
	if _, err := p.Base().Resolve(); err == nil {
		return vec.Arr{Name: name, Elem: e, P: &ptr{operand.Mem{Base: t.c.Load(p.Base(), t.c.GP64())}}}
	}
	return vec.Arr{Name: name, Elem: e, P: &ptr{operand.Mem{Base: t.c.Load(p, t.c.GP64())}}}
}

// Int is the int argument name.
func (t *Target) Int(name string) vec.Int { return t.c.Load(t.c.Param(name), t.c.GP64()) }

// Imm is k.
func (t *Target) Imm(k int) vec.Int { return operand.U32(k) }

// MulInt is a·k.
func (t *Target) MulInt(a vec.Int, k int) vec.Int {
	d := t.c.GP64()
	t.c.IMUL3Q(operand.U32(k), a.(reg.GPVirtual), d)
	return d
}

// Copy is a new pointer at a.
func (t *Target) Copy(a vec.Arr) vec.Arr {
	a.P, a.Off = &ptr{operand.Mem{Base: t.lea(t.mem(a, 0))}}, 0
	return a
}

// lea is a new register holding the address m.
func (t *Target) lea(m operand.Mem) reg.GPVirtual {
	p := t.c.GP64()
	if _, ok := m.Base.(reg.GPVirtual); ok && m.Disp == 0 && m.Index == nil {
		t.c.MOVQ(m.Base, p)
	} else {
		t.c.LEAQ(m, p)
	}
	return p
}

// Local is stack space for n elements of e.
func (t *Target) Local(n int, e vec.Elem) vec.Arr {
	return vec.Arr{Name: "scratch", Elem: e, P: &ptr{t.c.AllocLocal(n * e.Size)}}
}

// mem is the address of element j of a (from a's offset on).
func (t *Target) mem(a vec.Arr, j int) operand.Mem {
	p := a.P.(*ptr)
	m, ok := t.cur[p]
	if !ok {
		m = p.m
	}
	return m.Offset((a.Off + j) * a.Elem.Size)
}

// NormGroup: 8 heads at AVX-512 (a ZMM of their float64 sums), 4 at AVX2.
func (t *Target) NormGroup() int { return t.l.bytes / 8 }

// bytesOf is a walk's step in bytes: a stride register turned into bytes
// in place, once, before the function's loops.
func (t *Target) bytesOf(w vec.Walk) operand.Op {
	if w.Stride == nil {
		return operand.U32(w.Step * w.A.Elem.Size)
	}
	r := w.Stride.(reg.GPVirtual)
	if size, ok := t.scaled[r]; ok {
		if size != w.A.Elem.Size {
			panic("amd64: a stride walks arrays of two element sizes")
		}
		return r
	}
	t.scaled[r] = w.A.Elem.Size
	if s := map[int]uint8{2: 1, 4: 2, 8: 3}[w.A.Elem.Size]; s > 0 {
		t.hoist(func() { t.c.SHLQ(operand.U8(s), r) })
	}
	return r
}

// advance moves each walk on by k iterations; steps are in bytes.
func (t *Target) advance(walks []vec.Walk, steps []operand.Op, k int) {
	for i, w := range walks {
		b := w.A.P.(*ptr).m.Base
		switch s := steps[i].(type) {
		case reg.GPVirtual:
			switch k {
			case 1:
				t.c.ADDQ(s, b)
			case 2, 4, 8:
				t.c.LEAQ(operand.Mem{Base: b, Index: s, Scale: uint8(k)}, b)
			default:
				panic(fmt.Sprintf("amd64: a walk moved by %d strides", k))
			}
		case operand.U32:
			t.c.ADDQ(operand.U32(int(s)*k), b)
		}
	}
}

func (t *Target) steps(walks []vec.Walk) []operand.Op {
	s := make([]operand.Op, len(walks))
	for i, w := range walks {
		s[i] = t.bytesOf(w)
	}
	return s
}

// Loop runs body n times.
func (t *Target) Loop(n vec.Int, walks []vec.Walk, body func(vec.Head)) {
	c := t.c
	t.startLoop()
	steps := t.steps(walks)
	top, end := t.label("loop"), ""
	cnt, ok := n.(reg.GPVirtual)
	if ok {
		end = t.label("end")
		c.TESTQ(cnt, cnt)
		c.JZ(operand.LabelRef(end))
	} else { // a constant count, at least 1
		cnt = c.GP64()
		c.MOVQ(n.(operand.U32), cnt)
	}
	c.Label(top)
	body(&head{t: t, n: 1})
	t.advance(walks, steps, 1)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef(top))
	if end != "" {
		c.Label(end)
	}
}

// For runs body k times with its index.
func (t *Target) For(k int, walks []vec.Walk, body func(vec.Head, vec.Int)) {
	c := t.c
	t.startLoop()
	steps := t.steps(walks)
	i := c.GP64()
	c.XORQ(i, i)
	top := t.label("for")
	c.Label(top)
	body(&head{t: t, n: 1}, i)
	t.advance(walks, steps, 1)
	c.INCQ(i)
	c.CMPQ(i, operand.U8(k))
	c.JB(operand.LabelRef(top))
}

// Groups: pipelined, the loop sums group i and writes group i−1 (a flag
// skips the write in the first iteration), then scales group i; the last
// group is written after it. sum, out and scale are each emitted once
// inside the loop (out twice: it is one head's loop).
func (t *Target) Groups(n vec.Int, k int, pipelined bool, sum, out, scale func()) {
	c := t.c
	t.startLoop()
	r := n.(reg.GPVirtual)
	top, end := t.label("groups"), t.label("end")
	if !pipelined {
		c.Label(top)
		c.CMPQ(r, operand.U8(k))
		c.JB(operand.LabelRef(end))
		sum()
		scale()
		out()
		c.SUBQ(operand.U8(k), r)
		c.JMP(operand.LabelRef(top))
		c.Label(end)
		return
	}
	skip := t.label("first")
	c.CMPQ(r, operand.U8(k))
	c.JB(operand.LabelRef(end))
	first := c.GP64()
	c.MOVQ(operand.U32(1), first)
	c.Label(top)
	sum()
	c.TESTQ(first, first)
	c.JNZ(operand.LabelRef(skip))
	out()
	c.Label(skip)
	c.XORQ(first, first)
	scale()
	c.SUBQ(operand.U8(k), r)
	c.CMPQ(r, operand.U8(k))
	c.JAE(operand.LabelRef(top))
	out()
	c.Label(end)
}

// Skip moves w's pointer on by k steps.
func (t *Target) Skip(w vec.Walk, k int) {
	ws := []vec.Walk{w}
	t.advance(ws, t.steps(ws), k)
}

// Heads runs body over the n heads: with a shared row kept in registers
// when its blocks fit in half the register file (with the constants the
// stores need), and at a twoHeads level two heads per iteration first.
func (t *Target) Heads(n vec.Int, walks []vec.Walk, row *vec.Arr, body func(vec.Head)) {
	c := t.c
	cnt := n.(reg.GPVirtual)
	c.TESTQ(cnt, cnt)
	c.JZ(operand.LabelRef("done"))
	t.startLoop()
	steps := t.steps(walks)
	if row != nil {
		t.preload(*row)
	}
	if t.l.twoHeads && row != nil {
		c.CMPQ(cnt, operand.U8(2))
		c.JB(operand.LabelRef("head"))
		c.Label("pair")
		c.Comment("two heads at a time")
		h := &head{t: t, n: 2, second: map[*ptr]operand.Mem{}}
		for i, w := range walks {
			p := w.A.P.(*ptr)
			if _, ok := h.second[p]; !ok {
				r := c.GP64()
				c.LEAQ(operand.Mem{Base: p.m.Base, Index: steps[i].(reg.GPVirtual), Scale: 1}, r)
				h.second[p] = operand.Mem{Base: r}
			}
		}
		body(h)
		t.advance(walks, steps, 2)
		c.SUBQ(operand.U8(2), cnt)
		c.CMPQ(cnt, operand.U8(2))
		c.JAE(operand.LabelRef("pair"))
		c.TESTQ(cnt, cnt)
		c.JZ(operand.LabelRef("done"))
	}
	c.Label("head")
	body(&head{t: t, n: 1})
	t.advance(walks, steps, 1)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef("head"))
}

// preload loads the shared row's blocks into registers when they fit: two
// registers a block, at most half the register file with the constants.
func (t *Target) preload(row vec.Arr) {
	bs := t.pairBlocks()
	if 2*len(bs)+t.storeConsts() > t.l.regs/2 {
		return
	}
	t.pre = map[int][2]*value{}
	for _, b := range bs {
		t.pre[b.j] = [2]*value{t.loadAt(row.Elem, t.mem(row, b.j), b.w), t.loadAt(row.Elem, t.mem(row.At(t.f.Shape.RotaryDim), b.j), b.w)}
	}
}

// storeConsts is how many constant registers the function's narrowing
// keeps: bf16's seven at AVX-512 (the minifloat family's constants are
// registers there; at AVX2 operands from memory, a couple of them loaded
// into registers for a compare).
func (t *Target) storeConsts() int {
	if t.f.X == vec.BF16 || t.f.Cache == vec.BF16 {
		if t.l.masked {
			return 7
		}
		return 2
	}
	return 0
}
