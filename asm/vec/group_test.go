package vec_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ropegen/ropegen/asm/vec"
	"github.com/ropegen/ropegen/verify/codec"
)

// vlanes is a target of L lanes evaluating the q8_0 family in Go, groups
// included (vec.QuantGrouper, K blocks a group): a V is the L uint32 bits
// of its lanes ([]uint32), a Mask L bools; every operation is the lane
// evaluator's (lane) lane by lane. A block of 32 values is 32/L members.
// It counts what the family asked of it, so the test can tell that the
// grouped path ran.
type vlanes struct {
	vec.Target // nil: only the operations below
	L, K       int
	n          *vcounts
}

type vcounts struct{ groups, common int }

type vm = []bool

func (g vlanes) v(a vec.V) []uint32 { return a.([]uint32) }

// map1, map2 and cmp are lane's operation f lane by lane.
func (g vlanes) map1(a vec.V, f func(vec.V) vec.V) vec.V {
	r := make([]uint32, g.L)
	for i, x := range g.v(a) {
		r[i] = f(x).(uint32)
	}
	return r
}

func (g vlanes) map2(a, b vec.V, f func(x, y vec.V) vec.V) vec.V {
	r := make([]uint32, g.L)
	for i := range r {
		r[i] = f(g.v(a)[i], g.v(b)[i]).(uint32)
	}
	return r
}

func (g vlanes) cmp(a, b vec.V, f func(x, y vec.V) vec.Mask) vec.Mask {
	m := make(vm, g.L)
	for i := range m {
		m[i] = f(g.v(a)[i], g.v(b)[i]).(bool)
	}
	return m
}

func (g vlanes) splat(x uint32) vec.V {
	r := make([]uint32, g.L)
	for i := range r {
		r[i] = x
	}
	return r
}

var l1 lane

func (g vlanes) Add(a, b vec.V) vec.V    { return g.map2(a, b, l1.Add) }
func (g vlanes) Mul(a, b vec.V) vec.V    { return g.map2(a, b, l1.Mul) }
func (g vlanes) Div(a, b vec.V) vec.V    { return g.map2(a, b, l1.Div) }
func (g vlanes) Const(v float64) vec.V   { return g.splat(l1.Const(v).(uint32)) }
func (g vlanes) U32(v uint32) vec.V      { return g.splat(v) }
func (g vlanes) AsU32(a vec.V) vec.V     { return a }
func (g vlanes) AsF32(a vec.V) vec.V     { return a }
func (g vlanes) And(a, b vec.V) vec.V    { return g.map2(a, b, l1.And) }
func (g vlanes) Or(a, b vec.V) vec.V     { return g.map2(a, b, l1.Or) }
func (g vlanes) Xor(a, b vec.V) vec.V    { return g.map2(a, b, l1.Xor) }
func (g vlanes) AndNot(a, b vec.V) vec.V { return g.map2(a, b, l1.AndNot) }
func (g vlanes) Add32(a, b vec.V) vec.V  { return g.map2(a, b, l1.Add32) }
func (g vlanes) Sub32(a, b vec.V) vec.V  { return g.map2(a, b, l1.Sub32) }
func (g vlanes) Shl32(a vec.V, n int) vec.V {
	return g.map1(a, func(x vec.V) vec.V { return l1.Shl32(x, n) })
}
func (g vlanes) Shr32(a vec.V, n int) vec.V {
	return g.map1(a, func(x vec.V) vec.V { return l1.Shr32(x, n) })
}
func (g vlanes) Gt32(a, b vec.V) vec.Mask { return g.cmp(a, b, l1.Gt32) }
func (g vlanes) Eq32(a, b vec.V) vec.Mask { return g.cmp(a, b, l1.Eq32) }
func (g vlanes) IsNaN(a vec.V) vec.Mask {
	return g.cmp(a, a, func(x, _ vec.V) vec.Mask { return l1.IsNaN(x) })
}
func (g vlanes) MinF(a, b vec.V) vec.V  { return g.map2(a, b, l1.MinF) }
func (g vlanes) MaxF(a, b vec.V) vec.V  { return g.map2(a, b, l1.MaxF) }
func (g vlanes) ToF32(a vec.V) vec.V    { return g.map1(a, l1.ToF32) }
func (g vlanes) TruncI32(a vec.V) vec.V { return g.map1(a, l1.TruncI32) }

func (g vlanes) Select(m vec.Mask, a, b vec.V) vec.V {
	r := make([]uint32, g.L)
	for i := range r {
		r[i] = l1.Select(m.(vm)[i], g.v(a)[i], g.v(b)[i]).(uint32)
	}
	return r
}

func (g vlanes) LoadBits(vec.Block, vec.Arr) vec.V   { panic("vlanes: no LoadBits") }
func (g vlanes) StoreBits(vec.Block, vec.Arr, vec.V) { panic("vlanes: no StoreBits") }

