package neon

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// A runCase is a straight-line kernel over io *[8][16]byte: load slots into
// registers, run body, store registers into slots. want gives the expected
// io after the call (slots not stored must be unchanged).
type runCase struct {
	name   string
	loads  []slotReg
	body   []Inst
	stores []slotReg
	inputs [][8][16]byte
	want   func(in [8][16]byte) [8][16]byte
}

type slotReg struct {
	slot int
	reg  Reg
	cmp  int // for stores: how to compare the slot
}

const (
	cmpExact = iota
	cmpNaN32 // float32 lanes; any NaN equals any NaN
	cmpNaN64 // float64 lanes; any NaN equals any NaN
)

func flat(in [8][16]byte) []byte {
	var b []byte
	for i := range in {
		b = append(b, in[i][:]...)
	}
	return b
}

func equalLanes(cmp int, got, want [16]byte) bool {
	switch cmp {
	case cmpNaN32:
		for i := 0; i < 16; i += 4 {
			g, w := binary.LittleEndian.Uint32(got[i:]), binary.LittleEndian.Uint32(want[i:])
			if g != w && !(isNaN32(g) && isNaN32(w)) {
				return false
			}
		}
		return true
	case cmpNaN64:
		for i := 0; i < 16; i += 8 {
			g, w := binary.LittleEndian.Uint64(got[i:]), binary.LittleEndian.Uint64(want[i:])
			if g != w && !(math.IsNaN(math.Float64frombits(g)) && math.IsNaN(math.Float64frombits(w))) {
				return false
			}
		}
		return true
	}
	return got == want
}

func isNaN32(b uint32) bool { return b&0x7fffffff > 0x7f800000 }

// Lane accessors on a 16-byte vector.
func u16(v [16]byte, i int) uint16       { return binary.LittleEndian.Uint16(v[2*i:]) }
func u32(v [16]byte, i int) uint32       { return binary.LittleEndian.Uint32(v[4*i:]) }
func u64(v [16]byte, i int) uint64       { return binary.LittleEndian.Uint64(v[8*i:]) }
func f32(v [16]byte, i int) float32      { return math.Float32frombits(u32(v, i)) }
func f64(v [16]byte, i int) float64      { return math.Float64frombits(u64(v, i)) }
func put16(v *[16]byte, i int, x uint16) { binary.LittleEndian.PutUint16(v[2*i:], x) }
func put32(v *[16]byte, i int, x uint32) { binary.LittleEndian.PutUint32(v[4*i:], x) }
func put64(v *[16]byte, i int, x uint64) { binary.LittleEndian.PutUint64(v[8*i:], x) }
func putF32(v *[16]byte, i int, x float32) {
	put32(v, i, math.Float32bits(x))
}
func putF64(v *[16]byte, i int, x float64) { put64(v, i, math.Float64bits(x)) }

// f16to32 widens binary16 to binary32 as FCVTL does (exact; a NaN is
// quietened, payload kept).
func f16to32(h uint16) uint32 {
	sign := uint32(h>>15) << 31
	e, m := int(h>>10&0x1f), uint32(h&0x3ff)
	if e == 0x1f {
		if m == 0 {
			return sign | 0x7f800000
		}
		return sign | 0x7fc00000 | m<<13
	}
	sig := m
	if e != 0 {
		sig |= 0x400
	} else {
		e = 1
	}
	return sign | math.Float32bits(float32(math.Ldexp(float64(sig), e-25)))
}

