package gen

import (
	"bytes"
	"go/format"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/spec"
)

const cpuPkg = "golang.org/x/sys/cpu"

// goFile renders a jennifer file behind the ropegen header and an optional
// build constraint.
func goFile(f *jen.File, header, constraint string) ([]byte, error) {
	var body bytes.Buffer
	if err := f.Render(&body); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(header + "\n\n")
	if constraint != "" {
		b.WriteString("//go:build " + constraint + "\n\n")
	}
	b.Write(body.Bytes())
	return format.Source(b.Bytes())
}

// float renders v as a Go float literal that round-trips exactly.
func float(v float64) jen.Code {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEnN") {
		s += ".0"
	}
	return jen.Op(s)
}

func (p *Plan) pairFormula() string {
	if p.Spec.Layout == spec.NeoX {
		return "(i, i+RotaryDim/2)"
	}
	return "(2i, 2i+1)"
}

// dynamic reports whether the plan's tables take their frequencies from
// their length (dynamic NTK).
func (p *Plan) dynamic() bool { return p.Spec.Scaling.Kind() == spec.ScalingDynamic }
