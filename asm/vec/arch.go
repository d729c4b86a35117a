package vec

import "github.com/dave/jennifer/jen"

// Arch is one target of the vector layer as a generator sees it: where its
// kernels run, the CPU features they need, and the kernels of a list of
// Funcs, lowered level by level. Every target package has one (amd64.Arch,
// arm64.Arch, riscv64.Arch, purego.Arch), each wrapping that package's own
// Generate; a generator walks a list of them and never asks which it has.
type Arch interface {
	// GOARCH is the architecture the kernels run on, "amd64", "arm64",
	// "riscv64"; "" for a target that runs everywhere (pure Go).
	GOARCH() string
	// CPU is the golang.org/x/sys/cpu variable whose fields name the
	// features of the levels ("X86", "ARM64", "RISCV64"); "" when the
	// levels need none.
	CPU() string
	// Lower emits funcs (their Level unset) at every level of the target.
	// header is the first line of an assembly file and constraint its
	// build constraint, in //go:build form; a target without assembly
	// ignores both.
	Lower(funcs []*Func, header, constraint string) (Lowered, error)
}

// Lowered is a target's kernels of a list of Funcs.
type Lowered struct {
	// Asm is the assembly file, nil for a target without one. Its
	// functions are declared in Go by their Func.Decl.
	Asm []byte
	// Levels are the target's levels, best first, each with the Funcs it
	// emitted (their Level set) and the CPU features it needs.
	Levels []Level
	// Go are Go declarations, the kernels of a target without assembly.
	Go []jen.Code
}

// Level is one level of a target: a backend of the generated package.
type Level struct {
	Name     string   // "avx512", "avx2", "neon", "rvv", "generic"
	Features []string // the fields of the Arch's CPU variable it needs, all true
	Funcs    []*Func  // the kernels emitted at the level
}