// MaxAcross is the largest lane of every member, in every lane.
func (g vlanes) MaxAcross(xs []vec.V) vec.V {
	m := uint32(0)
	for _, x := range xs {
		for _, v := range g.v(x) {
			m = max(m, v)
		}
	}
	return g.splat(m)
}

func (g vlanes) Iota(i, n int) vec.V {
	per := 32 / n
	r := make([]uint32, g.L)
	for l := range r {
		r[l] = uint32(i*per + l + 1)
	}
	return r
}

// If runs then when any lane of m holds.
func (g vlanes) If(m vec.Mask, then, els func()) {
	for _, b := range m.(vm) {
		if b {
			then()
			return
		}
	}
	els()
}

// Blocks32 is a Go loop over the n steps.
func (g vlanes) Blocks32(_ vec.Head, n int, src vec.Arr, ss int, dst vec.Arr, ds int, body func(s, d vec.Arr)) {
	for i := range n {
		body(src.At(i*ss), dst.At(i*ds))
	}
}

func (g vlanes) LoadF32x32(a vec.Arr) []vec.V {
	xs := make([]vec.V, 32/g.L)
	for i := range xs {
		r := make([]uint32, g.L)
		for l := range r {
			r[l] = binary.LittleEndian.Uint32(bytesOf(a)[4*(i*g.L+l):])
		}
		xs[i] = r
	}
	return xs
}

func (g vlanes) StoreF32x32(a vec.Arr, xs []vec.V) {
	for i, x := range xs {
		for l, v := range g.v(x) {
			binary.LittleEndian.PutUint32(bytesOf(a)[4*(i*g.L+l):], v)
		}
	}
}

func (g vlanes) LoadI8x32(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32/g.L)
	for i := range qs {
		r := make([]uint32, g.L)
		for l := range r {
			r[l] = uint32(int32(int8(bytesOf(a)[i*g.L+l])))
		}
		qs[i] = r
	}
	return qs
}

func (g vlanes) StoreI8x32(a vec.Arr, qs []vec.V) {
	for i, q := range qs {
		for l, v := range g.v(q) {
			bytesOf(a)[i*g.L+l] = byte(v)
		}
	}
}

func (g vlanes) LoadU16(a vec.Arr) vec.V { return g.splat(l1.LoadU16(a).(uint32)) }
func (g vlanes) StoreU16(a vec.Arr, v vec.V) {
	l1.StoreU16(a, g.v(v)[0])
}

// The group operations: lane j of a group vector is block j mod K's.

func (g vlanes) QuantGroup() int { return g.K }

func (g vlanes) MaxGroup(block func(i int) []vec.V) vec.V {
	g.n.groups++
	r := make([]uint32, g.L)
	for i := range g.K {
		m := g.v(g.MaxAcross(block(i)))[0]
		for l := i; l < g.L; l += g.K {
			r[l] = m
		}
	}
	return r
}

func (g vlanes) Spread(v vec.V, i int) vec.V {
	if i == 0 {
		g.n.common++
	}
	return g.splat(g.v(v)[i])
}

func (g vlanes) StoreU16Lane(a vec.Arr, v vec.V, i int) { l1.StoreU16(a, g.v(v)[i]) }

