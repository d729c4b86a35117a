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

// Generate emits the AVX2 kernels for k. header replaces avo's own
// "Code generated" line; constraint is the file's build constraint.
func Generate(k Kernel, header, constraint string) (*Output, error) {
	if k.RotaryDim <= 0 || k.RotaryDim%2 != 0 || k.RotaryDim > k.HeadDim {
		return nil, fmt.Errorf("amd64: bad geometry %+v", k)
	}
	c := build.NewContext()
	c.ConstraintExpr(constraint) // avo takes the "+build" form: "amd64,!purego"
	rowLen := 2 * k.RotaryDim
	sig := fmt.Sprintf("func(x []float32, r *[%d]float32)", rowLen)

	var funcs []Func
	for _, inverse := range []bool{false, true} {
		name := "applyAVX2"
		doc := "rotates each head of x forward (A·R_p·x) with the table row r, using AVX2."
		if inverse {
			name = "applyInverseAVX2"
			doc = "rotates each head of x backward (A·R_p^T·x) with the table row r, using AVX2."
		}
		c.Function(name)
		c.Attributes(attr.NOSPLIT)
		c.SignatureExpr(sig)
		c.Doc(name + " " + doc)
		c.Pragma("noescape")
		avx2Func(c, k, inverse)
		funcs = append(funcs, Func{Name: name, Inverse: inverse, Level: "avx2"})
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

// avx2Func emits the body of one AVX2 function: a loop over heads, each head
// fully unrolled.
func avx2Func(c *build.Context, k Kernel, inverse bool) {
	x := operand.Mem{Base: c.Load(c.Param("x").Base(), c.GP64())}
	n := c.Load(c.Param("x").Len(), c.GP64())
	r := operand.Mem{Base: c.Load(c.Param("r"), c.GP64())}

	c.TESTQ(n, n)
	c.JZ(operand.LabelRef("done"))
	c.Label("head")
	for _, b := range blocks(k) {
		b.emit(c, k, x, r, inverse)
	}
	c.ADDQ(operand.U32(k.HeadDim*elem), x.Base)
	c.SUBQ(operand.U32(k.HeadDim), n)
	c.JNZ(operand.LabelRef("head"))
	c.Label("done")
	c.VZEROUPPER()
	c.RET()
}

// block is a run of w consecutive rotated values starting at index j.
// Interleaved blocks hold whole pairs (w even) and find each partner by
// swapping adjacent lanes; neox blocks cover j…j+w−1 in the first half and
// j+R/2… in the second, each the other's partner.
type block struct{ j, w int }

// blocks splits one head's rotary part into vector-sized runs, widest first:
// 8 (YMM), 4 (XMM), then 2 and, for neox, 1 (low lanes of an XMM).
func blocks(k Kernel) []block {
	span := k.RotaryDim
	if k.NeoX {
		span = k.RotaryDim / 2
	}
	var bs []block
	for j := 0; j < span; {
		w := 8
		for w > span-j {
			w /= 2
		}
		bs = append(bs, block{j, w})
		j += w
	}
	return bs
}

// vec is a vector register wide enough for w float32s, with load and store
// instructions that touch exactly w values: nothing past a head or a table row
// is read or written.
type vec struct {
	c *build.Context
	w int
}

func (v vec) reg() reg.VecVirtual {
	if v.w == 8 {
		return v.c.YMM()
	}
	return v.c.XMM()
}

func (v vec) load(m operand.Mem) reg.VecVirtual {
	d := v.reg()
	switch v.w {
	case 8, 4:
		v.c.VMOVUPS(m, d)
	case 2:
		v.c.VMOVSD(m, d)
	case 1:
		v.c.VMOVSS(m, d)
	}
	return d
}

func (v vec) store(s reg.VecVirtual, m operand.Mem) {
	switch v.w {
	case 8, 4:
		v.c.VMOVUPS(s, m)
	case 2:
		v.c.VMOVSD(s, m)
	case 1:
		v.c.VMOVSS(s, m)
	}
}

// mul returns a·m, reading m straight from memory where the vector is full
// width (a narrower memory operand would read past the run).
func (v vec) mul(a reg.VecVirtual, m operand.Mem) reg.VecVirtual {
	d := v.reg()
	if v.w >= 4 {
		v.c.VMULPS(m, a, d)
	} else {
		v.c.VMULPS(v.load(m), a, d)
	}
	return d
}

// combine returns a+b (forward) or a−b (inverse).
func (v vec) combine(a, b reg.VecVirtual, inverse bool) reg.VecVirtual {
	if inverse {
		v.c.VSUBPS(b, a, a)
	} else {
		v.c.VADDPS(b, a, a)
	}
	return a
}

func (b block) emit(c *build.Context, k Kernel, x, r operand.Mem, inverse bool) {
	v := vec{c, b.w}
	cs := func(j int) operand.Mem { return r.Offset(j * elem) }
	sn := func(j int) operand.Mem { return r.Offset((k.RotaryDim + j) * elem) }
	xs := func(j int) operand.Mem { return x.Offset(j * elem) }
	if !k.NeoX {
		c.Commentf("pairs %d…%d", b.j/2, (b.j+b.w)/2-1)
		a := v.load(xs(b.j))
		q := v.reg()
		c.VPERMILPS(operand.U8(0xb1), a, q) // swap adjacent lanes: each value's partner
		y := v.combine(v.mul(a, cs(b.j)), v.mul(q, sn(b.j)), inverse)
		v.store(y, xs(b.j))
		return
	}
	h := k.RotaryDim / 2
	c.Commentf("pairs %d…%d", b.j, b.j+b.w-1)
	lo := v.load(xs(b.j))
	hi := v.load(xs(b.j + h))
	ylo := v.combine(v.mul(lo, cs(b.j)), v.mul(hi, sn(b.j)), inverse)
	yhi := v.combine(v.mul(hi, cs(b.j+h)), v.mul(lo, sn(b.j+h)), inverse)
	v.store(ylo, xs(b.j))
	v.store(yhi, xs(b.j+h))
}
