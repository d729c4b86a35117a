// Package rt is the run-time of every package ropegen writes: the
// shape-agnostic types and logic (Params, New, Rotary, Table, Batch,
// Strides, Cache, Step and their checks; the table fill and its sincos;
// multi-axis row assembly; the pure Go cache kernels; Prep), written once
// as ordinary Go. ropegen copies its files (package templates' Copy), all
// but this one, dynamic_link.go, export.go and the tests of rt itself, into
// each generated package: the package clause and the header rewritten,
// the package's element and compute types written where rt says elem and
// comp, only the files the package's features need. Beside them goes a
// small generated part: the shapes and their kernels per backend (the ABI
// of kernels.go), the conversions widen and narrow, the package doc, and
// for a package generated for one spec its constants and defaultParams.
//
// This file stands in for the generated part, so that rt compiles, vets and
// is tested on its own: float32 elements, no shapes and no kernels, which
// rt's tests install (tiny reference kernels, refkernels_test.go).
package rt

// elem is the element type of x; comp the compute type of the arithmetic
// and the table rows.
type (
	elem = float32
	comp = float32
)

// pkgName begins every panic message and error; dtypeName names elem as
// -dtype does.
const (
	pkgName   = "rt"
	dtypeName = "f32"
)

// shapeList holds the shapes the package has kernels for, in the order of
// backend.shapes.
var shapeList []Shape

// archBackends returns the assembly backends this CPU supports, best first:
// none here.
func archBackends() []backend { return nil }

// genericBackend returns the pure Go backend: no shapes here.
func genericBackend() backend { return backend{name: "generic"} }

// widen and narrow convert between elem and comp: exactly, and with
// round-to-nearest-even.
func widen(v elem) comp  { return v }
func narrow(v comp) elem { return v }

// defaultParams returns the numbers of the package's spec: the tests'
// default model here.
func defaultParams() Params { return testDefault }

// testDefault is defaultParams' value, which rt's tests set.
var testDefault Params