// TestQ8FamilyGroups checks q8's store of a head (vec.QuantizeHead) on a target
// with groups against verify/codec's Q8_0 block by block, bit for bit:
// heads of 0 to 4K+K−1 consecutive blocks (every count of blocks left
// over), every block common (2⁻¹¹⁸ ≤ amax < +Inf: random magnitudes from
// 2⁻¹¹⁸ to 2¹²⁷·1.9, halves, the edge cases of TestQ8Family that keep a
// block common) or, at one group position at a time or at random, rare (a
// NaN anywhere or last, ±Inf, all zeros, all tiny, amax just below 2⁻¹¹⁸);
// the bytes past the head untouched. At several lane counts and group
// sizes (AVX-512's 16 lanes and 4 blocks, AVX2's 8 and 4, …); it fails
// unless groups took both the grouped path and the rare one.
func TestQ8FamilyGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	nan := float32(math.NaN())
	tiny := math.Float32frombits(0x04800000) // 2⁻¹¹⁸
	keep := []float32{0, float32(math.Copysign(0, -1)), 1e-45, -3e-42, 1e-38, 3e38, -3.4e38, 65504, 7e4, 0.5, -0.5, 1.5, 127, 63.5, 1e-8}
	common := func() []float32 {
		x := make([]float32, 32)
		scale := math.Ldexp(1, r.IntN(240)-110)
		for j := range x {
			x[j] = float32(r.NormFloat64() * scale)
			if r.IntN(6) == 0 {
				x[j] = keep[r.IntN(len(keep))]
			}
		}
		switch r.IntN(5) {
		case 0:
			for j := range x {
				x[j] = float32(r.IntN(255)-127) / 2 // roundf's ties
			}
		case 1: // amax exactly 2⁻¹¹⁸, or just above, the rest smaller
			for j := range x {
				x[j] = float32(r.Float64()) * tiny
			}
			x[r.IntN(32)] = math.Float32frombits(0x04800000 + uint32(r.IntN(2)))
		case 2: // amax the largest float32
			x[r.IntN(32)] = -math.MaxFloat32
		}
		if a := amaxBits(x); a < 0x04800000 || a >= 0x7f800000 {
			x[0] = 1 // keep it common
		}
		return x
	}
	rare := func() []float32 {
		x := common()
		switch r.IntN(7) {
		case 0:
			x[r.IntN(32)] = nan
		case 1:
			x[31] = -nan
		case 2:
			x[r.IntN(32)] = float32(math.Inf(1 - 2*r.IntN(2)))
		case 3:
			for j := range x {
				x[j] = 0
			}
		case 4: // all tiny: amax below 2⁻¹¹⁸
			for j := range x {
				x[j] = float32(r.Float64()*2-1) * tiny
			}
			x[r.IntN(32)] = math.Float32frombits(0x047fffff)
		case 5: // subnormals only
			for j := range x {
				x[j] = math.Float32frombits(uint32(r.IntN(1 << 23)))
			}
		case 6: // a NaN, then the real values after it
			x[r.IntN(16)] = nan
		}
		if a := amaxBits(x); a >= 0x04800000 && a < 0x7f800000 {
			x[r.IntN(32)] = nan // still rare
		}
		return x
	}
	for _, c := range []struct{ L, K int }{{16, 4}, {8, 4}, {4, 4}, {8, 2}, {8, 8}} {
		n := &vcounts{}
		g := vlanes{L: c.L, K: c.K, n: n}
		for trial := range 4000 {
			nb := trial % (4*c.K + c.K)
			mode := trial % (c.K + 2) // < K: rare at that group position; K: none; K+1: at random
			x := make([][]float32, nb)
			for b := range x {
				switch {
				case mode < c.K && b%c.K == mode, mode == c.K+1 && r.IntN(3) == 0:
					x[b] = rare()
				default:
					x[b] = common()
				}
			}
			src := make([]byte, 128*nb+64)
			for b := range x {
				for j, v := range x[b] {
					binary.LittleEndian.PutUint32(src[128*b+4*j:], math.Float32bits(v))
				}
			}
			got := make([]byte, 34*nb+40)
			for i := range got {
				got[i] = byte(r.Uint32())
			}
			want := bytes.Clone(got)
			for b := range x {
				codec.Q8_0.Encode(want[34*b:34*b+34], x[b], 0)
			}
			vec.QuantizeHead(g, g, nil, nb, vec.Arr{Elem: vec.F32, P: &src}, vec.Arr{Elem: vec.Q8, P: &got})
			if !bytes.Equal(got, want) {
				for b := 0; b <= nb; b++ {
					hi := min(34*b+34, len(got))
					if !bytes.Equal(got[34*b:hi], want[34*b:hi]) {
						t.Fatalf("L %d K %d, %d blocks: block %d (%v):\n got %x\nwant %x", c.L, c.K, nb, b, x[min(b, max(nb-1, 0))], got[34*b:hi], want[34*b:hi])
					}
				}
			}
		}
		if n.common == 0 || n.common == n.groups {
			t.Errorf("L %d K %d: %d groups, %d of them by the grouped path: want both paths taken", c.L, c.K, n.groups, n.common)
		}
		t.Logf("L %d K %d: %d groups, %d by the grouped path", c.L, c.K, n.groups, n.common)
	}
}

// amaxBits is the largest of the magnitudes' bits of x.
func amaxBits(x []float32) uint32 {
	m := uint32(0)
	for _, v := range x {
		m = max(m, math.Float32bits(v)&0x7fffffff)
	}
	return m
}

// The vlanes evaluator's Packer operations (the qn family), lane's lane
// by lane; a block's 32 values are its members' lanes in order.

func (g vlanes) Sub(a, b vec.V) vec.V    { return g.map2(a, b, l1.Sub) }
func (g vlanes) Shlv32(a, b vec.V) vec.V { return g.map2(a, b, l1.Shlv32) }
func (g vlanes) Shrv32(a, b vec.V) vec.V { return g.map2(a, b, l1.Shrv32) }
func (g vlanes) OrAcross(xs []vec.V) vec.V {
	m := uint32(0)
	for _, x := range xs {
		for _, v := range g.v(x) {
			m |= v
		}
	}
	return g.splat(m)
}

