package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	"github.com/mmcloughlin/avo/reg"
)

// streamUnroll is how many registers of x one iteration of a stream kernel's
// main loop multiplies, each loaded, multiplied and stored in turn.
const streamUnroll = 4

// streamLong is the size in bytes from which the AVX-512 stream kernels run
// one register per iteration instead: streaming from L3 (8 MiB in place) a
// 4-register AVX-512 loop is 20–30% slower than one register per iteration
// (its 64-byte loads run too far ahead of the queued stores), while in L1 it
// is 15% faster. AVX2 runs the 4-register loop at every size: it is the
// fastest there both in L1 and from L3 (BENCHMARKS.md).
const streamLong = 1 << 20

// level is one instruction-set level of the stream kernels.
type level struct {
	name     string   // dispatch level: "avx512", "avx2"
	bytes    int      // bytes in the widest register
	masked   bool     // one masked register for the tail (AVX-512), else scalars
	features []string // the cpu.X86 fields it needs
}

var levels = []level{
	{name: "avx512", bytes: 64, masked: true, features: []string{"HasAVX512F"}},
	{name: "avx2", bytes: 32, features: []string{"HasAVX2"}},
}

// elem is an element type of x.
type elem struct {
	name   string // "f32", "f64"
	goType string
	size   int // bytes
}

// op is what a stream kernel does with its slices, one register at a time
// and nothing else: no table, no shuffle.
type op struct {
	name string // the kernel's name after "stream": "" (in place), "Move", "Load", "Fill"
	sig  string // its Go signature, %s the element type
	doc  string // what it does, after its name
	f64  bool   // it has a float64 form too
}

var ops = []op{
	{"", "func(x []%s, k %s)", "multiplies every value of x by k in place", true},
	{"Move", "func(dst, src []%s, k %s)", "stores src[i]·k into dst[i] for every i < len(dst); len(src) >= len(dst)", false},
	{"Load", "func(x []%s)", "reads every value of x once, into registers it then drops", false},
	{"Fill", "func(x []%s, k %s)", "stores k into every value of x, reading nothing", false},
}

// stream emits the stream kernels, the memory-limit baseline of package
// verify's benchmarks. One load, multiply and store per register (in place)
// is what a call that rotates x in place cannot beat; Move reads one slice
// and writes another, and Load and Fill only read or only write, so that a
// call that reads some bytes and writes others (a cache store: float32 in,
// f16 out) is set against exactly those bytes. There is one kernel per
// level, op and element type:
//
//	func streamF32AVX512(x []float32, k float32)
//	func streamF64AVX512(x []float64, k float64)
//	func streamMoveF32AVX512(dst, src []float32, k float32)
//	func streamLoadF32AVX512(x []float32)
//	func streamFillF32AVX512(x []float32, k float32)
//
// and the same at AVX2. The main loop handles streamUnroll registers at a
// time (AVX-512: below streamLong bytes), then one register at a time; the
// tail is one masked register (AVX-512) or scalar (AVX2), so no byte outside
// the slices is touched. pkg names the package in the assembly's comments;
// header replaces avo's own first line; constraint is the build constraint
// in avo's "+build" form. It returns the .s file and the functions' Go
// declarations, doc comments and pragmas included.
func stream(pkg, header, constraint string) (asm []byte, stubs []string, err error) {
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	for _, l := range levels {
		for _, o := range ops {
			for _, x := range []elem{{"f32", "float32", 4}, {"f64", "float64", 8}} {
				if x.size == 8 && !o.f64 {
					continue
				}
				name := "stream" + o.name + strings.ToUpper(x.name+l.name)
				c.Function(name)
				c.Attributes(attr.NOSPLIT)
				sig := o.sig
				if strings.Count(sig, "%s") == 2 {
					sig = fmt.Sprintf(sig, x.goType, x.goType)
				} else {
					sig = fmt.Sprintf(sig, x.goType)
				}
				c.SignatureExpr(sig)
				c.Doc(fmt.Sprintf("%s %s, using %s.", name, o.doc, strings.ToUpper(l.name)))
				c.Pragma("noescape")
				emitStream(c, l, x, o.name)
			}
		}
	}
	f, err := c.Result()
	if err != nil {
		return nil, nil, err
	}
	if err := pass.Compile.Execute(f); err != nil {
		return nil, nil, err
	}
	src, err := printer.NewGoAsm(printer.Config{Name: "ropegen", Pkg: pkg}).Print(f)
	if err != nil {
		return nil, nil, err
	}
	// avo's first line is its own "Code generated" comment: use ours.
	_, rest, _ := bytes.Cut(src, []byte("\n"))
	for _, fn := range f.Functions() {
		var b strings.Builder
		for _, d := range fn.Doc {
			b.WriteString("// " + d + "\n")
		}
		for _, p := range fn.Pragmas {
			b.WriteString("//go:" + p.Directive + "\n")
		}
		stubs = append(stubs, b.String()+fn.Stub()+"\n")
	}
	return append([]byte(header+"\n"), rest...), stubs, nil
}

// streamBody is what one register of a kernel does at byte offset off:
// the instructions of op on the kernel's pointers.
type streamBody struct {
	c    *build.Context
	l    level
	x    elem
	op   string
	k    reg.VecVirtual   // the broadcast k (in place, Move, Fill)
	acc  []reg.VecVirtual // Load's accumulators, one per unrolled register
	p, q operand.Mem      // x or dst (p), and src (q, Move)
}

