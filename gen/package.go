package gen

import (
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/internal/exact"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates/rt"
)

// A generated package is rt's run-time (copied from package rt) plus a small
// generated part: rope.go (the package doc, the element and compute types,
// the shapes; for a package generated for one spec its constants and
// default model), the kernels of each shape per backend, and each backend's
// kernels value per shape (the ABI of templates/rt/kernels.go).

// pkg is what one generated package holds.
type pkg struct {
	name    string
	dt      dtype
	shapes  []*shape
	caches  []string // the cache types, in cacheOrder
	def     *Plan    // the spec of a per-spec package; nil for an engine package
	engine  *Engine  // an engine package's description; nil for a per-spec one
	dynamic bool     // computes dynamic NTK frequencies
	header  string
	o       Options
}

// shape is one kernel shape of a package and what the package needs of it.
type shape struct {
	p      *Plan      // the shape's plan: Norm nil, no caches
	norms  []NormPlan // the QK-norm variants, in variant order
	caches []string   // the package's cache types this shape has kernels for
}

// newShape returns the shape (hd, rd, layout) of a package of dtype, with
// its norm variants and the caches of the list that fit it (a head of
// whole blocks of each).
func newShape(name, dtype string, hd, rd int, layout string, norms []NormPlan, caches []string) (*shape, error) {
	s := spec.DefaultSpec()
	s.HeadDim, s.RotaryDim, s.Layout, s.DType, s.Package = hd, rd, spec.Layout(layout), dtype, name
	p, err := NewPlan(s)
	if err != nil {
		return nil, err
	}
	sh := &shape{p: p}
	for _, n := range norms {
		if !slices.ContainsFunc(sh.norms, func(m NormPlan) bool { return m.variant() == n.variant() }) {
			sh.norms = append(sh.norms, n)
		}
	}
	sort.Slice(sh.norms, func(i, j int) bool { return sh.norms[i].variant() < sh.norms[j].variant() })
	for _, c := range caches {
		if f, _ := spec.CacheType(c).Format(); hd%f.BlockValues == 0 {
			sh.caches = append(sh.caches, c)
		}
	}
	return sh, nil
}

// variant is the norm's slot in the run-time's kernels.norm.
func (n NormPlan) variant() int {
	v := 4 * slices.Index(spec.NormKinds[1:], spec.NormKind(n.Kind)) // NormKinds less none
	if n.Token {
		v += 2
	}
	if n.After {
		v++
	}
	return v
}

// withNorm returns the shape's plan with the QK-norm n.
func (sh *shape) withNorm(n NormPlan) *Plan {
	p := *sh.p
	p.Norm = &n
	return &p
}

// rotTo reports whether the shape has a cache whose keys go through a
// float32 rotation into a buffer (f32, e4m3, q8_0).
func (sh *shape) rotTo() bool {
	return slices.ContainsFunc(sh.caches, func(c string) bool { return c == "f32" || c == "e4m3" || c == "q8_0" })
}

// Generate returns the files of the package for s, sorted by name: one
// shape, its kernels, and s's numbers as the package's constants and
// default model. The bytes depend only on s and o.
func Generate(s spec.Spec, o Options) ([]File, error) {
	p, err := NewPlan(s)
	if err != nil {
		return nil, err
	}
	caches, err := sortCaches(s.Caches, s.DType)
	if err != nil {
		return nil, err
	}
	pk := &pkg{name: s.Package, dt: p.dtype(), caches: caches, def: p, dynamic: p.dynamic(), o: o}
	var norms []NormPlan
	if p.Norm != nil {
		norms = append(norms, *p.Norm)
	}
	sh, err := newShape(s.Package, s.DType, p.HeadDim, p.RotaryDim, string(s.Layout), norms, caches)
	if err != nil {
		return nil, err
	}
	pk.shapes = []*shape{sh}
	return pk.files()
}

