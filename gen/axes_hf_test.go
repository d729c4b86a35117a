package gen

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"github.com/ropegen/ropegen/spec"
	"github.com/ropegen/ropegen/templates/exact"
)

// Issue 12: proof that multi-axis (M-RoPE, interleaved M-RoPE, 2-D vision)
// and dynamic NTK packages turn every pair by the angle Hugging Face
// transformers turns it by.
//
// The expected angles come from Hugging Face's own code, transcribed below
// into float64 Go without calling anything of gen's (not axisOf,
// visionFreqs, dynamicFreqs or spec.Frequencies): the per-column argument `emb`
// of cos and sin that transformers builds for one token, and its
// q·cos + rotate_half(q)·sin. The functions read were, in
// huggingface/transformers:
//
//   - src/transformers/models/qwen2_vl/modeling_qwen2_vl.py (commit
//     00b676f8f048): Qwen2VLRotaryEmbedding.forward, apply_multimodal_rotary_pos_emb,
//     rotate_half, VisionRotaryEmbedding, Qwen2VisionTransformerPretrainedModel.rot_pos_emb
//     and .forward, apply_rotary_pos_emb_vision;
//   - src/transformers/models/qwen2_5_vl/modeling_qwen2_5_vl.py (same
//     commit): Qwen2_5_VLRotaryEmbedding.forward and apply_multimodal_rotary_pos_emb,
//     identical to Qwen2-VL's;
//   - src/transformers/models/qwen3_vl/modeling_qwen3_vl.py (commit
//     00709b862bb8): Qwen3VLTextRotaryEmbedding.compute_default_rope_parameters,
//     .forward and .apply_interleaved_mrope, apply_rotary_pos_emb;
//   - src/transformers/modeling_rope_utils.py: _compute_default_rope_parameters,
//     _compute_dynamic_ntk_parameters and dynamic_rope_update (its
//     dynamic_frequency_update: seq_len = max(position_ids) + 1).
//
// Precision. transformers computes inv_freq, position·inv_freq and the
// dynamic base in float32; the reference here evaluates the same formulas in
// float64 (the same math, not the same float32 rounding), because ropegen's
// θ_i are correctly rounded float64 values and an angle off by HF's float32
// rounding (up to 2^-24 relative, 0.002 rad at position 32768) would say
// nothing about which side is right. What remains between the two is float64
// rounding, bounded by hfAngleTol.

// hfU is float64's unit roundoff.
const hfU = 0x1p-53

// hfAngleTol bounds |φ_gen − φ_hf|/φ_hf, the relative difference between a
// package's angle fl(p·θ_i) and the reference's fl(p·inv_hf). θ_i is
// correctly rounded (≤ 1u). inv_hf = fl(1/math.Pow(b, fl(2i/d))): the
// rounded exponent moves b^q by up to u·ln b relative; math.Pow evaluates
// Exp(q·Log b) with Log and Exp each within 1 ulp, which puts another
// ≈ u·ln b + 3u into it; the reciprocal 1u; the two products with p 1u
// together. That is ≤ 2·u·ln b + 6u: 37u for b = 5e6. Dynamic NTK's longest
// sequence here (32L: b = 1e6·63^(128/126) ≈ 6.7e7) gives 42u, plus
// ≈ 2·u·ln 63 + 3u ≈ 11u from the power t^(d/(d−2)) that makes b: 53u.
// 64u covers that; the measured worst is about 10u (logged). It is still
// 10^7 times finer than the float32 rounding HF itself applies.
const hfAngleTol = 64 * hfU

// hfSinCosErr bounds the absolute error of the float64 sin and cos on both
// sides: the package's sincos is within 3 float64 ulps (of values ≤ 1, so
// ≤ 3u), math.Sin and math.Cos within 1.
const hfSinCosErr = 4 * hfU

// hfEmbFunc returns Hugging Face's emb for one token: the argument of cos
// and sin in each of the head's columns (cos = emb.cos(), sin = emb.sin()),
// for a token with positions pos in a sequence of n tokens (n matters only
// to dynamic NTK).
type hfEmbFunc func(pos []int, n int) []float64

// hfAxesModel is one published configuration: the spec.Spec that should
// reproduce it, its number of positions per token and Hugging Face's emb.
type hfAxesModel struct {
	name   string
	spec   spec.Spec
	axes   int   // positions per token: 3 (t, h, w), 2 (row, column), 1 (text)
	tables []int // table sizes the package test builds
	emb    hfEmbFunc
	// dynamic NTK: the original context L (0 otherwise) and the sequence
	// lengths the formula check takes.
	origCtx int
	seqLens []int
}

