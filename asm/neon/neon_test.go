package neon

import (
	"errors"
	"strings"
	"testing"
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
