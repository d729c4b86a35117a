package neon

import (
	"errors"
	"strings"
	"testing"
	"text/template"
)

// Known encodings, checked by hand against the Arm ARM and binutils.
func TestKnownWords(t *testing.T) {
	got := []func() (Inst, error){
		func() (Inst, error) { return FMUL(A4S, V0, V1, V2) },
		func() (Inst, error) { return FMULElem(A2D, V31, V0, V31, 1) },
		func() (Inst, error) { return FMULElem(A2S, V1, V2, V17, 3) },
		func() (Inst, error) { return FCVTL2(A4S, V0, V1) },
		func() (Inst, error) { return FCVTN2(A2D, V0, V1) },
		func() (Inst, error) { return XTN(A8H, V0, V1) },
		func() (Inst, error) { return SHLL2(A4S, V0, V1) },
		func() (Inst, error) { return SHRN(A2D, V0, V1, 32) },
		func() (Inst, error) { return FCMEQ(A2D, V0, V1, V2) },
		func() (Inst, error) { return FNEG(A2S, V0, V1) },
	}
	want := []string{
		"WORD $0x6e22dc20 // fmul v0.4s, v1.4s, v2.4s",
		"WORD $0x4fdf981f // fmul v31.2d, v0.2d, v31.d[1]",
		"WORD $0x0fb19841 // fmul v1.2s, v2.2s, v17.s[3]",
		"WORD $0x4e217820 // fcvtl2 v0.4s, v1.8h",
		"WORD $0x4e616820 // fcvtn2 v0.4s, v1.2d",
		"WORD $0x0e212820 // xtn v0.8b, v1.8h",
		"WORD $0x6e613820 // shll2 v0.4s, v1.8h, #16",
		"WORD $0x0f208420 // shrn v0.2s, v1.2d, #32",
		"WORD $0x4e62e420 // fcmeq v0.2d, v1.2d, v2.2d",
		"WORD $0x2ea0f820 // fneg v0.2s, v1.2s",
	}
	for i, f := range got {
		in, err := f()
		if err != nil {
			t.Fatalf("%s: %v", want[i], err)
		}
		if in.GoAsm() != want[i] {
			t.Errorf("got %q, want %q", in.GoAsm(), want[i])
		}
	}
}

// checkErr requires err to be an *OperandError naming the instruction, the
// operand and the accepted range.
func checkErr(t *testing.T, what string, err error, inst, operand, accepted string) {
	t.Helper()
	var oe *OperandError
	if !errors.As(err, &oe) {
		t.Errorf("%s: got error %v, want *OperandError", what, err)
		return
	}
	if oe.Inst != inst || oe.Operand != operand || oe.Accepted != accepted {
		t.Errorf("%s: got %+v, want inst %q operand %q accepted %q", what, *oe, inst, operand, accepted)
	}
	msg := err.Error()
	for _, s := range []string{inst, operand, accepted} {
		if !strings.Contains(msg, s) {
			t.Errorf("%s: message %q does not mention %q", what, msg, s)
		}
	}
}

