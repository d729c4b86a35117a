package amd64

import (
	"fmt"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
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

// Stream emits the stream kernels, the memory-limit baseline of package
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
// register (AVX-512) or scalar (AVX2), so no byte outside x is touched. pkg names the package in the assembly's
// comments; header replaces avo's own first line; constraint is the build
// constraint in avo's "+build" form. Output.Funcs have Kind "stream".
func Stream(pkg, header, constraint string) (*Output, error) {
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	out := &Output{}
	var funcs []Func
	for _, l := range levels {
		out.Levels = append(out.Levels, Level{l.name, l.features(Kernel{DType: "f32"})})
		for _, x := range []codec{codecs["f32"], codecs["f64"]} {
			name := "stream" + strings.ToUpper(x.name) + l.suffix
			c.Function(name)
			c.Attributes(attr.NOSPLIT)
			c.SignatureExpr(fmt.Sprintf("func(x []%s, k %s)", x.goType, x.goType))
			c.Doc(fmt.Sprintf("%s multiplies every value of x by k in place, using %s.", name, strings.ToUpper(l.name)))
			c.Pragma("noescape")
			emitStream(c, l, x)
			funcs = append(funcs, Func{Name: name, Kind: "stream", Level: l.name})
		}
	}
	if err := finish(c, out, funcs, pkg, header); err != nil {
		return nil, err
	}
	return out, nil
}

// emitStream emits one stream kernel for values of type x at level l.
func emitStream(c *build.Context, l level, x codec) {
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
