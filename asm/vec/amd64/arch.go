package amd64

import (
	"slices"
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

// Arch is the amd64 target as a vec.Arch: Generate's kernels, at every
// level of Levels, each level needing its own cpu.X86 field and those of
// the extensions its kernels use.
type Arch struct{}

// GOARCH is "amd64".
func (Arch) GOARCH() string { return "amd64" }

// CPU is "X86".
func (Arch) CPU() string { return "X86" }

// Lower is Generate, its kernels grouped by level; the constraint is given
// in //go:build form ("amd64 && !purego") and passed on in avo's.
func (Arch) Lower(funcs []*vec.Func, header, constraint string) (vec.Lowered, error) {
	asm, ks, err := Generate(funcs, header, strings.ReplaceAll(constraint, " && ", ","))
	if err != nil {
		return vec.Lowered{}, err
	}
	var levels []vec.Level
	for _, l := range Levels {
		lv := vec.Level{Name: l.Name}
		for _, k := range ks {
			if k.Level == l.Name {
				lv.Funcs = append(lv.Funcs, k.Func)
				for _, ft := range k.Features {
					if !slices.Contains(lv.Features, ft) {
						lv.Features = append(lv.Features, ft)
					}
				}
			}
		}
		levels = append(levels, lv)
	}
	return vec.Lowered{Asm: asm, Levels: levels}, nil
}
