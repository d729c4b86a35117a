package neon

import (
	"fmt"
	"reflect"
	"strings"
	"text/template"
)

// Emitter collects encoded instructions as Go assembler lines and keeps the
// first error (a sticky error): once an encoder fails, every later call is a
// no-op that returns "", and Err reports the first failure. The zero value
// is ready to use. An Emitter is not safe for concurrent use.
//
// Typical use from Go:
//
//	var e neon.Emitter
//	e.FMUL(neon.A4S, neon.V0, neon.V1, neon.V2)
//	e.FSUB(neon.A4S, neon.V0, neon.V0, neon.V3)
//	if err := e.Err(); err != nil { ... }
//	out := e.Text()
//
// and from text/template see [Emitter.FuncMap].
type Emitter struct {
	lines []string
	err   error
}

// Emit records one encoder result: on success it appends and returns
// in.GoAsm(); on failure (or if an earlier call failed) it keeps the first
// error and returns "".
func (e *Emitter) Emit(in Inst, err error) string {
	if e.err != nil {
		return ""
	}
	if err != nil {
		e.err = err
		return ""
	}
	s := in.GoAsm()
	e.lines = append(e.lines, s)
	return s
}

// Err returns the first error any call has hit, or nil.
func (e *Emitter) Err() error { return e.err }

// Lines returns the emitted lines (without indentation) in order. The
// slice is a copy.
func (e *Emitter) Lines() []string { return append([]string(nil), e.lines...) }

