package neon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBinutilsCrossCheck assembles the GNU text of every generated case
// with aarch64-linux-gnu-as, disassembles the object with
// aarch64-linux-gnu-objdump, and requires both the instruction word and the
// disassembly text to equal ours.
func TestBinutilsCrossCheck(t *testing.T) {
	as := requireTool(t, "aarch64-linux-gnu-as", "binutils-aarch64-linux-gnu")
	objdump := requireTool(t, "aarch64-linux-gnu-objdump", "binutils-aarch64-linux-gnu")

	names, byForm := allCases(t)
	var all []Inst
	var src strings.Builder
	for _, name := range names {
		for _, in := range byForm[name] {
			all = append(all, in)
			src.WriteString("\t" + in.Asm + "\n")
		}
	}

	dir := t.TempDir()
	sfile, ofile := filepath.Join(dir, "cases.s"), filepath.Join(dir, "cases.o")
	if err := os.WriteFile(sfile, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "-o", ofile, sfile).CombinedOutput(); err != nil {
		t.Fatalf("%s rejected our text: %v\n%s", as, err, out)
	}
	out, err := exec.Command(objdump, "-d", ofile).Output()
	if err != nil {
		t.Fatalf("%s: %v", objdump, err)
	}

	type dis struct {
		word uint32
		text string
	}
	var got []dis
	for _, line := range strings.Split(string(out), "\n") {
		// "   4:\t4fdf981f \tfmul\tv31.2d, v0.2d, v31.d[1]"
		f := strings.SplitN(line, "\t", 3)
		if len(f) != 3 || !strings.HasSuffix(strings.TrimSpace(f[0]), ":") {
			continue
		}
		w, err := strconv.ParseUint(strings.TrimSpace(f[1]), 16, 32)
		if err != nil {
			continue
		}
		got = append(got, dis{uint32(w), norm(f[2])})
	}
	if len(got) != len(all) {
		t.Fatalf("objdump listed %d instructions, want %d:\n%s", len(got), len(all), out)
	}
	bad := 0
	for i, in := range all {
		// Inst.Asm is documented as single-spaced, so it is compared
		// unnormalised against objdump's normalised text.
		if got[i].word != in.Word || got[i].text != in.Asm {
			bad++
			if bad <= 20 {
				t.Errorf("case %d: ours %08x %q, binutils %08x %q", i, in.Word, in.Asm, got[i].word, got[i].text)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d cases disagree with binutils", bad, len(all))
	}
	for _, name := range names {
		t.Logf("%-18s %3d cases agree with binutils", name, len(byForm[name]))
	}
}

// norm collapses whitespace runs to one space.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }
