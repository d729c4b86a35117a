package gen

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates"
)

// neonNorm is the template data of the plan's NEON QK-norm kernel
// (templates.Norm), or nil when the plan has no QK-norm or no NEON kernels.
func (p *Plan) neonNorm() *templates.Norm {
	nb := p.Norm
	if nb == nil || !p.neonSupported() {
		return nil
	}
	d := p.dtype()
	in := neonFormats[p.Spec.DType]
	ts, lanes, arr, goArr, fp := 4, 4, "4S", "S4", "S"
	if d.compute == "float64" {
		ts, lanes, arr, goArr, fp = 8, 2, "2D", "D2", "D"
	}
	H, R, h := p.HeadDim, p.RotaryDim, p.Half
	n := &templates.Norm{
		Name:      "applyNormNEON",
		OnlyName:  "applyNormOnlyNEON",
		Params:    fmt.Sprintf("x []%s, stride, n int, r *[rowLen]%s, w []%s", d.goType, d.compute, p.weightType()),
		AsmArgs:   fmt.Sprintf("x []%s, stride, n int, r *[%d]%s, w []%s", d.goType, p.RowLen, d.compute, p.weightType()),
		ArgSize:   72,
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
		EpsBits:   math.Float64bits(nb.Eps),
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

// arm64NormFile is rope_norm_arm64.s, the NEON QK-norm kernel, or nil when
// there is none.
func (p *Plan) arm64NormFile(header string) ([]byte, error) {
	n := p.neonNorm()
	if n == nil {
		return nil, nil
	}
	n.Header = header
	return templates.ExecuteNorm(n)
}
