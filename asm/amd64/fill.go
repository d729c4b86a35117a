package amd64

import (
	"math"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The fill kernels compute table rows of float32 tables: for pairs
// [0, n) with n the largest multiple of the level's float64 lanes not above
// R/2, they set C[a] = C[b] = float32(attn·cos φ_i), S[a] = −float32(attn·sin φ_i)
// and S[b] = −S[a], φ_i = pos·θ_i, with the sin and cos of gen's sincos
// (gen/sincos.go) computed lane by lane in float64: the same operations in
// the same order, each rounded once, the quadrant handled with the same
// integer operations, so the bits are those of the pure Go fillRow. The
// caller fills the pairs past n in Go and uses the kernels only when every
// angle is below sincosMax (2³¹), where sincos needs no math.Sincos.
//
//	func fillAVX512(r *[2R]float32, pos float64, freqs *[R/2]float64, attn float64) (n int)
//
// FillConsts lists, in order, the float64 constants of gen's sincos: a test
// in package gen checks them against its source.
var FillConsts = []float64{
	2 / math.Pi, 0x1.8p52, // the quadrant k = round(x·2/π)
	0x1.921fbp+0, 0x1.5110bp-22, 0x1.1846980p-44, 0x1.3198a2e037073p-69, // π/2 in four parts
	8.33333333332211858878e-3, 1.66666666666666307295e-1, // sin: s0 = S4·z − S5'
	2.75573136213857245213e-6, 1.98412698295895385996e-4, // s1
	1.58962301576546568060e-10, 2.50507477628578072866e-8, // s2
	-1.38888888888730564116e-3, 4.16666666666665929218e-2, // cos: c0 = C4·z + C5
	-2.75573141792967388112e-7, 2.48015872888517045348e-5, // c1
	-1.13585365213876817300e-11, 2.08757008419747316778e-9, // c2
	0.5, 1,
}

// Indices into FillConsts.
const (
	fcTwoOverPi = iota
	fcMagic
	fcP1
	fcP2
	fcP3
	fcP4
	fcS4
	fcS5
	fcS2
	fcS3
	fcS0
	fcS1
	fcC4
	fcC5
	fcC2
	fcC3
	fcC0
	fcC1
	fcHalf
	fcOne
	fcIntOne   // integer 1 in each 64-bit lane
	fcIntTwo   // integer 2
	fcEvenSign // float32 sign bit in the even 32-bit lanes
	fcSign32   // float32 sign bit in every 32-bit lane
	fcDupIndex // VPERMPS indexes 0,0,1,1,…,7,7 (64 bytes: two slots)
	fcSlots    = fcDupIndex + 2
)

// fillTable is the name of the static constant table of the fill kernels.
const fillTable = "fillconst"

// fillSlot is the size of one constant's slot: four copies, so that an AVX2
// instruction can read a whole YMM operand.
const fillSlot = 32

// emitFillTable emits the constant table: slot i holds constant i four
// times.
func emitFillTable(c *build.Context) operand.Mem {
	m := c.StaticGlobal(fillTable)
	c.DataAttributes(attr.RODATA | attr.NOPTR)
	for i := 0; i < fcSlots; i++ {
		var v uint64
		switch {
		case i < len(FillConsts):
			v = math.Float64bits(FillConsts[i])
		case i == fcIntOne:
			v = 1
		case i == fcIntTwo:
			v = 2
		case i == fcEvenSign:
			v = 0x80000000
		case i == fcSign32:
			v = 0x8000000080000000
		}
		for j := 0; j < fillSlot/8; j++ {
			if i >= fcDupIndex {
				k := (i-fcDupIndex)*fillSlot/8 + j // 64-bit word k: lanes 2k and 2k+1 take lane k
				v = uint64(k) | uint64(k)<<32
			}
			c.AddDatum(i*fillSlot+8*j, operand.U64(v))
		}
	}
	return m
}

// fillEmitter emits one fill kernel.
type fillEmitter struct {
	c     *build.Context
	l     level
	tab   operand.Mem
	lanes int // float64 lanes
}

func (f *fillEmitter) vec() reg.VecVirtual {
	if f.l.masked {
		return f.c.ZMM()
	}
	return f.c.YMM()
}

// k returns constant i as an operand: a broadcast m64 at AVX-512, the whole
// slot at AVX2.
func (f *fillEmitter) k(i int) operand.Mem { return f.tab.Offset(i * fillSlot) }

// op emits d = a op constant i (or a op b when b != nil).
func (f *fillEmitter) op(avx512, avx512bcst, avx2 func(...operand.Op), a reg.VecVirtual, b operand.Op, i int) reg.VecVirtual {
	d := f.vec()
	switch {
	case b != nil && f.l.masked:
		avx512(b, a, d)
	case b != nil:
		avx2(b, a, d)
	case f.l.masked:
		avx512bcst(f.k(i), a, d)
	default:
		avx2(f.k(i), a, d)
	}
	return d
}

func (f *fillEmitter) mul(a reg.VecVirtual, b operand.Op, i int) reg.VecVirtual {
	return f.op(f.c.VMULPD, f.c.VMULPD_BCST, f.c.VMULPD, a, b, i)
}
func (f *fillEmitter) add(a reg.VecVirtual, b operand.Op, i int) reg.VecVirtual {
	return f.op(f.c.VADDPD, f.c.VADDPD_BCST, f.c.VADDPD, a, b, i)
}
func (f *fillEmitter) sub(a reg.VecVirtual, b operand.Op, i int) reg.VecVirtual {
	return f.op(f.c.VSUBPD, f.c.VSUBPD_BCST, f.c.VSUBPD, a, b, i)
}
func (f *fillEmitter) and(a reg.VecVirtual, b operand.Op, i int) reg.VecVirtual {
	return f.op(f.c.VPANDQ, f.c.VPANDQ_BCST, three(f.c.VPAND), a, b, i)
}
func (f *fillEmitter) xor(a reg.VecVirtual, b operand.Op) reg.VecVirtual {
	return f.op(f.c.VPXORQ, nil, three(f.c.VPXOR), a, b, 0)
}
func (f *fillEmitter) addq(a reg.VecVirtual, i int) reg.VecVirtual {
	return f.op(nil, f.c.VPADDQ_BCST, f.c.VPADDQ, a, nil, i)
}

// three adapts an avo instruction of three operands.
func three(in func(a, b, c operand.Op)) func(...operand.Op) {
	return func(o ...operand.Op) { in(o[0], o[1], o[2]) }
}

// emitFill emits the fill kernel of k at level l.
func emitFill(c *build.Context, l level, k Kernel, tab operand.Mem) {
	f := &fillEmitter{c: c, l: l, tab: tab, lanes: l.bytes / 8}
	h := k.RotaryDim / 2
	n := h - h%f.lanes
	rp := operand.Mem{Base: c.Load(c.Param("r"), c.GP64())}
	fp := operand.Mem{Base: c.Load(c.Param("freqs"), c.GP64())}
	bcast := func(name string) reg.VecVirtual {
		m, err := c.Param(name).Resolve()
		if err != nil {
			panic(err)
		}
		v := f.vec()
		c.VBROADCASTSD(m.Addr, v)
		return v
	}
	pos, attn := bcast("pos"), bcast("attn")
	done := c.GP64()
	c.MOVQ(operand.U32(n), done)
	c.Store(done, c.ReturnIndex(0))
	if n == 0 {
		c.VZEROUPPER()
		c.RET()
		return
	}
	cnt := c.GP64()
	c.MOVQ(operand.U32(n/f.lanes), cnt)
	step := f.lanes * 4 // bytes of C per block: neox
	if !k.NeoX {
		step *= 2 // interleaved: two values per pair
	}
	rOff := k.RotaryDim * 4 // S[0] from C[0]
	hOff := h * 4           // neox: the second member of pair i from the first

	c.Label("block")
	c.Commentf("%d angles: x = pos·θ, reduced by k·π/2, k = round(x·2/π)", f.lanes)
	th := f.vec()
	c.VMOVUPD(fp, th)
	x := f.mul(th, pos, 0)
	kb := f.add(f.mul(x, nil, fcTwoOverPi), nil, fcMagic)
	kk := f.sub(kb, nil, fcMagic)
	r := f.sub(x, f.mul(kk, nil, fcP1), 0)
	r = f.sub(r, f.mul(kk, nil, fcP2), 0)
	r = f.sub(r, f.mul(kk, nil, fcP3), 0)
	r = f.sub(r, f.mul(kk, nil, fcP4), 0)
	c.Comment("sin r and cos r: Estrin's scheme in z = r²")
	z := f.mul(r, r, 0)
	z2 := f.mul(z, z, 0)
	z4 := f.mul(z2, z2, 0)
	s0 := f.sub(f.mul(z, nil, fcS4), nil, fcS5)
	s1 := f.sub(f.mul(z, nil, fcS2), nil, fcS3)
	s2 := f.sub(f.mul(z, nil, fcS0), nil, fcS1)
	ps := f.add(f.add(s0, f.mul(z2, s1, 0), 0), f.mul(z4, s2, 0), 0)
	s := f.add(r, f.mul(f.mul(r, z, 0), ps, 0), 0)
	c0 := f.add(f.mul(z, nil, fcC4), nil, fcC5)
	c1 := f.add(f.mul(z, nil, fcC2), nil, fcC3)
	c2 := f.add(f.mul(z, nil, fcC0), nil, fcC1)
	pc := f.add(f.add(c0, f.mul(z2, c1, 0), 0), f.mul(z4, c2, 0), 0)
	one := f.vec()
	if f.l.masked {
		c.VBROADCASTSD(f.k(fcOne), one)
	} else {
		c.VMOVUPD(f.k(fcOne), one)
	}
	cs := f.add(f.sub(one, f.mul(z, nil, fcHalf), 0), f.mul(z2, pc, 0), 0)
	c.Comment("quadrant q = k mod 4 (the low bits of kb): swap, then negate")
	zero := f.vec()
	if f.l.masked {
		c.VPXORQ(zero, zero, zero)
	} else {
		c.VPXOR(zero, zero, zero)
	}
	m := f.vec()
	c.VPSUBQ(f.and(kb, nil, fcIntOne), zero, m) // −(q & 1)
	d := f.and(f.xor(s, cs), m, 0)
	s = f.xor(s, d)
	cs = f.xor(cs, d)
	t := f.and(kb, nil, fcIntTwo)
	c.VPSLLQ(operand.U8(62), t, t)
	s = f.xor(s, t)
	u := f.and(f.addq(kb, fcIntOne), nil, fcIntTwo)
	c.VPSLLQ(operand.U8(62), u, u)
	cs = f.xor(cs, u)
	c.Comment("attn·cos, attn·sin, rounded to float32")
	cf, sf := f.narrow(f.mul(cs, attn, 0)), f.narrow(f.mul(s, attn, 0))
	if k.NeoX {
		neg := f.xor32(sf, fcSign32)
		if f.l.masked {
			neg = neg.AsY().(reg.VecVirtual)
		}
		f.store32(cf, rp)
		f.store32(cf, rp.Offset(hOff))
		f.store32(neg, rp.Offset(rOff))
		f.store32(sf, rp.Offset(rOff+hOff))
	} else {
		cd, sd := f.dup(cf), f.dup(sf)
		sd = f.xor32(sd, fcEvenSign)
		f.store64(cd, rp)
		f.store64(sd, rp.Offset(rOff))
	}
	c.ADDQ(operand.U32(f.lanes*8), fp.Base)
	c.ADDQ(operand.U32(step), rp.Base)
	c.DECQ(cnt)
	c.JNZ(operand.LabelRef("block"))
	c.VZEROUPPER()
	c.RET()
}

// narrow converts the float64 lanes of v to float32: a YMM (AVX-512) or an
// XMM (AVX2), the bits above zeroed.
func (f *fillEmitter) narrow(v reg.VecVirtual) reg.VecVirtual {
	if f.l.masked {
		d := f.c.YMM()
		f.c.VCVTPD2PS(v, d)
		return d
	}
	d := f.c.XMM()
	f.c.VCVTPD2PSY(v, d)
	return d
}

// dup returns the float32 lanes of v each twice (0,0,1,1,…), in a register
// twice v's width.
func (f *fillEmitter) dup(v reg.VecVirtual) reg.VecVirtual {
	d := f.vec()
	idx := f.vec()
	if f.l.masked {
		f.c.VMOVDQU32(f.k(fcDupIndex), idx)
	} else {
		f.c.VMOVDQU(f.k(fcDupIndex), idx)
	}
	var src reg.Register = v.AsZ()
	if !f.l.masked {
		src = v.AsY()
	}
	f.c.VPERMPS(src, idx, d)
	return d
}

// xor32 returns v XOR constant i: at AVX-512 in a ZMM (v's upper lanes
// are zero and never stored), with the constant's 64 bits broadcast; at AVX2
// at v's width.
func (f *fillEmitter) xor32(v reg.VecVirtual, i int) reg.VecVirtual {
	if f.l.masked {
		d := f.c.ZMM()
		f.c.VPXORQ_BCST(f.k(i), v.AsZ(), d)
		return d
	}
	var d reg.VecVirtual
	if v.Size() == 32 {
		d = f.c.YMM()
	} else {
		d = f.c.XMM()
	}
	f.c.VPXOR(f.k(i), v, d)
	return d
}

func (f *fillEmitter) store32(v reg.VecVirtual, m operand.Mem) { f.c.VMOVUPS(v, m) }
func (f *fillEmitter) store64(v reg.VecVirtual, m operand.Mem) { f.c.VMOVUPS(v, m) }

// fillName returns the name of the fill kernel at level l.
func fillName(l level) string { return "fill" + strings.ToUpper(l.name) }

// fillSig returns the fill kernel's Go signature (rt's fillKernel).
func fillSig() string {
	return "func(r *float32, pos float64, freqs *float64, attn float64) (n int)"
}
