package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/ropegen/ropegen/internal/hfref"
	"github.com/ropegen/ropegen/templates/exact"
)

// The Runtime struct is the contract of docs/contract.md §12: a generated
// package's Params converts from it only while the names, types and order
// agree, so a change here must be a change there too.
func TestRuntimeFields(t *testing.T) {
	want := []struct {
		name string
		typ  any
	}{
		{"HeadDim", 0}, {"RotaryDim", 0}, {"Layout", ""}, {"Freqs", []float64(nil)}, {"Attn", 0.0},
		{"Axes", 0}, {"Axis", []uint8(nil)}, {"LongFreqs", []float64(nil)}, {"OrigCtx", 0},
		{"DynamicFactor", 0.0}, {"DynamicBase", 0.0}, {"NormKind", ""}, {"NormEps", 0.0},
		{"NormScope", ""}, {"NormAfter", false}, {"QKScale", 0.0}, {"MaxPositions", 0},
	}
	rt := reflect.TypeFor[Runtime]()
	if rt.NumField() != len(want) {
		t.Fatalf("Runtime has %d fields, want %d", rt.NumField(), len(want))
	}
	for i, w := range want {
		f := rt.Field(i)
		if f.Name != w.name || f.Type != reflect.TypeOf(w.typ) {
			t.Errorf("field %d is %s %v, want %s %v", i, f.Name, f.Type, w.name, reflect.TypeOf(w.typ))
		}
	}
}

// runtimeCase is a config of testdata/hf with every Runtime field written
// out by hand from the file and the model's transformers code, not from
// spec: the frequencies and A from internal/hfref's transcription of
// modeling_rope_utils, the rest as literals.
type runtimeCase struct {
	file      string
	opt       HFOptions
	head, rot int
	layout    Layout
	rope      hfref.Rope // Dim is rot; its frequencies and A are Freqs, LongFreqs and Attn
	axes      int
	mrope     string // hfref.Axis's scheme when axes = 3
	sections  []int
	origCtx   int     // longrope and dynamic
	dynFactor float64 // dynamic
	dynBase   float64
	norm      NormKind
	eps       float64
	scope     string
	after     bool
	qkScale   float64 // the attention's self.scaling, written from transformers' formula
	maxPos    int
}

