package arm64

import (
	"fmt"
	"sort"
	"strings"

	"github.com/ropegen/ropegen/asm/neon"
)

// The register allocator: a function is written with virtual V registers
// (vr), then each gets one of V0…V31 by a linear scan over the lines: a
// register is live from the first line naming it to the last, extended to
// the end of every loop whose head it is live at (a back branch), and the
// registers a multi-register load or store names (LD2, ST2, LD1 of two or
// four) are allocated together, consecutive, from the first of them.

// vr is a virtual V register.
type vr int

// line is one line of the function: text, or an instruction naming
// virtual registers, rendered once they are allocated.
type line struct {
	text   string
	render func(p []int) string
	regs   []vr
	label  string // "top:" lines
	target string // branches
}

func (t *Target) vreg() vr {
	t.nv++
	return vr(t.nv - 1)
}

// vop writes an instruction in Go's syntax; vr arguments are printed as
// their registers' numbers.
func (t *Target) vop(format string, args ...any) {
	var regs []vr
	for _, a := range args {
		if r, ok := a.(vr); ok {
			regs = append(regs, r)
		}
	}
	t.lines = append(t.lines, line{regs: regs, render: func(p []int) string {
		out, k := make([]any, len(args)), 0
		for i, a := range args {
			if _, ok := a.(vr); ok {
				a, k = p[k], k+1
			}
			out[i] = a
		}
		return "\t" + fmt.Sprintf(format, out...)
	}})
}

// enc writes an instruction Go's assembler lacks: fn's encoding of the
// registers regs (Arm order, destination first).
func (t *Target) enc(fn func(p []neon.Reg) (neon.Inst, error), regs ...vr) {
	t.lines = append(t.lines, line{regs: regs, render: func(p []int) string {
		rs := make([]neon.Reg, len(p))
		for i, r := range p {
			rs[i] = neon.Reg(r)
		}
		in, err := fn(rs)
		if err != nil && t.err == nil {
			t.err = err
		}
		return "\t" + in.GoAsm()
	}})
}

// e3 and e2 write the three- and two-register forms of the encoder.
func (t *Target) e3(fn func(neon.Arrangement, neon.Reg, neon.Reg, neon.Reg) (neon.Inst, error), a neon.Arrangement, d, n, m vr) {
	t.enc(func(p []neon.Reg) (neon.Inst, error) { return fn(a, p[0], p[1], p[2]) }, d, n, m)
}

func (t *Target) e2(fn func(neon.Arrangement, neon.Reg, neon.Reg) (neon.Inst, error), a neon.Arrangement, d, n vr) {
	t.enc(func(p []neon.Reg) (neon.Inst, error) { return fn(a, p[0], p[1]) }, d, n)
}

// lab writes a label; br a branch to one.
func (t *Target) lab(name string) {
	t.lines = append(t.lines, line{text: "\n" + name + ":", label: name})
}

func (t *Target) br(op, name string) {
	t.lines = append(t.lines, line{text: "\t" + op + " " + name, target: name})
}

// group asks for rs in consecutive registers.
func (t *Target) group(rs ...vr) { t.groups = append(t.groups, rs) }

// allocate renders lines[from:] with registers.
func (t *Target) allocate(from int) []string {
	ls := t.lines[from:]
	start, end := map[vr]int{}, map[vr]int{}
	for i, l := range ls {
		for _, r := range l.regs {
			if _, ok := start[r]; !ok {
				start[r] = i
			}
			end[r] = i
		}
	}
	// Loops: a register live at a label a later branch returns to lives to
	// the branch.
	labels := map[string]int{}
	for i, l := range ls {
		if l.label != "" {
			labels[l.label] = i
		}
	}
	for changed := true; changed; {
		changed = false
		for b, l := range ls {
			h, ok := labels[l.target]
			if !ok || h > b {
				continue
			}
			for r, s := range start {
				if s < h && end[r] >= h && end[r] < b {
					end[r], changed = b, true
				}
			}
		}
	}
	groupOf := map[vr][]vr{}
	for _, g := range t.groups {
		s := start[g[0]]
		for _, r := range g {
			s = min(s, start[r])
		}
		for _, r := range g {
			start[r], groupOf[r] = s, g
		}
	}
	var order []vr
	for r := range start {
		order = append(order, r)
	}
	sort.Slice(order, func(i, j int) bool {
		if start[order[i]] != start[order[j]] {
			return start[order[i]] < start[order[j]]
		}
		return order[i] < order[j]
	})
	phys, busy := map[vr]int{}, [32]vr{}
	for i := range busy {
		busy[i] = -1
	}
	for _, r := range order {
		if _, done := phys[r]; done {
			continue
		}
		for i, b := range busy { // free the registers whose values ended
			if b >= 0 && end[b] < start[r] {
				busy[i] = -1
			}
		}
		g, ok := groupOf[r]
		if !ok {
			g = []vr{r}
		}
		p := -1
		for i := 0; i+len(g) <= 32 && p < 0; i++ {
			p = i
			for k := range g {
				if busy[i+k] >= 0 {
					p = -1
				}
			}
		}
		if p < 0 {
			panic(fmt.Sprintf("arm64: %s: more than 32 V registers live", t.f.Name()))
		}
		for k, m := range g {
			phys[m], busy[p+k] = p+k, m
		}
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		if l.render == nil {
			out[i] = l.text
			continue
		}
		p := make([]int, len(l.regs))
		for k, r := range l.regs {
			p[k] = phys[r]
		}
		out[i] = l.render(p)
	}
	return strings.Split(strings.Join(out, "\n"), "\n")
}