// vec is a new register of the level's width.
func (s *streamBody) vec() reg.VecVirtual {
	if s.l.masked {
		return s.c.ZMM()
	}
	return s.c.YMM()
}

// one emits the instructions for the i-th register of an unrolled step.
func (s *streamBody) one(i, off int) {
	c := s.c
	mul, mov := c.VMULPS, c.VMOVUPS
	if s.x.size == 8 {
		mul, mov = c.VMULPD, c.VMOVUPD
	}
	switch s.op {
	case "":
		r := s.vec()
		mul(s.p.Offset(off), s.k, r)
		mov(r, s.p.Offset(off))
	case "Move":
		r := s.vec()
		mul(s.q.Offset(off), s.k, r)
		mov(r, s.p.Offset(off))
	case "Load":
		if s.l.masked {
			c.VPORD(s.p.Offset(off), s.acc[i], s.acc[i])
		} else {
			c.VPOR(s.p.Offset(off), s.acc[i], s.acc[i])
		}
	case "Fill":
		mov(s.k, s.p.Offset(off))
	}
}

// advance moves the kernel's pointers on by n bytes.
func (s *streamBody) advance(n int) {
	s.c.ADDQ(operand.U32(n), s.p.Base)
	if s.op == "Move" {
		s.c.ADDQ(operand.U32(n), s.q.Base)
	}
}

// tail emits the last len < one register values: one masked register
// (AVX-512), else one value at a time.
func (s *streamBody) tail(n reg.Register) {
	c := s.c
	if s.l.masked {
		c.Comment("the last values: one masked register")
		g := c.GP32()
		c.MOVQ(n, reg.RCX)
		c.MOVL(operand.U32(1), g)
		c.SHLL(reg.CL, g)
		c.DECL(g)
		m := c.K()
		c.KMOVW(g, m)
		mulz, mov := c.VMULPS_Z, c.VMOVUPS
		if s.x.size == 8 {
			mulz, mov = c.VMULPD_Z, c.VMOVUPD
		}
		t := s.vec()
		switch s.op {
		case "":
			mulz(s.p, s.k, m, t)
			mov(t, m, s.p)
		case "Move":
			mulz(s.q, s.k, m, t)
			mov(t, m, s.p)
		case "Load":
			c.VMOVDQU32_Z(s.p, m, t)
		case "Fill":
			mov(s.k, m, s.p)
		}
		return
	}
	c.Comment("the last values, one at a time")
	c.Label("scalar")
	movs, muls := c.VMOVSS, c.VMULSS
	if s.x.size == 8 {
		movs, muls = c.VMOVSD, c.VMULSD
	}
	t := c.XMM()
	switch s.op {
	case "":
		movs(s.p, t)
		muls(s.k.AsX(), t, t)
		movs(t, s.p)
	case "Move":
		movs(s.q, t)
		muls(s.k.AsX(), t, t)
		movs(t, s.p)
	case "Load":
		movs(s.p, t)
	case "Fill":
		movs(s.k.AsX(), s.p)
	}
	s.advance(s.x.size)
	c.DECQ(n)
	c.JNZ(operand.LabelRef("scalar"))
}

// emitStream emits one stream kernel of op for values of type x at level l.
func emitStream(c *build.Context, l level, x elem, op string) {
	lanes := l.bytes / x.size
	s := &streamBody{c: c, l: l, x: x, op: op}
	var n reg.Register
	switch op {
	case "Move":
		s.p = operand.Mem{Base: c.Load(c.Param("dst").Base(), c.GP64())}
		s.q = operand.Mem{Base: c.Load(c.Param("src").Base(), c.GP64())}
		n = c.Load(c.Param("dst").Len(), c.GP64())
	default:
		s.p = operand.Mem{Base: c.Load(c.Param("x").Base(), c.GP64())}
		n = c.Load(c.Param("x").Len(), c.GP64())
	}
	if op == "Load" {
		for range streamUnroll {
			s.acc = append(s.acc, s.vec())
		}
		for _, a := range s.acc {
			if l.masked {
				c.VPXORD(a, a, a)
			} else {
				c.VPXOR(a, a, a)
			}
		}
	} else {
		km, err := c.Param("k").Resolve()
		if err != nil {
			panic(err)
		}
		s.k = s.vec()
		if x.size == 8 {
			c.VBROADCASTSD(km.Addr, s.k)
		} else {
			c.VBROADCASTSS(km.Addr, s.k)
		}
	}

	if l.masked {
		c.CMPQ(n, operand.U32(streamLong/x.size))
		c.JAE(operand.LabelRef("one"))
	}
	c.Commentf("%d registers at a time", streamUnroll)
	c.Label("wide")
	c.CMPQ(n, operand.U32(streamUnroll*lanes))
	c.JB(operand.LabelRef("one"))
	for i := range streamUnroll {
		s.one(i, i*l.bytes)
	}
	s.advance(streamUnroll * l.bytes)
	c.SUBQ(operand.U32(streamUnroll*lanes), n)
	c.JMP(operand.LabelRef("wide"))

	c.Label("one")
	c.CMPQ(n, operand.U32(lanes))
	c.JB(operand.LabelRef("tail"))
	s.one(0, 0)
	s.advance(l.bytes)
	c.SUBQ(operand.U32(lanes), n)
	c.JMP(operand.LabelRef("one"))

	c.Label("tail")
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	s.tail(n)
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}
