package gen

import (
	"io"

	"github.com/ropegen/ropegen/internal/explain"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates/rt"
)

// SVGHeader is the first line of every SVG figure ropegen writes: a file
// that does not begin with it is never overwritten.
const SVGHeader = explain.SVGHeader

// ExplainSVG writes the plan for s as an SVG figure (what ropegen -explain
// -svg writes), with the run-time's sincos: the same bits on every machine.
func ExplainSVG(w io.Writer, s spec.Spec) error { return explain.WriteSVG(w, s, rt.Sincos) }
