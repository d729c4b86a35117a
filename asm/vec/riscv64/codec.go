package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// widen is the lanes v of e as float32 lanes, exactly: zero-extended to
// 32-bit lanes, then the minifloat family (vec.Widen).
func (t *Target) widen(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	return vec.Widen(t, e, t.extend(e, v)).(*reg)
}

// narrow is the float32 lanes v as lanes of e, rounded to nearest even:
// the minifloat family (vec.Narrow), its bits packed to e's width.
func (t *Target) narrow(e vec.Elem, v *reg) *reg {
	if e.Size >= 4 {
		return v
	}
	return t.pack(e, t.group(vec.Narrow(t, e, v).(*reg)))
}