var runtimeCases = []runtimeCase{
	// LlamaAttention: rotate_half; rope_scaling llama3; no QK-norm.
	{file: "llama-3.1-8b.json", head: 128, rot: 128, layout: NeoX,
		rope: hfref.Rope{Base: 500000, RopeType: "llama3", Factor: 8, LowFreq: 1, HighFreq: 4, OrigMax: 8192},
		axes: 1, qkScale: 1 / math.Sqrt(128), maxPos: 131072},
	// Qwen3Attention: q_norm/k_norm Qwen3RMSNorm(head_dim, rms_norm_eps
	// 1e-06) before apply_rotary_pos_emb.
	{file: "qwen3-8b.json", head: 128, rot: 128, layout: NeoX, rope: hfref.Rope{Base: 1e6, RopeType: "default"},
		axes: 1, norm: NormRMS, eps: 1e-6, scope: ScopeHead, qkScale: 1 / math.Sqrt(128), maxPos: 40960},
	// Gemma 3: global layers linear ×8 at 1e6, sliding ones unscaled at
	// rope_local_base_freq 1e4 (Gemma3TextConfig's defaults); Gemma3RMSNorm
	// x·r·(1+w) before the rotation, rms_norm_eps 1e-6 by default; no
	// max_position_embeddings in the file. Gemma3Attention scales by
	// query_pre_attn_scalar**-0.5, Gemma3TextConfig's 256 by default.
	{file: "gemma-3-4b-it.json", head: 256, rot: 256, layout: NeoX, rope: hfref.Rope{Base: 1e6, RopeType: "linear", Factor: 8},
		axes: 1, norm: NormGemma, eps: 1e-6, scope: ScopeHead, qkScale: 1 / math.Sqrt(256)},
	{file: "gemma-3-4b-it.json", opt: HFOptions{LayerType: "sliding_attention"}, head: 256, rot: 256, layout: NeoX,
		rope: hfref.Rope{Base: 1e4, RopeType: "default"}, axes: 1, norm: NormGemma, eps: 1e-6, scope: ScopeHead, qkScale: 1 / math.Sqrt(256)},
	// Olmo2Attention: Olmo2RMSNorm over a token's whole projection,
	// Olmo2Config's rms_norm_eps 1e-5.
	{file: "olmo-2-1124-7b.json", head: 128, rot: 128, layout: NeoX, rope: hfref.Rope{Base: 500000, RopeType: "default"},
		axes: 1, norm: NormRMS, eps: 1e-5, scope: ScopeToken, qkScale: 1 / math.Sqrt(128), maxPos: 4096},
	// Llama4TextAttention: complex rotation (interleaved), llama3 with
	// equal factors, Llama4TextL2Norm after the rotation (1e-5 default).
	{file: "llama-4-scout-17b-16e-instruct.json", head: 128, rot: 128, layout: Interleaved,
		rope: hfref.Rope{Base: 500000, RopeType: "llama3", Factor: 16, LowFreq: 1, HighFreq: 1, OrigMax: 8192},
		axes: 1, norm: NormL2, eps: 1e-5, scope: ScopeHead, after: true, qkScale: 1 / math.Sqrt(128), maxPos: 10485760},
	// Phi-3: longrope, L = the top-level original_max_position_embeddings
	// 4096, factor 131072/4096 for A.
	{file: "phi-3-mini-128k-instruct.json", head: 96, rot: 96, layout: NeoX,
		rope: hfref.Rope{Base: 10000, RopeType: "longrope", MaxPos: 131072, OrigMax: 4096}, axes: 1, origCtx: 4096, qkScale: 1 / math.Sqrt(96), maxPos: 131072},
	// Qwen2.5-VL: M-RoPE sections 16, 24, 24.
	{file: "qwen2.5-vl-7b-instruct.json", head: 128, rot: 128, layout: NeoX, rope: hfref.Rope{Base: 1e6, RopeType: "default"},
		axes: 3, mrope: "sections", sections: []int{16, 24, 24}, qkScale: 1 / math.Sqrt(128), maxPos: 128000},
	// DeepSeek-V3: MLA's rotary part, interleaved (rope_interleave's
	// default), YaRN factor 40 with mscale = mscale_all_dim = 1 (A = 1);
	// DeepseekV3Attention scales by qk_head_dim**-0.5, qk_head_dim =
	// qk_nope_head_dim 128 + qk_rope_head_dim 64, times yarn_get_mscale(40, 1)².
	{file: "deepseek-v3.json", head: 64, rot: 64, layout: Interleaved,
		rope: hfref.Rope{Base: 10000, RopeType: "yarn", Factor: 40, OrigMax: 4096, BetaFast: 32, BetaSlow: 1, MScale: 1, MScaleAllDim: 1, Truncate: true},
		axes: 1, qkScale: 1 / math.Sqrt(128+64) * (0.1*math.Log(40) + 1) * (0.1*math.Log(40) + 1), maxPos: 163840},
	// InternLM2.5: dynamic NTK, factor 2, L = max_position_embeddings 32768.
	{file: "internlm2.5-7b-chat.json", head: 128, rot: 128, layout: NeoX, rope: hfref.Rope{Base: 1e6, RopeType: "default"},
		axes: 1, origCtx: 32768, dynFactor: 2, dynBase: 1e6, qkScale: 1 / math.Sqrt(128), maxPos: 32768},
}

