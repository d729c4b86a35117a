package neon

import "testing"

// The cache kernels' forms join the table every encoder test walks: range
// checks, binutils' words and text, the Go assembler's acceptance.
func init() {
	forms = append(forms,
		form{name: "fdiv", arrs: fpArrs, kind: kind3, enc3: FDIV},
		form{name: "fmax", arrs: fpArrs, kind: kind3, enc3: FMAX},
		form{name: "fmin", arrs: fpArrs, kind: kind3, enc3: FMIN},
		form{name: "cmgt", arrs: intArr, kind: kind3, enc3: CMGT},
		form{name: "fabs", arrs: fpArrs, kind: kind2, enc2: FABS},
		form{name: "frinta", arrs: fpArrs, kind: kind2, enc2: FRINTA},
		form{name: "fcvtzs", arrs: fpArrs, kind: kind2, enc2: FCVTZS},
		form{name: "scvtf", arrs: fpArrs, kind: kind2, enc2: SCVTF},
		form{name: "fmaxv", arrs: []Arrangement{A4S}, kind: kind2, enc2: FMAXV},
		form{name: "sxtl", arrs: intArrs, kind: kind2, enc2: SXTL},
		form{name: "sxtl2", arrs: intArrs, kind: kind2, enc2: SXTL2},
	)
}

// TestCacheKnownWords checks one word of each cache form against the Arm
// Architecture Reference Manual's encoding, worked out by hand.
func TestCacheKnownWords(t *testing.T) {
	m := must(t)
	for _, c := range []struct {
		in   Inst
		err  error
		word uint32
		asm  string
	}{
		{m(FDIV(A4S, 0, 1, 2)), nil, 0x6e22fc20, "fdiv v0.4s, v1.4s, v2.4s"},
		{m(FMAX(A4S, 3, 4, 5)), nil, 0x4e25f483, "fmax v3.4s, v4.4s, v5.4s"},
		{m(FMIN(A4S, 3, 4, 5)), nil, 0x4ea5f483, "fmin v3.4s, v4.4s, v5.4s"},
		{m(CMGT(A4S, 6, 7, 8)), nil, 0x4ea834e6, "cmgt v6.4s, v7.4s, v8.4s"},
		{m(FABS(A4S, 1, 2)), nil, 0x4ea0f841, "fabs v1.4s, v2.4s"},
		{m(FRINTA(A4S, 1, 2)), nil, 0x6e218841, "frinta v1.4s, v2.4s"},
		{m(FCVTZS(A4S, 1, 2)), nil, 0x4ea1b841, "fcvtzs v1.4s, v2.4s"},
		{m(SCVTF(A4S, 1, 2)), nil, 0x4e21d841, "scvtf v1.4s, v2.4s"},
		{m(FMAXV(A4S, 1, 2)), nil, 0x6e30f841, "fmaxv s1, v2.4s"},
		{m(SXTL(A8H, 1, 2)), nil, 0x0f08a441, "sxtl v1.8h, v2.8b"},
		{m(SXTL2(A4S, 1, 2)), nil, 0x4f10a441, "sxtl2 v1.4s, v2.8h"},
	} {
		if c.in.Word != c.word || c.in.Asm != c.asm {
			t.Errorf("%s: %08x %q, want %08x %q", c.asm, c.in.Word, c.in.Asm, c.word, c.asm)
		}
	}
}
