package neon

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// nativeNEON lists the Go arm64 assembler syntax (Go operand order: sources
// first, destination last, for the three-operand forms) of the NEON
// instructions a RoPE kernel uses that the Go assembler does accept. The GNU
// equivalent is in each comment. TestGoAssemblerAcceptsWords assembles
// them, so this list stays true for the Go toolchain in use.
const nativeNEON = `
	VLD1 (R1), [V2.S4, V3.S4]                    // ld1 {v2.4s, v3.4s}, [x1]
	VLD1.P 32(R1), [V2.S4, V3.S4]                // ld1 {v2.4s, v3.4s}, [x1], #32
	VLD1.P 64(R1), [V0.S4, V1.S4, V2.S4, V3.S4]  // ld1 {v0.4s-v3.4s}, [x1], #64
	VLD1 (R1), [V2.D2]                           // ld1 {v2.2d}, [x1]
	VLD1 (R1), [V2.H8]                           // ld1 {v2.8h}, [x1]
	VLD1.P 8(R1), [V2.H4]                        // ld1 {v2.4h}, [x1], #8
	VLD1.P (R1)(R3), [V2.S4]                     // ld1 {v2.4s}, [x1], x3
	VLD1R (R0), [V0.S4]                          // ld1r {v0.4s}, [x0]
	VLD1 (R0), V0.S[1]                           // ld1 {v0.s}[1], [x0]
	VLD2 (R0), [V0.S4, V1.S4]                    // ld2 {v0.4s, v1.4s}, [x0]
	VLD2.P 32(R0), [V0.S4, V1.S4]                // ld2 {v0.4s, v1.4s}, [x0], #32
	VLD2.P 32(R0), [V0.D2, V1.D2]                // ld2 {v0.2d, v1.2d}, [x0], #32
	VLD2.P 16(R0), [V0.H4, V1.H4]                // ld2 {v0.4h, v1.4h}, [x0], #16
	VLD2.P 32(R0), [V0.H8, V1.H8]                // ld2 {v0.8h, v1.8h}, [x0], #32
	VST1 [V2.S4, V3.S4], (R1)                    // st1 {v2.4s, v3.4s}, [x1]
	VST1.P [V2.S4, V3.S4], 32(R1)                // st1 {v2.4s, v3.4s}, [x1], #32
	VST1.P [V2.H4], 8(R1)                        // st1 {v2.4h}, [x1], #8
	VST1 V0.S[1], (R0)                           // st1 {v0.s}[1], [x0]
	VST2 [V0.S4, V1.S4], (R0)                    // st2 {v0.4s, v1.4s}, [x0]
	VST2.P [V0.S4, V1.S4], 32(R0)                // st2 {v0.4s, v1.4s}, [x0], #32
	VST2.P [V0.D2, V1.D2], 32(R0)                // st2 {v0.2d, v1.2d}, [x0], #32
	VST2.P [V0.H8, V1.H8], 32(R0)                // st2 {v0.8h, v1.8h}, [x0], #32
	VZIP1 V1.S4, V2.S4, V3.S4                    // zip1 v3.4s, v2.4s, v1.4s
	VZIP2 V1.S4, V2.S4, V3.S4                    // zip2 v3.4s, v2.4s, v1.4s
	VZIP1 V1.D2, V2.D2, V3.D2                    // zip1 v3.2d, v2.2d, v1.2d
	VZIP1 V1.H8, V2.H8, V3.H8                    // zip1 v3.8h, v2.8h, v1.8h
	VUZP1 V1.S4, V2.S4, V3.S4                    // uzp1 v3.4s, v2.4s, v1.4s
	VUZP2 V1.S4, V2.S4, V3.S4                    // uzp2 v3.4s, v2.4s, v1.4s
	VUZP2 V1.H8, V2.H8, V3.H8                    // uzp2 v3.8h, v2.8h, v1.8h
	VTRN1 V1.S4, V2.S4, V3.S4                    // trn1 v3.4s, v2.4s, v1.4s
	VTRN2 V1.S4, V2.S4, V3.S4                    // trn2 v3.4s, v2.4s, v1.4s
	VTRN1 V1.D2, V2.D2, V3.D2                    // trn1 v3.2d, v2.2d, v1.2d
	VREV64 V1.S4, V2.S4                          // rev64 v2.4s, v1.4s
	VREV32 V1.H8, V2.H8                          // rev32 v2.8h, v1.8h
	VDUP V1.S[2], V3.S4                          // dup v3.4s, v1.s[2]
	VDUP V1.D[1], V3.D2                          // dup v3.2d, v1.d[1]
	VDUP R5, V3.S4                               // dup v3.4s, w5
	VEOR V1.B16, V2.B16, V3.B16                  // eor v3.16b, v2.16b, v1.16b
	VAND V1.B16, V2.B16, V3.B16                  // and v3.16b, v2.16b, v1.16b
	VORR V1.B16, V2.B16, V3.B16                  // orr v3.16b, v2.16b, v1.16b
	VBSL V1.B16, V2.B16, V3.B16                  // bsl v3.16b, v2.16b, v1.16b
	VBIT V1.B16, V2.B16, V3.B16                  // bit v3.16b, v2.16b, v1.16b
	VBIF V1.B16, V2.B16, V3.B16                  // bif v3.16b, v2.16b, v1.16b
	VUSHLL $15, V1.H4, V2.S4                     // ushll v2.4s, v1.4h, #15 (shift 0..15 only)
	VUSHLL2 $8, V1.H8, V2.S4                     // ushll2 v2.4s, v1.8h, #8
	VUXTL V1.H4, V2.S4                           // uxtl v2.4s, v1.4h
	VUXTL2 V1.H8, V2.S4                          // uxtl2 v2.4s, v1.8h
	VSHL $16, V1.S4, V2.S4                       // shl v2.4s, v1.4s, #16
	VUSHR $16, V1.S4, V2.S4                      // ushr v2.4s, v1.4s, #16
	VSRI $16, V1.S4, V2.S4                       // sri v2.4s, v1.4s, #16
	VSLI $16, V1.S4, V2.S4                       // sli v2.4s, v1.4s, #16
	VUSRA $16, V1.S4, V2.S4                      // usra v2.4s, v1.4s, #16
	VADD V1.S4, V2.S4, V3.S4                     // add v3.4s, v2.4s, v1.4s
	VSUB V1.S4, V2.S4, V3.S4                     // sub v3.4s, v2.4s, v1.4s
	VCMEQ V1.S4, V2.S4, V3.S4                    // cmeq v3.4s, v2.4s, v1.4s
	VCMTST V1.S4, V2.S4, V3.S4                   // cmtst v3.4s, v2.4s, v1.4s
	VMOV V1.B16, V2.B16                          // mov v2.16b, v1.16b
	VMOV V1.S[1], V2.S[3]                        // mov v2.s[3], v1.s[1]
	VMOV V1.S[1], R3                             // mov w3, v1.s[1]
	VMOV R3, V1.S[2]                             // mov v1.s[2], w3
	VMOVI $1, V1.B16                             // movi v1.16b, #0x1
	VEXT $8, V1.B16, V2.B16, V3.B16              // ext v3.16b, v2.16b, v1.16b, #8
	VTBL V1.B16, [V2.B16], V3.B16                // tbl v3.16b, {v2.16b}, v1.16b
	FMOVQ (R0), F1                               // ldr q1, [x0]
	FMOVQ F1, 16(R0)                             // str q1, [x0, #16]
	FLDPQ (R0), (F1, F2)                         // ldp q1, q2, [x0]
	FSTPQ (F1, F2), 32(R0)                       // stp q1, q2, [x0, #32]
	FMOVS (R0), F1                               // ldr s1, [x0]
	FMULS F1, F2, F3                             // fmul s3, s2, s1
	FADDS F1, F2, F3                             // fadd s3, s2, s1
	FSUBS F1, F2, F3                             // fsub s3, s2, s1
	FNEGS F1, F2                                 // fneg s2, s1
	FMULD F1, F2, F3                             // fmul d3, d2, d1
	FCVTHS F1, F2                                // fcvt s2, h1
	FCVTSH F1, F2                                // fcvt h2, s1
`

