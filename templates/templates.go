// Package templates holds every source file ropegen copies into a package it
// writes, and Copy, the one function that copies them:
//
//	rt/      the run-time: package rt, compiled and tested here. rt.go and
//	         dynamic_link.go stand in for the generated part, export.go
//	         serves ropegen itself: they are never copied. The other files
//	         are copied into the packages whose features need them, the
//	         glue and example tests into their tests.
//	exact/   the correctly rounded powers and dynamic NTK frequencies:
//	         package exact, which package spec imports; dynamic.go and
//	         pow.go are copied into the packages that compute dynamic NTK
//	         frequencies at run time.
//	test/    text/template files: rope_test.go.tmpl, the body of every
//	         generated package's rope_test.go, and compare_test.go.tmpl,
//	         which examples/engine's tests add to packages they generate.
//
// A Data value is the whole contract between a template and its caller: a
// .go file reads none of it but its package name, header and types (Copy
// rewrites them), a .tmpl file is executed with it.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"text/template"
)

// FS holds the files Copy copies.
//
//go:embed rt/*.go exact/dynamic.go exact/pow.go test/*.tmpl
var FS embed.FS

// rtOnly are the files of FS that only package rt has (the stand-ins for
// a package's generated part, and what ropegen itself calls): Copy refuses
// them.
var rtOnly = []string{"rt/rt.go", "rt/dynamic_link.go", "rt/export.go"}

// Data is what a file is copied with. Header, Package, Elem and Comp apply
// to every file; the rest describes a package to test/rope_test.go.tmpl.
type Data struct {
	// Header is the comment the file begins with, above its package clause
	// (ropegen's "Code generated" and license lines); "" for none.
	Header string
	// Package is the name of the package the file goes into: it replaces
	// the file's package clause.
	Package string
	// Elem and Comp are the package's element type and compute type (the
	// Go types of its vectors, and of its table rows and arithmetic): every
	// identifier elem and comp of the file, the run-time's stand-ins for
	// them, is rewritten to them, so that a package's source and its API
	// name the types themselves. "" leaves the identifier as it is.
	Elem, Comp string
	// DType is the element type as -dtype names it ("f32", "f64", "f16" or
	// "bf16").
	DType string

	// Spec describes a package generated for one spec (its default model);
	// nil for an engine package.
	Spec *Spec
	// Shapes are an engine package's shapes, in the order of its
	// shapeList, each with the QK-norms it has kernels for.
	Shapes []Shape
	// Caches are the package's cache types, in the order of its
	// constructors.
	Caches []Cache
}

// Spec is a per-spec package's default model, as its tests describe it to
// package verify.
type Spec struct {
	Freqs string // how its frequencies are made: spec.Spec.FreqsLabel
	Norm  *Norm  // its QK-norm; nil without one
}

// Norm is a QK-norm and the error bound the package doc states for it.
type Norm struct {
	Kind  string // "rms", "gemma" or "l2"
	Scope string // "head" or "token"
	After bool   // normalize the rotated vector
	// K is the bound's factor for rotated values and for values past
	// RotaryDim (plus ⌈n/8⌉ with a float64 compute type).
	K [2]int
}

// Shape is one shape of an engine package.
type Shape struct {
	Norms []Norm // its QK-norms, in the order of their kernels
}

// Cache is one cache type of a package.
type Cache struct {
	DType string // as -out-dtype names it: "f32", "f16", "bf16", "e4m3", "e5m2", "q8_0", "q4_0", …, "mxfp4", "iq4_nl", "nvfp4", "int8_per_token_head"
	Elem  string // the Go type of the cache buffer's elements
	New   string // the constructor: "F16Cache", …
	Scale bool   // the constructor takes a scale (e4m3, e5m2; nvfp4_gs's g)
	// HeadScale: the view takes a scale per KV head in place of its
	// per-tensor one (Cache.WithHeadScales: e4m3, e5m2), which the
	// package's tests check too.
	HeadScale bool
	Block     int // the values of a block (32 for q8_0, q4_0, …, iq4_nl, 64 for nvfp4: a head must hold whole blocks); 0 for none
	// Hadamard: the package's tests also check this type with the
	// Hadamard option, as they do the first type of each of the
	// run-time's paths (f32, uint16, a scaled byte type, a block format,
	// a block format with a scale):
	// the option's code is the same for the types of one path.
	Hadamard bool
}