func TestRangeChecks(t *testing.T) {
	ops := []string{"Vd", "Vn", "Vm"}
	for _, f := range forms {
		a := f.arrs[0]
		nregs := 3
		if f.kind == kind2 || f.kind == kindShift {
			nregs = 2
		}
		call := func(a Arrangement, r [3]Reg, idx int) error {
			var err error
			switch f.kind {
			case kind3:
				_, err = f.enc3(a, r[0], r[1], r[2])
			case kind2:
				_, err = f.enc2(a, r[0], r[1])
			case kindElem:
				_, err = f.encIdx(a, r[0], r[1], r[2], idx)
			case kindShift:
				_, err = f.encSh(a, r[0], r[1], idx)
			}
			return err
		}
		okIdx := 0
		if f.kind == kindShift {
			okIdx = 1
		}
		if err := call(a, [3]Reg{0, 31, 17}, okIdx); err != nil {
			t.Fatalf("%s: valid operands rejected: %v", f.name, err)
		}
		// Bad registers in every position.
		for pos := 0; pos < nregs; pos++ {
			for _, bad := range []Reg{32, -1, 1000} {
				r := [3]Reg{1, 2, 3}
				r[pos] = bad
				checkErr(t, f.name+" "+ops[pos], call(a, r, okIdx), f.name, ops[pos], "0..31")
			}
		}
		// Arrangements the form does not accept, including junk.
		accepted := make([]string, len(f.arrs))
		for i, x := range f.arrs {
			accepted[i] = string(x)
		}
		for _, bad := range []Arrangement{A8B, A16B, A4H, A8H, A2S, A4S, A2D, "", "4s", "S4", "1D"} {
			if strings.Contains(strings.Join(accepted, ","), string(bad)) && bad != "" {
				continue
			}
			checkErr(t, f.name+" "+string(bad), call(bad, [3]Reg{1, 2, 3}, okIdx), f.name, "arrangement", strings.Join(accepted, ", "))
		}
	}

	// Lane index of FMUL (by element).
	for _, c := range []struct {
		a        Arrangement
		bad      []int
		good     []int
		accepted string
	}{
		{A4S, []int{-1, 4, 100}, []int{0, 1, 2, 3}, "0..3 for 4S"},
		{A2S, []int{-1, 4}, []int{0, 3}, "0..3 for 2S"},
		{A2D, []int{-1, 2, 3}, []int{0, 1}, "0..1 for 2D"},
	} {
		for _, i := range c.bad {
			_, err := FMULElem(c.a, 0, 1, 2, i)
			checkErr(t, "fmul elem index", err, "fmul (by element)", "index", c.accepted)
		}
		for _, i := range c.good {
			if _, err := FMULElem(c.a, 0, 1, 31, i); err != nil {
				t.Errorf("FMULElem %s index %d: %v", c.a, i, err)
			}
		}
	}

	// SHRN/SHRN2 shift.
	for _, c := range []struct {
		a        Arrangement
		max      int
		accepted string
	}{{A8H, 8, "1..8 for 8H"}, {A4S, 16, "1..16 for 4S"}, {A2D, 32, "1..32 for 2D"}} {
		for _, sh := range []int{0, -1, c.max + 1} {
			_, err := SHRN(c.a, 0, 1, sh)
			checkErr(t, "shrn shift", err, "shrn", "shift", c.accepted)
			_, err = SHRN2(c.a, 0, 1, sh)
			checkErr(t, "shrn2 shift", err, "shrn2", "shift", c.accepted)
		}
		if _, err := SHRN(c.a, 0, 1, c.max); err != nil {
			t.Errorf("SHRN %s #%d: %v", c.a, c.max, err)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := FMUL(A4S, 0, 1, 32)
	if got, want := err.Error(), "neon: fmul: operand Vm = 32 out of range (accepted 0..31)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = FCVTL(A2S, 0, 1)
	if got, want := err.Error(), `neon: fcvtl: operand arrangement = "2S" out of range (accepted 4S, 2D)`; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = FMULElem(A2D, 0, 1, 2, 2)
	if got, want := err.Error(), "neon: fmul (by element): operand index = 2 out of range (accepted 0..1 for 2D)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestParseArrangement(t *testing.T) {
	for _, s := range []string{"4s", "4S", "2d", "16b", "8H"} {
		a, err := ParseArrangement(s)
		if err != nil || string(a) != strings.ToUpper(s) {
			t.Errorf("ParseArrangement(%q) = %q, %v", s, a, err)
		}
	}
	for _, s := range []string{"", "S4", "1D", "4x"} {
		if _, err := ParseArrangement(s); err == nil {
			t.Errorf("ParseArrangement(%q) accepted", s)
		}
	}
}

func TestEmitterSticky(t *testing.T) {
	var e Emitter
	if s := e.FMUL(A4S, V0, V1, V2); s != "WORD $0x6e22dc20 // fmul v0.4s, v1.4s, v2.4s" {
		t.Fatalf("got %q", s)
	}
	if s := e.FADD(A4S, V0, V1, 40); s != "" {
		t.Fatalf("bad call returned %q", s)
	}
	first := e.Err()
	if first == nil || !strings.Contains(first.Error(), "fadd") {
		t.Fatalf("Err() = %v", first)
	}
	// Later calls, good or bad, are no-ops and keep the first error.
	if s := e.FSUB(A4S, V0, V1, V2); s != "" {
		t.Errorf("call after error returned %q", s)
	}
	e.FNEG(A4H, V0, V1)
	if e.Err() != first {
		t.Errorf("sticky error replaced: %v", e.Err())
	}
	if l := e.Lines(); len(l) != 1 {
		t.Errorf("Lines() = %q", l)
	}
	if got, want := e.Text(), "\tWORD $0x6e22dc20 // fmul v0.4s, v1.4s, v2.4s\n"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	e.Reset()
	if e.Err() != nil || len(e.Lines()) != 0 {
		t.Errorf("Reset left %v %q", e.Err(), e.Lines())
	}
}

func TestEmitterMethodsMatchEncoders(t *testing.T) {
	var e Emitter
	check := func(got string, in Inst, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if got != in.GoAsm() {
			t.Errorf("emitter %q, encoder %q", got, in.GoAsm())
		}
	}
	in, err := FADD(A2D, 1, 2, 3)
	check(e.FADD(A2D, 1, 2, 3), in, err)
	in, err = FSUB(A2D, 1, 2, 3)
	check(e.FSUB(A2D, 1, 2, 3), in, err)
	in, err = FMUL(A2S, 1, 2, 3)
	check(e.FMUL(A2S, 1, 2, 3), in, err)
	in, err = FCMEQ(A4S, 1, 2, 3)
	check(e.FCMEQ(A4S, 1, 2, 3), in, err)
	in, err = FNEG(A4S, 1, 2)
	check(e.FNEG(A4S, 1, 2), in, err)
	in, err = FMULElem(A4S, 1, 2, 3, 2)
	check(e.FMULElem(A4S, 1, 2, 3, 2), in, err)
	in, err = FCVTL(A4S, 1, 2)
	check(e.FCVTL(A4S, 1, 2), in, err)
	in, err = FCVTL2(A4S, 1, 2)
	check(e.FCVTL2(A4S, 1, 2), in, err)
	in, err = FCVTN(A4S, 1, 2)
	check(e.FCVTN(A4S, 1, 2), in, err)
	in, err = FCVTN2(A4S, 1, 2)
	check(e.FCVTN2(A4S, 1, 2), in, err)
	in, err = XTN(A4S, 1, 2)
	check(e.XTN(A4S, 1, 2), in, err)
	in, err = XTN2(A4S, 1, 2)
	check(e.XTN2(A4S, 1, 2), in, err)
	in, err = SHLL(A4S, 1, 2)
	check(e.SHLL(A4S, 1, 2), in, err)
	in, err = SHLL2(A4S, 1, 2)
	check(e.SHLL2(A4S, 1, 2), in, err)
	in, err = SHRN(A4S, 1, 2, 16)
	check(e.SHRN(A4S, 1, 2, 16), in, err)
	in, err = SHRN2(A4S, 1, 2, 16)
	check(e.SHRN2(A4S, 1, 2, 16), in, err)
	if len(e.Lines()) != 16 || e.Err() != nil {
		t.Errorf("lines %d err %v", len(e.Lines()), e.Err())
	}
}

func TestFuncMap(t *testing.T) {
	const src = `	{{fmul "4S" 0 1 2}}
	{{fsub "4s" 3 0 4}}
	{{fadd .Arr .D 1 2}}
	{{fneg "2D" 5 6}}
	{{fcmeq "4S" 7 8 8}}
	{{fmulelem "4S" 9 10 31 3}}
	{{fcvtl "4S" 1 2}}
	{{fcvtl2 "4S" 1 2}}
	{{fcvtn "4S" 1 2}}
	{{fcvtn2 "4S" 1 2}}
	{{xtn "4S" 1 2}}
	{{xtn2 "4S" 1 2}}
	{{shll "4S" 1 2}}
	{{shll2 "4S" 1 2}}
	{{shrn "4S" 1 2 16}}
	{{shrn2 "4S" 1 2 16}}
`
	var e Emitter
	tm := template.Must(template.New("k").Funcs(e.FuncMap()).Parse(src))
	var b strings.Builder
	data := struct {
		Arr Arrangement
		D   Reg
	}{A2D, V30}
	if err := tm.Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	if e.Err() != nil {
		t.Fatal(e.Err())
	}
	want := []string{
		"fmul v0.4s, v1.4s, v2.4s",
		"fsub v3.4s, v0.4s, v4.4s",
		"fadd v30.2d, v1.2d, v2.2d",
		"fneg v5.2d, v6.2d",
		"fcmeq v7.4s, v8.4s, v8.4s",
		"fmul v9.4s, v10.4s, v31.s[3]",
		"fcvtl v1.4s, v2.4h",
		"fcvtl2 v1.4s, v2.8h",
		"fcvtn v1.4h, v2.4s",
		"fcvtn2 v1.8h, v2.4s",
		"xtn v1.4h, v2.4s",
		"xtn2 v1.8h, v2.4s",
		"shll v1.4s, v2.4h, #16",
		"shll2 v1.4s, v2.8h, #16",
		"shrn v1.4h, v2.4s, #16",
		"shrn2 v1.8h, v2.4s, #16",
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), b.String())
	}
	for i, l := range lines {
		if !strings.HasPrefix(l, "\tWORD $0x") || !strings.HasSuffix(l, " // "+want[i]) {
			t.Errorf("line %d = %q, want WORD ... // %s", i, l, want[i])
		}
	}
	if len(e.FuncMap()) != len(forms) {
		t.Errorf("FuncMap has %d funcs, forms table has %d", len(e.FuncMap()), len(forms))
	}
}

func TestFuncMapErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`{{fmul "4S" 0 1 32}}`, "fmul: operand Vm = 32 out of range (accepted 0..31)"},
		{`{{fmul "4H" 0 1 2}}`, `fmul: operand arrangement = "4H" out of range (accepted 2S, 4S, 2D)`},
		{`{{fmulelem "2D" 0 1 2 2}}`, "index = 2 out of range (accepted 0..1 for 2D)"},
		{`{{shrn "4S" 0 1 17}}`, "shrn: operand shift = 17 out of range (accepted 1..16 for 4S)"},
		{`{{fadd 4 0 1 2}}`, "fadd: arrangement must be a string"},
		{`{{fadd "4S" "x" 1 2}}`, "fadd: operand Vd must be a small integer"},
		{`{{fadd "4S" 0 1 2}}{{fmul "4S" -1 0 0}}{{fsub "4S" 99 0 0}}`, "fmul: operand Vd = -1"},
	} {
		var e Emitter
		tm := template.Must(template.New("k").Funcs(e.FuncMap()).Parse(c.src))
		var b strings.Builder
		if err := tm.Execute(&b, nil); err != nil {
			t.Fatalf("%s: template failed: %v", c.src, err)
		}
		if e.Err() == nil || !strings.Contains(e.Err().Error(), c.want) {
			t.Errorf("%s: Err() = %v, want mention of %q", c.src, e.Err(), c.want)
		}
		if strings.Contains(b.String(), "fmul") && strings.Contains(c.src, "-1") {
			t.Errorf("%s: bad call produced output %q", c.src, b.String())
		}
	}
}