// sortCaches returns the cache types of list in spec.CacheFormats' order,
// checked by spec.ValidateCaches.
func sortCaches(list []spec.CacheType, dtype string) ([]string, error) {
	if err := spec.ValidateCaches(list, dtype); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range spec.CacheTypes() {
		if slices.Contains(list, c) {
			out = append(out, string(c))
		}
	}
	return out, nil
}

// files returns the package's files, sorted by name.
func (pk *pkg) files() ([]File, error) {
	pk.header = Header(pk.o.Command) + "\n" + License
	var files []File
	add := func(name string, data []byte, err error) error {
		if err != nil {
			return fmt.Errorf("generating %s: %w", name, err)
		}
		if data != nil {
			files = append(files, File{name, data})
		}
		return nil
	}
	api, err := pk.apiFile()
	if err := add("rope.go", api, err); err != nil {
		return nil, err
	}
	rtf, err := pk.rtFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, rtf...)
	if pk.dynamic {
		d, err := pk.dynamicFile()
		if err := add("rope_dynamic.go", d, err); err != nil {
			return nil, err
		}
	}
	kf, err := pk.kernelFiles()
	if err != nil {
		return nil, err
	}
	files = append(files, kf...)
	if pk.o.Tests {
		t, err := pk.testFiles()
		if err != nil {
			return nil, err
		}
		files = append(files, t...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// hasNorms reports whether any shape has a QK-norm.
func (pk *pkg) hasNorms() bool {
	return slices.ContainsFunc(pk.shapes, func(s *shape) bool { return len(s.norms) > 0 })
}

// rtFiles are rt's files the package needs, copied: the core, and those of
// its features (QK-norm, each cache type, the f16 and bf16 conversions, a
// per-spec package's default model), each named rope_<file>.
func (pk *pkg) rtFiles() ([]File, error) {
	names := []string{"kernels.go", "params.go", "table.go", "batch.go", "apply.go", "axes.go", "strides.go", "sincos.go"}
	if pk.hasNorms() {
		names = append(names, "norm.go")
	}
	convert := pk.dt.name == "f16" || pk.dt.name == "bf16"
	if len(pk.caches) > 0 {
		names = append(names, "cache.go", "cachewalk.go", "prep.go")
		for _, c := range pk.caches {
			names = append(names, "cache_"+strings.ReplaceAll(c, "8_0", "80")+".go")
			convert = convert || c == "f16" || c == "bf16" || c == "q8_0"
		}
	}
	if convert {
		names = append(names, "convert.go")
	}
	if pk.def != nil {
		names = append(names, "default.go")
		if len(pk.caches) > 0 {
			names = append(names, "default_cache.go")
		}
	}
	var files []File
	for _, n := range names {
		f, err := pk.copyRT(n, "rope_"+n)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// copyRT returns rt's file name as the package's file out: rt's package
// clause replaced by the header and the package's.
func (pk *pkg) copyRT(name, out string) (File, error) {
	src, err := fs.ReadFile(rt.Source, name)
	if err != nil {
		return File{}, fmt.Errorf("gen: rt has no %s: %w", name, err)
	}
	body, ok := strings.CutPrefix(string(src), "package rt\n")
	if !ok {
		return File{}, fmt.Errorf("gen: rt/%s does not begin with its package clause", name)
	}
	return File{out, []byte(pk.header + "\n\npackage " + pk.name + "\n" + body)}, nil
}

// dynamicFile is rope_dynamic.go: internal/exact's dynamicFreqs and its
// correctly rounded powers, which the run-time calls for a dynamic NTK
// table.
func (pk *pkg) dynamicFile() ([]byte, error) {
	f := jen.NewFile(pk.name)
	f.Comment("The package computes dynamic NTK frequencies with the code ropegen runs.")
	f.Func().Id("init").Params().Block(jen.Id("dynamicNTK").Op("=").Id("dynamicFreqs"))
	f.Line()
	f.Id(exact.Source())
	return goFile(f, pk.header, "")
}