// hfDynamicInvFreq is _compute_dynamic_ntk_parameters for a sequence of n
// tokens (dynamic_rope_update passes seq_len = max(position_ids) + 1 = n):
// seq_len = max(n, max_position_embeddings);
// base = base·((factor·seq_len/max_pos) − (factor − 1))^(dim/(dim−2));
// inv_freq = 1/(base^(arange(0, dim, 2)/dim)). For n <= max_pos this is the
// default inv_freq (the factor is exactly 1), which is also what
// dynamic_rope_update keeps for such a sequence.
func hfDynamicInvFreq(base, factor float64, maxPos, dim, n int) []float64 {
	seqLen := max(n, maxPos)
	base = base * math.Pow(factor*float64(seqLen)/float64(maxPos)-(factor-1), float64(dim)/float64(dim-2))
	return hfref.DefaultInvFreq(base, dim, nil)
}

// hfFreqs is the forward pass's freqs for one position axis:
// inv_freq_expanded @ position_ids_expanded, i.e. position·inv_freq.
func hfFreqs(inv []float64, p int) []float64 {
	f := make([]float64, len(inv))
	for j, v := range inv {
		f[j] = float64(p) * v
	}
	return f
}

// hfCat is torch.cat((a, b), dim=-1).
func hfCat(a, b []float64) []float64 {
	return append(slices.Clone(a), b...)
}

// hfMRoPEEmb is Qwen2-VL's (and Qwen2.5-VL's) text RoPE for a token with
// positions (t, h, w): Qwen2VLRotaryEmbedding.forward gives, per axis a,
// emb[a] = cat(freqs[a], freqs[a]); apply_multimodal_rotary_pos_emb splits
// the columns into the chunks mrope_section·2 (the list repeated) and takes
// chunk k from axis k mod 3.
func hfMRoPEEmb(inv []float64, section []int) hfEmbFunc {
	return func(pos []int, _ int) []float64 {
		var emb [3][]float64
		for a := range emb {
			f := hfFreqs(inv, pos[a])
			emb[a] = hfCat(f, f)
		}
		chunks := append(slices.Clone(section), section...) // mrope_section * 2
		out := make([]float64, 0, 2*len(inv))
		start := 0
		for k, size := range chunks { // enumerate(cos.split(mrope_section, dim=-1)): m[k % 3]
			out = append(out, emb[k%3][start:start+size]...)
			start += size
		}
		if len(out) != 2*len(inv) {
			panic(fmt.Sprintf("hfMRoPEEmb: sections %v cover %d columns, want %d", section, len(out), 2*len(inv)))
		}
		return out
	}
}

// hfInterleavedEmb is Qwen3-VL's text RoPE: Qwen3VLTextRotaryEmbedding.forward
// computes freqs per axis, apply_interleaved_mrope starts from the time
// axis's freqs and overwrites the columns slice(offset, 3·mrope_section[dim], 3)
// with axis dim's, for (dim, offset) = (1, 1) and (2, 2); then
// emb = cat(freqs_t, freqs_t).
func hfInterleavedEmb(inv []float64, section []int) hfEmbFunc {
	return func(pos []int, _ int) []float64 {
		var freqs [3][]float64
		for a := range freqs {
			freqs[a] = hfFreqs(inv, pos[a])
		}
		freqsT := slices.Clone(freqs[0])
		for _, do := range [][2]int{{1, 1}, {2, 2}} { // for dim, offset in enumerate((1, 2), start=1)
			dim, offset := do[0], do[1]
			length := min(section[dim]*3, len(inv)) // a Python slice stops at the end
			for idx := offset; idx < length; idx += 3 {
				freqsT[idx] = freqs[dim][idx]
			}
		}
		return hfCat(freqsT, freqsT)
	}
}

// hfVisionEmb is Qwen2-VL's vision encoder: VisionRotaryEmbedding(head_dim//2)
// has inv_freq = 1/(theta^(arange(0, head_dim/2, 2)/(head_dim/2)));
// rot_pos_emb looks up freq_table = outer(arange(max_grid), inv_freq) at
// (row, column) and flattens: rotary_pos_emb = cat(row·inv, col·inv); the
// forward pass takes emb = cat(rotary_pos_emb, rotary_pos_emb).
func hfVisionEmb(theta float64, headDim int) hfEmbFunc {
	inv := hfref.DefaultInvFreq(theta, headDim/2, nil)
	return func(pos []int, _ int) []float64 {
		rpe := hfCat(hfFreqs(inv, pos[0]), hfFreqs(inv, pos[1]))
		return hfCat(rpe, rpe)
	}
}

