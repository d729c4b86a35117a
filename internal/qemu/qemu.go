// Package qemu names the CPUs the riscv64 tests emulate under qemu-user, for
// the tests that start qemu-riscv64-static themselves; the Makefile's
// RISCV64_QEMU names the same CPU at VLEN 128 and RISCV64_QEMU_NOV the CPU
// without V (TestMakefileAgrees).
//
// qemu-user 8.1 and later have the riscv_hwprobe system call, through which
// golang.org/x/sys/cpu sees the V extension of the emulated CPU; 7.2
// (Debian 12's qemu-user-static) has none, so x/sys/cpu sees no V under it
// and the tests set ROPEGEN_RVV=1 to run the RVV backend anyway. Both work.
package qemu

import "fmt"

// RISCV64CPU is qemu-riscv64's -cpu value for a core with the V extension
// (RVV 1.0) of vlen bits, whose tail- and mask-agnostic elements are set to
// all ones, as hardware may set them, so that a kernel relying on them
// keeping their old values fails.
func RISCV64CPU(vlen int) string {
	return fmt.Sprintf("rv64,v=true,vlen=%d,vext_spec=v1.0,rvv_ta_all_1s=true,rvv_ma_all_1s=true", vlen)
}

// RISCV64NoV is qemu-riscv64's -cpu value for a core without the V
// extension, on which a package dispatches to its pure Go backend: under
// qemu ≥ 8.1 x/sys/cpu would see RISCV64CPU's V.
const RISCV64NoV = "rv64,v=false"