// f32to16 narrows binary32 to binary16 as FCVTN does under the default
// FPCR: round to nearest even, overflow to infinity, a NaN quietened with
// the top payload bits kept.
func f32to16(f uint32) uint16 {
	sign := uint16(f>>16) & 0x8000
	x := f & 0x7fffffff
	switch {
	case x > 0x7f800000:
		return sign | 0x7e00 | uint16(x>>13)&0x1ff
	case x >= 0x477ff000: // >= 65520 rounds to infinity
		return sign | 0x7c00
	case x < 0x38800000: // below 2^-14: subnormal (or zero) result
		r := math.RoundToEven(float64(math.Float32frombits(x)) * (1 << 24))
		return sign | uint16(r)
	}
	h := (x>>23-127+15)<<10 | x>>13&0x3ff
	low := x & 0x1fff
	if low > 0x1000 || low == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

var special32 = []uint32{
	0, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
	0x7fc00000, 0x7fa00001, 0xffc12345, 0x00000001, 0x807fffff, 0x7f7fffff,
	0x477ff000, 0x477fefff, 0x477fe000, 0x38800000, 0x387fffff, 0x33800000,
	0x33000001, 0x33000000, 0x3eaaaaab, 0x3f801000, 0x3f803000, 0x3f800fff,
}

var special16 = []uint16{
	0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x7d01, 0xfe55,
	0x0001, 0x83ff, 0x7bff, 0x0400, 0x3555,
}

var special64 = []uint64{
	0, 1 << 63, math.Float64bits(1), math.Float64bits(-1), math.Float64bits(math.Inf(1)),
	0x7ff8000000000000, 0x7ff0000000000001, 0x0000000000000001, 0x7fefffffffffffff,
	math.Float64bits(1.0 / 3), 0x3ff0000010000000, 0x3ff0000030000000, 0x47efffffefffffff,
	0x47effffff0000000, 0x36a0000000000000,
}

// lane generators: mostly moderate-exponent random values, some specials.
func rnd32(r *rand.Rand) uint32 {
	if r.IntN(5) == 0 {
		return special32[r.IntN(len(special32))]
	}
	return uint32(r.IntN(2))<<31 | uint32(107+r.IntN(40))<<23 | r.Uint32()&0x7fffff
}

func rnd16(r *rand.Rand) uint16 {
	if r.IntN(4) == 0 {
		return special16[r.IntN(len(special16))]
	}
	return uint16(r.Uint32())
}

func rnd64(r *rand.Rand) uint64 {
	if r.IntN(5) == 0 {
		return special64[r.IntN(len(special64))]
	}
	return uint64(r.IntN(2))<<63 | uint64(1003+r.IntN(40))<<52 | r.Uint64()&(1<<52-1)
}

// genInputs makes n io blocks; fill decides each slot's lanes.
func genInputs(seed uint64, n int, fill func(r *rand.Rand, slot int, v *[16]byte)) [][8][16]byte {
	r := rand.New(rand.NewPCG(seed, 0x726f7065))
	out := make([][8][16]byte, n)
	for k := range out {
		for slot := range out[k] {
			fill(r, slot, &out[k][slot])
		}
	}
	return out
}

func fill32(r *rand.Rand, v *[16]byte) {
	for i := 0; i < 4; i++ {
		put32(v, i, rnd32(r))
	}
}

func fill64(r *rand.Rand, v *[16]byte) {
	for i := 0; i < 2; i++ {
		put64(v, i, rnd64(r))
	}
}

func fillRaw(r *rand.Rand, v *[16]byte) {
	put64(v, 0, r.Uint64())
	put64(v, 1, r.Uint64())
}

// must unwraps an encoder result.
func must(t testing.TB) func(Inst, error) Inst {
	return func(in Inst, err error) Inst {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
}

const nInputs = 64

func runCases(t testing.TB) []runCase {
	m := must(t)
	var cs []runCase

	// Canonical RoPE rotation (docs/contract.md §5) in f32 and f64:
	// ya = fl(fl(xa·c) − fl(xb·s)), yb = fl(fl(xb·c) + fl(xa·s)).
	rope := func(name string, a Arrangement, lanes int, cmp int, ref func(xa, xb, c, s [16]byte, i int, ya, yb *[16]byte)) runCase {
		fill := fill32
		if a == A2D {
			fill = fill64
		}
		return runCase{
			name:  name,
			loads: []slotReg{{slot: 0, reg: V1}, {slot: 1, reg: V2}, {slot: 2, reg: V3}, {slot: 3, reg: V4}},
			body: []Inst{
				m(FMUL(a, V5, V1, V3)),   // xa·c
				m(FMUL(a, V6, V2, V4)),   // xb·s
				m(FSUB(a, V20, V5, V6)),  // ya
				m(FMUL(a, V7, V2, V3)),   // xb·c
				m(FMUL(a, V31, V1, V4)),  // xa·s
				m(FADD(a, V21, V7, V31)), // yb
			},
			stores: []slotReg{{slot: 4, reg: V20, cmp: cmp}, {slot: 5, reg: V21, cmp: cmp}},
			inputs: genInputs(uint64(len(name)), nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fill(r, v) }),
			want: func(in [8][16]byte) [8][16]byte {
				out := in
				out[4], out[5] = [16]byte{}, [16]byte{}
				for i := 0; i < lanes; i++ {
					ref(in[0], in[1], in[2], in[3], i, &out[4], &out[5])
				}
				return out
			},
		}
	}
	ref32 := func(xa, xb, c, s [16]byte, i int, ya, yb *[16]byte) {
		putF32(ya, i, float32(f32(xa, i)*f32(c, i))-float32(f32(xb, i)*f32(s, i)))
		putF32(yb, i, float32(f32(xb, i)*f32(c, i))+float32(f32(xa, i)*f32(s, i)))
	}
	ref64 := func(xa, xb, c, s [16]byte, i int, ya, yb *[16]byte) {
		putF64(ya, i, float64(f64(xa, i)*f64(c, i))-float64(f64(xb, i)*f64(s, i)))
		putF64(yb, i, float64(f64(xb, i)*f64(c, i))+float64(f64(xa, i)*f64(s, i)))
	}
	cs = append(cs,
		rope("rope f32 4S", A4S, 4, cmpNaN32, ref32),
		rope("rope f32 2S", A2S, 2, cmpNaN32, ref32),
		rope("rope f64 2D", A2D, 2, cmpNaN64, ref64),
	)

	// FMUL by element, every index.
	cs = append(cs, runCase{
		name:  "fmul by element 4S",
		loads: []slotReg{{slot: 0, reg: V16}, {slot: 1, reg: V29}},
		body: []Inst{
			m(FMULElem(A4S, V0, V16, V29, 0)), m(FMULElem(A4S, V1, V16, V29, 1)),
			m(FMULElem(A4S, V2, V16, V29, 2)), m(FMULElem(A4S, V3, V16, V29, 3)),
			m(FMULElem(A2S, V4, V16, V29, 3)),
		},
		stores: []slotReg{{2, V0, cmpNaN32}, {3, V1, cmpNaN32}, {4, V2, cmpNaN32}, {5, V3, cmpNaN32}, {6, V4, cmpNaN32}},
		inputs: genInputs(2, nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fill32(r, v) }),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			for idx := 0; idx < 4; idx++ {
				out[2+idx] = [16]byte{}
				for i := 0; i < 4; i++ {
					putF32(&out[2+idx], i, f32(in[0], i)*f32(in[1], idx))
				}
			}
			out[6] = [16]byte{}
			for i := 0; i < 2; i++ {
				putF32(&out[6], i, f32(in[0], i)*f32(in[1], 3))
			}
			return out
		},
	}, runCase{
		name:   "fmul by element 2D",
		loads:  []slotReg{{slot: 0, reg: V16}, {slot: 1, reg: V29}},
		body:   []Inst{m(FMULElem(A2D, V0, V16, V29, 0)), m(FMULElem(A2D, V31, V16, V29, 1))},
		stores: []slotReg{{2, V0, cmpNaN64}, {3, V31, cmpNaN64}},
		inputs: genInputs(3, nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fill64(r, v) }),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			for idx := 0; idx < 2; idx++ {
				for i := 0; i < 2; i++ {
					putF64(&out[2+idx], i, f64(in[0], i)*f64(in[1], idx))
				}
			}
			return out
		},
	})

	// FNEG (exact, NaN payload kept) and FCMEQ.
	cs = append(cs, runCase{
		name:  "fneg fcmeq",
		loads: []slotReg{{slot: 0, reg: V30}, {slot: 1, reg: V9}},
		body: []Inst{
			m(FNEG(A4S, V1, V30)), m(FNEG(A2D, V2, V30)), m(FNEG(A2S, V3, V30)),
			m(FCMEQ(A4S, V4, V30, V30)), m(FCMEQ(A4S, V5, V30, V9)), m(FCMEQ(A2D, V6, V30, V9)),
		},
		stores: []slotReg{{1, V1, cmpExact}, {2, V2, cmpExact}, {3, V3, cmpExact}, {4, V4, cmpExact}, {5, V5, cmpExact}, {6, V6, cmpExact}},
		inputs: genInputs(4, nInputs, func(r *rand.Rand, slot int, v *[16]byte) {
			fill32(r, v)
			if slot == 0 {
				for i := 0; i < 4; i++ {
					if r.IntN(3) == 0 {
						put32(v, i, special32[r.IntN(10)])
					}
				}
			}
		}),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			// Make slot 1 (the FCMEQ partner) share some lanes with slot 0:
			// the inputs are fixed up below, so here just compute.
			x, y := in[0], in[1]
			out[1], out[2], out[3] = [16]byte{}, [16]byte{}, [16]byte{}
			out[4], out[5], out[6] = [16]byte{}, [16]byte{}, [16]byte{}
			for i := 0; i < 4; i++ {
				put32(&out[1], i, u32(x, i)^1<<31)
				if i < 2 {
					put32(&out[3], i, u32(x, i)^1<<31)
					put64(&out[2], i, u64(x, i)^1<<63)
					if f64(x, i) == f64(y, i) {
						put64(&out[6], i, ^uint64(0))
					}
				}
				if f32(x, i) == f32(x, i) {
					put32(&out[4], i, ^uint32(0))
				}
				if f32(x, i) == f32(y, i) {
					put32(&out[5], i, ^uint32(0))
				}
			}
			return out
		},
	})
	// Give FCMEQ equal lanes, +0 vs −0, and equal 64-bit lanes to find.
	fc := &cs[len(cs)-1]
	for k := range fc.inputs {
		x := &fc.inputs[k]
		switch k % 4 {
		case 0:
			x[1] = x[0]
		case 1:
			put32(&x[1], 1, u32(x[0], 1))
			put32(&x[1], 2, u32(x[0], 2)^1<<31)
		case 2:
			put32(&x[0], 0, 0)
			put32(&x[1], 0, 1<<31)
			put64(&x[1], 1, u64(x[0], 1))
		}
	}

	// f16 <-> f32 with FCVTL/FCVTL2/FCVTN/FCVTN2.
	cs = append(cs, runCase{
		name:  "f16 fcvtl fcvtn",
		loads: []slotReg{{slot: 0, reg: V17}, {slot: 1, reg: V18}, {slot: 2, reg: V19}, {slot: 7, reg: V4}},
		body: []Inst{
			m(FCVTL(A4S, V0, V17)), m(FCVTL2(A4S, V1, V17)),
			m(FCVTN(A4S, V2, V18)), m(FCVTN2(A4S, V2, V19)),
			m(FCVTN(A4S, V3, V19)), m(FCVTN2(A4S, V4, V18)),
		},
		stores: []slotReg{{3, V0, cmpExact}, {4, V1, cmpExact}, {5, V2, cmpExact}, {6, V3, cmpExact}, {7, V4, cmpExact}},
		inputs: genInputs(5, 4*nInputs, func(r *rand.Rand, slot int, v *[16]byte) {
			if slot == 0 {
				for i := 0; i < 8; i++ {
					put16(v, i, rnd16(r))
				}
				return
			}
			for i := 0; i < 4; i++ {
				// Around the f16 range so rounding, subnormals and overflow all occur.
				x := uint32(r.IntN(2))<<31 | uint32(97+r.IntN(48))<<23 | r.Uint32()&0x7fffff
				if r.IntN(4) == 0 {
					x = special32[r.IntN(len(special32))]
				}
				put32(v, i, x)
			}
		}),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			out[3], out[4], out[5], out[6] = [16]byte{}, [16]byte{}, [16]byte{}, [16]byte{}
			for i := 0; i < 4; i++ {
				put32(&out[3], i, f16to32(u16(in[0], i)))
				put32(&out[4], i, f16to32(u16(in[0], 4+i)))
				put16(&out[5], i, f32to16(u32(in[1], i)))
				put16(&out[5], 4+i, f32to16(u32(in[2], i)))
				put16(&out[6], i, f32to16(u32(in[2], i)))
				put16(&out[7], 4+i, f32to16(u32(in[1], i)))
			}
			return out
		},
	})

	// f32 <-> f64 with the 2D forms.
	cs = append(cs, runCase{
		name:  "f64 fcvtl fcvtn",
		loads: []slotReg{{slot: 0, reg: V17}, {slot: 1, reg: V18}, {slot: 2, reg: V19}, {slot: 7, reg: V4}},
		body: []Inst{
			m(FCVTL(A2D, V0, V17)), m(FCVTL2(A2D, V1, V17)),
			m(FCVTN(A2D, V2, V18)), m(FCVTN2(A2D, V2, V19)),
			m(FCVTN(A2D, V3, V19)), m(FCVTN2(A2D, V4, V18)),
		},
		stores: []slotReg{{3, V0, cmpNaN64}, {4, V1, cmpNaN64}, {5, V2, cmpNaN32}, {6, V3, cmpNaN32}, {7, V4, cmpNaN32}},
		inputs: genInputs(6, nInputs, func(r *rand.Rand, slot int, v *[16]byte) {
			if slot == 0 {
				fill32(r, v)
			} else {
				fill64(r, v)
			}
		}),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			out[3], out[4], out[5], out[6] = [16]byte{}, [16]byte{}, [16]byte{}, [16]byte{}
			for i := 0; i < 2; i++ {
				putF64(&out[3], i, float64(f32(in[0], i)))
				putF64(&out[4], i, float64(f32(in[0], 2+i)))
				putF32(&out[5], i, float32(f64(in[1], i)))
				putF32(&out[5], 2+i, float32(f64(in[2], i)))
				putF32(&out[6], i, float32(f64(in[2], i)))
				putF32(&out[7], 2+i, float32(f64(in[1], i)))
			}
			return out
		},
	})

	// FADDP (scalar): lane 0 + lane 1, one rounding, the rest of Vd zeroed.
	cs = append(cs, runCase{
		name:   "faddp",
		loads:  []slotReg{{slot: 0, reg: V17}, {slot: 1, reg: V18}},
		body:   []Inst{m(FADDP(A2D, V0, V17)), m(FADDP(A2S, V1, V18))},
		stores: []slotReg{{2, V0, cmpNaN64}, {3, V1, cmpNaN32}},
		inputs: genInputs(9, nInputs, func(r *rand.Rand, slot int, v *[16]byte) {
			if slot == 1 {
				fill32(r, v)
			} else {
				fill64(r, v)
			}
		}),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			out[2], out[3] = [16]byte{}, [16]byte{}
			putF64(&out[2], 0, f64(in[0], 0)+f64(in[0], 1))
			putF32(&out[3], 0, f32(in[1], 0)+f32(in[1], 1))
			return out
		},
	})

	// Integer narrowing/widening: XTN, SHLL (bf16 widening), SHRN.
	cs = append(cs, runCase{
		name:  "xtn xtn2",
		loads: []slotReg{{slot: 0, reg: V20}, {slot: 1, reg: V21}, {slot: 7, reg: V7}},
		body: []Inst{
			m(XTN(A8H, V0, V20)), m(XTN(A4S, V1, V20)), m(XTN(A2D, V2, V20)),
			m(XTN(A4S, V3, V20)), m(XTN2(A4S, V3, V21)), m(XTN2(A8H, V7, V21)),
		},
		stores: []slotReg{{2, V0, cmpExact}, {3, V1, cmpExact}, {4, V2, cmpExact}, {5, V3, cmpExact}, {7, V7, cmpExact}},
		inputs: genInputs(7, nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fillRaw(r, v) }),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			x, y := in[0], in[1]
			out[2], out[3], out[4], out[5] = [16]byte{}, [16]byte{}, [16]byte{}, [16]byte{}
			for i := 0; i < 8; i++ {
				out[2][i] = byte(u16(x, i))
				out[7][8+i] = byte(u16(y, i))
			}
			for i := 0; i < 4; i++ {
				put16(&out[3], i, uint16(u32(x, i)))
				put16(&out[5], i, uint16(u32(x, i)))
				put16(&out[5], 4+i, uint16(u32(y, i)))
			}
			for i := 0; i < 2; i++ {
				put32(&out[4], i, uint32(u64(x, i)))
			}
			return out
		},
	}, runCase{
		name:  "shll shll2",
		loads: []slotReg{{slot: 0, reg: V20}},
		body: []Inst{
			m(SHLL(A4S, V0, V20)), m(SHLL2(A4S, V1, V20)), m(SHLL(A8H, V2, V20)),
			m(SHLL2(A2D, V3, V20)),
		},
		stores: []slotReg{{2, V0, cmpExact}, {3, V1, cmpExact}, {4, V2, cmpExact}, {5, V3, cmpExact}},
		inputs: genInputs(8, nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fillRaw(r, v) }),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			x := in[0]
			for i := 0; i < 4; i++ {
				put32(&out[2], i, uint32(u16(x, i))<<16)
				put32(&out[3], i, uint32(u16(x, 4+i))<<16)
			}
			for i := 0; i < 8; i++ {
				put16(&out[4], i, uint16(x[i])<<8)
			}
			for i := 0; i < 2; i++ {
				put64(&out[5], i, uint64(u32(x, 2+i))<<32)
			}
			return out
		},
	}, runCase{
		name:  "shrn shrn2",
		loads: []slotReg{{slot: 0, reg: V20}, {slot: 1, reg: V21}, {slot: 7, reg: V7}},
		body: []Inst{
			m(SHRN(A4S, V0, V20, 16)), m(SHRN2(A4S, V0, V21, 16)),
			m(SHRN(A8H, V1, V20, 3)), m(SHRN(A2D, V2, V20, 32)),
			m(SHRN(A4S, V3, V20, 1)), m(SHRN2(A2D, V7, V21, 7)),
		},
		stores: []slotReg{{2, V0, cmpExact}, {3, V1, cmpExact}, {4, V2, cmpExact}, {5, V3, cmpExact}, {7, V7, cmpExact}},
		inputs: genInputs(9, nInputs, func(r *rand.Rand, _ int, v *[16]byte) { fillRaw(r, v) }),
		want: func(in [8][16]byte) [8][16]byte {
			out := in
			x, y := in[0], in[1]
			out[3], out[4], out[5] = [16]byte{}, [16]byte{}, [16]byte{}
			for i := 0; i < 4; i++ {
				put16(&out[2], i, uint16(u32(x, i)>>16))
				put16(&out[2], 4+i, uint16(u32(y, i)>>16))
				put16(&out[5], i, uint16(u32(x, i)>>1))
			}
			for i := 0; i < 8; i++ {
				out[3][i] = byte(u16(x, i) >> 3)
			}
			for i := 0; i < 2; i++ {
				put32(&out[4], i, uint32(u64(x, i)>>32))
				put32(&out[7], 2+i, uint32(u64(y, i)>>7))
			}
			return out
		},
	})
	return cs
}