// hfDynamicEmb is a 1-D text model with dynamic NTK (modeling_llama's
// LlamaRotaryEmbedding.forward under dynamic_rope_update, as InternLM2 uses
// it): emb = cat(freqs, freqs) with the inv_freq of the sequence's length.
func hfDynamicEmb(base, factor float64, maxPos, dim int) hfEmbFunc {
	return func(pos []int, n int) []float64 {
		f := hfFreqs(hfDynamicInvFreq(base, factor, maxPos, dim, n), pos[0])
		return hfCat(f, f)
	}
}

// hfApplyRotary is apply_multimodal_rotary_pos_emb's (and
// apply_rotary_pos_emb's, apply_rotary_pos_emb_vision's) last step for one
// head, after the cos and sin columns are assembled:
// q·cos + rotate_half(q)·sin, rotate_half(q) = cat(−q[d/2:], q[:d/2]).
func hfApplyRotary(q, cos, sin []float64) []float64 {
	d := len(q)
	rh := make([]float64, d)
	for j := range d / 2 {
		rh[j], rh[j+d/2] = -q[j+d/2], q[j]
	}
	y := make([]float64, d)
	for j := range y {
		y[j] = q[j]*cos[j] + rh[j]*sin[j]
	}
	return y
}

// hfAxesModels are the configurations under test, with their published
// numbers: Qwen2-VL-7B-Instruct and Qwen2.5-VL-7B-Instruct (text_config
// hidden_size 3584 / 28 heads = head_dim 128, rope_theta 1e6,
// rope_scaling {"type": "mrope", "mrope_section": [16, 24, 24]}), Qwen3-VL-8B
// (head_dim 128, rope_theta 5e6, mrope_section [24, 20, 20],
// mrope_interleaved true), Qwen2-VL's vision encoder (vision_config
// embed_dim 1280 / num_heads 16 = head_dim 80, VisionRotaryEmbedding's
// theta 10000), and InternLM2.5-7B (hidden_size 4096 / 32 heads = head_dim
// 128, rope_theta 1e6, rope_scaling {"type": "dynamic", "factor": 2.0},
// max_position_embeddings 32768), with a test-only copy at L = 1024 whose
// longer tables stay small. All rotate_half models: neox.
func hfAxesModels() []hfAxesModel {
	neox := func(dim int, base float64) spec.Spec {
		s := spec.DefaultSpec()
		s.HeadDim, s.Base, s.Layout = dim, base, spec.NeoX
		return s
	}
	mrope := func(base float64, axes string, section ...int) spec.Spec {
		s := neox(128, base)
		s.Axes, s.Sections = axes, section
		return s
	}
	vision := neox(80, 10000)
	vision.Axes = spec.AxesVision
	dynamic := func(l int) spec.Spec {
		s := neox(128, 1e6)
		s.Scaling = spec.Scaling{Type: spec.ScalingDynamic, Factor: 2, OrigCtx: l, Truncate: true}
		return s
	}
	const L = 32768
	return []hfAxesModel{
		{name: "Qwen2-VL-7B", spec: mrope(1e6, spec.AxesMRoPE, 16, 24, 24), axes: 3, tables: []int{100, 32768},
			emb: hfMRoPEEmb(hfref.DefaultInvFreq(1e6, 128, nil), []int{16, 24, 24})},
		{name: "Qwen2.5-VL-7B", spec: mrope(1e6, spec.AxesMRoPE, 16, 24, 24), axes: 3, tables: []int{37, 4096},
			emb: hfMRoPEEmb(hfref.DefaultInvFreq(1e6, 128, nil), []int{16, 24, 24})},
		{name: "Qwen3-VL-8B", spec: mrope(5e6, spec.AxesInterleaved, 24, 20, 20), axes: 3, tables: []int{100, 32768},
			emb: hfInterleavedEmb(hfref.DefaultInvFreq(5e6, 128, nil), []int{24, 20, 20})},
		{name: "Qwen2-VL vision encoder", spec: vision, axes: 2, tables: []int{16, 1024},
			emb: hfVisionEmb(10000, 80)},
		{name: "InternLM2.5-7B dynamic NTK", spec: dynamic(L), axes: 1, tables: []int{4096, L + 1},
			emb: hfDynamicEmb(1e6, 2, L, 128), origCtx: L,
			seqLens: []int{1, 100, L - 1, L, L + 1, L + L/3, 2 * L, 4 * L, 32 * L}},
		{name: "dynamic NTK, L = 1024 (test-only)", spec: dynamic(1024), axes: 1, tables: []int{1024, 1025, 2048},
			emb: hfDynamicEmb(1e6, 2, 1024, 128), origCtx: 1024,
			seqLens: []int{1, 1023, 1024, 1025, 1500, 2048, 4096}},
	}
}