func TestRuntime(t *testing.T) {
	for _, c := range runtimeCases {
		t.Run(c.file+c.opt.LayerType, func(t *testing.T) {
			s, _, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			p, err := Resolve(s)
			if err != nil {
				t.Fatal(err)
			}
			r := p.Runtime()
			if r.HeadDim != c.head || r.RotaryDim != c.rot || r.Layout != string(c.layout) {
				t.Errorf("shape %d, %d, %s; want %d, %d, %s", r.HeadDim, r.RotaryDim, r.Layout, c.head, c.rot, c.layout)
			}
			ref := c.rope
			ref.Dim = c.rot
			if ref.RopeType == "longrope" {
				// The factor lists, read straight from the JSON.
				var f struct {
					RopeScaling struct {
						Short []float64 `json:"short_factor"`
						Long  []float64 `json:"long_factor"`
					} `json:"rope_scaling"`
				}
				data, err := os.ReadFile(filepath.Join("testdata", "hf", c.file))
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &f); err != nil {
					t.Fatal(err)
				}
				ref.Short, ref.Long = f.RopeScaling.Short, f.RopeScaling.Long
			}
			freqs, long, attn := hfref.Reference(ref)
			compareFreqs(t, "Freqs", r.Freqs, freqs)
			if long == nil {
				if r.LongFreqs != nil {
					t.Errorf("LongFreqs %v, want nil", r.LongFreqs)
				}
			} else {
				compareFreqs(t, "LongFreqs", r.LongFreqs, long)
			}
			if !relClose(r.Attn, attn, refTol) {
				t.Errorf("Attn %.17g, want %.17g", r.Attn, attn)
			}
			if r.Axes != c.axes {
				t.Errorf("Axes %d, want %d", r.Axes, c.axes)
			}
			if c.axes == 1 {
				if r.Axis != nil {
					t.Errorf("Axis %v, want nil", r.Axis)
				}
			} else {
				want := make([]uint8, c.rot/2)
				for i := range want {
					want[i] = hfref.Axis(c.mrope, c.sections, i)
				}
				if !slices.Equal(r.Axis, want) {
					t.Errorf("Axis %v, want %v", r.Axis, want)
				}
			}
			if r.OrigCtx != c.origCtx || r.DynamicFactor != c.dynFactor || r.DynamicBase != c.dynBase {
				t.Errorf("OrigCtx %d, DynamicFactor %v, DynamicBase %v; want %d, %v, %v", r.OrigCtx, r.DynamicFactor, r.DynamicBase, c.origCtx, c.dynFactor, c.dynBase)
			}
			if c.dynFactor != 0 {
				// What a table of n positions computes from the Runtime
				// alone (the generated package's copy of exact's
				// dynamicFreqs) is transformers' dynamic NTK for n tokens.
				for _, n := range []int{c.origCtx + 1, 3 * c.origCtx, 1 << 22} {
					got := make([]float64, r.RotaryDim/2)
					exact.DynamicFreqs(got, r.DynamicBase, r.DynamicFactor, r.OrigCtx, r.RotaryDim, n)
					compareFreqs(t, fmt.Sprintf("dynamic table of %d", n), got, hfref.DynamicNTKInvFreq(c.rope.Base, c.rot, c.dynFactor, c.maxPos, n))
				}
			}
			if r.NormKind != string(c.norm) || r.NormEps != c.eps || r.NormScope != c.scope || r.NormAfter != c.after {
				t.Errorf("norm %q ε %v %q after %v; want %q ε %v %q after %v", r.NormKind, r.NormEps, r.NormScope, r.NormAfter, c.norm, c.eps, c.scope, c.after)
			}
			if !relClose(r.QKScale, c.qkScale, refTol) {
				t.Errorf("QKScale %.17g, want %.17g", r.QKScale, c.qkScale)
			}
			if r.MaxPositions != c.maxPos {
				t.Errorf("MaxPositions %d, want %d", r.MaxPositions, c.maxPos)
			}
		})
	}
}

// The Runtime's slices are its own: an engine that edits them changes no
// Params, and a second Runtime is as the first.
func TestRuntimeCopies(t *testing.T) {
	s := DefaultSpec()
	s.HeadDim, s.Axes, s.Sections = 64, AxesMRoPE, []int{8, 12, 12}
	p, err := Resolve(s)
	if err != nil {
		t.Fatal(err)
	}
	r := p.Runtime()
	r.Freqs[0], r.Axis[31] = math.Pi, 0
	if p.Freqs[0] != 1 || p.Axis[31] != 2 {
		t.Errorf("editing a Runtime changed its Params: Freqs[0] %v, Axis[31] %d", p.Freqs[0], p.Axis[31])
	}
	if q := p.Runtime(); q.Freqs[0] != 1 || q.Axis[31] != 2 {
		t.Errorf("a second Runtime has Freqs[0] %v, Axis[31] %d", q.Freqs[0], q.Axis[31])
	}
	// The norm's defaults: ε 0 and scope "" are DefaultNormEps and head.
	s = DefaultSpec()
	s.QKNorm = QKNorm{Kind: NormRMS}
	if p, err = Resolve(s); err != nil {
		t.Fatal(err)
	}
	if r := p.Runtime(); r.NormEps != DefaultNormEps || r.NormScope != ScopeHead || r.QKScale != 1/math.Sqrt(128) {
		t.Errorf("default norm: ε %v, scope %q, q·k scale %v; want %v, %q, 1/sqrt(128)", r.NormEps, r.NormScope, r.QKScale, DefaultNormEps, ScopeHead)
	}
	s.QKNorm = QKNorm{Kind: NormNone}
	if p, err = Resolve(s); err != nil {
		t.Fatal(err)
	}
	if r := p.Runtime(); r.NormKind != "" || r.NormEps != 0 || r.NormScope != "" {
		t.Errorf("-qk-norm none: kind %q ε %v scope %q; want all empty", r.NormKind, r.NormEps, r.NormScope)
	}
}
