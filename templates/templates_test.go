package templates

import (
	"errors"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/asm/neon"
)

func TestNames(t *testing.T) {
	got := strings.Join(Names(), " ")
	if got != "cache_arm64.go.tmpl cache_arm64.s.tmpl norm_arm64.s.tmpl rope_arm64.go.tmpl rope_arm64.s.tmpl" {
		t.Fatalf("Names() = %s", got)
	}
	for _, n := range Names() {
		if _, err := Source(n); err != nil {
			t.Error(err)
		}
	}
	if _, err := Source("nope.tmpl"); err == nil || !strings.Contains(err.Error(), "rope_arm64.s.tmpl") {
		t.Errorf("Source(unknown) = %v, want an error listing the templates", err)
	}
}

// kernel is a hand-made two-pair interleaved float32 kernel: one 2-pair
// block, preloaded.
func kernel() *Kernel {
	b := Block{
		Pairs: 2, Last: 1, Form: "ld2", Arr: "2S", GoArr: "S2", XB: 4, XBytes: 16, YB: 4, YBytes: 16, TBytes: 16,
		SOff: 20, SLoad: 16, Preloaded: true,
		A: 10, B: 11, P0: 12, P1: 13, P2: 14, P3: 15, C: 9, S: 22,
		Loads:  []Access{{Kind: "ld2", Arr: "S2", Ptr: "R3", Post: true, Bytes: 16, Regs: []int{10, 11}}},
		Stores: []Access{{Kind: "ld2", Arr: "S2", Ptr: "R4", Post: true, Bytes: 16, Regs: []int{12, 13}}},
	}
	body := &Body{
		In: Format{"f32", 4}, Out: Format{"f32", 4}, TableSize: 4, Lanes: 4,
		Ptrs:       []Ptr{{Reg: "R3", From: "R0", Walk: 16, Adv: "R12"}, {Reg: "R4", From: "R0", Walk: 16, Adv: "R12"}},
		Advances:   []Advance{{Reg: "R12", Arg: "stride", ArgOff: 24, Shift: 2, Walk: 16}},
		Blocks:     []Block{b},
		Groups:     []Group{{First: 0, Last: 1, Blocks: []Block{b}}},
		MaxPreload: MaxPreload,
		Preloaded:  1,
		Preload: []Load{
			{What: "c", Off: 0, Pairs: 2, Kind: "ld2", Arr: "S2", Regs: []int{9, 10}, Keep: 9},
			{What: "s", Off: 16, Pairs: 2, Kind: "ld2", Arr: "S2", Regs: []int{21, 22}, Keep: 22},
		},
	}
	return &Kernel{
		Header: "// header", Package: "p", HeadDim: 4, RotaryDim: 4, Half: 2, Layout: "interleaved", RowLen: 8,
		DType: "f32",
		Funcs: []Func{
			{Name: "f", Kind: "fwd", Doc: "forward", Params: "x []float32, stride, n int, r *float32", AsmParams: "x []float32, stride, n int, r *[8]float32", ArgSize: 48, Body: body},
			{Name: "g", Kind: "inv", Inverse: true, Doc: "backward", Params: "x []float32, stride, n int, r *float32", AsmParams: "x []float32, stride, n int, r *[8]float32", ArgSize: 48, Body: body},
		},
	}
}

func TestExecute(t *testing.T) {
	out, err := Execute("rope_arm64.s.tmpl", kernel())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"// header\n\n//go:build arm64 && !purego\n\n#include \"textflag.h\"\n",
		"TEXT ·f(SB), NOSPLIT, $0-48\n",
		"\tMOVD n+32(FP), R1\n\tMOVD r+40(FP), R2\n\tCMP  $0, R1\n\tBLE  done // no heads\n",
		"\tMOVD stride+24(FP), R12\n\tLSL  $2, R12\n\tSUB  $16, R12 // stride in bytes less the 16 a head walks\n",
		"\tADD  R12, R3\n\tADD  R12, R4\n\tSUBS $1, R1\n\tBNE  head\n",
		"\tVLD2 (R7), [V21.S2, V22.S2] // s of block 0 in V22\n",
		"\tVLD2.P 16(R3), [V10.S2, V11.S2]\n",
		"\tWORD $0x2e29dd6d // fmul v13.2s, v11.2s, v9.2s\n",
		"\tWORD $0x0eaed58c // fsub v12.2s, v12.2s, v14.2s\n", // forward y_a
		"\tWORD $0x0e2ed58c // fadd v12.2s, v12.2s, v14.2s\n", // inverse y_a
		"\tVST2.P [V12.S2, V13.S2], 16(R4)\n",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	src, err := Execute("rope_arm64.go.tmpl", kernel())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"//go:noescape\nfunc f(x []float32, stride, n int, r *float32)\n",
		"//go:noescape\nfunc g(x []float32, stride, n int, r *float32)\n",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("rope_arm64.go lacks %q:\n%s", want, src)
		}
	}
	// The Go file declares the functions and nothing else: gen writes the
	// backend of every shape once, in rope_arm64.go's kernels table.
	if strings.Contains(string(src), "backend{") || strings.Contains(string(src), "var ") {
		t.Errorf("rope_arm64.go declares more than the functions:\n%s", src)
	}
}

// An operand the encoder rejects fails Execute with the encoder's error and
// no output, although text/template itself ran to the end.
func TestExecuteOperandError(t *testing.T) {
	k := kernel()
	k.Funcs[0].Body.Blocks[0].S = 32
	k.Funcs[0].Body.Groups[0].Blocks[0].S = 32
	out, err := Execute("rope_arm64.s.tmpl", k)
	var oe *neon.OperandError
	if out != nil || !errors.As(err, &oe) || oe.Operand != "Vm" || oe.Value != "32" {
		t.Fatalf("Execute with V32 = %q, %v; want no output and an OperandError for Vm = 32", out, err)
	}
}

// A Kernel value no branch of the template spells fails Execute.
func TestExecuteUnknownKind(t *testing.T) {
	k := kernel()
	k.Funcs[0].Body.Groups[0].Blocks[0].Loads[0].Kind = "ld3"
	out, err := Execute("rope_arm64.s.tmpl", k)
	if out != nil || err == nil || !strings.Contains(err.Error(), `unknown access kind "ld3"`) {
		t.Fatalf("Execute with access kind ld3 = %q, %v; want no output and an error naming it", out, err)
	}
}

// A function kind the template does not know fails Execute.
func TestExecuteUnknownFuncKind(t *testing.T) {
	k := kernel()
	k.Funcs[0].Kind = "both"
	out, err := Execute("rope_arm64.s.tmpl", k)
	if out != nil || err == nil || !strings.Contains(err.Error(), `unknown kind "both"`) {
		t.Fatalf("Execute with function kind both = %q, %v; want no output and an error naming it", out, err)
	}
}

func TestVlist(t *testing.T) {
	for _, c := range []struct {
		regs []any
		want string
	}{
		{[]any{3}, "[V3.S4]"},
		{[]any{3, 4}, "[V3.S4, V4.S4]"},
		{[]any{[]int{30, 31}}, "[V30.S4, V31.S4]"},
	} {
		got, err := vlist("S4", c.regs...)
		if err != nil || got != c.want {
			t.Errorf("vlist(S4, %v) = %q, %v; want %q", c.regs, got, err, c.want)
		}
	}
	if _, err := vlist("S4", "V3"); err == nil {
		t.Error("vlist accepted a string register")
	}
}
