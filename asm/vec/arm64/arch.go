package arm64

import "github.com/ropegen/ropegen/asm/vec"

// Arch is the arm64 target as a vec.Arch: Generate's kernels, one level,
// "neon".
type Arch struct{}

// GOARCH is "arm64".
func (Arch) GOARCH() string { return "arm64" }

// CPU is "ARM64".
func (Arch) CPU() string { return "ARM64" }

// Lower is Generate. Advanced SIMD is part of every arm64 CPU Go runs on:
// the level's check of HasASIMD keeps the structure of the other
// architectures and costs nothing.
func (Arch) Lower(funcs []*vec.Func, header, constraint string) (vec.Lowered, error) {
	asm, fs, _, err := Generate(funcs, header, constraint)
	if err != nil {
		return vec.Lowered{}, err
	}
	return vec.Lowered{Asm: asm, Levels: []vec.Level{{Name: New().Level(), Features: []string{"HasASIMD"}, Funcs: fs}}}, nil
}
