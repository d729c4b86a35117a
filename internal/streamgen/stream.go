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

// stream emits the stream kernels, the memory-limit baseline of package
// verify's benchmarks: each multiplies every value of x by k in place, a
// load, one multiply and a store per register, with no table and no
// shuffle. Nothing faster can rotate x in place, which reads and writes the
// same bytes. There is one kernel per level and element type:
//
//	func streamF32AVX512(x []float32, k float32)
//	func streamF64AVX512(x []float64, k float64)
//	func streamF32AVX2(x []float32, k float32)
//	func streamF64AVX2(x []float64, k float64)
//
// The main loop handles streamUnroll registers at a time (AVX-512: below
// streamLong bytes), then one register at a time; the tail is one masked
// register (AVX-512) or scalar (AVX2), so no byte outside x is touched.
// pkg names the package in the assembly's comments; header replaces avo's
// own first line; constraint is the build constraint in avo's "+build"
// form. It returns the .s file and the functions' Go declarations, doc
// comments and pragmas included.
func stream(pkg, header, constraint string) (asm []byte, stubs []string, err error) {
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	for _, l := range levels {
		for _, x := range []elem{{"f32", "float32", 4}, {"f64", "float64", 8}} {
			name := "stream" + strings.ToUpper(x.name+l.name)
			c.Function(name)
			c.Attributes(attr.NOSPLIT)
			c.SignatureExpr(fmt.Sprintf("func(x []%s, k %s)", x.goType, x.goType))
			c.Doc(fmt.Sprintf("%s multiplies every value of x by k in place, using %s.", name, strings.ToUpper(l.name)))
			c.Pragma("noescape")
			emitStream(c, l, x)
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

// emitStream emits one stream kernel for values of type x at level l.
func emitStream(c *build.Context, l level, x elem) {
	lanes := l.bytes / x.size
	vec := func() reg.VecVirtual {
		if l.masked {
			return c.ZMM()
		}
		return c.YMM()
	}
	mul, mov, movs := c.VMULPS, c.VMOVUPS, c.VMOVSS
	mulz, bcast, muls := c.VMULPS_Z, c.VBROADCASTSS, c.VMULSS
	if x.size == 8 {
		mul, mov, movs = c.VMULPD, c.VMOVUPD, c.VMOVSD
		mulz, bcast, muls = c.VMULPD_Z, c.VBROADCASTSD, c.VMULSD
	}
	p := operand.Mem{Base: c.Load(c.Param("x").Base(), c.GP64())}
	n := c.Load(c.Param("x").Len(), c.GP64())
	km, err := c.Param("k").Resolve()
	if err != nil {
		panic(err)
	}
	k := vec()
	bcast(km.Addr, k)

	if l.masked {
		c.CMPQ(n, operand.U32(streamLong/x.size))
		c.JAE(operand.LabelRef("one"))
	}
	c.Commentf("%d registers at a time", streamUnroll)
	c.Label("wide")
	c.CMPQ(n, operand.U32(streamUnroll*lanes))
	c.JB(operand.LabelRef("one"))
	for i := range streamUnroll {
		r := vec()
		mul(p.Offset(i*l.bytes), k, r)
		mov(r, p.Offset(i*l.bytes))
	}
	c.ADDQ(operand.U32(streamUnroll*l.bytes), p.Base)
	c.SUBQ(operand.U32(streamUnroll*lanes), n)
	c.JMP(operand.LabelRef("wide"))

	c.Label("one")
	c.CMPQ(n, operand.U32(lanes))
	c.JB(operand.LabelRef("tail"))
	r := vec()
	mul(p, k, r)
	mov(r, p)
	c.ADDQ(operand.U32(l.bytes), p.Base)
	c.SUBQ(operand.U32(lanes), n)
	c.JMP(operand.LabelRef("one"))

	c.Label("tail")
	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	if l.masked {
		c.Comment("the last values: one masked register")
		g := c.GP32()
		c.MOVQ(n, reg.RCX)
		c.MOVL(operand.U32(1), g)
		c.SHLL(reg.CL, g)
		c.DECL(g)
		m := c.K()
		c.KMOVW(g, m)
		t := vec()
		mulz(p, k, m, t)
		mov(t, m, p)
	} else {
		c.Comment("the last values, one at a time")
		c.Label("scalar")
		t := c.XMM()
		movs(p, t)
		muls(k.AsX(), t, t)
		movs(t, p)
		c.ADDQ(operand.U32(x.size), p.Base)
		c.DECQ(n)
		c.JNZ(operand.LabelRef("scalar"))
	}
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}
