package spec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gw "github.com/ropegen/ropegen/internal/ggufwrite"
)

// This file converts published Hugging Face configs (testdata/hf) into
// GGUF files the way llama.cpp's convert_hf_to_gguf.py does for the keys
// that decide the RoPE, writes them with the independent writer
// internal/ggufwrite, and checks that LoadGGUF gives the same Params as
// LoadHFConfigWith of the config. The conversion below is written from the
// converter's code (the ModelBase.set_gguf_parameters rope block, and the
// LlamaModel, Qwen2VLModel, DeepseekV2Model, Gemma3Model, Phi3MiniModel and
// Glm4Model overrides), not from ropegen's reader.

// hfParams is a config's JSON object, with a multimodal config's
// text_config merged over the top level as the converter's load_hparams
// does.
type hfParams map[string]any

func loadHFParams(t *testing.T, file string) hfParams {
	t.Helper()
	p, err := readHFParams(file)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func readHFParams(file string) (hfParams, error) {
	data, err := os.ReadFile(filepath.Join("testdata", "hf", file))
	if err != nil {
		return nil, err
	}
	var top map[string]any
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	p := hfParams{}
	for k, v := range top {
		p[k] = v
	}
	if tc, ok := top["text_config"].(map[string]any); ok {
		for k, v := range tc {
			p[k] = v
		}
	}
	return p, nil
}

func (p hfParams) has(k string) bool { _, ok := p[k]; return ok && p[k] != nil }

func (p hfParams) num(k string) float64 {
	v, ok := p[k].(float64)
	if !ok {
		panic(fmt.Sprintf("config key %q: %v is not a number", k, p[k]))
	}
	return v
}

func (p hfParams) numOr(k string, def float64) float64 {
	if !p.has(k) {
		return def
	}
	return p.num(k)
}

// rope returns the RoPE parameters: rope_scaling, else rope_parameters.
func (p hfParams) rope() hfParams {
	for _, k := range []string{"rope_scaling", "rope_parameters"} {
		if m, ok := p[k].(map[string]any); ok {
			return hfParams(m)
		}
	}
	return hfParams{}
}

func (p hfParams) ropeType() string {
	r := p.rope()
	if s, ok := r["rope_type"].(string); ok {
		return s
	}
	s, _ := r["type"].(string)
	return s
}

// convBase is ModelBase.set_gguf_parameters (and TextModel's) for the
// RoPE: the sizes, rope_theta, the linear and yarn blocks, mrope_section.
func convBase(arch string, p hfParams) []gw.KV {
	kv := []gw.KV{
		gw.Str("general.architecture", arch),
		gw.Str("general.name", "test "+arch),
		gw.U32("general.file_type", 1),
		gw.U32(arch+".block_count", 2),
	}
	if p.has("max_position_embeddings") {
		kv = append(kv, gw.U32(arch+".context_length", uint32(p.num("max_position_embeddings"))))
	}
	if p.has("hidden_size") {
		kv = append(kv, gw.U32(arch+".embedding_length", uint32(p.num("hidden_size"))))
	}
	if p.has("num_attention_heads") {
		kv = append(kv, gw.U32(arch+".attention.head_count", uint32(p.num("num_attention_heads"))))
	}
	if p.has("num_key_value_heads") {
		kv = append(kv, gw.U32(arch+".attention.head_count_kv", uint32(p.num("num_key_value_heads"))))
	}
	r := p.rope()
	switch p.ropeType() {
	case "linear":
		kv = append(kv, gw.Str(arch+".rope.scaling.type", "linear"), gw.F32(arch+".rope.scaling.factor", float32(r.num("factor"))))
	case "yarn":
		kv = append(kv, gw.Str(arch+".rope.scaling.type", "yarn"), gw.F32(arch+".rope.scaling.factor", float32(r.num("factor"))),
			gw.U32(arch+".rope.scaling.original_context_length", uint32(r.num("original_max_position_embeddings"))))
		if r.has("attention_factor") {
			kv = append(kv, gw.F32(arch+".rope.scaling.yarn_attn_factor", float32(r.num("attention_factor"))))
		}
		if r.has("beta_fast") {
			kv = append(kv, gw.F32(arch+".rope.scaling.yarn_beta_fast", float32(r.num("beta_fast"))))
		}
		if r.has("beta_slow") {
			kv = append(kv, gw.F32(arch+".rope.scaling.yarn_beta_slow", float32(r.num("beta_slow"))))
		}
	}
	if sec, ok := r["mrope_section"].([]any); ok {
		var v []int32
		for _, x := range sec {
			v = append(v, int32(x.(float64)))
		}
		for len(v) < 4 {
			v = append(v, 0)
		}
		kv = append(kv, gw.I32s(arch+".rope.dimension_sections", v...))
	}
	theta, ok := r["rope_theta"].(float64)
	if !ok && p.has("rope_theta") {
		theta, ok = p.num("rope_theta"), true
	}
	if ok {
		kv = append(kv, gw.F32(arch+".rope.freq_base", float32(theta)))
	}
	kv = append(kv, gw.F32(arch+".attention.layer_norm_rms_epsilon", 1e-5))
	if p.has("head_dim") {
		kv = append(kv, gw.U32(arch+".attention.key_length", uint32(p.num("head_dim"))), gw.U32(arch+".attention.value_length", uint32(p.num("head_dim"))))
	}
	// A tokenizer, to be skipped.
	kv = append(kv, gw.Str("tokenizer.ggml.model", "gpt2"), gw.Strs("tokenizer.ggml.tokens", "a", "bc", "<|end|>", ""),
		gw.I32s("tokenizer.ggml.token_type", 1, 1, 3, 1), gw.BoolKV("tokenizer.ggml.add_bos_token", true))
	return kv
}

// headDimOf is the converter's head dim: head_dim, else hidden/heads.
func headDimOf(p hfParams) int {
	if p.has("head_dim") {
		return int(p.num("head_dim"))
	}
	return int(p.num("hidden_size")) / int(p.num("num_attention_heads"))
}

// llama3Factors computes rope_freqs as LlamaModel.generate_extra_tensors
// does: in torch float32, every operation rounded to float32. torch's
// scalar/tensor is reciprocal-then-multiply (Tensor.__rtruediv__).
func llama3Factors(base float64, dim int, factor, lf, hf, L float64) []float32 {
	f := func(x float64) float64 { return float64(float32(x)) }
	out := make([]float32, dim/2)
	for i := range out {
		e := f(float64(2*i) / float64(dim))
		freq := f(1 / f(math.Pow(f(base), e)))
		wave := f(f(1/freq) * f(2*math.Pi))
		switch {
		case wave < L/hf:
			out[i] = 1
		case wave > L/lf:
			out[i] = float32(factor)
		default:
			smooth := f(f(f(f(1/wave)*L)-lf) / (hf - lf))
			d := f(f(f(1-smooth)/factor) + smooth)
			out[i] = float32(f(1/d) * 1)
		}
	}
	return out
}

func f32s(l []any) []float32 {
	out := make([]float32, len(l))
	for i, x := range l {
		out[i] = float32(x.(float64))
	}
	return out
}

// weight is a small F16 tensor standing for the weights, after the RoPE
// tensors.
func weight(name string) gw.Tensor {
	return gw.Tensor{Name: name, Dims: []uint64{8, 4}, Type: gw.TypeF16, Data: bytes.Repeat([]byte{0x00, 0x3c}, 32)}
}

// ggufCase is a published config, the architecture its GGUF file has, and
// the conversion's extras.
type ggufCase struct {
	name     string
	file     string
	arch     string
	local    bool
	layout   Layout // the GGUF file's pair layout (llama_model_rope_type)
	hfLayout Layout // the config's (Hugging Face's reference code)
	convert  func(arch string, p hfParams) ([]gw.KV, []gw.Tensor)
	// freqTol: 0 for bit-for-bit frequencies; otherwise checkGGUF gets
	// the tolerance by pair from it.
	freqTol func(p hfParams, what string, i int) float64
	attnF32 bool // the attention factor is stored as float32: equal after rounding to float32
	notes   []string
}

// u is the unit roundoff of float32.
const u32 = 1.0 / (1 << 24)

func convPlain(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
	return convBase(arch, p), []gw.Tensor{weight("token_embd.weight")}
}

// convLlama is LlamaModel: rope.dimension_count = the head dim, and for
// llama3 the rope_freqs tensor.
func convLlama(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
	kv := convBase(arch, p)
	dim := headDimOf(p)
	kv = append(kv, gw.U32(arch+".rope.dimension_count", uint32(dim)), gw.U32(arch+".vocab_size", 32))
	var ts []gw.Tensor
	if p.ropeType() == "llama3" {
		r := p.rope()
		// The converter reads original_max_position_embeddings from the
		// top level with a default of 8192, which is the rope_scaling
		// value in the Llama 3.x configs.
		L := p.numOr("original_max_position_embeddings", 8192)
		if L != r.num("original_max_position_embeddings") {
			panic("the converter's L differs from the config's")
		}
		ts = append(ts, gw.F32Tensor("rope_freqs.weight", llama3Factors(p.num("rope_theta"), dim, r.numOr("factor", 8), r.numOr("low_freq_factor", 1), r.numOr("high_freq_factor", 4), L)))
	}
	return kv, append(ts, weight("token_embd.weight"))
}

// convDeepseek2 is DeepseekV2Model: the MLA sizes and the yarn log
// multiplier 0.1·mscale_all_dim.
func convDeepseek2(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
	kv := convBase(arch, p)
	kv = append(kv,
		gw.U32(arch+".attention.kv_lora_rank", uint32(p.num("kv_lora_rank"))),
		gw.U32(arch+".attention.key_length", uint32(p.num("kv_lora_rank")+p.num("qk_rope_head_dim"))),
		gw.U32(arch+".attention.value_length", uint32(p.num("kv_lora_rank"))),
		gw.U32(arch+".attention.key_length_mla", uint32(p.num("qk_nope_head_dim")+p.num("qk_rope_head_dim"))),
		gw.U32(arch+".attention.value_length_mla", uint32(p.num("v_head_dim"))),
		gw.U32(arch+".rope.dimension_count", uint32(p.num("qk_rope_head_dim"))))
	if r := p.rope(); r.has("mscale_all_dim") {
		kv = append(kv, gw.F32(arch+".rope.scaling.yarn_log_multiplier", float32(0.1*r.num("mscale_all_dim"))))
	}
	return kv, []gw.Tensor{weight("blk.0.attn_kv_a_mqa.weight")}
}

// convGemma3 is Gemma3Model: Gemma3TextConfig's defaults where the config
// leaves them out, and the linear factor of the global layers.
func convGemma3(withSWABase bool) func(string, hfParams) ([]gw.KV, []gw.Tensor) {
	return func(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
		kv := []gw.KV{
			gw.Str("general.architecture", arch),
			gw.U32(arch+".context_length", uint32(p.numOr("max_position_embeddings", 131072))),
			gw.U32(arch+".embedding_length", uint32(p.num("hidden_size"))),
			gw.U32(arch+".block_count", uint32(p.num("num_hidden_layers"))),
			gw.U32(arch+".attention.head_count", uint32(p.numOr("num_attention_heads", 8))),
			gw.F32(arch+".attention.layer_norm_rms_epsilon", 1e-6),
			gw.U32(arch+".attention.key_length", uint32(p.numOr("head_dim", 256))),
			gw.U32(arch+".attention.value_length", uint32(p.numOr("head_dim", 256))),
			gw.F32(arch+".rope.freq_base", float32(p.numOr("rope_theta", 1e6))),
			gw.U32(arch+".attention.sliding_window", uint32(p.num("sliding_window"))),
			gw.U32(arch+".attention.head_count_kv", uint32(p.numOr("num_key_value_heads", 4))),
		}
		if p.ropeType() == "linear" {
			kv = append(kv, gw.Str(arch+".rope.scaling.type", "linear"), gw.F32(arch+".rope.scaling.factor", float32(p.rope().num("factor"))))
		}
		if withSWABase {
			kv = append(kv, gw.F32(arch+".rope.freq_base_swa", float32(p.numOr("rope_local_base_freq", 10000))))
		}
		return kv, []gw.Tensor{weight("token_embd.weight")}
	}
}

// convPhi3 is Phi3MiniModel: its own keys (no scaling type) and the
// longrope factor tensors, with attn_factor sqrt(1 + ln s/ln L).
func convPhi3(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
	maxPos, orig := p.num("max_position_embeddings"), p.num("original_max_position_embeddings")
	nEmbd, nHead := p.num("hidden_size"), p.num("num_attention_heads")
	rot := int(p.numOr("partial_rotary_factor", 1)*nEmbd) / int(nHead)
	kv := []gw.KV{
		gw.Str("general.architecture", arch),
		gw.U32(arch+".context_length", uint32(maxPos)),
		gw.U32(arch+".rope.scaling.original_context_length", uint32(orig)),
		gw.U32(arch+".embedding_length", uint32(nEmbd)),
		gw.U32(arch+".attention.head_count", uint32(nHead)),
		gw.U32(arch+".attention.head_count_kv", uint32(p.num("num_key_value_heads"))),
		gw.U32(arch+".rope.dimension_count", uint32(rot)),
		gw.F32(arch+".rope.freq_base", float32(p.num("rope_theta"))),
		gw.U32(arch+".attention.sliding_window", uint32(p.num("sliding_window"))),
	}
	scale := maxPos / orig
	attn := 1.0
	if scale > 1 {
		attn = math.Sqrt(1 + math.Log(scale)/math.Log(orig))
	}
	kv = append(kv, gw.F32(arch+".rope.scaling.attn_factor", float32(attn)))
	r := p.rope()
	ts := []gw.Tensor{
		gw.F32Tensor("rope_factors_long.weight", f32s(r["long_factor"].([]any))),
		gw.F32Tensor("rope_factors_short.weight", f32s(r["short_factor"].([]any))),
		weight("output.weight"),
	}
	return kv, ts
}

// convGlm4 is Glm4Model: the rotary part int(head_dim·partial_rotary_factor).
func convGlm4(arch string, p hfParams) ([]gw.KV, []gw.Tensor) {
	kv := convBase(arch, p)
	kv = append(kv, gw.U32(arch+".rope.dimension_count", uint32(int(float64(headDimOf(p))*p.numOr("partial_rotary_factor", 0.5)))))
	return kv, []gw.Tensor{weight("token_embd.weight")}
}

// llama3Tol is the tolerance of pair i's frequency from rope_freqs against
// Hugging Face's float64 llama3 formula. The converter computes the factor
// f = 1/((1−σ)/s + σ) in float32, each step rounded (relative error u =
// 2^-24 each): freq = 1/base^(2i/R), 2u; the wavelength 2π/freq (reciprocal,
// 2π rounded, product), 5u; L/wavelength, 6u, so with L/w ≤ hf in the
// smoothed band σ = (L/w − lf)/(hf − lf) is off by at most
// (6·hf + (hf − lf))/(hf − lf)·u + u; D = (1−σ)/s + σ ≥ 1/s is then off
// relatively by at most that times (1 − 1/s)/D ≤ (s − 1), plus 3u for its
// three operations, and 1/D by u more. θ_i/f_i in float64 and Hugging
// Face's float64 formula add well under u.
func llama3Tol(p hfParams, _ string, i int) float64 {
	r := p.rope()
	s, lf, hf := r.num("factor"), r.num("low_freq_factor"), r.num("high_freq_factor")
	sigma := (6*hf+(hf-lf))/(hf-lf) + 1
	return (sigma*(s-1) + 4 + 1) * u32
}

// longropeTol is the tolerance of pair i's frequency from Phi-3's
// factor tensors: the converter stores each factor e_i as float32, so
// θ_i/e_i is off by at most u relatively (plus two float64 roundings); a
// factor that float32 holds exactly must give the same bits.
func longropeTol(p hfParams, what string, i int) float64 {
	key := "short_factor"
	if what == "long freqs" {
		key = "long_factor"
	}
	e := p.rope()[key].([]any)[i].(float64)
	if float64(float32(e)) == e {
		return 0
	}
	return u32 + 0x1p-51
}

var ggufCases = []ggufCase{
	{name: "llama-3.1-8b", file: "llama-3.1-8b.json", arch: "llama", layout: Interleaved, hfLayout: NeoX, convert: convLlama, freqTol: llama3Tol,
		notes: []string{"convert_hf_to_gguf.py permuted the Q and K weights", "rope_freqs.weight"}},
	{name: "llama-3.2-1b", file: "llama-3.2-1b.json", arch: "llama", layout: Interleaved, hfLayout: NeoX, convert: convLlama, freqTol: llama3Tol},
	{name: "mistral-7b-v0.3", file: "mistral-7b-v0.3.json", arch: "llama", layout: Interleaved, hfLayout: NeoX, convert: convLlama},
	{name: "qwen2.5-7b-yarn", file: "qwen2.5-7b-instruct-yarn.json", arch: "qwen2", layout: NeoX, hfLayout: NeoX, convert: convPlain,
		notes: []string{"LLAMA_ROPE_TYPE_NEOX"}},
	{name: "qwen2.5-vl-7b", file: "qwen2.5-vl-7b-instruct.json", arch: "qwen2vl", layout: NeoX, hfLayout: NeoX, convert: convPlain,
		notes: []string{"LLAMA_ROPE_TYPE_MROPE"}},
	{name: "qwen3-vl-8b", file: "qwen3-vl-8b-instruct.json", arch: "qwen3vl", layout: NeoX, hfLayout: NeoX, convert: convPlain,
		notes: []string{"LLAMA_ROPE_TYPE_IMROPE", "pairs 61, 62 turn by the time position"}},
	{name: "qwen3-0.6b", file: "qwen3-0.6b.json", arch: "qwen3", layout: NeoX, hfLayout: NeoX, convert: convPlain},
	{name: "deepseek-v3", file: "deepseek-v3.json", arch: "deepseek2", layout: Interleaved, hfLayout: Interleaved, convert: convDeepseek2,
		notes: []string{"MLA", "rope.dimension_count = 64"}},
	{name: "deepseek-v2-lite", file: "deepseek-v2-lite.json", arch: "deepseek2", layout: Interleaved, hfLayout: Interleaved, convert: convDeepseek2},
	{name: "kimi-k2", file: "kimi-k2-instruct-0905.json", arch: "deepseek2", layout: Interleaved, hfLayout: Interleaved, convert: convDeepseek2},
	{name: "gemma-3-4b", file: "gemma-3-4b-it.json", arch: "gemma3", layout: NeoX, hfLayout: NeoX, convert: convGemma3(false),
		notes: []string{"global (full-attention) layers' (base 1e+06)", "llama.cpp's 10000 for gemma3"}},
	{name: "gemma-3-4b/local", file: "gemma-3-4b-it.json", arch: "gemma3", local: true, layout: NeoX, hfLayout: NeoX, convert: convGemma3(false),
		notes: []string{"local (sliding-window) layers' (base 10000"}},
	{name: "gemma-3-4b/local, freq_base_swa", file: "gemma-3-4b-it.json", arch: "gemma3", local: true, layout: NeoX, hfLayout: NeoX, convert: convGemma3(true),
		notes: []string{"from gemma3.rope.freq_base_swa"}},
	{name: "phi-3-mini-128k", file: "phi-3-mini-128k-instruct.json", arch: "phi3", layout: NeoX, hfLayout: NeoX, convert: convPhi3, attnF32: true, freqTol: longropeTol,
		notes: []string{"longrope", "passes 4096"}},
	{name: "gpt-oss-20b", file: "gpt-oss-20b-v5.json", arch: "gpt-oss", layout: NeoX, hfLayout: NeoX, convert: convPlain,
		notes: []string{"unrounded"}},
	{name: "glm-4-9b", file: "glm-4-9b-chat-hf.json", arch: "glm4", layout: Interleaved, hfLayout: Interleaved, convert: convGlm4},
	{name: "command-r", file: "c4ai-command-r-v01.json", arch: "command-r", layout: Interleaved, hfLayout: Interleaved, convert: convPlain},
}

// ggufFile converts c's config and writes the GGUF file into dir.
func (c ggufCase) write(t *testing.T, dir string) (path string, data []byte) {
	t.Helper()
	kv, ts := c.convert(c.arch, loadHFParams(t, c.file))
	data = (&gw.File{KV: kv, Tensors: ts}).Bytes()
	path = filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_", ",", "").Replace(c.name)+".gguf")
	must(t, os.WriteFile(path, data, 0o644))
	return path, data
}

func TestGGUFMatchesHFConfig(t *testing.T) {
	for _, c := range ggufCases {
		t.Run(c.name, func(t *testing.T) {
			path, data := c.write(t, t.TempDir())
			gs, info, err := LoadGGUFWith(path, GGUFOptions{Local: c.local})
			if err != nil {
				t.Fatal(err)
			}
			// ReadGGUF over the bytes gives the same.
			rs, rinfo, err := ReadGGUF(bytes.NewReader(data), int64(len(data)), GGUFOptions{Local: c.local})
			if err != nil || fmt.Sprint(rs) != fmt.Sprint(gs) || fmt.Sprint(rinfo) != fmt.Sprint(info) {
				t.Fatalf("ReadGGUF: %+v %v, LoadGGUF %+v", rs, err, gs)
			}
			hs, _, err := LoadHFConfigWith(filepath.Join("testdata", "hf", c.file), HFOptions{Local: c.local})
			if err != nil {
				t.Fatal(err)
			}
			gp, err := Resolve(gs)
			if err != nil {
				t.Fatalf("Resolve(GGUF spec %+v): %v", gs, err)
			}
			hp, err := Resolve(hs)
			if err != nil {
				t.Fatal(err)
			}
			if info.Arch != c.arch || info.Version != 3 {
				t.Errorf("info %+v, want arch %q, version 3", info, c.arch)
			}
			if gs.Layout != c.layout || hs.Layout != c.hfLayout {
				t.Errorf("layouts: GGUF %s, Hugging Face %s; want %s, %s", gs.Layout, hs.Layout, c.layout, c.hfLayout)
			}
			if gp.HeadDim != hp.HeadDim || gp.RotaryDim != hp.RotaryDim {
				t.Fatalf("GGUF head %d rotary %d, Hugging Face %d %d", gp.HeadDim, gp.RotaryDim, hp.HeadDim, hp.RotaryDim)
			}
			if gp.Axes != hp.Axes || fmt.Sprint(gp.Axis) != fmt.Sprint(hp.Axis) || gs.Axes != hs.Axes {
				t.Errorf("axes: GGUF %d %s %v, Hugging Face %d %s %v", gp.Axes, gs.Axes, gp.Axis, hp.Axes, hs.Axes, hp.Axis)
			}
			e1, s1 := checkGGUFFreqs(t, "freqs", gp.Freqs, hp.Freqs, c, loadHFParams(t, c.file))
			if (gp.LongFreqs == nil) != (hp.LongFreqs == nil) {
				t.Fatalf("long frequencies: GGUF %v, Hugging Face %v", gp.LongFreqs != nil, hp.LongFreqs != nil)
			}
			e2, s2 := checkGGUFFreqs(t, "long freqs", gp.LongFreqs, hp.LongFreqs, c, loadHFParams(t, c.file))
			if c.freqTol != nil && (e1+e2 == 0 || s1+s2 == 0) {
				t.Errorf("%d pairs exact, %d within the tolerance: want both kinds, so that both checks run", e1+e2, s1+s2)
			}
			switch {
			case c.attnF32:
				// The converter computed A in float64 and stored it as
				// float32: the file's A is Hugging Face's rounded to float32.
				if gp.Attn != float64(float32(hp.Attn)) || gp.Attn == hp.Attn {
					t.Errorf("attention factor %.17g, want Hugging Face's %.17g rounded to float32 (%.17g)", gp.Attn, hp.Attn, float64(float32(hp.Attn)))
				}
			case math.Float64bits(gp.Attn) != math.Float64bits(hp.Attn):
				t.Errorf("attention factor %.17g, Hugging Face %.17g", gp.Attn, hp.Attn)
			}
			notes := strings.Join(info.Notes, "\n")
			for _, n := range c.notes {
				if !strings.Contains(notes, n) {
					t.Errorf("notes %q do not say %q", info.Notes, n)
				}
			}
		})
	}
}

// checkGGUFFreqs compares the GGUF file's frequencies with Hugging Face's:
// bit for bit, or with c.freqTol for the pairs whose factor is not exactly
// representable (llama3's smoothed band); for llama3 the pairs the factor
// leaves alone or divides by s exactly must still match bit for bit.
func checkGGUFFreqs(t *testing.T, what string, got, want []float64, c ggufCase, p hfParams) (exact, smoothed int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, Hugging Face %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float64bits(got[i]) == math.Float64bits(want[i]) {
			exact++
			continue
		}
		if c.freqTol == nil {
			t.Fatalf("%s: θ_%d = %.17g, Hugging Face %.17g: want the same bits", what, i, got[i], want[i])
		}
		smoothed++
		tol := c.freqTol(p, what, i)
		if tol == 0 {
			t.Fatalf("%s: θ_%d = %.17g, Hugging Face %.17g: want the same bits", what, i, got[i], want[i])
		}
		if d := math.Abs(got[i]-want[i]) / want[i]; d > tol {
			t.Fatalf("%s: θ_%d = %.17g, Hugging Face %.17g: relative difference %.3g > %.3g", what, i, got[i], want[i], d, tol)
		}
	}
	if c.freqTol != nil && len(want) > 0 && p.ropeType() == "llama3" {
		// llama3: the high band (factor 1) and the low band (factor s, a
		// float32 integer) are exact; only the smoothed band may differ.
		r := p.rope()
		L, lf, hf := r.num("original_max_position_embeddings"), r.num("low_freq_factor"), r.num("high_freq_factor")
		mid := 0
		for i := range want {
			theta := math.Pow(p.num("rope_theta"), -float64(2*i)/float64(2*len(want)))
			if wave := 2 * math.Pi / theta; wave >= L/hf && wave <= L/lf {
				mid++
			}
		}
		if smoothed > mid || exact < len(want)-mid {
			t.Errorf("%s: %d pairs differ, %d exact; the smoothed band has %d pairs", what, smoothed, exact, mid)
		}
		if mid == 0 {
			t.Errorf("%s: no smoothed pair: the case checks nothing of the tolerance", what)
		}
	}
	return exact, smoothed
}