// flat is the 32 values of a block's members.
func (g vlanes) flat(xs []vec.V) []uint32 {
	var r []uint32
	for _, x := range xs {
		r = append(r, g.v(x)...)
	}
	return r
}

func (g vlanes) StoreNibbles(a vec.Arr, qs []vec.V) {
	q := g.flat(qs)
	for j := range 16 {
		bytesOf(a)[j] = byte(q[j] | q[j+16]<<4)
	}
}
func (g vlanes) LoadNibbles(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32/g.L)
	for i := range qs {
		r := make([]uint32, g.L)
		for l := range r {
			j := i*g.L + l
			r[l] = uint32(bytesOf(a)[j%16]>>(4*(j/16))) & 15
		}
		qs[i] = r
	}
	return qs
}
func (g vlanes) LoadU32(a vec.Arr) vec.V     { return g.splat(l1.LoadU32(a).(uint32)) }
func (g vlanes) StoreU32(a vec.Arr, v vec.V) { l1.StoreU32(a, g.v(v)[0]) }

// TestQNFamilyGroups checks the qn family's store of a head
// (vec.QuantizeQNHead) on a target with groups against verify/codec's
// Q4_0, Q4_1, Q5_0 and Q5_1 block by block, bit for bit: heads of 0 to
// 4K+K−1 consecutive blocks (every count of blocks left over), random
// blocks of random scale, and TestQNFamily's edge blocks (a NaN at any
// position, ±0 ties with NaNs, all NaN, ±Inf, subnormals, huge with d =
// Inf, all zero, largest-magnitude ties of both signs, rounding
// boundaries) at one group position at a time or at random among random
// ones; the bytes past the head untouched. At several lane counts and
// group sizes (AVX-512's 16 lanes and 4 blocks, AVX2's 8 and 4, …); it
// fails unless groups were taken where quantizeQNGroup groups.
func TestQNFamilyGroups(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	edge := []int{3, 4, 5, 6, 7, 8, 9, 10, 11} // qnBlock's edge cases, trial % 13
	for _, c := range qnElems {
		bb := c.e.BlockBytes()
		for _, lk := range []struct{ L, K int }{{16, 4}, {8, 4}, {4, 4}, {8, 2}, {8, 8}, {32, 4}} {
			n := &vcounts{}
			g := vlanes{L: lk.L, K: lk.K, n: n}
			for trial := range 1200 {
				nb := trial % (4*lk.K + lk.K)
				mode := trial % (lk.K + 2) // < K: an edge block at that group position; K: none; K+1: at random
				x := make([][]float32, nb)
				for b := range x {
					tr := 2 * r.IntN(1<<20) // random, no edge values
					switch {
					case mode < lk.K && b%lk.K == mode, mode == lk.K+1 && r.IntN(3) == 0:
						tr = 13*r.IntN(1<<16) + edge[r.IntN(len(edge))]
					case r.IntN(4) == 0:
						tr = 26*r.IntN(1<<16) + 1 // random, edge values mixed in
					}
					x[b] = qnBlock(r, tr)
				}
				src := make([]byte, 128*nb+64)
				for b := range x {
					for j, v := range x[b] {
						binary.LittleEndian.PutUint32(src[128*b+4*j:], math.Float32bits(v))
					}
				}
				got := make([]byte, bb*nb+40)
				for i := range got {
					got[i] = byte(r.Uint32())
				}
				want := bytes.Clone(got)
				for b := range x {
					c.fm.Encode(want[bb*b:bb*b+bb], x[b], 0)
				}
				vec.QuantizeQNHead(g, g, c.e, nil, nb, vec.Arr{Elem: vec.F32, P: &src}, vec.Arr{Elem: c.e, P: &got})
				if !bytes.Equal(got, want) {
					for b := 0; b <= nb; b++ {
						hi := min(bb*b+bb, len(got))
						if !bytes.Equal(got[bb*b:hi], want[bb*b:hi]) {
							t.Fatalf("%s L %d K %d, %d blocks: block %d (%v):\n got %x\nwant %x", c.e.Name, lk.L, lk.K, nb, b, x[min(b, max(nb-1, 0))], got[bb*b:hi], want[bb*b:hi])
						}
					}
				}
			}
			// the range formats group when K blocks' members are at most 8
			// (quantizeQNGroup), else go block by block
			grouped := !(c.e == vec.Q4_1 || c.e == vec.Q5_1) || lk.K*32/lk.L <= 8
			if grouped != (n.groups > 0) {
				t.Errorf("%s L %d K %d: %d MaxGroup calls, want grouped %v", c.e.Name, lk.L, lk.K, n.groups, grouped)
			}
			t.Logf("%s L %d K %d: %d MaxGroup calls", c.e.Name, lk.L, lk.K, n.groups)
		}
	}
}
