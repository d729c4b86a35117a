// Package riscv64 is the RISC-V vector (RVV 1.0) implementation of the
// vector layer (asm/vec): Go assembly, vector-length agnostic, so that one
// binary gives the same bits at every VLEN (the tests run 128, 256 and 512).
//
// A block of a head's pairs or values is a strip-mining loop: VSETVLI takes
// what is left, the body runs on vl lanes, and every pointer it used moves
// on by vl elements. An interleaved head's pairs are seen through segment
// loads and stores (VLSEG2/VSSEG2: the a-values and the b-values, the row's
// C[a] and S[b] read with strided loads), a neox head's as its two halves.
// Values are virtual registers, allocated by linear scan (alloc.go) at the
// largest LMUL (4, else 2, else 1) at which they fit. Scalars (the norm's
// r, ε, constants) stay in F and X registers, the operands of the .vf and
// .vx forms. Heads go one at a time, and no table is preloaded: the vector
// length is not known when the kernel is written.
//
// The arithmetic is the contract's, every operation rounded once to
// nearest even: the vector floating point by frm, which Go leaves at RNE,
// Go's scalar instructions by their encoded RNE, the narrowing shifts by
// vxrm, which a function that narrows sets on entry. No fused multiply-add
// is used except VFWMACC in the norm's sum of squares, where the float64
// product of two float32 values is exact (one rounding, the sum's). f16,
// bf16 and e4m3 convert in integer operations (codec.go): without Zvfhmin,
// which x/sys/cpu does not report, RVV has no f16 conversion.
package riscv64