// hfDrawPos draws a token's positions below n: one time in four all equal
// (a text token), else independent.
func hfDrawPos(rng *rand.Rand, axes, n int) []int {
	pos := make([]int, axes)
	p := rng.IntN(n)
	text := rng.IntN(4) == 0
	for a := range pos {
		if !text {
			p = rng.IntN(n)
		}
		pos[a] = p
	}
	return pos
}

// TestAxesHFAngles: for every pair i, the plan's
// angle float64(pos[Axis[i]])·Freqs[i] (what a package computes) is Hugging
// Face's angle in both columns of the pair, within hfAngleTol; the pairs are
// rotate_half's (i, i + HeadDim/2); dynamic NTK's frequencies for a table of
// n > L positions (dynamicFreqs, the code the package runs) are
// _compute_dynamic_ntk_parameters' for a sequence of n tokens.
func TestAxesHFAngles(t *testing.T) {
	const seed = 12
	rng := rand.New(rand.NewPCG(seed, 0x6866))
	for _, m := range hfAxesModels() {
		t.Run(m.name, func(t *testing.T) {
			p, err := NewPlan(m.spec)
			if err != nil {
				t.Fatalf("NewPlan(%+v): %v", m.spec, err)
			}
			d := m.spec.HeadDim
			if p.RotaryDim != d || p.Half != d/2 {
				t.Fatalf("RotaryDim %d, Half %d: Hugging Face rotates the whole head of %d", p.RotaryDim, p.Half, d)
			}
			if p.Attn != 1 {
				t.Fatalf("attention factor %v: Hugging Face's attention_scaling is 1.0 here", p.Attn)
			}
			if m.axes == 1 {
				if p.Axes != 1 || p.Axis != nil {
					t.Fatalf("1-D model: plan has Axes %d, Axis %v", p.Axes, p.Axis)
				}
			} else if p.Axes != m.axes || len(p.Axis) != p.Half {
				t.Fatalf("Axes %d with %d axis entries; want %d axes, one entry per pair (%d)", p.Axes, len(p.Axis), m.axes, p.Half)
			}
			// Part 3: rotate_half pairs column j with j + d/2 (x1 = x[..., :d/2]).
			for i := range p.Half {
				if a, b := p.Pair(i); a != i || b != i+d/2 {
					t.Fatalf("pair %d is (%d, %d); rotate_half pairs (%d, %d)", i, a, b, i, i+d/2)
				}
			}

			worst, checked := 0.0, 0
			check := func(pos []int, n int, freqs []float64) {
				t.Helper()
				emb := m.emb(pos, n)
				if len(emb) != d {
					t.Fatalf("reference emb has %d columns, want %d", len(emb), d)
				}
				for i := range p.Half {
					a, b := p.Pair(i)
					if emb[a] != emb[b] {
						t.Fatalf("positions %v: Hugging Face's columns %d and %d have angles %.17g and %.17g: they are not one pair", pos, a, b, emb[a], emb[b])
					}
					axis := 0
					if p.Axis != nil {
						axis = int(p.Axis[i])
					}
					got := float64(pos[axis]) * freqs[i]
					want := emb[a]
					diff := math.Abs(got - want)
					if !(diff <= hfAngleTol*math.Abs(want)) {
						t.Fatalf("positions %v (n = %d), pair %d (axis %d, θ = %.17g): angle %.17g, Hugging Face %.17g: relative difference %.3g > %.3g",
							pos, n, i, axis, freqs[i], got, want, diff/math.Abs(want), hfAngleTol)
					}
					if want != 0 {
						worst = max(worst, diff/math.Abs(want))
					}
					checked++
				}
			}

			if m.origCtx == 0 {
				for k := range 400 {
					limit := 1 << 20
					if k < 100 {
						limit = 64 // small grids: many equal positions
					}
					check(hfDrawPos(rng, m.axes, limit), 0, p.Freqs)
				}
				check(make([]int, m.axes), 0, p.Freqs) // all zero: no rotation
			} else {
				for _, n := range m.seqLens {
					freqs := p.Freqs
					if n > m.origCtx {
						freqs = make([]float64, p.Half)
						exact.DynamicFreqs(freqs, p.Spec.Base, p.Spec.Scaling.Factor, p.Spec.Scaling.OrigCtx, p.RotaryDim, n)
					}
					for _, pos := range []int{0, n / 2, n - 1} {
						check([]int{pos}, n, freqs)
					}
					for range 50 {
						check([]int{rng.IntN(n)}, n, freqs)
					}
				}
			}
			t.Logf("%d pair angles agree with Hugging Face; worst relative difference %.3g (%.1f u; tolerance %.0f u)", checked, worst, worst/hfU, hfAngleTol/hfU)
		})
	}
}

