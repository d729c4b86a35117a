package amd64

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"

	"github.com/ropegen/ropegen/asm/vec"
)

// Kernel is one emitted function (its Go declaration is Func.Decl).
type Kernel struct {
	*vec.Func
	Features []string // the cpu.X86 fields it needs: its level's, then those of the extensions avo finds it uses
}

// Generate emits funcs (their Level unset) at every level, best level
// first, into one .s file: header replaces avo's own first line,
// constraint is the build constraint in avo's "+build" form.
func Generate(funcs []*vec.Func, header, constraint string) ([]byte, []Kernel, error) {
	c := build.NewContext()
	c.ConstraintExpr(constraint)
	var ks []Kernel
	tab := &table{slots: map[[8]uint64]int{}}
	var t *Target
	for _, l := range Levels {
		t = New(c, l, tab)
		for _, f := range funcs {
			g := *f
			g.Level = l.Name
			if g.Kind == vec.Fill && g.C() != vec.F32 {
				continue
			}
			vec.Emit(t, &g)
			ks = append(ks, Kernel{Func: &g, Features: []string{l.base()}})
		}
	}
	tab.emit(t)
	file, err := c.Result()
	if err != nil {
		return nil, nil, fmt.Errorf("amd64: %w", err)
	}
	if err := pass.Compile.Execute(file); err != nil {
		return nil, nil, fmt.Errorf("amd64: %w", err)
	}
	for i, fn := range file.Functions() {
		for _, isa := range fn.ISA {
			ft, ok := features[isa]
			if !ok {
				return nil, nil, fmt.Errorf("amd64: %s uses %s, which no cpu.X86 field is known to guarantee", fn.Name, isa)
			}
			if ft != "" && !slices.Contains(ks[i].Features, ft) {
				ks[i].Features = append(ks[i].Features, ft)
			}
		}
	}
	src, err := printer.NewGoAsm(printer.Config{Name: "ropegen", Pkg: "rope"}).Print(file)
	if err != nil {
		return nil, nil, fmt.Errorf("amd64: %w", err)
	}
	_, rest, _ := bytes.Cut(src, []byte("\n")) // avo's own "Code generated" line
	return append([]byte(header+"\n"), rest...), ks, nil
}
