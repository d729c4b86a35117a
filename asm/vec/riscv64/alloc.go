package riscv64

import (
	"fmt"
	"strings"
)

// reg is a virtual register: a group of n vector registers ('V'), a mask
// ('M', always V0), a general ('X') or a floating-point ('F') register. A
// member of a pair lives in the pair's group, off registers on.
type reg struct {
	class       byte
	n           int
	in          *reg
	off         int
	phys        int
	first, last int // the instructions it is live between
}

// root is the register r lives in and r's offset there.
func (r *reg) root() (*reg, int) {
	if r.in == nil {
		return r, 0
	}
	p, o := r.in.root()
	return p, o + r.off
}

func (r *reg) String() string {
	p, o := r.root()
	c := p.class
	if c == 'M' {
		c = 'V'
	}
	return fmt.Sprintf("%c%d", c, p.phys+o)
}

// mem is the address in a register, "(X5)"; memAt off bytes on from it,
// "1(X5)" (the scalar loads and stores).
type mem struct{ p *reg }

type memAt struct {
	p   *reg
	off int
}

// ins is an instruction, op and its operands in Go's order (a *reg, a mem,
// an int printed as a constant, or text), or a label (op "").
type ins struct {
	op   string
	args []any
}

// loop is a backward branch and its label: a value live into the loop
// lives to its end.
type loop struct{ top, end *ins }

// gp are the general registers a kernel may use: not X0–X4 (zero, LR, SP,
// GP, TP), X26 (the closure context), X27 (g) or X31 (the assembler's).
var gp = []int{5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 28, 29, 30}

// alloc assigns the virtual registers by linear scan over their live
// ranges: a group of n vector registers at a multiple of n, masks at V0,
// no two overlapping ranges in one register, but for a group dying at
// the elementwise instruction making another of its size (reuses). It
// reports whether they fit.
func (t *Target) alloc() bool {
	code := append(t.pre, t.code...)
	at := map[*ins]int{}
	var regs []*reg
	for i, in := range code {
		at[in] = i
		for _, a := range in.args {
			r, ok := a.(*reg)
			if m, isMem := a.(mem); isMem {
				r, ok = m.p, true
			}
			if m, isMem := a.(memAt); isMem {
				r, ok = m.p, true
			}
			if !ok {
				continue
			}
			if r, _ = r.root(); r.first < 0 {
				r.first = i
				regs = append(regs, r)
			}
			r.last = i
		}
	}
	for _, l := range t.loops { // inner loops end, and were appended, first
		for _, r := range regs {
			if r.first < at[l.top] && r.last >= at[l.top] && r.last < at[l.end] {
				r.last = at[l.end]
			}
		}
	}
	var done []*reg
	place := func(r *reg, cands []int) bool {
	next:
		for _, p := range cands {
			for _, q := range done {
				file := q.class == r.class || q.class+r.class == 'V'+'M'
				if file && q.first <= r.last && r.first <= q.last && q.phys < p+r.n && p < q.phys+q.n && !reuses(code, q, r) {
					continue next
				}
			}
			r.phys, done = p, append(done, r)
			return true
		}
		return false
	}
	for _, class := range "MVXF" { // the masks first: V0 is theirs
		for _, r := range regs {
			var cands []int
			switch {
			case r.class != byte(class):
				continue
			case class == 'M':
				cands = []int{0}
			case class == 'X':
				cands = gp
			default: // V and F from the top down, away from the masks' V0
				for p := 32 - r.n; p >= 0; p -= r.n {
					cands = append(cands, p)
				}
			}
			if !place(r, cands) {
				return false
			}
		}
	}
	t.code = code
	return true
}

// elementwise are the instructions whose result may be written over a
// source of its lanes' width (RVV 1.0 §5.2: same EEW and EMUL): a value
// dying there leaves its group to the result.
var elementwise = map[string]bool{}

func init() {
	for _, op := range strings.Fields(`VFADDVV VFADDVF VFSUBVV VFSUBVF VFRSUBVF VFMULVV VFMULVF VFDIVVV VFDIVVF VFRDIVVF
		VFMINVV VFMINVF VFMAXVV VFMAXVF VFCVTRTZXFV VFCVTFXV VFSGNJXVV VMAXUVV VMERGEVVM VMERGEVXM
		VANDVV VANDVX VANDVI VORVV VORVX VXORVV VXORVX VADDVV VADDVX VSUBVV VSUBVX VRSUBVX
		VSLLVV VSLLVX VSLLVI VSRLVV VSRLVX VSRLVI`) {
		elementwise[op] = true
	}
}

// reuses reports whether q and r, vector groups of one size, may share
// registers: one dies at the elementwise instruction making the other.
func reuses(code []*ins, q, r *reg) bool {
	if q.class != 'V' || r.class != 'V' || q.n != r.n {
		return false
	}
	return q.last == r.first && elementwise[code[r.first].op] || r.last == q.first && elementwise[code[q.first].op]
}

// print writes the function's instructions.
func (t *Target) print(b *strings.Builder) {
	for _, in := range t.code {
		if in.op == "" {
			fmt.Fprintf(b, "%s:\n", in.args[0])
			continue
		}
		s := make([]string, len(in.args))
		for i, a := range in.args {
			switch a := a.(type) {
			case int:
				s[i] = fmt.Sprintf("$%d", a)
			case mem:
				s[i] = "(" + a.p.String() + ")"
			case memAt:
				s[i] = fmt.Sprintf("%d(%s)", a.off, a.p)
			default:
				s[i] = fmt.Sprint(a)
			}
		}
		fmt.Fprintf(b, "\t%s\t%s\n", in.op, strings.Join(s, ", "))
	}
}
