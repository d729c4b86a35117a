package spec

import "testing"

// -explain names each pair's axis and the dynamic NTK base rule.
func TestExplainAxesAndDynamic(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Layout, s.Axes, s.Sections = 16, NeoX, AxesInterleaved, []int{4, 2, 2}
	text := explainText(t, s)
	wantContains(t, "interleaved M-RoPE", text,
		"axes: mrope-interleaved, 3 positions per token; pair i turns by the position on axis a_i: 0 axis 0, 1 axis 1, 2 axis 2, 3 axis 0, 4 axis 1, 5 axis 2, 6…7 axis 0\n",
		"none, axis 2\n")
	s.Axes, s.Sections, s.Layout = AxesVision, nil, Interleaved
	wantContains(t, "vision", explainText(t, s),
		"θ⁰_i = base^(−2·(i mod 4)/8): rows and columns each restart the frequencies\n",
		"axes: vision, 2 positions per token; pair i turns by the position on axis a_i: 0…3 axis 0, 4…7 axis 1\n")
	s = DefaultSpec()
	s.Scaling = Scaling{Type: ScalingDynamic, Factor: 2, OrigCtx: 4096, Truncate: true}
	wantContains(t, "dynamic", explainText(t, s),
		"scaling: dynamic, factor 2, orig-ctx 4096: θ_i = θ⁰_i for tables of at most 4096 positions; NewTable(n) for n > 4096 takes the base 10000·((2·n/4096) − 1)^(128/126)\n",
		"dynamic: θ⁰_i up to orig-ctx")
}

// Vision RoPE restarts the frequencies per half: per-pair factors would be
// ignored, so they are refused.
func TestVisionRefusesFreqFactors(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Axes = 8, AxesVision
	s.Scaling.FreqFactors = []float64{1, 2, 3, 4}
	err := s.Validate()
	if err == nil || err.Error() != "-freq-factors 4 values: -axes vision takes no per-pair factors" {
		t.Fatalf("Validate = %v", err)
	}
}
