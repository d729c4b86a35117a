// Package neon encodes the AArch64 Advanced SIMD (NEON) instructions that a
// RoPE kernel needs but the Go arm64 assembler does not accept, and prints
// them as Go assembler lines of the form
//
//	WORD $0x6e22dc20 // fmul v0.4s, v1.4s, v2.4s
//
// Every encoder range-checks its operands (register 0..31, the arrangements
// the form accepts, lane index, shift) and returns an error naming the
// instruction, the operand and the accepted range instead of emitting a bad
// word. The Asm text beside each word is exactly what GNU objdump prints for
// that word (the tests check every form against aarch64-linux-gnu-as and
// aarch64-linux-gnu-objdump).
//
// Operands are in Arm (GNU) order: destination first. Note that this is the
// reverse of the Go assembler's native order for three-operand vector
// instructions (Go writes VZIP1 Vm, Vn, Vd for zip1 vd, vn, vm).
//
// The forms cover the canonical RoPE arithmetic of docs/contract.md §5: two rounded
// products (FMUL), one rounded sum (FADD/FSUB), no fused multiply-add, so
// there is deliberately no FMLA/FMLS here (the Go assembler's VFMLA/VFMLS are
// fused and must not be used for the rotation). FADDP (scalar) ends the
// QK-norm's float64 sum of squares. Conversions cover f16
// (FCVTL/FCVTN), f64 (FCVTL/FCVTN on 2S/2D), bf16 (SHLL to widen; XTN/SHRN
// to narrow) and NaN detection for bf16 rounding (FCMEQ). asm/vec/arm64,
// the NEON target of the vector layer, writes its kernels with them.
package neon

import (
	"fmt"
	"strings"
)

// Reg is a SIMD&FP register number, V0..V31 (0..31).
type Reg int

// The 32 SIMD&FP registers.
const (
	V0 Reg = iota
	V1
	V2
	V3
	V4
	V5
	V6
	V7
	V8
	V9
	V10
	V11
	V12
	V13
	V14
	V15
	V16
	V17
	V18
	V19
	V20
	V21
	V22
	V23
	V24
	V25
	V26
	V27
	V28
	V29
	V30
	V31
)

// String returns the Go assembler name of the register, e.g. "V7".
func (r Reg) String() string { return fmt.Sprintf("V%d", int(r)) }

// Arrangement is a vector arrangement in Arm notation: element count then
// element size letter, e.g. "4S" is four 32-bit lanes of a 128-bit register.
type Arrangement string

// The arrangements the encoders understand.
const (
	A8B  Arrangement = "8B"  // eight bytes, 64-bit
	A16B Arrangement = "16B" // sixteen bytes, 128-bit
	A4H  Arrangement = "4H"  // four halfwords, 64-bit
	A8H  Arrangement = "8H"  // eight halfwords, 128-bit
	A2S  Arrangement = "2S"  // two words (float32), 64-bit
	A4S  Arrangement = "4S"  // four words (float32), 128-bit
	A2D  Arrangement = "2D"  // two doublewords (float64), 128-bit
)

// lower returns the arrangement as GNU disassembly prints it, e.g. "4s".
func (a Arrangement) lower() string { return strings.ToLower(string(a)) }

// Inst is one encoded instruction.
type Inst struct {
	// Word is the 32-bit little-endian instruction word.
	Word uint32
	// Asm is the GNU disassembly of Word, e.g. "fmul v0.4s, v1.4s, v2.4s",
	// with single spaces (objdump separates the mnemonic with a tab).
	Asm string
}

// GoAsm returns the Go assembler line for the instruction, without leading
// indentation: `WORD $0x6e22dc20 // fmul v0.4s, v1.4s, v2.4s`.
func (i Inst) GoAsm() string { return fmt.Sprintf("WORD $0x%08x // %s", i.Word, i.Asm) }

// String is the same as GoAsm.
func (i Inst) String() string { return i.GoAsm() }

// OperandError reports an operand outside the range an instruction form
// accepts. Its message names the instruction, the operand, the value given
// and the accepted range, e.g.
//
//	neon: fmul: operand Vm = 32 out of range (accepted 0..31)
type OperandError struct {
	Inst     string // mnemonic, e.g. "fmul" or "fmul (by element)"
	Operand  string // "Vd", "Vn", "Vm", "arrangement", "index", "shift"
	Value    string // the offending value as given
	Accepted string // human-readable accepted range or set
}

// Error implements error.
func (e *OperandError) Error() string {
	return fmt.Sprintf("neon: %s: operand %s = %s out of range (accepted %s)", e.Inst, e.Operand, e.Value, e.Accepted)
}