// The references for f16 must themselves be right: check them against
// exhaustive round trips and known values.
func TestF16References(t *testing.T) {
	for h := 0; h < 1<<16; h++ {
		f := f16to32(uint16(h))
		back := f32to16(f)
		if uint16(h)&0x7c00 == 0x7c00 && uint16(h)&0x3ff != 0 {
			if back != uint16(h)|0x200 { // NaN: quietened, payload kept
				t.Fatalf("NaN %04x -> %08x -> %04x", h, f, back)
			}
			continue
		}
		if back != uint16(h) {
			t.Fatalf("%04x -> %08x -> %04x", h, f, back)
		}
	}
	for _, c := range []struct {
		f uint32
		h uint16
	}{
		{0x3f800000, 0x3c00}, {0x477fe000, 0x7bff}, {0x477fefff, 0x7bff},
		{0x477ff000, 0x7c00}, {0x33000000, 0x0000}, {0x33000001, 0x0001},
		{0x3eaaaaab, 0x3555}, {0x3f801000, 0x3c00}, {0x3f803000, 0x3c02},
		{0x387fe000, 0x0400}, {0x387fc000, 0x03ff}, {0x387fa000, 0x03fe},
		{0x7fa00001, 0x7f00},
	} {
		if got := f32to16(c.f); got != c.h {
			t.Errorf("f32to16(%08x) = %04x, want %04x", c.f, got, c.h)
		}
	}
}
