package purego

import "github.com/ropegen/ropegen/asm/vec"

// Arch is the pure Go target as a vec.Arch: it runs everywhere and needs no
// CPU feature; its one level, "generic", is Go code, not assembly.
type Arch struct{}

// GOARCH is "": pure Go runs on every architecture.
func (Arch) GOARCH() string { return "" }

// CPU is "": the level needs no feature.
func (Arch) CPU() string { return "" }

// Lower is Generate of funcs but the rows kernels: the pure Go backend walks
// a head-major view token by token (its kernels are compute-bound). There
// is no assembly, so header and constraint are not used.
func (Arch) Lower(funcs []*vec.Func, _, _ string) (vec.Lowered, error) {
	var fs []*vec.Func
	for _, f := range funcs {
		if f.Kind != vec.FwdRows && f.Kind != vec.InvRows {
			fs = append(fs, f)
		}
	}
	t, out := Generate(fs)
	return vec.Lowered{Levels: []vec.Level{{Name: t.Level(), Funcs: out}}, Go: t.Funcs()}, nil
}