func checkReg(inst, operand string, r Reg) error {
	if r < 0 || r > 31 {
		return &OperandError{Inst: inst, Operand: operand, Value: fmt.Sprint(int(r)), Accepted: "0..31"}
	}
	return nil
}

func checkRegs(inst string, names []string, regs ...Reg) error {
	for i, r := range regs {
		if err := checkReg(inst, names[i], r); err != nil {
			return err
		}
	}
	return nil
}

// checkArr returns the index of a in allowed, or an error.
func checkArr(inst string, a Arrangement, allowed ...Arrangement) (int, error) {
	for i, x := range allowed {
		if a == x {
			return i, nil
		}
	}
	names := make([]string, len(allowed))
	for i, x := range allowed {
		names[i] = string(x)
	}
	return 0, &OperandError{Inst: inst, Operand: "arrangement", Value: fmt.Sprintf("%q", string(a)), Accepted: strings.Join(names, ", ")}
}

func vreg(r Reg, a Arrangement) string { return fmt.Sprintf("v%d.%s", int(r), a.lower()) }

var dnm = []string{"Vd", "Vn", "Vm"}

// Floating-point arrangements of the vector forms: Q and sz bits.
var fpArr = []Arrangement{A2S, A4S, A2D}

func fpQsz(i int) (q, sz uint32) {
	switch fpArr[i] {
	case A2S:
		return 0, 0
	case A4S:
		return 1, 0
	default: // A2D
		return 1, 1
	}
}

// threeSameFP encodes the "Advanced SIMD three same" floating-point group:
// 0 Q U 01110 a sz 1 Rm opcode 1 Rn Rd.
func threeSameFP(mn string, base uint32, a Arrangement, d, n, m Reg) (Inst, error) {
	i, err := checkArr(mn, a, fpArr...)
	if err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n, m); err != nil {
		return Inst{}, err
	}
	q, sz := fpQsz(i)
	w := base | q<<30 | sz<<22 | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
	return Inst{w, fmt.Sprintf("%s %s, %s, %s", mn, vreg(d, a), vreg(n, a), vreg(m, a))}, nil
}

// FADD encodes FADD Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): one rounded sum.
func FADD(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fadd", 0x0e20d400, a, d, n, m)
}

// FSUB encodes FSUB Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): Vd = Vn − Vm, rounded.
func FSUB(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fsub", 0x0ea0d400, a, d, n, m)
}

// FMUL encodes FMUL Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): one rounded product.
func FMUL(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fmul", 0x2e20dc00, a, d, n, m)
}

// FCMEQ encodes FCMEQ Vd.T, Vn.T, Vm.T (T = 2S, 4S, 2D): each lane of Vd
// becomes all ones where Vn == Vm (so FCMEQ Vd, Vx, Vx is the not-NaN mask),
// zero otherwise.
func FCMEQ(a Arrangement, d, n, m Reg) (Inst, error) {
	return threeSameFP("fcmeq", 0x0e20e400, a, d, n, m)
}

// FADDP encodes FADDP (scalar) Dd, Vn.2D (a = 2D) or Sd, Vn.2S (a = 2S):
// the sum of Vn's two lanes, lane 0 + lane 1, rounded once, into the
// scalar register d (the rest of Vd zeroed). It ends the float64 sum of
// squares of the QK-norm (docs/contract.md §10), whose last step adds two
// partial sums; the Go assembler has no scalar pairwise add.
func FADDP(a Arrangement, d, n Reg) (Inst, error) {
	const mn = "faddp"
	i, err := checkArr(mn, a, A2S, A2D)
	if err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n); err != nil {
		return Inst{}, err
	}
	sz, scalar := uint32(i), "s"
	if sz == 1 {
		scalar = "d"
	}
	w := 0x7e30d800 | sz<<22 | uint32(n)<<5 | uint32(d)
	return Inst{w, fmt.Sprintf("%s %s%d, %s", mn, scalar, int(d), vreg(n, a))}, nil
}

// twoRegFP encodes the "Advanced SIMD two-register misc" floating-point
// forms of one arrangement: 0 Q U 01110 a sz 10000 opcode 10 Rn Rd.
func twoRegFP(mn string, base uint32, a Arrangement, d, n Reg) (Inst, error) {
	i, err := checkArr(mn, a, fpArr...)
	if err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n); err != nil {
		return Inst{}, err
	}
	q, sz := fpQsz(i)
	w := base | q<<30 | sz<<22 | uint32(n)<<5 | uint32(d)
	return Inst{w, fmt.Sprintf("%s %s, %s", mn, vreg(d, a), vreg(n, a))}, nil
}

