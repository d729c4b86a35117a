package qemu

import (
	"os"
	"strings"
	"testing"
)

// The Makefile's RISCV64_QEMU emulates RISCV64CPU(128), its RISCV64_QEMU_NOV
// RISCV64NoV.
func TestMakefileAgrees(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"RISCV64_QEMU ?= qemu-riscv64-static -cpu " + RISCV64CPU(128) + "\n",
		"RISCV64_QEMU_NOV ?= qemu-riscv64-static -cpu " + RISCV64NoV + "\n",
	} {
		if !strings.Contains(string(mk), want) {
			t.Errorf("the Makefile has no line %q", want)
		}
	}
}
