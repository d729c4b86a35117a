package arm64

import "github.com/ropegen/ropegen/asm/vec"

// The Hadamard family's operations (vec.Shuffler) in NEON: a member is a
// register of 4 float32; the lane swaps are REV64 (s = 1) and EXT by 8
// bytes (s = 2); a lane bit's mask is a register of all-ones lanes, made
// where it is used.

func (t *Target) Width() int { return 4 }

// Chunk is 8 registers, 32 values.
func (t *Target) Chunk() int { return 32 }

// LoadF32 is LD1 of four registers, k/16 times.
func (t *Target) LoadF32(a vec.Arr, k int) []vec.V {
	var x []vr
	for range k / 16 {
		x = append(x, t.regs(4)...)
	}
	t.scope(func() {
		g := t.addr(a)
		for i := 0; i < len(x); i += 4 {
			op := "VLD1.P 64(%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]"
			if i+4 == len(x) {
				op = "VLD1 (%s), [V%d.S4, V%d.S4, V%d.S4, V%d.S4]"
			}
			t.vop(op, g, x[i], x[i+1], x[i+2], x[i+3])
		}
	})
	return t.members(x)
}

// StoreF32 is ST1 of each register.
func (t *Target) StoreF32(a vec.Arr, xs []vec.V) {
	t.scope(func() {
		g := t.addr(a)
		for i, x := range xs {
			op := "VST1.P [V%d.S4], 16(%s)"
			if i == len(xs)-1 {
				op = "VST1 [V%d.S4], (%s)"
			}
			t.vop(op, x.(*value).r, g)
		}
	})
}

func (t *Target) SwapLanes(x vec.V, s int) vec.V {
	v := x.(*value)
	d := t.vreg()
	switch s {
	case 1:
		t.vop("VREV64 V%d.S4, V%d.S4", v.r, d)
	case 2:
		t.vop("VEXT $8, V%d.B16, V%d.B16, V%d.B16", v.r, v.r, d)
	default:
		panic("arm64: SwapLanes: no swap by this distance")
	}
	return &value{r: d, w: v.w, e: vec.F32}
}

// LaneBit is the lanes i with i&s ≠ 0 all ones, the register's two
// doublewords moved in from a general register.
func (t *Target) LaneBit(s int) vec.Mask {
	r := t.vreg()
	t.scope(func() {
		g := t.greg()
		for h := range 2 {
			var d uint64
			for j := range 2 {
				if (2*h+j)&s != 0 {
					d |= 0xffffffff << (32 * j)
				}
			}
			t.op("MOVD $%#x, %s", d, g)
			t.vop("VMOV %s, V%d.D[%d]", g, r, h)
		}
	})
	return &mask{r: r}
}

// Var is x: a register.
func (t *Target) Var(x vec.V) vec.V { return x }