import (
	"fmt"
	"math"
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

// Target emits one kernel at a time.
type Target struct {
	f          *vec.Func
	lmul       int    // the compute type's LMUL in strips
	pre, code  []*ins // the constants, then the body
	loops      []loop
	labels     int
	consts     map[string]*reg
	scaled     map[*reg]int // strides turned into bytes, by element size
	frame      int
	sew, ratio int    // the current vtype: SEW, and SEW/LMUL (vl's register share)
	tail       string // "TA" or "TU"
	vxrm       bool   // set to round to nearest even
}

// Generate emits funcs (their Level unset) at level "rvv", the table fill
// aside: the assembly file (after header) and the functions, Level set.
func Generate(funcs []*vec.Func, header string) ([]byte, []*vec.Func) {
	var b strings.Builder
	b.WriteString(header + "\n#include \"textflag.h\"\n")
	var out []*vec.Func
	for _, f := range funcs {
		if f.Kind == vec.Fill {
			continue
		}
		g := *f
		g.Level = "rvv"
		t := &Target{}
		vec.Emit(t, &g)
		_, size := g.Frame()
		flag := "NOSPLIT"
		if t.frame > 256 { // a norm's scratch head: a stack check
			flag = "0"
		}
		fmt.Fprintf(&b, "\n// %s %s, using RVV.\nTEXT ·%s(SB), %s, $%d-%d\n", g.Name(), g.Doc(), g.Name(), flag, t.frame, size)
		t.text(&b)
		out = append(out, &g)
	}
	return []byte(b.String()), out
}

// Level is "rvv".
func (t *Target) Level() string { return "rvv" }

// Func emits f at LMUL 4, 2 or 1, the largest whose values fit.
func (t *Target) Func(f *vec.Func, body func()) {
	for _, l := range []int{4, 2, 1} {
		*t = Target{f: f, lmul: l, consts: map[string]*reg{}, scaled: map[*reg]int{}}
		body()
		t.emit("RET")
		if t.alloc() {
			return
		}
	}
	panic("riscv64: the values of " + f.Name() + " do not fit at LMUL 1")
}

func (t *Target) emit(op string, args ...any) *ins {
	in := &ins{op, args}
	t.code = append(t.code, in)
	return in
}

func (t *Target) newReg(class byte, n int) *reg { return &reg{class: class, n: n, first: -1} }
func (t *Target) x() *reg                       { return t.newReg('X', 1) }
func (t *Target) fr() *reg                      { return t.newReg('F', 1) }
func (t *Target) mask() *reg                    { return t.newReg('M', 1) }

// vreg is a register group for lanes of sew bits at the current vl.
func (t *Target) vreg(sew int) *reg { return t.newReg('V', max(1, sew/t.ratio)) }

// newLabel is a fresh label, placed where it is appended to the code.
func (t *Target) newLabel() *ins {
	t.labels++
	return &ins{"", []any{fmt.Sprintf("l%d", t.labels)}}
}

// label places a fresh label here.
func (t *Target) label() *ins {
	l := t.newLabel()
	t.code = append(t.code, l)
	return l
}

// loop emits the branch back to top's label.
func (t *Target) loop(op string, top *ins, args ...any) {
	t.loops = append(t.loops, loop{top, t.emit(op, append(args, top.args[0])...)})
}

// csew is the compute type's width in bits.
func (t *Target) csew() int { return 8 * t.f.C().Size }

// setvl sets vl to avl (a register, or a constant below 32) lanes of sew
// bits at sew/ratio registers a group.
func (t *Target) setvl(avl any, sew, ratio int, tail string, vl *reg) {
	t.sew, t.ratio, t.tail = sew, ratio, tail
	op := "VSETVLI"
	if _, ok := avl.(int); ok {
		op = "VSETIVLI"
	}
	var out any = "X0"
	if vl != nil {
		out = vl
	}
	t.emit(op, avl, fmt.Sprintf("E%d", sew), t.lmulName(sew), tail, "MU", out)
}

// vt makes sew the element width, vl kept.
func (t *Target) vt(sew int) {
	if t.sew != sew {
		t.sew = sew
		t.emit("VSETVLI", "X0", fmt.Sprintf("E%d", sew), t.lmulName(sew), t.tail, "MU", "X0")
	}
}

func (t *Target) lmulName(sew int) string {
	if sew < t.ratio {
		return fmt.Sprintf("MF%d", t.ratio/sew)
	}
	return fmt.Sprintf("M%d", sew/t.ratio)
}

// constant is a register holding bits (class 'X', or 'F' of size bytes),
// set once at the function's start.
func (t *Target) constant(class byte, size int, bits uint64) *reg {
	key := fmt.Sprintf("%c%d:%x", class, size, bits)
	if r, ok := t.consts[key]; ok {
		return r
	}
	x := t.x()
	t.pre = append(t.pre, &ins{"MOV", []any{int(int64(bits)), x}})
	r := x
	if class == 'F' {
		r = t.fr()
		t.pre = append(t.pre, &ins{map[int]string{4: "FMVWX", 8: "FMVDX"}[size], []any{x, r}})
	}
	t.consts[key] = r
	return r
}

func (t *Target) int(v int) *reg       { return t.constant('X', 8, uint64(v)) }
func (t *Target) f32(bits uint32) *reg { return t.constant('F', 4, uint64(bits)) }

// ptr is a pointer: its register.
type ptr struct{ r *reg }

// arg is the frame operand of the argument name: name+off(FP), a
// slice's base name_base+off(FP).
func (t *Target) arg(name string) string {
	off, _ := t.f.Frame()
	for _, p := range t.f.Params() {
		if p.Name == name && strings.HasPrefix(p.Type, "[]") {
			return fmt.Sprintf("%s_base+%d(FP)", name, off[name])
		}
	}
	return fmt.Sprintf("%s+%d(FP)", name, off[name])
}

// Ptr is the pointer argument name.
func (t *Target) Ptr(name string, e vec.Elem) vec.Arr {
	r := t.x()
	t.emit("MOV", t.arg(name), r)
	return vec.Arr{Name: name, Elem: e, P: &ptr{r}}
}

// Int is the int argument name.
func (t *Target) Int(name string) vec.Int {
	r := t.x()
	t.emit("MOV", t.arg(name), r)
	return r
}

// Imm is k.
func (t *Target) Imm(k int) vec.Int { return k }

// MulInt is a·k.
func (t *Target) MulInt(a vec.Int, k int) vec.Int {
	d := t.x()
	t.emit("MUL", t.int(k), a, d)
	return d
}

// addr is a new register holding the address of a's first element.
func (t *Target) addr(a vec.Arr) *reg {
	p := t.x()
	t.code = append(t.code, move(a.Off*a.Elem.Size, a.P.(*ptr).r, p))
	return p
}

// move is d = p + off.
func move(off int, p, d *reg) *ins {
	if off == 0 {
		return &ins{"MOV", []any{p, d}}
	}
	return &ins{"ADD", []any{off, p, d}}
}

// Copy is a new pointer at a.
func (t *Target) Copy(a vec.Arr) vec.Arr {
	a.P, a.Off = &ptr{t.addr(a)}, 0
	return a
}

// Local is n elements of e on the stack, above the saved return address.
func (t *Target) Local(n int, e vec.Elem) vec.Arr {
	p := t.x()
	t.emit("ADD", 8+t.frame, "X2", p)
	t.frame += (n*e.Size + 7) / 8 * 8
	return vec.Arr{Name: "scratch", Elem: e, P: &ptr{p}}
}

// Heads runs body over the n heads, one at a time.
func (t *Target) Heads(n vec.Int, walks []vec.Walk, _ *vec.Arr, body func(vec.Head)) {
	t.Loop(n, walks, body)
}

// Loop runs body n times, the walks moving on after each.
func (t *Target) Loop(n vec.Int, walks []vec.Walk, body func(vec.Head)) {
	cnt, ok := n.(*reg)
	if !ok {
		cnt = t.x()
		t.emit("MOV", n, cnt)
	}
	steps := make([]any, len(walks))
	for i, w := range walks {
		steps[i] = w.Step * w.A.Elem.Size
		if w.Stride != nil {
			steps[i] = t.bytes(w.Stride.(*reg), w.A.Elem.Size)
		}
	}
	end := t.newLabel()
	t.emit("BEQZ", cnt, end.args[0])
	top := t.label()
	body(&head{t})
	for i, w := range walks {
		p := w.A.P.(*ptr).r
		t.emit("ADD", steps[i], p, p)
	}
	t.emit("ADD", -1, cnt, cnt)
	t.loop("BNEZ", top, cnt)
	t.code = append(t.code, end)
}

// bytes is the stride r in bytes of size-byte elements: r turned into
// them in place, once.
func (t *Target) bytes(r *reg, size int) *reg {
	if s, ok := t.scaled[r]; ok {
		if s != size {
			panic("riscv64: a stride walks arrays of two element sizes")
		}
		return r
	}
	t.scaled[r] = size
	if size > 1 {
		t.emit("SLLI", map[int]int{2: 1, 4: 2, 8: 3}[size], r, r)
	}
	return r
}

// Ops.

func (t *Target) Mul(a, b vec.V) vec.V { return t.arith("MUL", a, b, true) }
func (t *Target) Add(a, b vec.V) vec.V { return t.arith("ADD", a, b, true) }
func (t *Target) Sub(a, b vec.V) vec.V { return t.arith("SUB", a, b, false) }
func (t *Target) Div(a, b vec.V) vec.V { return t.arith("DIV", a, b, false) }

// arith is a op b in the compute type: .vv, or .vf with a scalar (the
// reversed form VFRSUB, VFRDIV when a is the scalar).
func (t *Target) arith(op string, a, b vec.V, commutes bool) vec.V {
	x, y := a.(*reg), b.(*reg)
	t.vt(t.csew())
	switch {
	case y.class == 'F':
		op += "VF"
	case x.class == 'F' && commutes:
		x, y, op = y, x, op+"VF"
	case x.class == 'F':
		x, y, op = y, x, "R"+op+"VF"
	default:
		op += "VV"
	}
	d := t.newReg('V', x.n)
	t.emit("VF"+op, y, x, d)
	return d
}

// Const is v in an F register.
func (t *Target) Const(v float64) vec.V {
	if t.csew() == 64 {
		return t.constant('F', 8, math.Float64bits(v))
	}
	return t.f32(math.Float32bits(float32(v)))
}

// Broadcast is the float argument name in an F register.
func (t *Target) Broadcast(name string, e vec.Elem) vec.V {
	r := t.fr()
	t.emit(map[int]string{4: "MOVF", 8: "MOVD"}[e.Size], t.arg(name), r)
	return r
}

// Scalar is the float64 argument name.
func (t *Target) Scalar(name string) vec.S { return t.Broadcast(name, vec.F64) }

// Acc is 8 float64 lanes of zeros: vl = 8 at LMUL 4 is 8 lanes at any VLEN.
func (t *Target) Acc() vec.V {
	t.setvl(8, 64, 16, "TA", nil)
	a := t.newReg('V', 4)
	t.emit("VMVVI", 0, a)
	return a
}

// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)): the upper half of the
// sums slid onto the lower and added, then the upper quarter, then lane 1.
func (t *Target) Reduce(acc vec.V) vec.S {
	t.setvl(8, 64, 16, "TA", nil)
	s := acc.(*reg)
	for _, k := range []int{4, 2, 1} {
		u, v := t.newReg('V', 4), t.newReg('V', 4)
		t.emit("VSLIDEDOWNVI", k, s, u)
		t.emit("VFADDVV", u, s, v)
		s = v
	}
	r := t.fr()
	t.emit("VFMVFS", s, r)
	return r
}

// Scale is r = fl(1/sqrt(ss/count + eps)) in an F register, each float64
// step rounded, r rounded once to the compute type.
func (t *Target) Scale(ss vec.S, count vec.Int, eps vec.S) vec.V {
	n := t.fr()
	if k, ok := count.(int); ok {
		n = t.constant('F', 8, math.Float64bits(float64(k)))
	} else {
		t.emit("FCVTDL", count, n)
	}
	q, r := t.fr(), t.fr()
	t.emit("FDIVD", n, ss, q)
	t.emit("FADDD", eps, q, q)
	t.emit("FSQRTD", q, q)
	t.emit("FDIVD", q, t.constant('F', 8, math.Float64bits(1)), r)
	if t.csew() == 32 {
		t.emit("FCVTSD", r, r)
	}
	return r
}