// F64 reports whether the package computes in float64.
func (d *Data) F64() bool { return d.Comp == "float64" }

// HasNorms reports whether the package has a QK-norm.
func (d *Data) HasNorms() bool { return d.NormShape() >= 0 }

// NormShape is the index of an engine package's first shape with a
// QK-norm; 0 for a per-spec package with one; −1 for none.
func (d *Data) NormShape() int {
	if d.Spec != nil {
		if d.Spec.Norm != nil {
			return 0
		}
		return -1
	}
	for i, s := range d.Shapes {
		if len(s.Norms) > 0 {
			return i
		}
	}
	return -1
}

// HalfCaches are the cache types of 16-bit floats (f16, bf16).
func (d *Data) HalfCaches() []string {
	var out []string
	for _, c := range d.Caches {
		if c.DType == "f16" || c.DType == "bf16" {
			out = append(out, c.DType)
		}
	}
	return out
}

// RoundedCaches are the cache types that round the values stored (all but
// f32) one value at a time (not the block formats, whose blocks share a
// scale).
func (d *Data) RoundedCaches() []string {
	var out []string
	for _, c := range d.Caches {
		if c.DType != "f32" && c.Block == 0 {
			out = append(out, c.DType)
		}
	}
	return out
}

// funcs are the functions a template may call besides text/template's.
var funcs = template.FuncMap{
	"join": strings.Join, // join LIST SEP: strings.Join
}

// Copy returns the file name of FS as a file of the package d describes:
// executed with d if name ends in .tmpl, its package clause d.Package's,
// its identifiers elem and comp rewritten to d.Elem and d.Comp, behind
// d.Header, gofmt'd. Copy refuses a file that declares anything named elem
// or comp (a rewrite would change its meaning) or that is not Go.
func Copy(name string, d *Data) ([]byte, error) {
	if slices.Contains(rtOnly, name) {
		return nil, fmt.Errorf("templates: %s is package rt's own (a stand-in for a package's generated part, or ropegen's): it is not copied", name)
	}
	src, err := FS.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("templates: %w", err)
	}
	if strings.HasSuffix(name, ".tmpl") {
		t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return nil, fmt.Errorf("templates: %w", err)
		}
		src = b.Bytes()
	}
	if d.Header != "" {
		src = append([]byte(d.Header+"\n\n"), src...)
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("templates: %s is not Go: %w", name, err)
	}
	f.Name.Name = d.Package
	if err := retype(f, map[string]string{"elem": d.Elem, "comp": d.Comp}); err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	var b bytes.Buffer
	if err := format.Node(&b, fset, f); err != nil {
		return nil, fmt.Errorf("templates: %s: %w", name, err)
	}
	return b.Bytes(), nil
}

// retype rewrites every identifier of f named by a key of to whose value is
// not "" to that value: a type name. It fails if f declares such a name
// (an identifier that resolves to a declaration of f's) or uses it as a
// field or method name, where it would be no type.
func retype(f *ast.File, to map[string]string) error {
	var err error
	ast.Inspect(f, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if _, ok := to[n.Sel.Name]; ok {
				err = fmt.Errorf("%s used as a field or method name", n.Sel.Name)
			}
		case *ast.KeyValueExpr:
			if k, ok := n.Key.(*ast.Ident); ok {
				if _, ok := to[k.Name]; ok {
					err = fmt.Errorf("%s used as a field name", k.Name)
				}
			}
		case *ast.Ident:
			v, ok := to[n.Name]
			if !ok || v == "" {
				return true
			}
			if n.Obj != nil {
				err = fmt.Errorf("it declares %s: want %s only as the type it stands for", n.Name, n.Name)
				return false
			}
			n.Name = v
		}
		return true
	})
	return err
}
