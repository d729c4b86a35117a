package qemu

import (
	"os"
	"strings"
	"testing"
)

// The Makefile's RISCV64_QEMU emulates RISCV64CPU(128).
func TestMakefileAgrees(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	want := "RISCV64_QEMU ?= qemu-riscv64-static -cpu " + RISCV64CPU(128) + "\n"
	if !strings.Contains(string(mk), want) {
		t.Errorf("the Makefile has no line %q", want)
	}
}