// FNEG encodes FNEG Vd.T, Vn.T (T = 2S, 4S, 2D): flips the sign bit (exact;
// NaN payloads kept).
func FNEG(a Arrangement, d, n Reg) (Inst, error) { return twoRegFP("fneg", 0x2ea0f800, a, d, n) }

// FMULElem encodes FMUL (by element) Vd.T, Vn.T, Vm.Ts[index]: every lane of
// Vn times lane index of Vm, rounded. T = 2S or 4S (Ts = S, index 0..3) or
// 2D (Ts = D, index 0..1). Vm may be any of V0..V31.
func FMULElem(a Arrangement, d, n, m Reg, index int) (Inst, error) {
	const mn = "fmul (by element)"
	i, err := checkArr(mn, a, fpArr...)
	if err != nil {
		return Inst{}, err
	}
	if err := checkRegs(mn, dnm, d, n, m); err != nil {
		return Inst{}, err
	}
	q, sz := fpQsz(i)
	maxIdx, ts := 3, "s"
	if sz == 1 {
		maxIdx, ts = 1, "d"
	}
	if index < 0 || index > maxIdx {
		return Inst{}, &OperandError{Inst: mn, Operand: "index", Value: fmt.Sprint(index), Accepted: fmt.Sprintf("0..%d for %s", maxIdx, a)}
	}
	var h, l uint32
	if sz == 0 {
		h, l = uint32(index)>>1, uint32(index)&1
	} else {
		h = uint32(index)
	}
	w := 0x0f809000 | q<<30 | sz<<22 | l<<21 | uint32(m)<<16 | h<<11 | uint32(n)<<5 | uint32(d)
	return Inst{w, fmt.Sprintf("fmul %s, %s, v%d.%s[%d]", vreg(d, a), vreg(n, a), int(m), ts, index)}, nil
}

// Narrowing and widening forms take the arrangement of the WIDE (128-bit)
// operand; the narrow operand is implied: its low 64 bits for the base form
// (written or read as a 64-bit arrangement, the upper half of Vd zeroed when
// Vd is narrow), its upper 64 bits for the "2" form (which leaves the lower
// half of a narrow Vd intact).
type narrowPair struct{ wide, lo, hi Arrangement }

var (
	pairsFP  = []narrowPair{{A4S, A4H, A8H}, {A2D, A2S, A4S}}
	pairsInt = []narrowPair{{A8H, A8B, A16B}, {A4S, A4H, A8H}, {A2D, A2S, A4S}}
)

func widesOf(ps []narrowPair) []Arrangement {
	out := make([]Arrangement, len(ps))
	for i, p := range ps {
		out[i] = p.wide
	}
	return out
}

// narrowWide validates a narrowing or widening form and returns the pair
// index (0 for the smallest element size), the Q bit and the GNU text.
// upper selects the "2" form (Q=1); narrowDst says whether Vd (true) or Vn
// is the narrow operand; suffix is appended to the text (", #16").
func narrowWide(mn string, ps []narrowPair, a Arrangement, d, n Reg, upper, narrowDst bool, suffix func(i int) string) (int, uint32, string, error) {
	if upper {
		mn += "2"
	}
	i, err := checkArr(mn, a, widesOf(ps)...)
	if err != nil {
		return 0, 0, "", err
	}
	if err := checkRegs(mn, dnm, d, n); err != nil {
		return 0, 0, "", err
	}
	if suffix == nil {
		suffix = func(int) string { return "" }
	}
	p := ps[i]
	narrow := p.lo
	var q uint32
	if upper {
		narrow, q = p.hi, 1
	}
	da, na := p.wide, narrow
	if narrowDst {
		da, na = narrow, p.wide
	}
	return i, q, fmt.Sprintf("%s %s, %s%s", mn, vreg(d, da), vreg(n, na), suffix(i)), nil
}

// twoRegMisc encodes the "Advanced SIMD two-register misc" narrowing and
// widening forms: 0 Q U 01110 size 10000 opcode 10 Rn Rd, with the pair
// index as size (sz for the FP forms, whose size<1> is 0).
func twoRegMisc(mn string, base uint32, ps []narrowPair, a Arrangement, d, n Reg, upper, narrowDst bool, suffix func(int) string) (Inst, error) {
	i, q, text, err := narrowWide(mn, ps, a, d, n, upper, narrowDst, suffix)
	if err != nil {
		return Inst{}, err
	}
	return Inst{base | q<<30 | uint32(i)<<22 | uint32(n)<<5 | uint32(d), text}, nil
}

// FCVTL encodes FCVTL Vd.wide, Vn.narrow: widen the low half of Vn exactly.
// a is the wide arrangement: 4S (from 4H: f16→f32) or 2D (from 2S:
// f32→f64).
func FCVTL(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("fcvtl", 0x0e217800, pairsFP, a, d, n, false, false, nil)
}

// FCVTL2 encodes FCVTL2 Vd.wide, Vn.narrow: widen the upper half of Vn
// exactly. a is the wide arrangement: 4S (from 8H) or 2D (from 4S).
func FCVTL2(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("fcvtl", 0x0e217800, pairsFP, a, d, n, true, false, nil)
}

// FCVTN encodes FCVTN Vd.narrow, Vn.wide: narrow Vn into the low half of Vd
// with the FPCR rounding mode (round to nearest even under Go; a NaN stays a
// NaN, quietened) and zero the upper half. a is the wide arrangement: 4S (to
// 4H: f32→f16) or 2D (to 2S: f64→f32).
func FCVTN(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("fcvtn", 0x0e216800, pairsFP, a, d, n, false, true, nil)
}

// FCVTN2 encodes FCVTN2 Vd.narrow, Vn.wide: narrow Vn into the upper half of
// Vd, keeping its lower half. a is the wide arrangement: 4S (to 8H) or 2D
// (to 4S).
func FCVTN2(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("fcvtn", 0x0e216800, pairsFP, a, d, n, true, true, nil)
}

// XTN encodes XTN Vd.narrow, Vn.wide: keep the low half of every lane of Vn
// (truncate) into the low half of Vd, zeroing its upper half. a is the wide
// arrangement: 8H (to 8B), 4S (to 4H) or 2D (to 2S).
func XTN(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("xtn", 0x0e212800, pairsInt, a, d, n, false, true, nil)
}

// XTN2 encodes XTN2 Vd.narrow, Vn.wide into the upper half of Vd, keeping
// its lower half. a is the wide arrangement: 8H (to 16B), 4S (to 8H) or 2D
// (to 4S).
func XTN2(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("xtn", 0x0e212800, pairsInt, a, d, n, true, true, nil)
}

func shllSuffix(i int) string { return fmt.Sprintf(", #%d", 8<<i) }

// SHLL encodes SHLL Vd.wide, Vn.narrow, #esize: widen the low half of Vn,
// shifting each lane left by the narrow element size. a is the wide
// arrangement: 8H (from 8B, #8), 4S (from 4H, #16: bf16→f32 exactly) or 2D
// (from 2S, #32). The Go assembler's VUSHLL only accepts shifts below the
// element size, so it cannot do this in one instruction.
func SHLL(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("shll", 0x2e213800, pairsInt, a, d, n, false, false, shllSuffix)
}

// SHLL2 is [SHLL] on the upper half of Vn: 8H (from 16B), 4S (from 8H), 2D
// (from 4S).
func SHLL2(a Arrangement, d, n Reg) (Inst, error) {
	return twoRegMisc("shll", 0x2e213800, pairsInt, a, d, n, true, false, shllSuffix)
}

// SHRN encodes SHRN Vd.narrow, Vn.wide, #shift: shift every lane of Vn
// right by shift (1..narrow element size) and keep its low half, into the
// low half of Vd, zeroing its upper half. a is the wide arrangement: 8H (to
// 8B, shift 1..8), 4S (to 4H, shift 1..16; #16 keeps the bf16 top half) or
// 2D (to 2S, shift 1..32).
func SHRN(a Arrangement, d, n Reg, shift int) (Inst, error) {
	return shrn(a, d, n, shift, false)
}

// SHRN2 is [SHRN] into the upper half of Vd (8H to 16B, 4S to 8H, 2D to 4S),
// keeping its lower half.
func SHRN2(a Arrangement, d, n Reg, shift int) (Inst, error) {
	return shrn(a, d, n, shift, true)
}

// shrn encodes the "Advanced SIMD shift by immediate" SHRN:
// 0 Q 0 011110 immh immb 100001 Rn Rd, immh:immb = 2*esize − shift.
func shrn(a Arrangement, d, n Reg, shift int, upper bool) (Inst, error) {
	i, q, text, err := narrowWide("shrn", pairsInt, a, d, n, upper, true, func(int) string { return fmt.Sprintf(", #%d", shift) })
	if err != nil {
		return Inst{}, err
	}
	esize := 8 << i // narrow element size in bits
	if shift < 1 || shift > esize {
		mn := "shrn"
		if upper {
			mn = "shrn2"
		}
		return Inst{}, &OperandError{Inst: mn, Operand: "shift", Value: fmt.Sprint(shift), Accepted: fmt.Sprintf("1..%d for %s", esize, a)}
	}
	w := 0x0f008400 | q<<30 | uint32(2*esize-shift)<<16 | uint32(n)<<5 | uint32(d)
	return Inst{w, text}, nil
}
