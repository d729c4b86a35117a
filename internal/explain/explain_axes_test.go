package explain

import (
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// -explain names each pair's axis and the dynamic NTK base rule.
func TestExplainAxesAndDynamic(t *testing.T) {
	s := spec.DefaultSpec()
	s.HeadDim, s.Layout, s.Axes, s.Sections = 16, spec.NeoX, spec.AxesInterleaved, []int{4, 2, 2}
	text := explainText(t, s)
	wantContains(t, "interleaved M-RoPE", text,
		"axes: mrope-interleaved, 3 positions per token; pair i turns by the position on axis a_i: 0 axis 0, 1 axis 1, 2 axis 2, 3 axis 0, 4 axis 1, 5 axis 2, 6…7 axis 0\n",
		"none, axis 2\n")
	s.Axes, s.Sections, s.Layout = spec.AxesVision, nil, spec.Interleaved
	wantContains(t, "vision", explainText(t, s),
		"θ⁰_i = base^(−2·(i mod 4)/8): rows and columns each restart the frequencies\n",
		"axes: vision, 2 positions per token; pair i turns by the position on axis a_i: 0…3 axis 0, 4…7 axis 1\n")
	s = spec.DefaultSpec()
	s.Scaling = spec.Scaling{Type: spec.ScalingDynamic, Factor: 2, OrigCtx: 4096, Truncate: true}
	wantContains(t, "dynamic", explainText(t, s),
		"scaling: dynamic, factor 2, orig-ctx 4096: θ_i = θ⁰_i for tables of at most 4096 positions; NewTable(n) for n > 4096 takes the base 10000·((2·n/4096) − 1)^(128/126)\n",
		"dynamic: θ⁰_i up to orig-ctx")
}

// -explain for the schemes of 2025–26: ERNIE-4.5-VL's alternating height
// and width, Pixtral's even and odd frequencies, proportional RoPE's pairs
// that do not turn.
func TestExplainNewSchemes(t *testing.T) {
	s := spec.DefaultSpec()
	s.HeadDim, s.Axes, s.Sections = 16, spec.AxesERNIE, []int{3, 3, 2}
	wantContains(t, "mrope-ernie", explainText(t, s),
		"axes: mrope-ernie, 3 positions per token; pair i turns by the position on axis a_i: 0 axis 1, 1 axis 2, 2 axis 1, 3 axis 2, 4 axis 1, 5 axis 2, 6…7 axis 0\n")
	s = spec.DefaultSpec()
	s.HeadDim, s.Axes, s.Layout = 16, spec.AxesPixtral, spec.NeoX
	wantContains(t, "pixtral", explainText(t, s),
		"θ⁰_i = base^(−2j/16) with j = 2·(i mod 4) for the row pairs (i < 4) and j = 2·(i mod 4) + 1 for the column pairs",
		"axes: pixtral, 2 positions per token; pair i turns by the position on axis a_i: 0…3 axis 0, 4…7 axis 1\n")
	s = spec.DefaultSpec()
	s.HeadDim, s.Layout, s.Scaling = 16, spec.NeoX, spec.Scaling{Type: spec.ScalingProportional, RopeAngles: 2, Factor: 2, Truncate: true}
	wantContains(t, "proportional", explainText(t, s),
		"scaling: proportional, rope-angles 2, factor 2: θ_i = θ⁰_i/2 for i < 2; θ_i = 0 (cos 1, sin 0: the pair does not turn) for i ≥ 2\n",
		"proportional: θ⁰_i/s\n", "proportional: θ = 0, does not turn\n")
}
