// Package qemu names the CPU the riscv64 tests emulate under qemu-user, for
// the tests that start qemu-riscv64-static themselves; the Makefile's
// RISCV64_QEMU names the same CPU at VLEN 128 (TestMakefileAgrees).
package qemu

import "fmt"

// RISCV64CPU is qemu-riscv64's -cpu value for a core with the V extension
// (RVV 1.0) of vlen bits, whose tail- and mask-agnostic elements are set to
// all ones, as hardware may set them, so that a kernel relying on them
// keeping their old values fails.
func RISCV64CPU(vlen int) string {
	return fmt.Sprintf("rv64,v=true,vlen=%d,vext_spec=v1.0,rvv_ta_all_1s=true,rvv_ma_all_1s=true", vlen)
}
