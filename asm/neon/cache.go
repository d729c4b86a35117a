package neon

import "fmt"

// The forms the KV-cache kernels (docs/contract.md §11) add: float32
// division, maximum, minimum and absolute value, rounding half away from
// zero (FRINTA: C's roundf, as ggml's q8_0 quantizer rounds), conversions
// between float32 and int32 lanes, the maximum across a vector, an integer
// signed compare, and sign-extending widening (int8 → int16 → int32, for
// q8_0's values). None of them fuses a multiply and an add.

// FDIV encodes FDIV Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): Vd = Vn / Vm, rounded.
func FDIV(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fdiv", 0x2e20fc00, a, d, n, m)
}

// FMAX encodes FMAX Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): the larger of each
// pair of lanes, NaN if either is NaN.
func FMAX(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fmax", 0x0e20f400, a, d, n, m)
}

// FMIN encodes FMIN Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): the smaller of each
// pair of lanes, NaN if either is NaN.
func FMIN(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fmin", 0x0ea0f400, a, d, n, m)
}

// FABS encodes FABS Vd.T, Vn.T (T = 2S, 4S, 2D): clears the sign bits.
func FABS(a Arrangement, d, n Reg) (Inst, error) { return twoRegFP("fabs", 0x0ea0f800, a, d, n) }

// FRINTA encodes FRINTA Vd.T, Vn.T (T = 2S, 4S, 2D): round to an integral
// value, halves away from zero (C's roundf).
func FRINTA(a Arrangement, d, n Reg) (Inst, error) { return twoRegFP("frinta", 0x2e218800, a, d, n) }

// FCVTZS encodes FCVTZS Vd.T, Vn.T (T = 2S, 4S, 2D, integer lanes of the
// same size): each lane converted to a signed integer, toward zero,
// saturating; NaN gives 0.
func FCVTZS(a Arrangement, d, n Reg) (Inst, error) { return twoRegFP("fcvtzs", 0x0ea1b800, a, d, n) }

// SCVTF encodes SCVTF Vd.T, Vn.T (T = 2S, 4S, 2D): each signed integer lane
// converted to floating point, rounded (exact for 24-bit integers).
func SCVTF(a Arrangement, d, n Reg) (Inst, error) { return twoRegFP("scvtf", 0x0e21d800, a, d, n) }

// FMAXV encodes FMAXV Sd, Vn.4S: the largest of the four lanes into the
// scalar Sd, NaN if any lane is NaN. a must be 4S, the one arrangement of
// the single-precision form.
func FMAXV(a Arrangement, d, n Reg) (Inst, error) {
	const mn = "fmaxv"
	if _, err := checkArr(mn, a, A4S); err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n); err != nil {
		return Inst{}, err
	}
	return Inst{0x6e30f800 | uint32(n)<<5 | uint32(d), fmt.Sprintf("%s s%d, %s", mn, int(d), vreg(n, a))}, nil
}

// intArr are the arrangements of the integer compare.
var intArr = []Arrangement{A8B, A16B, A4H, A8H, A2S, A4S, A2D}

// CMGT encodes CMGT Vd.T, Vn.T, Vm.T (integer T = 8B, 16B, 4H, 8H, 2S, 4S,
// 2D): each lane all ones where Vn > Vm as signed integers, else zero.
func CMGT(a Arrangement, d, n, m Reg) (Inst, error) {
	const mn = "cmgt"
	i, err := checkArr(mn, a, intArr...)
	if err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n, m); err != nil {
		return Inst{}, err
	}
	size, q := uint32(i/2), uint32(i%2)
	if a == A2D {
		size, q = 3, 1
	}
	w := 0x0e203400 | q<<30 | size<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", mn, vreg(d, a), vreg(n, a), vreg(m, a))}, nil
}

// sxtl encodes SSHLL #0, which objdump prints as SXTL: the "Advanced SIMD
// shift by immediate" 0 Q 0 011110 immh immb 10100 1 Rn Rd with
// immh:immb = the narrow element size.
func sxtl(a Arrangement, d, n Reg, upper bool) (Inst, error) {
	i, q, text, err := narrowWide("sxtl", pairsInt, a, d, n, upper, false, nil)
	if err != nil {
		return Inst{}, err
	}
	w := 0x0f00a400 | q<<30 | uint32(8<<i)<<16 | uint32(n)<<5 | uint32(d)
	return Inst{w, text}, nil
}

// SXTL encodes SXTL Vd.wide, Vn.narrow (SSHLL #0): sign-extend the low half
// of Vn. a is the wide arrangement: 8H (from 8B), 4S (from 4H), 2D (from 2S).
func SXTL(a Arrangement, d, n Reg) (Inst, error) { return sxtl(a, d, n, false) }

// SXTL2 is [SXTL] of the upper half of Vn: 8H (from 16B), 4S (from 8H), 2D
// (from 4S).
func SXTL2(a Arrangement, d, n Reg) (Inst, error) { return sxtl(a, d, n, true) }