// hfProbe is one ApplySeq (Apply) call of the package test: a table of n
// positions and the positions of each token (axes per token).
type hfProbe struct {
	n   int
	pos []int32
}

// hfProbes draws the calls for m: per table size, six tokens: the last
// position on every axis (a text token at the end of the table), all zero,
// then mixed positions with the extremes.
func hfProbes(rng *rand.Rand, m hfAxesModel) []hfProbe {
	var ps []hfProbe
	for _, n := range m.tables {
		var pos []int32
		add := func(p []int) {
			for _, v := range p {
				pos = append(pos, int32(v))
			}
		}
		all := func(v int) []int {
			p := make([]int, m.axes)
			for a := range p {
				p[a] = v
			}
			return p
		}
		add(all(n - 1))
		add(all(0))
		edge := all(0)
		edge[len(edge)-1] = n - 1
		add(edge)
		for range 3 {
			add(hfDrawPos(rng, m.axes, n))
		}
		ps = append(ps, hfProbe{n, pos})
	}
	return ps
}

// hfProbeTest returns the _test.go file TestAxesHFPackages writes into a
// generated package (it is not ropegen's output): for every probe it builds
// NewTable(n), rotates the HeadDim unit vectors e_k, one head each, of every
// token with ApplySeq, Axes positions per token (Apply for a 1-D package),
// and appends the result,
// float32 little-endian, to hfprobe.bin. Head k of a token comes back as
// column k of the token's rotation matrix: with x_a = 1, x_b = 0 a pair
// yields y_a = c and y_b = s exactly (two products by 0 and 1, one exact
// sum), so the file holds the table's cos and sin as the kernels apply them.
func hfProbeTest(pkg string, axes int, probes []hfProbe) string {
	var b strings.Builder
	fmt.Fprintf(&b, "// Written by gen's TestAxesHFPackages (gen/axes_hf_test.go); not generated by ropegen.\n\npackage %s\n\n", pkg)
	b.WriteString("import (\n\t\"encoding/binary\"\n\t\"os\"\n\t\"testing\"\n)\n\n")
	b.WriteString("var hfProbes = []struct {\n\tn   int\n\tpos []int32\n}{\n")
	for _, p := range probes {
		s := make([]string, len(p.pos))
		for i, v := range p.pos {
			s[i] = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, "\t{%d, []int32{%s}},\n", p.n, strings.Join(s, ", "))
	}
	b.WriteString("}\n\n")
	perToken := "Axes"
	apply := "tab.ApplySeq(x, p.pos)"
	if axes == 1 {
		perToken = "1"
		apply = "for j, q := range p.pos {\n\t\t\ttab.Apply(x[j*HeadDim*HeadDim:(j+1)*HeadDim*HeadDim], int(q))\n\t\t}"
	}
	fmt.Fprintf(&b, `func TestHFProbe(t *testing.T) {
	f, err := os.Create("hfprobe.bin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range hfProbes {
		tab := NewTable(p.n)
		if tab.Len() != p.n {
			t.Fatalf("NewTable(%%d).Len() = %%d", p.n, tab.Len())
		}
		tokens := len(p.pos) / %s
		x := make([]float32, tokens*HeadDim*HeadDim)
		for j := range tokens {
			for k := range HeadDim {
				x[(j*HeadDim+k)*HeadDim+k] = 1
			}
		}
		%s
		if err := binary.Write(f, binary.LittleEndian, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
`, perToken, apply)
	return b.String()
}

