// Package riscv64 is the RISC-V vector (RVV 1.0) implementation of the
// vector layer (asm/vec): Go assembler text, vector-length agnostic, so
// that one binary gives the same bits at every VLEN.
//
// A block of a head's pairs or values is a strip-mining loop: VSETVLI takes
// what is left, the body runs on vl lanes, and every pointer it used moves
// on by vl elements. An interleaved head's pairs are seen through segment
// loads and stores (VLSEG2/VSSEG2: the a-values and the b-values; the row's
// C[a] and S[b] in strided loads), a neox head's as its two halves. Values
// are virtual registers, allocated by linear scan (alloc.go) at the largest
// LMUL, 4, 2 or 1, at which they fit. Scalars (the norm's r, ε, constants)
// stay in F and X registers, the operands of the .vf and .vx forms. Heads go
// one at a time, and no row is kept in registers: the vector length is not
// known when the kernel is written.
//
// Every operation rounds once, to nearest even: the vector floating point
// by frm, which Go leaves at RNE; Go's scalar instructions by their
// encoded rounding; no narrowing shift shifts bits out, so vxrm does not
// matter. q8_0 is the family's (vec's quantize and dequantize) on the
// blocks of quantizer.go. No
// fused multiply-add but the norm's VFWMACC, whose product of two float32
// values is exact in float64. f16, bf16, e4m3 and e5m2 convert by the
// minifloat family (vec.Narrow, vec.Widen) on the integer operations of
// codecops.go: RVV has no f16 conversion without Zvfhmin, which x/sys/cpu
// does not report, so there is no Native hook.
// The kernels need VLEN ≥ 128, which the V extension guarantees.
package riscv64

import (
	"fmt"
	"math"
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

// Target emits one kernel at a time, on virtual registers.
type Target struct {
	f          *vec.Func
	lmul       int    // the compute type's LMUL in strips
	pre, code  []*ins // the constants, then the body
	loops      []loop
	labels     int
	consts     map[string]*reg
	scaled     map[*reg]int // strides turned into bytes, by element size
	frame      int          // stack bytes: a norm's scratch heads
	sew, ratio int          // the vtype: SEW, and SEW/LMUL
	tail       string       // "TA", or "TU": lanes past vl kept
	// The codec families' constants (codecops.go): set once at the
	// function's start (local 0), or, when they would take too many X
	// registers, where used: once a strip (1) or at each use (2); the
	// bits of each.
	local  int
	kbits  map[*reg]uint32
	kcache map[string]*reg // local: the constants set in this strip or block
	iotas  map[*reg]iota   // Iota's groups not made yet (mat)
	lanes  map[*reg]*reg   // lane 0 of a group in an X register (lane0)
	remat  bool            // made again at each use: Iota's and LoadF32x32's groups
	loads  map[*reg]load   // LoadF32x32's members not loaded yet (remat)
	arm    int             // the arm of If being emitted (0: none), of arms
	arms   int
}

// Generate emits funcs (their Level unset) as RVV kernels, the table fill
// aside: the .s file (header, the build constraint, the functions), the
// functions with their Level set, and their Go stubs.
func Generate(funcs []*vec.Func, header, constraint string) (asm []byte, out []*vec.Func, stubs string, err error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\n//go:build %s\n\n#include \"textflag.h\"\n", header, constraint)
	var decls []string
	for _, f := range funcs {
		if f.Kind == vec.Fill {
			continue
		}
		g := *f
		g.Level = "rvv"
		t := &Target{}
		vec.Emit(t, &g)
		if t.code == nil {
			return nil, nil, "", fmt.Errorf("riscv64: the values of %s do not fit in the registers", g.Name())
		}
		flag := "NOSPLIT, "
		if t.frame > 256 { // a stack check
			flag = ""
		}
		_, size := g.Frame()
		fmt.Fprintf(&b, "\n// %s %s, using RVV at LMUL %d.\nTEXT ·%s(SB), %s$%d-%d\n", g.Name(), g.Doc(), t.lmul, g.Name(), flag, t.frame, size)
		t.print(&b)
		out, decls = append(out, &g), append(decls, g.Decl())
	}
	return []byte(b.String()), out, strings.Join(decls, "\n"), nil
}

// Level is "rvv".
func (t *Target) Level() string { return "rvv" }

// Func emits f at the largest LMUL at which its values fit.
// Failing that, a block's values loaded by LoadF32x32 and Iota's are
// made again at each use (remat: quantizer.go), the values of the qn
// family's range formats (q4_1, q5_1) being more than the registers hold.
func (t *Target) Func(f *vec.Func, body func()) {
	for _, remat := range []bool{false, true} {
		for _, l := range []int{4, 2, 1} {
			for local := range 3 {
				*t = Target{f: f, lmul: l, consts: map[string]*reg{}, scaled: map[*reg]int{}, local: local, kbits: map[*reg]uint32{}, remat: remat}
				body()
				t.emit("RET")
				if t.alloc() {
					return
				}
			}
		}
	}
	t.code = nil
}

func (t *Target) emit(op string, args ...any) *ins {
	in := &ins{op, args}
	t.code = append(t.code, in)
	return in
}

func (t *Target) reg(class byte, n int) *reg { return &reg{class: class, n: n, first: -1} }
func (t *Target) x() *reg                    { return t.reg('X', 1) }
func (t *Target) fr() *reg                   { return t.reg('F', 1) }

// vreg is a register group for lanes of sew bits at the current vl.
func (t *Target) vreg(sew int) *reg { return t.reg('V', max(1, sew/t.ratio)) }

// newLabel is a fresh label, placed where it is appended to the code.
func (t *Target) newLabel() *ins {
	t.labels++
	return &ins{"", []any{fmt.Sprintf("l%d", t.labels)}}
}

// place puts the label l here.
func (t *Target) place(l *ins) { t.code = append(t.code, l) }

// label places a fresh label.
func (t *Target) label() *ins {
	l := t.newLabel()
	t.place(l)
	return l
}

// loop emits op's branch back to top, with the operands args.
func (t *Target) loop(op string, top *ins, args ...any) {
	t.loops = append(t.loops, loop{top, t.emit(op, append(args, top.args[0])...)})
}

// csew is the compute type's width in bits.
func (t *Target) csew() int { return 8 * t.f.C().Size }

// setvl sets vl to avl (a register, or a constant below 32) lanes of sew
// bits, sew/ratio registers a group (vl, a register, or "X0").
func (t *Target) setvl(avl any, sew, ratio int, tail string, vl any) {
	t.sew, t.ratio, t.tail = sew, ratio, tail
	op := "VSETVLI"
	if _, ok := avl.(int); ok {
		op = "VSETIVLI"
	}
	t.emit(op, avl, t.vtype(sew), tail, "MU", vl)
}

// vt makes the lanes sew bits wide, vl kept.
func (t *Target) vt(sew int) {
	if t.sew != sew {
		t.sew = sew
		t.emit("VSETVLI", "X0", t.vtype(sew), t.tail, "MU", "X0")
	}
}

func (t *Target) vtype(sew int) string {
	if sew < t.ratio {
		return fmt.Sprintf("E%d, MF%d", sew, t.ratio/sew)
	}
	return fmt.Sprintf("E%d, M%d", sew, sew/t.ratio)
}

// constant is a register holding bits: an X register, or an F register of
// size bytes (the value NaN-boxed), set once at the function's start.
func (t *Target) constant(class byte, size int, bits uint64) *reg {
	key := fmt.Sprintf("%c%d:%x", class, size, bits)
	if r, ok := t.consts[key]; ok {
		return r
	}
	r := t.x()
	t.pre = append(t.pre, &ins{"MOV", []any{int(int64(bits)), r}})
	if class == 'F' {
		x := r
		r = t.fr()
		t.pre = append(t.pre, &ins{map[int]string{4: "FMVWX", 8: "FMVDX"}[size], []any{x, r}})
	}
	t.consts[key] = r
	return r
}

func (t *Target) int(v int) *reg       { return t.constant('X', 8, uint64(v)) }
func (t *Target) f32(bits uint32) *reg { return t.constant('F', 4, uint64(bits)) }

// arg is the argument name's frame operand (a slice's base for a slice).
func (t *Target) arg(name string) string {
	off, _ := t.f.Frame()
	for _, p := range t.f.Params() {
		if p.Name == name && strings.HasPrefix(p.Type, "[]") {
			name += "_base"
		}
	}
	return fmt.Sprintf("%s+%d(FP)", name, off[strings.TrimSuffix(name, "_base")])
}

// Ptr is the pointer argument name: an array whose P is its register.
func (t *Target) Ptr(name string, e vec.Elem) vec.Arr {
	return vec.Arr{Name: name, Elem: e, P: t.Int(name)}
}

// Int is the int argument name, in a register.
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
	t.code = append(t.code, move(a.Off*a.Elem.Size, a.P.(*reg), p))
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
	a.P, a.Off = t.addr(a), 0
	return a
}

