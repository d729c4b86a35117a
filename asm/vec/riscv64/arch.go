package riscv64

import "github.com/ropegen/ropegen/asm/vec"

// Arch is the riscv64 target as a vec.Arch: Generate's kernels, one level,
// "rvv", needing the V extension.
type Arch struct{}

// GOARCH is "riscv64".
func (Arch) GOARCH() string { return "riscv64" }

// CPU is "RISCV64".
func (Arch) CPU() string { return "RISCV64" }

// Lower is Generate.
func (Arch) Lower(funcs []*vec.Func, header, constraint string) (vec.Lowered, error) {
	asm, fs, _, err := Generate(funcs, header, constraint)
	if err != nil {
		return vec.Lowered{}, err
	}
	return vec.Lowered{Asm: asm, Levels: []vec.Level{{Name: (&Target{}).Level(), Features: []string{"HasV"}, Funcs: fs}}}, nil
}
