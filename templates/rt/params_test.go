package rt

import (
	"math"
	"strings"
	"testing"
)

// New refuses every bad field with an error naming the field, the value and
// what is accepted; nothing is truncated or padded.
func TestNewErrors(t *testing.T) {
	good := refParams(refShapes[0], 10000) // 16/16/interleaved: 8 pairs
	with := func(f func(p *Params)) Params {
		p := good.clone()
		f(&p)
		return p
	}
	for _, c := range []struct {
		name  string
		p     Params
		words []string
	}{
		{"unknown head dim", with(func(p *Params) { p.HeadDim, p.RotaryDim = 80, 80; p.Freqs = make([]float64, 40) }),
			[]string{"rt.New", "HeadDim = 80", "16/16/interleaved", "12/8/neox", "64/64/neox", "96/32/interleaved"}},
		{"Phi-2's rotary 32 in a full-rotary shape", with(func(p *Params) {
			p.HeadDim, p.RotaryDim, p.Layout = 96, 96, "interleaved"
			p.Freqs = make([]float64, 48)
		}),
			[]string{"RotaryDim = 96", "96/32/interleaved"}},
		{"other layout", with(func(p *Params) { p.Layout = "neox" }), []string{`Layout = "neox"`, "16/16/interleaved"}},
		{"bad layout", with(func(p *Params) { p.Layout = "NeoX" }), []string{`Layout = "NeoX"`, `"interleaved" or "neox"`}},
		{"short Freqs", with(func(p *Params) { p.Freqs = p.Freqs[:7] }), []string{"len(Freqs) = 7", "RotaryDim/2 = 8"}},
		{"long Freqs", with(func(p *Params) { p.Freqs = append(p.Freqs, 1) }), []string{"len(Freqs) = 9", "RotaryDim/2 = 8"}},
		{"NaN θ", with(func(p *Params) { p.Freqs[3] = math.NaN() }), []string{"Freqs[3] = NaN", "finite and >= 0"}},
		{"negative θ", with(func(p *Params) { p.Freqs[0] = -1 }), []string{"Freqs[0] = -1"}},
		{"zero A", with(func(p *Params) { p.Attn = 0 }), []string{"Attn = 0"}},
		{"no axes", with(func(p *Params) { p.Axes = 0 }), []string{"Axes = 0"}},
		{"an axis map with one axis", with(func(p *Params) { p.Axis = make([]uint8, 8) }), []string{"len(Axis) = 8 with Axes = 1"}},
		{"a short axis map", with(func(p *Params) { p.Axes, p.Axis = 3, make([]uint8, 7) }), []string{"len(Axis) = 7 with Axes = 3", "RotaryDim/2 = 8"}},
		{"an axis past Axes", with(func(p *Params) { p.Axes, p.Axis = 3, make([]uint8, 8); p.Axis[5] = 3 }), []string{"Axis[5] = 3", "want < Axes = 3"}},
		{"short LongFreqs", with(func(p *Params) { p.LongFreqs, p.OrigCtx = make([]float64, 4), 10 }), []string{"len(LongFreqs) = 4"}},
		{"LongFreqs without OrigCtx", with(func(p *Params) { p.LongFreqs = make([]float64, 8) }), []string{"OrigCtx = 0 with LongFreqs"}},
		{"negative OrigCtx", with(func(p *Params) { p.OrigCtx = -1 }), []string{"OrigCtx = -1"}},
		{"dynamic factor below 1", with(func(p *Params) { p.DynamicFactor, p.DynamicBase, p.OrigCtx = 0.5, 10000, 10 }), []string{"DynamicFactor = 0.5"}},
		{"dynamic base without factor", with(func(p *Params) { p.DynamicBase = 10000 }), []string{"DynamicFactor = 0"}},
		{"dynamic without OrigCtx", with(func(p *Params) { p.DynamicFactor, p.DynamicBase = 2, 10000 }), []string{"OrigCtx = 0 with DynamicFactor 2"}},
		{"dynamic with LongFreqs", with(func(p *Params) {
			p.DynamicFactor, p.DynamicBase, p.OrigCtx, p.LongFreqs = 2, 10000, 10, make([]float64, 8)
		}), []string{"DynamicFactor = 2 with LongFreqs"}},
		{"norm kind", with(func(p *Params) { p.NormKind, p.NormScope = "layer", "head" }), []string{`NormKind = "layer"`}},
		{"norm scope", with(func(p *Params) { p.NormKind, p.NormScope = "rms", "" }), []string{`NormScope = ""`, `"head" or "token"`}},
		{"scope without norm", with(func(p *Params) { p.NormScope = "head" }), []string{`NormScope = "head"`, `NormKind ""`}},
		{"negative ε", with(func(p *Params) { p.NormKind, p.NormScope, p.NormEps = "rms", "head", -1e-6 }), []string{"NormEps = -1e-06"}},
		{"NaN ε", with(func(p *Params) { p.NormKind, p.NormScope, p.NormEps = "rms", "head", math.NaN() }), []string{"NormEps = NaN"}},
		{"zero q·k scale", with(func(p *Params) { p.QKScale = 0 }), []string{"QKScale = 0", "spec.Runtime fills it"}},
		{"negative MaxPositions", with(func(p *Params) { p.MaxPositions = -1 }), []string{"MaxPositions = -1"}},
	} {
		r, err := New(c.p)
		if err == nil {
			t.Errorf("%s: New accepted %+v", c.name, c.p)
			continue
		}
		if r != nil {
			t.Errorf("%s: New returned a Rotary with its error", c.name)
		}
		for _, w := range c.words {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
}

// A QK-norm the package has no kernels for at a shape is refused, listing
// the variants it has there.
func TestNewNormVariants(t *testing.T) {
	saved := backends[len(backends)-1].shapes[1].norm
	defer func() { backends[len(backends)-1].shapes[1].norm = saved }()
	g := &backends[len(backends)-1].shapes[1]
	g.norm = [normVariants]normKernel{}
	g.norm[normVariant(normRMS, false, false)] = saved[normVariant(normRMS, false, false)]
	g.norm[normVariant(normL2, false, true)] = saved[normVariant(normL2, false, true)]
	p := refParams(refShapes[1], 10000)
	p.NormKind, p.NormScope, p.NormEps = "gemma", "head", 1e-6
	_, err := New(p)
	if err == nil {
		t.Fatal("New accepted a gemma norm the shape has no kernels for")
	}
	for _, w := range []string{`NormKind = "gemma"`, "gemma/head", "12/8/neox", "rms/head, l2/head/after"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
	p.NormKind = "rms"
	if _, err := New(p); err != nil {
		t.Errorf("rms/head: %v", err)
	}
	// A token-scope norm needs whole groups of 8 values a head.
	p.NormScope = "token"
	if _, err := New(p); err == nil || !strings.Contains(err.Error(), "HeadDim = 12") {
		t.Errorf("a token-scope norm of 12-value heads: %v, want an error naming HeadDim = 12", err)
	}
}

// The model's slices are copied: changing the caller's after New changes
// nothing, and Params returns copies.
func TestNewCopies(t *testing.T) {
	p := refParams(refShapes[0], 10000)
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	want := r.TableFreqs(10)
	p.Freqs[0] = 99
	q := r.Params()
	q.Freqs[1] = 77
	if got := r.TableFreqs(10); got[0] != want[0] || got[1] != want[1] {
		t.Errorf("the Rotary's frequencies changed with the caller's slices: %v, want %v", got, want)
	}
}
