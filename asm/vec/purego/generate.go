package purego

import "github.com/ropegen/ropegen/asm/vec"

// Generate adds the pure Go kernels of funcs (their Level unset) to f's
// functions, level "generic", and returns them with their Level set. The
// table fill has none: the run-time's fillRow is its pure Go form.
func Generate(funcs []*vec.Func) (*Target, []*vec.Func) {
	t := New()
	var out []*vec.Func
	for _, f := range funcs {
		if f.Kind == vec.Fill {
			continue
		}
		g := *f
		g.Level = t.Level()
		vec.Emit(t, &g)
		out = append(out, &g)
	}
	return t, out
}
