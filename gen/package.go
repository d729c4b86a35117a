package gen

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// A generated package is the run-time, copied from templates/rt by package
// templates' Copy (the one way source reaches a package: pk.copy), plus a
// small generated part: rope.go (the package doc, the element and compute types,
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
// float32 rotation into a buffer (every type but f16 and bf16, whose
// kernels rotate and narrow in one pass).
func (sh *shape) rotTo() bool {
	return slices.ContainsFunc(sh.caches, func(c string) bool { return c != "f16" && c != "bf16" })
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

// rtFiles are the run-time's files the package needs, copied from
// templates/rt: the core, and those of its features (each cache type, the
// f16 and bf16 conversions, a per-spec package's default model, dynamic NTK
// with templates/exact's code), each named rope_<file> (rope_exact_<file>
// for exact's).
func (pk *pkg) rtFiles() ([]File, error) {
	names := []string{"kernels.go", "params.go", "table.go", "batch.go", "apply.go", "norm.go", "axes.go", "strides.go", "sincos.go"}
	convert := pk.dt.name == "f16" || pk.dt.name == "bf16"
	if len(pk.caches) > 0 {
		names = append(names, "cache.go", "cachewalk.go", "hadamard.go", "prep.go")
		for _, c := range pk.caches {
			names = append(names, "cache_"+strings.ReplaceAll(c, "_", "")+".go")
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
	files, err := pk.copyAll("rt", "", names)
	if err != nil {
		return nil, err
	}
	if pk.dynamic {
		// The run-time's hook, and package exact's code it calls.
		d, err := pk.copyAll("rt", "", []string{"dynamic.go"})
		if err != nil {
			return nil, err
		}
		e, err := pk.copyAll("exact", "exact", []string{"dynamic.go", "pow.go"})
		if err != nil {
			return nil, err
		}
		files = append(append(files, d...), e...)
	}
	return files, nil
}

// copy returns the file name of package templates as the package's file
// out: templates.Copy with the package's data, the one way source reaches a
// package.
func (pk *pkg) copy(name, out string) (File, error) {
	data, err := templates.Copy(name, pk.data())
	if err != nil {
		return File{}, fmt.Errorf("gen: %w", err)
	}
	return File{out, data}, nil
}

// copyAll copies the files names of package templates' directory dir, each
// as rope_<base name>, or with prefix rope_<prefix>_.
func (pk *pkg) copyAll(dir, prefix string, names []string) ([]File, error) {
	var files []File
	for _, n := range names {
		out := "rope_" + n
		if prefix != "" {
			out = "rope_" + prefix + "_" + n
		}
		f, err := pk.copy(dir+"/"+n, out)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// data is what the package's files are copied with (templates.Data).
func (pk *pkg) data() *templates.Data {
	d := &templates.Data{Header: pk.header, Package: pk.name, Elem: pk.dt.goType, Comp: pk.dt.compute, DType: pk.dt.name}
	paths := map[string]bool{} // the run-time's paths whose first type the tests check with the Hadamard option
	for _, c := range pk.caches {
		ct := cacheTypes[c] // f32: none, the zero entry
		tc := templates.Cache{DType: c, Elem: "float32", New: cacheCtors[c], Scale: ct.scale, HeadScale: ct.headScale, Block: ct.block}
		if ct.goType != "" {
			tc.Elem = ct.goType
		}
		path := tc.Elem
		switch {
		case tc.Scale && tc.Block > 0: // nvfp4_gs: a block format with a scale
			path = "scaled block"
		case tc.Scale:
			path = "scaled"
		case tc.Block > 0:
			path = "block"
		}
		tc.Hadamard = !paths[path]
		paths[path] = true
		d.Caches = append(d.Caches, tc)
	}
	if p := pk.def; p != nil {
		d.Spec = &templates.Spec{Freqs: p.Spec.FreqsLabel()}
		if p.Norm != nil {
			n := p.Norm.data(p)
			d.Spec.Norm = &n
		}
		return d
	}
	for _, sh := range pk.shapes {
		var ts templates.Shape
		for _, n := range sh.norms {
			ts.Norms = append(ts.Norms, n.data(sh.withNorm(n)))
		}
		d.Shapes = append(d.Shapes, ts)
	}
	return d
}

// cacheCtors are the Cache constructors of the cache types.
var cacheCtors = map[string]string{"f32": "F32Cache", "f16": "F16Cache", "bf16": "BF16Cache", "e4m3": "E4M3Cache", "e5m2": "E5M2Cache", "q8_0": "Q80Cache", "q4_0": "Q40Cache", "q4_1": "Q41Cache", "q5_0": "Q50Cache", "q5_1": "Q51Cache", "mxfp4": "MXFP4Cache", "iq4_nl": "IQ4NLCache", "nvfp4": "NVFP4Cache", "int8_per_token_head": "Int8PerTokenHeadCache", "nvfp4_gs": "NVFP4GSCache"}

// data is the norm as the test template reads it, with its bound in the
// plan p.
func (n NormPlan) data(p *Plan) templates.Norm {
	rot, pass := p.NormBound(0)
	scope := spec.ScopeHead
	if n.Token {
		scope = spec.ScopeToken
	}
	return templates.Norm{Kind: n.Kind, Scope: scope, After: n.After, K: [2]int{rot, pass}}
}