// Local is n elements of e on the stack, above the saved return address.
func (t *Target) Local(n int, e vec.Elem) vec.Arr {
	p := t.x()
	t.emit("ADD", 8+t.frame, "X2", p)
	t.frame += (n*e.Size + 7) / 8 * 8
	return vec.Arr{Name: "scratch", Elem: e, P: p}
}

// Heads runs body over the n heads, one at a time.
func (t *Target) Heads(n vec.Int, walks []vec.Walk, _ *vec.Arr, body func(vec.Head)) {
	t.Loop(n, walks, body)
}

// Loop runs body n times, the walks moving on after each.
//
//	for ; n > 0; n-- { body; p += step for each walk }
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
	body(t)
	for i, w := range walks {
		t.emit("ADD", steps[i], w.A.P, w.A.P)
	}
	t.emit("ADD", -1, cnt, cnt)
	t.loop("BNEZ", top, cnt)
	t.place(end)
}

// bytes is the stride r turned into bytes of size-byte elements, in place,
// once.
func (t *Target) bytes(r *reg, size int) *reg {
	if s, ok := t.scaled[r]; ok && s != size {
		panic("riscv64: a stride walks arrays of two element sizes")
	} else if !ok && size > 1 {
		t.emit("SLLI", map[int]int{2: 1, 4: 2, 8: 3}[size], r, r)
	}
	t.scaled[r] = size
	return r
}

func (t *Target) Mul(a, b vec.V) vec.V { return t.arith("MUL", a, b, true) }
func (t *Target) Add(a, b vec.V) vec.V { return t.arith("ADD", a, b, true) }
func (t *Target) Sub(a, b vec.V) vec.V { return t.arith("SUB", a, b, false) }
func (t *Target) Div(a, b vec.V) vec.V { return t.arith("DIV", a, b, false) }

// arith is a op b in the compute type: .vv, or .vf with a scalar (VFRSUB,
// VFRDIV when a is the scalar).
func (t *Target) arith(op string, a, b vec.V, commutes bool) vec.V {
	x, y := t.mat(a.(*reg)), t.mat(b.(*reg))
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
	d := t.reg('V', x.n)
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