// goTool returns the go command of the toolchain running the tests.
func goTool(t *testing.T) string {
	t.Helper()
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go command not found: %v", err)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// goArm64 runs the go command for linux/arm64 in dir.
func goArm64(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(goTool(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0",
		"GOTOOLCHAIN=local", "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s (GOARCH=arm64) failed: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// writeModule writes files into a fresh temporary module "neontest".
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module neontest\n\ngo 1.24\n"
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGoAssemblerAcceptsWords puts every WORD line of the binutils table,
// and the native NEON syntax listed in nativeNEON, into TEXT symbols of a
// temporary arm64 module and builds and vets it with GOARCH=arm64. If
// binutils is installed it also disassembles the linked binary and checks
// that the Go assembler laid down exactly our words.
func TestGoAssemblerAcceptsWords(t *testing.T) {
	names, byForm := allCases(t)
	var all []Inst
	var s strings.Builder
	s.WriteString("#include \"textflag.h\"\n\n// func allWords()\nTEXT ·allWords(SB), NOSPLIT, $0-0\n")
	for _, name := range names {
		for _, in := range byForm[name] {
			all = append(all, in)
			s.WriteString("\t" + in.GoAsm() + "\n")
		}
	}
	s.WriteString("\tRET\n\n// func native()\nTEXT ·native(SB), NOSPLIT, $0-0\n")
	s.WriteString(nativeNEON)
	s.WriteString("\tRET\n")

	dir := writeModule(t, map[string]string{
		"k/k_arm64.s": s.String(),
		"k/k.go":      "package k\n\nfunc allWords()\n\nfunc native()\n\n// Touch keeps the symbols linked.\nfunc Touch() { allWords(); native() }\n",
		"main.go":     "package main\n\nimport \"neontest/k\"\n\n// The binary is only disassembled, never run.\nfunc main() { k.Touch() }\n",
	})
	goArm64(t, dir, "vet", "./...")
	bin := filepath.Join(dir, "neontest.bin")
	goArm64(t, dir, "build", "-o", bin, ".")
	t.Logf("Go assembler accepted %d WORD lines and %d native NEON lines", len(all), strings.Count(nativeNEON, "\n")-1)

	objdump, err := exec.LookPath("aarch64-linux-gnu-objdump")
	if err != nil {
		t.Log("aarch64-linux-gnu-objdump not found; not disassembling the Go-built binary")
		return
	}
	out, err := exec.Command(objdump, "-d", "--disassemble=neontest/k.allWords.abi0", bin).Output()
	if err != nil {
		t.Fatalf("objdump: %v", err)
	}
	var words []uint32
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 2 || !strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			continue
		}
		if w, err := strconv.ParseUint(strings.TrimSpace(f[1]), 16, 32); err == nil {
			words = append(words, uint32(w))
		}
	}
	if len(words) != len(all)+1 { // + RET
		t.Fatalf("allWords has %d instructions, want %d:\n%.2000s", len(words), len(all)+1, out)
	}
	for i, in := range all {
		if words[i] != in.Word {
			t.Errorf("Go assembler laid down %08x for %q, want %08x", words[i], in.GoAsm(), in.Word)
		}
	}
}

// requireQEMU returns the qemu-aarch64 user emulator, or skips loudly
// (fatal under ROPEGEN_REQUIRE_ARM64=1).
func requireQEMU(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"qemu-aarch64-static", "qemu-aarch64"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return requireTool(t, "qemu-aarch64-static", "qemu-user-static")
}

// TestRunUnderQEMU builds kernels made of emitted WORD lines into a linux/
// arm64 program and runs it under qemu-aarch64, checking the results bit for
// bit against references computed here (NaN payloads aside for arithmetic):
// the canonical RoPE rotation in f32 (4S and 2S) and f64, FMUL by element,
// FNEG, FCMEQ, f16 and f64 conversions (with the "2" forms keeping the
// destination's lower half), XTN, SHLL and SHRN.
func TestRunUnderQEMU(t *testing.T) {
	qemu := requireQEMU(t)
	cases := runCases(t)

	var s, stubs, table strings.Builder
	s.WriteString("#include \"textflag.h\"\n")
	for k, c := range cases {
		fmt.Fprintf(&stubs, "func k%d(io *[8][16]byte)\n\n", k)
		fmt.Fprintf(&table, "k%d, ", k)
		fmt.Fprintf(&s, "\n// %s\n// func k%d(io *[8][16]byte)\nTEXT ·k%d(SB), NOSPLIT, $0-8\n\tMOVD io+0(FP), R0\n", c.name, k, k)
		for _, l := range c.loads {
			fmt.Fprintf(&s, "\tFMOVQ %d(R0), F%d\n", 16*l.slot, l.reg)
		}
		for _, in := range c.body {
			s.WriteString("\t" + in.GoAsm() + "\n")
		}
		for _, st := range c.stores {
			fmt.Fprintf(&s, "\tFMOVQ F%d, %d(R0)\n", st.reg, 16*st.slot)
		}
		s.WriteString("\tRET\n")
	}
	main := `package main

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"os"
)

` + stubs.String() + `var kernels = []func(*[8][16]byte){` + table.String() + `}

// main reads "kernel hex(io)" lines and prints hex(io) after the call.
func main() {
	sc := bufio.NewScanner(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for sc.Scan() {
		var k int
		var h string
		if _, err := fmt.Sscan(sc.Text(), &k, &h); err != nil {
			panic(err)
		}
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != 128 {
			panic("bad input")
		}
		var io [8][16]byte
		for i := range io {
			copy(io[i][:], b[16*i:])
		}
		kernels[k](&io)
		var out []byte
		for i := range io {
			out = append(out, io[i][:]...)
		}
		fmt.Fprintln(w, hex.EncodeToString(out))
	}
}
`
	dir := writeModule(t, map[string]string{"main.go": main, "k_arm64.s": s.String()})
	goArm64(t, dir, "vet", ".")
	bin := filepath.Join(dir, "run.bin")
	goArm64(t, dir, "build", "-o", bin, ".")

	var stdin bytes.Buffer
	type job struct {
		c  int
		in [8][16]byte
	}
	var jobs []job
	for k, c := range cases {
		for _, in := range c.inputs {
			jobs = append(jobs, job{k, in})
			fmt.Fprintf(&stdin, "%d %x\n", k, flat(in))
		}
	}
	cmd := exec.Command(qemu, bin)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", qemu, bin, err, stderr.String())
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(jobs) {
		t.Fatalf("got %d result lines, want %d", len(lines), len(jobs))
	}
	bad := 0
	badBy := map[string]int{}
	for i, j := range jobs {
		c := cases[j.c]
		b, err := hex.DecodeString(lines[i])
		if err != nil || len(b) != 128 {
			t.Fatalf("bad result line %q", lines[i])
		}
		var got [8][16]byte
		for k := range got {
			copy(got[k][:], b[16*k:])
		}
		want := c.want(j.in)
		for slot := 0; slot < 8; slot++ {
			cmp := cmpExact
			for _, st := range c.stores {
				if st.slot == slot {
					cmp = st.cmp
				}
			}
			if !equalLanes(cmp, got[slot], want[slot]) {
				bad++
				badBy[c.name]++
				if bad <= 20 {
					t.Errorf("%s input %x slot %d: got %x, want %x", c.name, flat(j.in), slot, got[slot], want[slot])
				}
			}
		}
	}
	for name, n := range badBy {
		t.Errorf("%s: %d mismatching slots", name, n)
	}
	for _, c := range cases {
		t.Logf("qemu: %-22s %3d input vectors, body of %d WORD lines", c.name, len(c.inputs), len(c.body))
	}
}
