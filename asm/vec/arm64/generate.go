package arm64

import (
	"strings"

	"github.com/ropegen/ropegen/asm/vec"
)

// Generate emits funcs (their Level unset) as NEON kernels: the .s file,
// beginning with header and the build constraint constraint ("arm64 &&
// !purego"), the functions with their Level set, and their Go stubs. The
// table fill has no NEON form.
func Generate(funcs []*vec.Func, header, constraint string) (asm []byte, out []*vec.Func, stubs string, err error) {
	t := New()
	t.lines = []line{{text: header + "\n\n//go:build " + constraint + "\n\n#include \"textflag.h\""}}
	var decls []string
	for _, f := range funcs {
		if f.Kind == vec.Fill {
			continue
		}
		g := *f
		g.Level = t.Level()
		vec.Emit(t, &g)
		out = append(out, &g)
		decls = append(decls, g.Decl())
	}
	if t.err != nil {
		return nil, nil, "", t.err
	}
	var text []string
	for _, l := range t.lines {
		text = append(text, l.text)
	}
	return []byte(strings.Join(text, "\n") + "\n"), out, strings.Join(decls, "\n"), nil
}
