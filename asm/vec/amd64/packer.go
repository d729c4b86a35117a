package amd64

import (
	"github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"

	"github.com/ropegen/ropegen/asm/vec"
)

// The qn family's operations (vec.Packer) on a block's members (2 ZMM at
// AVX-512, 4 YMM at AVX2, as Quantizer's): AVX2's variable shifts, the
// nibbles packed by VPMOVDB (AVX-512) or unsigned-saturating packs (AVX2,
// every lane in range), unpacked by VPMOVZXBD.

// Shlv32 and Shrv32 are VPSLLVD and VPSRLVD: a shifted by b's lanes.
func (t *Target) Shlv32(a, b vec.V) vec.V { return t.int2(t.c.VPSLLVD, t.c.VPSLLVD, a, b) }
func (t *Target) Shrv32(a, b vec.V) vec.V { return t.int2(t.c.VPSRLVD, t.c.VPSRLVD, a, b) }

// OrAcross is VPOR of the members, then of the register with its halves,
// quarters, … swapped, until every lane holds the OR (MaxAcross's shape).
func (t *Target) OrAcross(xs []vec.V) vec.V {
	if t.l.masked {
		return t.across(xs, t.c.VPORD)
	}
	return t.across(xs, func(ops ...operand.Op) { t.c.VPOR(ops[0], ops[1], ops[2]) })
}

// StoreNibbles is, for the lanes j < 16 (member 0 at AVX-512, members 0
// and 1 at AVX2), q_j | q_{j+16}<<4 narrowed to bytes: VPMOVDB at
// AVX-512; at AVX2 VPACKUSDW, VPACKUSWB of the two 128-bit halves and
// VPSHUFD putting their dwords in order.
func (t *Target) StoreNibbles(a vec.Arr, qs []vec.V) {
	c := t.c
	m := t.mem(a, 0)
	half := len(qs) / 2
	vs := make([]reg.VecVirtual, half)
	for i := range vs {
		// v_i = q_j | q_{j+16}<<4
		vs[i] = t.materialize(t.Or(qs[i], t.Shl32(qs[i+half], 4)).(*value))
	}
	if t.l.masked {
		c.VPMOVDB(vs[0], m)
		return
	}
	// words: v0[0:4] v1[0:4] | v0[4:8] v1[4:8]
	w, hi, b := c.YMM(), c.XMM(), c.XMM()
	c.VPACKUSDW(vs[1], vs[0], w)
	c.VEXTRACTI128(operand.U8(1), w, hi)
	// bytes: v0[0:4] v1[0:4] v0[4:8] v1[4:8], dwords 0 2 1 3 in order
	c.VPACKUSWB(hi, w.AsX(), b)
	c.VPSHUFD(operand.U8(0xd8), b, b)
	c.VMOVDQU(b, m)
}

// LoadNibbles is VPMOVZXBD of the 16 bytes (two halves of 8 at AVX2),
// then byte & 15 (q_j) and byte >> 4 (q_{j+16}).
func (t *Target) LoadNibbles(a vec.Arr) []vec.V {
	per := t.lanes()
	half := 16 / per
	bs := make([]vec.V, half)
	for i := range bs {
		r := t.reg(per)
		t.c.VPMOVZXBD(t.mem(a, 0).Offset(i*per), r)
		bs[i] = &value{r: r, w: per, e: vec.F32}
	}
	qs := make([]vec.V, 2*half)
	for i, b := range bs {
		qs[i] = t.And(b, t.U32(15))
		qs[i+half] = t.Shr32(b, 4)
	}
	return qs
}

// LoadU32 is VPBROADCASTD of the 32 bits at a.
func (t *Target) LoadU32(a vec.Arr) vec.V {
	d := t.reg(t.lanes())
	t.c.VPBROADCASTD(t.mem(a, 0), d)
	return &value{r: d, w: t.lanes(), e: vec.F32}
}

// StoreU32 is VMOVD of lane 0.
func (t *Target) StoreU32(a vec.Arr, v vec.V) {
	r := t.materialize(v.(*value))
	t.c.VMOVD(r.AsX(), t.mem(a, 0))
}

var _ vec.Packer = (*Target)(nil)

// AddInOrder (vec.Summer) is a scalar VADDSS chain from lane 0 of a over
// the lanes in order: each member's 128-bit quarters (halves at AVX2)
// taken out by VEXTRACTF32X4 (VEXTRACTF128), lane 0 added directly, lanes
// 1, 2, 3 brought down by VMOVSHDUP, VMOVHLPS and VPERMILPS; the sum
// broadcast.
func (t *Target) AddInOrder(a vec.V, xs []vec.V) vec.V {
	c := t.c
	s, from := c.XMM(), t.materialize(a.(*value)).AsX()
	for _, x := range xs {
		r := t.materialize(x.(*value))
		for k := range r.Size() / 16 {
			q := r.AsX()
			if k > 0 {
				q = c.XMM()
				if t.l.masked {
					c.VEXTRACTF32X4(operand.U8(k), r, q)
				} else {
					c.VEXTRACTF128(operand.U8(k), r, q)
				}
			}
			c.VADDSS(q, from, s) // s = s + q[0]
			from = s
			l1, l2, l3 := c.XMM(), c.XMM(), c.XMM()
			c.VMOVSHDUP(q, l1)
			c.VADDSS(l1, s, s)
			c.VMOVHLPS(q, q, l2)
			c.VADDSS(l2, s, s)
			c.VPERMILPS(operand.U8(3), q, l3)
			c.VADDSS(l3, s, s)
		}
	}
	d := t.reg(t.lanes())
	c.VBROADCASTSS(s, d)
	return &value{r: d, w: t.lanes(), e: vec.F32}
}