// Text returns the emitted lines, each indented by one tab and ended by a
// newline, ready to paste into a TEXT body.
func (e *Emitter) Text() string {
	var b strings.Builder
	for _, l := range e.lines {
		b.WriteString("\t")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return b.String()
}

// Reset clears the lines and the sticky error.
func (e *Emitter) Reset() { e.lines, e.err = nil, nil }

// FADD appends and returns the line for the package-level encoder [FADD].
func (e *Emitter) FADD(a Arrangement, d, n, m Reg) string { return e.Emit(FADD(a, d, n, m)) }

// FSUB appends and returns the line for the package-level encoder [FSUB].
func (e *Emitter) FSUB(a Arrangement, d, n, m Reg) string { return e.Emit(FSUB(a, d, n, m)) }

// FMUL appends and returns the line for the package-level encoder [FMUL].
func (e *Emitter) FMUL(a Arrangement, d, n, m Reg) string { return e.Emit(FMUL(a, d, n, m)) }

// FCMEQ appends and returns the line for the package-level encoder [FCMEQ].
func (e *Emitter) FCMEQ(a Arrangement, d, n, m Reg) string { return e.Emit(FCMEQ(a, d, n, m)) }

// FNEG appends and returns the line for the package-level encoder [FNEG].
func (e *Emitter) FNEG(a Arrangement, d, n Reg) string { return e.Emit(FNEG(a, d, n)) }

// FADDP appends and returns the line for the package-level encoder [FADDP].
func (e *Emitter) FADDP(a Arrangement, d, n Reg) string { return e.Emit(FADDP(a, d, n)) }

// FMULElem appends and returns the line for the package-level encoder [FMULElem].
func (e *Emitter) FMULElem(a Arrangement, d, n, m Reg, index int) string {
	return e.Emit(FMULElem(a, d, n, m, index))
}

// FCVTL appends and returns the line for the package-level encoder [FCVTL].
func (e *Emitter) FCVTL(a Arrangement, d, n Reg) string { return e.Emit(FCVTL(a, d, n)) }

// FCVTL2 appends and returns the line for the package-level encoder [FCVTL2].
func (e *Emitter) FCVTL2(a Arrangement, d, n Reg) string { return e.Emit(FCVTL2(a, d, n)) }

// FCVTN appends and returns the line for the package-level encoder [FCVTN].
func (e *Emitter) FCVTN(a Arrangement, d, n Reg) string { return e.Emit(FCVTN(a, d, n)) }

// FCVTN2 appends and returns the line for the package-level encoder [FCVTN2].
func (e *Emitter) FCVTN2(a Arrangement, d, n Reg) string { return e.Emit(FCVTN2(a, d, n)) }

// XTN appends and returns the line for the package-level encoder [XTN].
func (e *Emitter) XTN(a Arrangement, d, n Reg) string { return e.Emit(XTN(a, d, n)) }

// XTN2 appends and returns the line for the package-level encoder [XTN2].
func (e *Emitter) XTN2(a Arrangement, d, n Reg) string { return e.Emit(XTN2(a, d, n)) }

// SHLL appends and returns the line for the package-level encoder [SHLL].
func (e *Emitter) SHLL(a Arrangement, d, n Reg) string { return e.Emit(SHLL(a, d, n)) }

// SHLL2 appends and returns the line for the package-level encoder [SHLL2].
func (e *Emitter) SHLL2(a Arrangement, d, n Reg) string { return e.Emit(SHLL2(a, d, n)) }

// SHRN appends and returns the line for the package-level encoder [SHRN].
func (e *Emitter) SHRN(a Arrangement, d, n Reg, shift int) string {
	return e.Emit(SHRN(a, d, n, shift))
}

// SHRN2 appends and returns the line for the package-level encoder [SHRN2].
func (e *Emitter) SHRN2(a Arrangement, d, n Reg, shift int) string {
	return e.Emit(SHRN2(a, d, n, shift))
}

// FuncMap returns template functions bound to e. This is the template
// contract; the names and argument orders are stable:
//
//	{{fadd  "4S" d n m}}     fadd  vd.4s, vn.4s, vm.4s   (T = 2S, 4S, 2D)
//	{{fsub  "4S" d n m}}     fsub  vd.4s, vn.4s, vm.4s   (vd = vn − vm)
//	{{fmul  "4S" d n m}}     fmul  vd.4s, vn.4s, vm.4s
//	{{fcmeq "4S" d n m}}     fcmeq vd.4s, vn.4s, vm.4s   (all-ones where equal)
//	{{fneg  "4S" d n}}       fneg  vd.4s, vn.4s
//	{{faddp "2D" d n}}       faddp dd, vn.2d            ("2S": faddp sd, vn.2s)
//	{{fmulelem "4S" d n m i}} fmul vd.4s, vn.4s, vm.s[i] (i 0..3; 2D: vm.d[i], i 0..1)
//	{{fcvtl  "4S" d n}}      fcvtl  vd.4s, vn.4h   ("2D": vd.2d, vn.2s)
//	{{fcvtl2 "4S" d n}}      fcvtl2 vd.4s, vn.8h   ("2D": vd.2d, vn.4s)
//	{{fcvtn  "4S" d n}}      fcvtn  vd.4h, vn.4s   ("2D": vd.2s, vn.2d)
//	{{fcvtn2 "4S" d n}}      fcvtn2 vd.8h, vn.4s   ("2D": vd.4s, vn.2d)
//	{{xtn    "4S" d n}}      xtn    vd.4h, vn.4s   (also "8H", "2D")
//	{{xtn2   "4S" d n}}      xtn2   vd.8h, vn.4s
//	{{shll   "4S" d n}}      shll   vd.4s, vn.4h, #16 (also "8H" #8, "2D" #32)
//	{{shll2  "4S" d n}}      shll2  vd.4s, vn.8h, #16
//	{{shrn   "4S" d n sh}}   shrn   vd.4h, vn.4s, #sh (sh 1..16; "8H" 1..8, "2D" 1..32)
//	{{shrn2  "4S" d n sh}}   shrn2  vd.8h, vn.4s, #sh
//
// and the cache kernels' forms (cache.go):
//
//	{{fdiv   "4S" d n m}}    fdiv   vd.4s, vn.4s, vm.4s   (vd = vn / vm)
//	{{fmax   "4S" d n m}}    fmax   vd.4s, vn.4s, vm.4s
//	{{fmin   "4S" d n m}}    fmin   vd.4s, vn.4s, vm.4s
//	{{cmgt   "4S" d n m}}    cmgt   vd.4s, vn.4s, vm.4s   (signed vn > vm)
//	{{fabs   "4S" d n}}      fabs   vd.4s, vn.4s
//	{{frinta "4S" d n}}      frinta vd.4s, vn.4s          (halves away from zero)
//	{{fcvtzs "4S" d n}}      fcvtzs vd.4s, vn.4s          (float → int32, toward zero)
//	{{scvtf  "4S" d n}}      scvtf  vd.4s, vn.4s          (int32 → float)
//	{{fmaxv  "4S" d n}}      fmaxv  sd, vn.4s
//	{{sxtl   "8H" d n}}      sxtl   vd.8h, vn.8b          (also "4S", "2D")
//	{{sxtl2  "8H" d n}}      sxtl2  vd.8h, vn.16b
//
// Registers are numbers 0..31 (d, n, m in Arm order: destination first).
// Narrowing and widening forms always take the WIDE arrangement. Each
// function returns the whole line `WORD $0x........ // mnemonic ...`
// without indentation, so write a tab before it in the template.
// Arrangements may be a string or an [Arrangement], registers and
// immediates any Go integer type (or [Reg]).
//
// On a bad operand a function records the error in e and returns "" (it
// does not fail the template), so callers MUST check e.Err() after
// executing the template and discard the output if it is non-nil.
func (e *Emitter) FuncMap() template.FuncMap {
	arr := func(fn string, x any) Arrangement {
		switch v := x.(type) {
		case Arrangement:
			return Arrangement(strings.ToUpper(string(v)))
		case string:
			return Arrangement(strings.ToUpper(v))
		}
		e.fail(fmt.Errorf("neon: template %s: arrangement must be a string, got %T", fn, x))
		return ""
	}
	num := func(fn, operand string, x any) int {
		v := reflect.ValueOf(x)
		switch v.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			if i := v.Int(); i >= -1<<31 && i < 1<<31 {
				return int(i)
			}
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			if u := v.Uint(); u < 1<<31 {
				return int(u)
			}
		}
		e.fail(fmt.Errorf("neon: template %s: operand %s must be a small integer, got %T %v", fn, operand, x, x))
		return -1
	}
	three := func(fn string, enc func(Arrangement, Reg, Reg, Reg) (Inst, error)) func(a, d, n, m any) string {
		return func(a, d, n, m any) string {
			return e.Emit(enc(arr(fn, a), Reg(num(fn, "Vd", d)), Reg(num(fn, "Vn", n)), Reg(num(fn, "Vm", m))))
		}
	}
	two := func(fn string, enc func(Arrangement, Reg, Reg) (Inst, error)) func(a, d, n any) string {
		return func(a, d, n any) string {
			return e.Emit(enc(arr(fn, a), Reg(num(fn, "Vd", d)), Reg(num(fn, "Vn", n))))
		}
	}
	shift := func(fn string, enc func(Arrangement, Reg, Reg, int) (Inst, error)) func(a, d, n, sh any) string {
		return func(a, d, n, sh any) string {
			return e.Emit(enc(arr(fn, a), Reg(num(fn, "Vd", d)), Reg(num(fn, "Vn", n)), num(fn, "shift", sh)))
		}
	}
	return template.FuncMap{
		"fadd":  three("fadd", FADD),
		"fsub":  three("fsub", FSUB),
		"fmul":  three("fmul", FMUL),
		"fcmeq": three("fcmeq", FCMEQ),
		"fneg":  two("fneg", FNEG),
		"faddp": two("faddp", FADDP),
		"fmulelem": func(a, d, n, m, i any) string {
			const fn = "fmulelem"
			return e.Emit(FMULElem(arr(fn, a), Reg(num(fn, "Vd", d)), Reg(num(fn, "Vn", n)), Reg(num(fn, "Vm", m)), num(fn, "index", i)))
		},
		"fcvtl":  two("fcvtl", FCVTL),
		"fcvtl2": two("fcvtl2", FCVTL2),
		"fcvtn":  two("fcvtn", FCVTN),
		"fcvtn2": two("fcvtn2", FCVTN2),
		"xtn":    two("xtn", XTN),
		"xtn2":   two("xtn2", XTN2),
		"shll":   two("shll", SHLL),
		"shll2":  two("shll2", SHLL2),
		"shrn":   shift("shrn", SHRN),
		"shrn2":  shift("shrn2", SHRN2),
		// The cache kernels' forms (cache.go).
		"fdiv":   three("fdiv", FDIV),
		"fmax":   three("fmax", FMAX),
		"fmin":   three("fmin", FMIN),
		"cmgt":   three("cmgt", CMGT),
		"fabs":   two("fabs", FABS),
		"frinta": two("frinta", FRINTA),
		"fcvtzs": two("fcvtzs", FCVTZS),
		"scvtf":  two("scvtf", SCVTF),
		"fmaxv":  two("fmaxv", FMAXV),
		"sxtl":   two("sxtl", SXTL),
		"sxtl2":  two("sxtl2", SXTL2),
	}
}

// fail records err if no error is recorded yet.
func (e *Emitter) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}
