package gen

import (
	"fmt"

	"github.com/ropegen/ropegen/asm/amd64"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// neonNorm is the template data of the plan's NEON QK-norm kernel
// (templates.Norm) for the shape of name suffix sfx.
func (p *Plan) neonNorm(sfx string) *templates.Norm {
	nb := p.Norm
	tag := amd64.Norm{Kind: nb.Kind, Token: nb.Token, After: nb.After}.Tag()
	d := p.dtype()
	in := neonFormats[p.Spec.DType]
	ts, lanes, arr, goArr, fp := 4, 4, "4S", "S4", "S"
	if d.compute == "float64" {
		ts, lanes, arr, goArr, fp = 8, 2, "2D", "D2", "D"
	}
	H, R, h := p.HeadDim, p.RotaryDim, p.Half
	n := &templates.Norm{
		Name:      "applyNorm" + tag + "NEON" + sfx,
		OnlyName:  "applyNormOnly" + tag + "NEON" + sfx,
		Params:    fmt.Sprintf("x []%s, stride, n int, r *%s, w []%s, eps float64", d.goType, d.compute, p.weightType()),
		AsmArgs:   fmt.Sprintf("x []%s, stride, n int, r *%s, w []%s, eps float64", d.goType, d.compute, p.weightType()),
		ArgSize:   80,
		Frame:     H * ts,
		Kind:      nb.Kind,
		Token:     nb.Token,
		After:     nb.After,
		NeoX:      p.Spec.Layout == spec.NeoX,
		HeadDim:   H,
		RotaryDim: R,
		In:        in,
		TableSize: ts,
		Arr:       arr,
		GoArr:     goArr,
		FP:        fp,
		Vecs:      H / lanes,
		Tail2:     H%lanes == 2,
		Groups:    H / spec.NormLanes,
		TailSum:   H % spec.NormLanes,
		Blocks:    h / lanes,
	}
	switch in.Name {
	case "f16":
		n.Widen, n.Narrow = "fcvtl", "fcvtn"
	case "bf16":
		n.Widen, n.Narrow = "shll", "bf16"
	}
	rem := h % lanes
	if lanes == 4 {
		n.Block2, n.Block1 = rem >= 2, rem%2 == 1
	} else {
		n.Block1 = rem == 1
	}
	if n.NeoX {
		n.PartnerBytes = h * ts
		n.SBytes = (R + h) * ts
	} else {
		n.SBytes = R * ts
	}
	return n
}