// ulp32 returns the spacing of float32 values at |x|.
func ulp32(x float32) float64 {
	a := float32(math.Abs(float64(x)))
	return float64(math.Nextafter32(a, float32(math.Inf(1))) - a)
}

// TestAxesHFPackages builds the package of every model
// in one temporary module and checks what its kernels apply: each token's
// whole rotation matrix, read back through ApplySeq (Apply for dynamic NTK)
// on unit vectors, against q·cos + rotate_half(q)·sin with Hugging Face's
// emb, for tables of two or three sizes. An entry Hugging Face leaves zero
// must be exactly zero (this checks the layout: (i, i+HeadDim/2) and
// nothing else); any other entry v, a float32 cos or ±sin, must satisfy
// |v − ref| <= ulp32(v)/2 + hfAngleTol·|φ| + hfSinCosErr: the table's one
// rounding to float32 (half an ulp of the result bounds it, since rounding
// never leaves the binade of the exact value for a smaller one), plus the
// angle difference |φ_gen − φ_hf| (|cos′|, |sin′| <= 1), plus the float64
// sin/cos errors. Dynamic NTK tables of n <= L follow the default
// frequencies and longer ones Hugging Face's frequencies for a sequence of
// exactly n tokens: a package decides its base once per table, where
// Hugging Face recomputes it as a sequence grows (docs/contract.md §3).
func TestAxesHFPackages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds generated packages")
	}
	models := hfAxesModels()
	specs := make([]spec.Spec, len(models))
	for i, m := range models {
		specs[i] = m.spec
	}
	dir := writeModule(t, specs, false)
	rng := rand.New(rand.NewPCG(12, 0x7072))
	probes := make([][]hfProbe, len(models))
	for i, m := range models {
		pkg := "p" + string(rune('a'+i))
		probes[i] = hfProbes(rng, m)
		must(t, os.WriteFile(filepath.Join(dir, pkg, "hfprobe_test.go"), []byte(hfProbeTest(pkg, m.axes, probes[i])), 0o644))
	}
	goCmd(t, dir, nil, "test", "-count=1", "-run", "^TestHFProbe$", "./...")

	for i, m := range models {
		t.Run(m.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, "p"+string(rune('a'+i)), "hfprobe.bin"))
			must(t, err)
			d := m.spec.HeadDim
			want := 0
			for _, p := range probes[i] {
				want += len(p.pos) / m.axes * d * d
			}
			if len(data) != 4*want {
				t.Fatalf("hfprobe.bin has %d bytes, want %d", len(data), 4*want)
			}
			got := make([]float32, want)
			for j := range got {
				got[j] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*j:]))
			}
			worst, entries := 0.0, 0
			off := 0
			for _, p := range probes[i] {
				for tok := range len(p.pos) / m.axes {
					pos := make([]int, m.axes)
					for a := range pos {
						pos[a] = int(p.pos[tok*m.axes+a])
					}
					emb := m.emb(pos, p.n)
					cos, sin := make([]float64, d), make([]float64, d)
					for j, e := range emb {
						sin[j], cos[j] = math.Sincos(e)
					}
					for k := range d {
						e := make([]float64, d)
						e[k] = 1
						ref := hfApplyRotary(e, cos, sin)
						y := got[off : off+d]
						off += d
						for j, r := range ref {
							v := y[j]
							if r == 0 {
								if v != 0 {
									t.Fatalf("table %d, positions %v: unit vector e_%d gives %g at index %d, where Hugging Face's rotate_half gives 0", p.n, pos, k, v, j)
								}
								continue
							}
							bound := ulp32(v)/2 + hfAngleTol*math.Abs(emb[j]) + hfSinCosErr
							diff := math.Abs(float64(v) - r)
							if !(diff <= bound) {
								t.Fatalf("table %d, positions %v: unit vector e_%d, index %d: %.9g, Hugging Face %.17g (angle %.17g): |error| %.3g > bound %.3g",
									p.n, pos, k, j, v, r, emb[j], diff, bound)
							}
							worst = max(worst, diff/ulp32(v))
							entries++
						}
					}
				}
			}
			t.Logf("%d cos/sin entries within bound of Hugging Face over tables %v; worst error %.3f float32 ulp", entries, m.tables, worst)
		})
	}
}
