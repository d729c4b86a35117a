package spec

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/ropegen/ropegen/templates/exact"
)

// GGUFOptions selects what LoadGGUFWith and ReadGGUF read from a file.
//
// The Spec comes from the file's metadata as llama.cpp reads it
// (src/llama-model.cpp, llama_model::load_hparams, and llama-context.cpp
// for the YaRN attention factor), under the prefix "<arch>." of the
// general.architecture key; every float32 in the file is taken as it is
// stored, widened exactly to float64:
//
//   - HeadDim: attention.key_length, else embedding_length divided by
//     attention.head_count (of layer 0 when it is a per-layer array).
//     RotaryDim: rope.dimension_count when it differs from the head dim.
//     For MLA (deepseek2) the kernel is the rotary part of each head:
//     HeadDim = RotaryDim = rope.dimension_count.
//   - Base: rope.freq_base, else 10000 (llama.cpp's default).
//   - Scaling: rope.scaling.type, "linear" when absent as in llama.cpp;
//     its factor rope.scaling.factor (or the older rope.scale_linear), no
//     scaling when absent or 1. "yarn" reads
//     rope.scaling.original_context_length (else context_length),
//     rope.scaling.yarn_beta_fast and yarn_beta_slow (else 32 and 1), and the
//     attention factor from rope.scaling.yarn_attn_factor (the converter's
//     copy of Hugging Face's attention_factor), else from
//     rope.scaling.yarn_log_multiplier (DeepSeek: 0.1·mscale_all_dim, which
//     llama.cpp divides by 0.1), else 0.1·ln s + 1. llama.cpp multiplies
//     every attention factor by rope.scaling.attn_factor, and so does
//     ropegen. yarn's ramp bounds are rounded as ggml rounds them, except
//     for gpt-oss (see ggufArchs).
//   - The tensor rope_freqs.weight (Llama 3.1's llama3 scaling as
//     convert_hf_to_gguf.py stores it: RotaryDim/2 float32 factors) becomes
//     Scaling.FreqFactors, by which ggml divides θ_i. The tensors
//     rope_factors_short.weight and rope_factors_long.weight (Phi-3) make
//     the scaling longrope, with rope.scaling.original_context_length and
//     the attention factor rope.scaling.attn_factor (else 1).
//   - QKScale: the factor by which llama.cpp's graph multiplies q·k where
//     it is not 1/sqrt(head dim) (qkScale): for MLA (deepseek2)
//     mscale²/sqrt(attention.key_length_mla), mscale from
//     rope.scaling.yarn_log_multiplier and the factor; for the 27B of
//     gemma2 and gemma3 1/sqrt(embedding_length/head_count); for granite
//     attention.scale.
//   - Layout and axes: from llama.cpp's rope type for the architecture
//     (llama_model_rope_type; ggufArchs is ropegen's copy):
//     LLAMA_ROPE_TYPE_NORM pairs (2i, 2i+1), interleaved; NEOX pairs
//     (i, i+R/2), neox; MROPE and IMROPE are neox with
//     rope.dimension_sections (time, height, width, and a fourth that must
//     be 0), sectioned (AxesMRoPE) or interleaved (AxesInterleaved). An
//     architecture llama.cpp runs with no RoPE (NONE) is refused.
//
// A key under "<arch>.rope." that ropegen does not know is refused, rather
// than ignored where it may change the frequencies, and so is a value it
// cannot represent. Like LoadHFConfigWith, the result is not validated:
// Spec.Validate (or Resolve) does.
type GGUFOptions struct {
	// Local selects the RoPE of the local (sliding-window) layers of an
	// architecture whose layers use two RoPEs (gemma3: base
	// rope.freq_base_swa, else llama.cpp's 10000, and no scaling); the
	// default is the global layers' RoPE.
	Local bool
	// Layout, when not empty, is the layout the caller will set (the
	// -layout flag): an architecture missing from ropegen's table is then
	// read (as llama.cpp's NORM for Interleaved, NEOX for NeoX) instead of
	// refused.
	Layout Layout
}

// GGUFInfo is what LoadGGUFWith learned about the model besides the spec.
type GGUFInfo struct {
	Arch          string // general.architecture
	Version       uint32 // the GGUF version, 2 or 3
	RopeType      string // llama.cpp's rope type for Arch: "norm", "neox", "mrope" or "imrope"
	ContextLength int    // <arch>.context_length, the context the model was trained for (also Spec.MaxPositions); 0 when absent
	// Notes say how the kernel sits in the model (which pairs, which of two
	// RoPEs, MLA's rotary part, where the factors came from), for -explain.
	Notes []string
}

// llama.cpp's rope types (include/llama.h, LLAMA_ROPE_TYPE_*).
const (
	ggufNorm   = "norm"   // pairs (2i, 2i+1)
	ggufNeoX   = "neox"   // pairs (i, i+R/2)
	ggufMRoPE  = "mrope"  // neox, sectioned multi-axis
	ggufIMRoPE = "imrope" // neox, interleaved multi-axis
	ggufNone   = "none"   // no RoPE
)

// ggufArch is an architecture's entry in ggufArchs.
type ggufArch struct {
	rope string // ggufNorm, ggufNeoX, ggufMRoPE, ggufIMRoPE, or ggufNone for a refusal
	// permuted: Hugging Face's checkpoint rotates halves (rotate_half) and
	// convert_hf_to_gguf.py permutes the Q and K weights into adjacent
	// pairs (LlamaModel.permute), so the file is NORM where the config is
	// neox.
	permuted bool
	mla      bool // the kernel is the rotary part of each head (rope.dimension_count)
	// logMulTenth: rope.scaling.yarn_log_multiplier holds 0.1·mscale_all_dim
	// and mscale equals mscale_all_dim (llama.cpp's
	// [TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]); other architectures store
	// mscale_all_dim itself, with mscale 1.
	logMulTenth bool
	local       float64 // the local layers' base when rope.freq_base_swa is absent; 0: one RoPE
	unrounded   bool    // yarn's ramp bounds are not rounded (the model's reference; ggml rounds them)
	note        string  // said of every file of the architecture
	// qk is how llama.cpp's graph scales q·k (qkScale): ggufQKHead
	// (1/sqrt(head dim)) when empty.
	qk string
	// qkBig: with qk ggufQKGemma, the block_count of the model size
	// (27B) whose scale is 1/sqrt(embedding_length/head_count).
	qkBig int
}

// How llama.cpp's graph of an architecture scales q·k (ggufArch.qk).
const (
	ggufQKHead  = ""      // kq_scale 1/sqrt(n_embd_head_k)
	ggufQKMLA   = "mla"   // deepseek2: mscale²/sqrt(n_embd_head_k_mla) (mlaQKScale)
	ggufQKGemma = "gemma" // f_attention_scale: 1/sqrt(n_embd/n_head) for the 27B, else 1/sqrt(n_embd_head_k)
	ggufQKKey   = "key"   // f_attention_scale from attention.scale (granite), which llama.cpp requires
)

// ggufArchs is ropegen's table of GGUF architectures: llama.cpp's rope
// type for each (src/llama-model.cpp, llama_model_rope_type), for the
// architectures whose RoPE keys ropegen reads as described at GGUFOptions.
// An architecture that is not here is refused unless the caller gives the
// layout (GGUFOptions.Layout).
var ggufArchs = map[string]ggufArch{
	// LLAMA_ROPE_TYPE_NORM: adjacent pairs.
	"llama":      {rope: ggufNorm, permuted: true},                // LLaMA, Mistral, Llama 3.x; convert_hf_to_gguf.py LlamaModel permutes q/k
	"deci":       {rope: ggufNorm, permuted: true},                // DeciModel permutes as LlamaModel
	"granite":    {rope: ggufNorm, permuted: true, qk: ggufQKKey}, // GraniteModel is a LlamaModel
	"granitemoe": {rope: ggufNorm, permuted: true, qk: ggufQKKey},
	"smollm3": {rope: ggufNorm, permuted: true,
		note: "NoPE layers: llama.cpp gives every fourth layer (n_no_rope_layer_step 4) no position embedding; this kernel is for the others"},
	"arcee":     {rope: ggufNorm, permuted: true},
	"internlm2": {rope: ggufNorm, permuted: true}, // InternLM2Model permutes q/k
	"olmo":      {rope: ggufNorm, permuted: true}, // OlmoModel permutes q/k
	"llama4": {rope: ggufNorm, // Llama4Model: undo_permute = False; Hugging Face's Llama 4 is interleaved too
		note: "NoPE layers (iRoPE): llama.cpp gives every fourth layer no position embedding (n_no_rope_layer_step 4, unless attention.sliding_window is 0); this kernel is for the others"},
	"command-r": {rope: ggufNorm}, // Cohere: interleaved in Hugging Face too
	"cohere2": {rope: ggufNorm,
		note: "Cohere 2: llama.cpp rotates only in the sliding-window layers; the global layers use no position embedding"},
	"glm4":      {rope: ggufNorm},                                              // GLM-4: interleaved on the rotary part in Hugging Face too
	"deepseek":  {rope: ggufNorm},                                              // DeepSeek (v1)
	"deepseek2": {rope: ggufNorm, mla: true, logMulTenth: true, qk: ggufQKMLA}, // DeepSeek-V2/V3, Kimi K2: MLA, interleaved in Hugging Face too
	// LLAMA_ROPE_TYPE_NEOX: pairs (i, i+R/2), as Hugging Face's rotate_half.
	"qwen":       {rope: ggufNeoX},
	"qwen2":      {rope: ggufNeoX},
	"qwen2moe":   {rope: ggufNeoX},
	"qwen3":      {rope: ggufNeoX},
	"qwen3moe":   {rope: ggufNeoX},
	"phi2":       {rope: ggufNeoX},
	"phi3":       {rope: ggufNeoX},
	"phimoe":     {rope: ggufNeoX},
	"gemma":      {rope: ggufNeoX},
	"gemma2":     {rope: ggufNeoX, qk: ggufQKGemma, qkBig: 46},
	"gemma3":     {rope: ggufNeoX, local: 10000, qk: ggufQKGemma, qkBig: 62}, // llama_model::load_hparams: rope_freq_base_train_swa = 10000, scale 1
	"stablelm":   {rope: ggufNeoX},
	"gptneox":    {rope: ggufNeoX},
	"starcoder2": {rope: ggufNeoX},
	"olmo2":      {rope: ggufNeoX},
	"olmoe":      {rope: ggufNeoX},
	"exaone":     {rope: ggufNeoX},
	"nemotron":   {rope: ggufNeoX},
	"falcon":     {rope: ggufNeoX},
	"dbrx":       {rope: ggufNeoX},
	"seed_oss":   {rope: ggufNeoX},
	"gpt-oss": {rope: ggufNeoX, unrounded: true,
		note: "gpt-oss: the YaRN ramp bounds are left unrounded, as in the model's reference code and Hugging Face's config (truncate false); ggml's ggml_rope_yarn_corr_dims rounds them"},
	// LLAMA_ROPE_TYPE_NONE: no RoPE; refused.
	"gpt2": {rope: ggufNone}, "mpt": {rope: ggufNone}, "refact": {rope: ggufNone},
	"bloom": {rope: ggufNone}, "jais": {rope: ggufNone}, "t5": {rope: ggufNone}, "t5encoder": {rope: ggufNone},
	"mamba": {rope: ggufNone}, "mamba2": {rope: ggufNone}, "jamba": {rope: ggufNone},
	"rwkv6": {rope: ggufNone}, "rwkv7": {rope: ggufNone},
	// LLAMA_ROPE_TYPE_MROPE and IMROPE: neox with rope.dimension_sections.
	"qwen2vl":    {rope: ggufMRoPE}, // Qwen2-VL and Qwen2.5-VL text models
	"qwen3vl":    {rope: ggufIMRoPE},
	"qwen3vlmoe": {rope: ggufIMRoPE},
}

// ggufKeys are the keys under "<arch>." that the mapping reads; any other
// key under "<arch>.rope." is refused.
var ggufKeys = map[string]bool{
	"context_length": true, "embedding_length": true,
	"attention.head_count": true, "attention.key_length": true, "attention.key_length_mla": true,
	"attention.scale": true, "block_count": true,
	"rope.dimension_count": true, "rope.dimension_count_swa": true, "rope.dimension_sections": true,
	"rope.freq_base": true, "rope.freq_base_swa": true, "rope.scale_linear": true,
	"rope.scaling.type": true, "rope.scaling.factor": true, "rope.scaling.attn_factor": true,
	"rope.scaling.original_context_length": true, "rope.scaling.finetuned": true,
	"rope.scaling.yarn_log_multiplier": true, "rope.scaling.yarn_ext_factor": true,
	"rope.scaling.yarn_attn_factor": true, "rope.scaling.yarn_beta_fast": true, "rope.scaling.yarn_beta_slow": true,
}

func ggufKeyRead(suffix string) bool { return ggufKeys[suffix] }

// ggufMap is the state of mapping one file.
type ggufMap struct {
	g      *ggufReader
	f      *ggufFile
	prefix string
}

func (m *ggufMap) errf(suffix, format string, args ...any) error {
	off := int64(-1)
	if v, ok := m.f.kv[suffix]; ok {
		off = v.off
	}
	return m.g.errf(off, m.prefix+suffix, format, args...)
}

// num returns the number at suffix: any integer or float type.
func (m *ggufMap) num(suffix string) (float64, bool, error) {
	v, ok := m.f.kv[suffix]
	if !ok {
		return 0, false, nil
	}
	if v.typ == ggufString || v.typ == ggufArray || v.typ == ggufBool {
		return 0, true, m.errf(suffix, "%s: want a number", v.show())
	}
	return v.num, true, nil
}

// float returns the number at suffix, which must be finite and > 0.
func (m *ggufMap) float(suffix string) (float64, bool, error) {
	f, ok, err := m.num(suffix)
	if ok && err == nil && !finitePos(f) {
		err = m.errf(suffix, "%s: want a finite number > 0", m.f.kv[suffix].show())
	}
	return f, ok, err
}

// count returns the positive integer at suffix, at most max; an array
// gives its first element (layer 0, as llama.cpp's n_head()).
func (m *ggufMap) count(suffix string, max int) (int, bool, error) {
	v, ok := m.f.kv[suffix]
	if !ok {
		return 0, false, nil
	}
	x := v.int
	switch {
	case v.typ == ggufArray && len(v.ints) > 0:
		x = v.ints[0]
	case v.typ == ggufArray:
		return 0, true, m.errf(suffix, "an empty array: want a positive integer")
	case !v.isInt():
		return 0, true, m.errf(suffix, "%s: want a positive integer", v.show())
	}
	if v.big || x <= 0 || x > int64(max) {
		return 0, true, m.errf(suffix, "%s: want a positive integer, at most %d", v.show(), max)
	}
	return int(x), true, nil
}

// ggufSpec turns a parsed file into a spec, reading the factor tensors it
// needs.
func ggufSpec(g *ggufReader, f *ggufFile, opt GGUFOptions) (Spec, GGUFInfo, error) {
	fail := func(err error) (Spec, GGUFInfo, error) { return Spec{}, GGUFInfo{}, err }
	m := &ggufMap{g: g, f: f, prefix: f.arch + "."}
	spec := DefaultSpec()
	info := GGUFInfo{Arch: f.arch, Version: f.version}
	arch, err := m.layout(&spec, &info, opt.Layout)
	if err != nil {
		return fail(err)
	}
	if len(f.unknown) > 0 {
		u := f.unknown[0]
		var names []string
		for k := range ggufKeys {
			if strings.HasPrefix(k, "rope.") {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		return fail(g.errf(u.off, u.key, "a RoPE key ropegen does not know (it reads %s); rather than ignore a key that may change the frequencies, ropegen refuses the file: give the spec with flags instead", strings.Join(names, ", ")))
	}
	if ctx, ok, err := m.count("context_length", math.MaxInt32); err != nil {
		return fail(err)
	} else if ok {
		info.ContextLength = ctx
		spec.MaxPositions = ctx // as -hf-config's max_position_embeddings
	}
	if err := m.headDims(&spec, &info, arch); err != nil {
		return fail(err)
	}
	if b, ok, err := m.num("rope.freq_base"); err != nil {
		return fail(err)
	} else if ok {
		spec.Base = b
	}
	if err := m.scaling(&spec, &info, arch); err != nil {
		return fail(err)
	}
	if spec.QKScale, err = m.qkScale(&info, arch); err != nil {
		return fail(err)
	}
	if err := m.local(&spec, &info, arch, opt.Local); err != nil {
		return fail(err)
	}
	if err := m.axes(&spec, &info, arch); err != nil {
		return fail(err)
	}
	return spec, info, nil
}

// layout returns the file's architecture entry (for one ropegen's table
// lacks, the rope type of the layout given, if any) and sets the layout
// it gives, with a note saying why.
func (m *ggufMap) layout(s *Spec, info *GGUFInfo, given Layout) (ggufArch, error) {
	name := m.f.arch
	arch, known := ggufArchs[name]
	switch {
	case !known && given == "":
		return arch, m.g.errf(-1, "general.architecture", "%q is not in ropegen's table of llama.cpp architectures, so the pair layout is unknown: give -layout %s if llama.cpp runs it with LLAMA_ROPE_TYPE_NORM (pairs (2i, 2i+1)), -layout %s if with LLAMA_ROPE_TYPE_NEOX (pairs (i, i+R/2))", name, Interleaved, NeoX)
	case arch.rope == ggufNone:
		return arch, m.g.errf(-1, "general.architecture", "%q: llama.cpp runs it with no RoPE (LLAMA_ROPE_TYPE_NONE): there is no rotation to generate", name)
	case !known:
		arch = ggufArch{rope: ggufNorm}
		if given == NeoX {
			arch.rope = ggufNeoX
		}
	}
	info.RopeType = arch.rope
	s.Layout = NeoX
	if arch.rope == ggufNorm {
		s.Layout = Interleaved
	}
	switch {
	case !known:
		info.Notes = append(info.Notes, fmt.Sprintf("general.architecture %q is not in ropegen's table: read with the layout given (-layout %s)", name, given))
	case arch.permuted:
		info.Notes = append(info.Notes, fmt.Sprintf("pairs (2i, 2i+1): llama.cpp runs %q with LLAMA_ROPE_TYPE_NORM, and convert_hf_to_gguf.py permuted the Q and K weights of the Hugging Face checkpoint (rotate_half, pairs (i, i+R/2)) into that order; rotate this file's heads interleaved", name))
	case arch.rope == ggufNorm:
		info.Notes = append(info.Notes, fmt.Sprintf("pairs (2i, 2i+1): llama.cpp runs %q with LLAMA_ROPE_TYPE_NORM", name))
	default:
		info.Notes = append(info.Notes, fmt.Sprintf("pairs (i, i+R/2): llama.cpp runs %q with LLAMA_ROPE_TYPE_%s", name, strings.ToUpper(arch.rope)))
	}
	if arch.note != "" {
		info.Notes = append(info.Notes, arch.note)
	}
	return arch, nil
}

// headDims reads the head and rotary dims into s: for MLA the rotary part
// of each head (rope.dimension_count), else attention.key_length (or
// embedding_length/attention.head_count) with rope.dimension_count's
// rotary part.
func (m *ggufMap) headDims(s *Spec, info *GGUFInfo, arch ggufArch) error {
	rot, rotOK, err := m.count("rope.dimension_count", MaxHeadDim)
	if arch.mla {
		switch {
		case err != nil:
			return err
		case !rotOK:
			return m.errf("rope.dimension_count", "missing: MLA (%s) rotates the rope.dimension_count values of each head that carry the position", m.f.arch)
		}
		s.HeadDim = rot
		info.Notes = append(info.Notes, fmt.Sprintf("MLA: this kernel rotates the rotary part of each query and key head, the LAST rope.dimension_count = %d values; the first values are not rotated. Rotate it in place with a Strides view that starts at the rotary part. The softmax scale is the attention's, not the kernel's", rot))
		return nil
	}
	headDim, hdKey, herr := m.headDim()
	switch {
	case herr != nil:
		return herr
	case err != nil:
		return err
	case headDim > MaxHeadDim:
		return m.errf(hdKey, "gives a head dim of %d (over attention.head_count): ropegen generates at most %d", headDim, MaxHeadDim)
	case rotOK && rot > headDim:
		return m.errf("rope.dimension_count", "%d exceeds the head dim %d (%s)", rot, headDim, hdKey)
	}
	s.HeadDim = headDim
	if rotOK && rot != headDim {
		s.RotaryDim = rot
	}
	return nil
}

// headDim returns the head dim and the key it came from:
// attention.key_length, else embedding_length/attention.head_count.
func (m *ggufMap) headDim() (int, string, error) {
	const key = "attention.key_length"
	hd, ok, err := m.count(key, MaxHeadDim)
	if err != nil || ok {
		return hd, key, err
	}
	embd, eOK, err := m.count("embedding_length", math.MaxInt32)
	if err != nil {
		return 0, "", err
	}
	heads, nOK, err := m.count("attention.head_count", math.MaxInt32)
	switch {
	case err != nil:
		return 0, "", err
	case !eOK:
		return 0, "", m.errf("embedding_length", "missing, and so is attention.key_length: ropegen needs the head dim")
	case !nOK:
		return 0, "", m.errf("attention.head_count", "missing, and so is attention.key_length: ropegen needs the head dim")
	case embd%heads != 0:
		return 0, "", m.errf("embedding_length", "%d is not a multiple of attention.head_count %d, and attention.key_length is absent", embd, heads)
	}
	return embd / heads, "embedding_length", nil
}

// local handles the local (sliding-window) layers of a two-RoPE
// architecture: with local set, s becomes their RoPE (base
// rope.freq_base_swa or the architecture's, no scaling, rotary dim
// rope.dimension_count_swa); either way a note says which RoPE s is.
func (m *ggufMap) local(s *Spec, info *GGUFInfo, arch ggufArch, local bool) error {
	baseSWA, swaOK, err := m.float("rope.freq_base_swa")
	if err != nil {
		return err
	}
	switch {
	case local && arch.local == 0:
		return m.g.errf(-1, "", "-rope-local: llama.cpp gives every layer of %q one RoPE (ropegen knows a second, sliding-window RoPE only for gemma3); leave out -rope-local", m.f.arch)
	case arch.local == 0:
		return nil
	}
	base, from := arch.local, fmt.Sprintf("llama.cpp's %s for %s", shortFloat(arch.local), m.f.arch)
	if swaOK {
		base, from = baseSWA, m.prefix+"rope.freq_base_swa"
	}
	if !local {
		info.Notes = append(info.Notes, fmt.Sprintf("two RoPEs: this is the global (full-attention) layers' (base %s), written by default; -rope-local writes the local (sliding-window) layers' (base %s from %s, no scaling)", shortFloat(s.Base), shortFloat(base), from))
		return nil
	}
	info.Notes = append(info.Notes, fmt.Sprintf("two RoPEs: this is the local (sliding-window) layers' (base %s from %s, no scaling), written with -rope-local; without it ropegen writes the global layers' (base %s with the file's scaling)", shortFloat(base), from, shortFloat(s.Base)))
	s.Base = base
	s.Scaling = Scaling{Type: ScalingNone, Truncate: true}
	r, ok, err := m.count("rope.dimension_count_swa", MaxHeadDim)
	if err != nil {
		return err
	}
	if ok {
		s.RotaryDim = r
		if r == s.HeadDim {
			s.RotaryDim = 0
		}
	}
	return nil
}

// scaling reads the scaling keys and the factor tensors into s.
func (m *ggufMap) scaling(s *Spec, info *GGUFInfo, arch ggufArch) error {
	const typeKey = "rope.scaling.type"
	typ, err := m.scalingType()
	if err != nil {
		return err
	}
	factor, factorOK, err := m.factor()
	if err != nil {
		return err
	}
	attnK, attnKOK, err := m.float("rope.scaling.attn_factor")
	if err != nil {
		return err
	}
	if ext, ok, err := m.num("rope.scaling.yarn_ext_factor"); err != nil {
		return err
	} else if ok && ext != 1 && typ == "yarn" {
		return m.errf("rope.scaling.yarn_ext_factor", "%s: ropegen's YaRN mixes with the full ramp (ext_factor 1)", shortFloat(ext))
	}
	sc := Scaling{Type: ScalingNone, Truncate: true}
	switch typ {
	case "none":
	case "linear":
		if factorOK && factor != 1 {
			sc.Type, sc.Factor = ScalingLinear, factor
		}
	case "yarn":
		sc.Type, sc.Factor = ScalingYaRN, 1 // llama.cpp: no factor is freq_scale 1
		if factorOK {
			sc.Factor = factor
		}
		if err := m.yarn(&sc, typ, arch); err != nil {
			return err
		}
		if attnKOK && attnK != 1 {
			// llama.cpp: yarn_attn_factor *= rope_attn_factor.
			base := YaRNMScale(sc.Factor, 1)
			switch {
			case sc.AttnFactor != 0:
				base = sc.AttnFactor
			case sc.MScale != 0:
				base = YaRNMScale(sc.Factor, sc.MScale) / YaRNMScale(sc.Factor, sc.MScaleAllDim)
			}
			sc.AttnFactor, sc.MScale, sc.MScaleAllDim = base*attnK, 0, 0
		}
	case "longrope":
		// The factors come from the tensors below.
	default:
		return m.errf(typeKey, "%q: llama.cpp knows \"none\", \"linear\", \"yarn\" and \"longrope\"", typ)
	}
	if err := m.factorTensors(&sc, s.Rotary()/2, typ, info); err != nil {
		return err
	}
	if attnKOK && attnK != 1 && sc.Type != ScalingYaRN && sc.Type != ScalingLongRoPE {
		return m.errf("rope.scaling.attn_factor", "%s with scaling %s: ropegen's %s RoPE has no attention factor; give the spec with flags", shortFloat(attnK), sc.Kind(), sc.Kind())
	}
	s.Scaling = sc
	return nil
}

// scalingType returns rope.scaling.type, "linear" when absent as in
// llama.cpp.
func (m *ggufMap) scalingType() (string, error) {
	const key = "rope.scaling.type"
	v, ok := m.f.kv[key]
	switch {
	case !ok:
		return "linear", nil
	case v.typ != ggufString:
		return "", m.errf(key, "%s: want a string", v.show())
	}
	return v.str, nil
}

// factor returns the scaling factor s: rope.scaling.factor, else the older
// rope.scale_linear; 0 is none, as llama.cpp's ropescale == 0.
func (m *ggufMap) factor() (float64, bool, error) {
	factor, factorOK := 0.0, false
	for _, k := range []string{"rope.scaling.factor", "rope.scale_linear"} {
		f, ok, err := m.num(k)
		switch {
		case err != nil:
			return 0, false, err
		case ok && f != 0 && !finitePos(f):
			return 0, false, m.errf(k, "%s: want a finite number > 0 (or 0 for none)", m.f.kv[k].show())
		case ok && f != 0 && !factorOK:
			factor, factorOK = f, true
		}
	}
	return factor, factorOK, nil
}

// origCtx returns the original context length of scaling typ:
// rope.scaling.original_context_length, else context_length.
func (m *ggufMap) origCtx(typ string) (int, error) {
	if L, ok, err := m.count("rope.scaling.original_context_length", math.MaxInt32); err != nil || ok {
		return L, err
	}
	if L, ok, err := m.count("context_length", math.MaxInt32); err != nil || ok {
		return L, err
	}
	return 0, m.errf("rope.scaling.original_context_length", "missing, and so is context_length: scaling %s needs the original context length", typ)
}

// yarn reads YaRN's keys into sc, whose factor is set: the original
// context, the betas, the ramp's rounding and the attention factor,
// rope.scaling.yarn_attn_factor or else from
// rope.scaling.yarn_log_multiplier (mscaleAllDim).
func (m *ggufMap) yarn(sc *Scaling, typ string, arch ggufArch) error {
	var err error
	if sc.OrigCtx, err = m.origCtx(typ); err != nil {
		return err
	}
	if sc.BetaFast, _, err = m.float("rope.scaling.yarn_beta_fast"); err != nil {
		return err
	}
	if sc.BetaSlow, _, err = m.float("rope.scaling.yarn_beta_slow"); err != nil {
		return err
	}
	sc.Truncate = !arch.unrounded
	attn, attnOK, err := m.float("rope.scaling.yarn_attn_factor")
	if err != nil {
		return err
	}
	if attnOK {
		sc.AttnFactor = attn
		_, _, err := m.num("rope.scaling.yarn_log_multiplier")
		return err
	}
	mad, err := m.mscaleAllDim(arch)
	if err != nil {
		return err
	}
	if mad != 0 {
		// llama-context.cpp: A = g(s, mscale)/g(s, mscale_all_dim),
		// mscale_all_dim from the key and mscale 1, or mscale_all_dim
		// itself for deepseek2.
		sc.MScale, sc.MScaleAllDim = 1, mad
		if arch.logMulTenth {
			sc.MScale = mad
		}
	}
	return nil
}

// mscaleAllDim returns llama.cpp's hparams.rope_yarn_log_mul, YaRN's
// mscale_all_dim: rope.scaling.yarn_log_multiplier, divided by 0.1 for the
// architectures whose converter multiplied it by 0.1 (logMulTenth,
// llama.cpp's [TAG_DEEPSEEK2_YARN_LOG_MUL_FIX]); 0 when the key is absent
// or 0, as llama.cpp's default.
func (m *ggufMap) mscaleAllDim(arch ggufArch) (float64, error) {
	const key = "rope.scaling.yarn_log_multiplier"
	logMul, ok, err := m.num(key)
	if err != nil || !ok || logMul == 0 {
		return 0, err
	}
	mad := logMul
	if arch.logMulTenth {
		// llama.cpp divides the float it read by 0.1f, in float32: the
		// converter's float32(0.1·1) gives 1 exactly, as the config has it.
		mad = float64(float32(logMul) / float32(0.1))
	}
	if !finitePos(mad) {
		return 0, m.errf(key, "%s: want a finite number > 0 (or 0 for none)", shortFloat(logMul))
	}
	return mad, nil
}

// qkScale returns Spec.QKScale: the factor by which llama.cpp's graph of
// the architecture multiplies q·k (its kq_scale, or f_attention_scale),
// 0 when that is 1/sqrt(head dim). A note says how, when it is not.
func (m *ggufMap) qkScale(info *GGUFInfo, arch ggufArch) (float64, error) {
	var (
		scale float64
		how   string
	)
	switch arch.qk {
	case ggufQKHead:
		return 0, nil
	case ggufQKMLA:
		var err error
		if scale, how, err = m.mlaQKScale(arch); err != nil {
			return 0, err
		}
	case ggufQKGemma:
		// llama.cpp's load_hparams for gemma2 and gemma3 (after
		// gemma_pytorch's config): the 27B by its block count.
		n, ok, err := m.count("block_count", math.MaxInt32)
		if err != nil || !ok || n != arch.qkBig {
			return 0, err
		}
		embd, _, err := m.count("embedding_length", math.MaxInt32)
		if err != nil {
			return 0, err
		}
		heads, _, err := m.count("attention.head_count", math.MaxInt32)
		if err != nil {
			return 0, err
		}
		if embd == 0 || heads == 0 {
			return 0, m.errf("embedding_length", "missing, or attention.head_count is: llama.cpp scales q·k of the %d-layer %s (27B) by 1/sqrt(embedding_length/head_count)", n, m.f.arch)
		}
		scale = 1 / math.Sqrt(float64(embd/heads))
		how = fmt.Sprintf("1/sqrt(embedding_length/head_count) = 1/sqrt(%d/%d) for its 27B (block_count %d), not 1/sqrt(head dim)", embd, heads, n)
	case ggufQKKey:
		f, ok, err := m.float("attention.scale")
		if err != nil {
			return 0, err
		}
		if !ok {
			return 0, m.errf("attention.scale", "missing: llama.cpp's %s multiplies q·k by it and refuses a file without it", m.f.arch)
		}
		scale, how = f, "attention.scale (f_attention_scale)"
	}
	info.Notes = append(info.Notes, fmt.Sprintf("q·k scale: llama.cpp's %s graph multiplies q·k by %s = %s: Runtime.QKScale carries it; the attention applies it, not this package", m.f.arch, how, shortFloat(scale)))
	return scale, nil
}

// mlaQKScale returns the factor by which llama.cpp's MLA graph
// (deepseek2) multiplies q·k, and how. llama.cpp (ggml-org/llama.cpp at
// 07bede6a8f329362c72d46a0bc9756b6a12c22eb, src/models/deepseek2.cpp)
// computes
//
//	mscale   = attn_factor_org·(1 + 0.1·rope_yarn_log_mul·ln(1/freq_scale))
//	kq_scale = mscale²/sqrt(n_embd_head_k_mla)
//
// where n_embd_head_k_mla is attention.key_length_mla (qk_nope_head_dim +
// qk_rope_head_dim), else the head dim attention.key_length or
// embedding_length/head_count; rope_yarn_log_mul is mscale_all_dim
// (mscaleAllDim: 0 without the key, as in GGUFs written before
// convert_hf_to_gguf.py wrote it), freq_scale is 1/s (s the file's factor;
// 1 with scaling none) and attn_factor_org is the attention factor the
// rotation applies. For yarn that is llama-context.cpp's
// g(s, mscale)/g(s, mscale_all_dim) with mscale = mscale_all_dim, which is
// 1, or without the key g(s, 1) = 0.1·ln s + 1, times
// rope.scaling.attn_factor (the graph's attn_factor·(1 + 0.1·ln(1/freq_scale))
// undoes llama-context.cpp's division by the same); without yarn it is
// rope.scaling.attn_factor·(1 + 0.1·ln s). With DeepSeek-V3's file
// (key_length_mla 192, factor 40, yarn_log_multiplier 0.1) that is
// (0.1·ln 40 + 1)²/sqrt(192), as transformers' yarn_apply_mscale gives it
// from the config.
func (m *ggufMap) mlaQKScale(arch ggufArch) (float64, string, error) {
	typ, err := m.scalingType()
	if err != nil {
		return 0, "", err
	}
	s, ok, err := m.factor()
	if err != nil {
		return 0, "", err
	}
	if !ok || typ == "none" {
		s = 1
	}
	attnK, attnKOK, err := m.float("rope.scaling.attn_factor")
	if err != nil {
		return 0, "", err
	}
	if !attnKOK {
		attnK = 1
	}
	mad, err := m.mscaleAllDim(arch)
	if err != nil {
		return 0, "", err
	}
	d, dKey, err := m.count("attention.key_length_mla", math.MaxInt32)
	if err == nil && !dKey {
		d, _, err = m.headDim()
	}
	if err != nil {
		return 0, "", err
	}
	ln := exact.Ln(s)
	org := attnK * (float64(0.1*ln) + 1)
	if typ == "yarn" {
		org = attnK
		if mad == 0 {
			org = attnK * YaRNMScale(s, 1)
		}
	}
	ms := org * (float64(0.1*mad*ln) + 1)
	scale := 1 / math.Sqrt(float64(d)) * (ms * ms)
	how := fmt.Sprintf("mscale²/sqrt(d) = (A·(0.1·mscale_all_dim·ln s + 1))²/sqrt(d) = (%s·(0.1·%s·ln %s + 1))²/sqrt(%d), A the rotation's attention factor, mscale_all_dim rope.scaling.yarn_log_multiplier/0.1 (0 without the key) and d attention.key_length_mla (qk_nope_head_dim + qk_rope_head_dim)",
		shortFloat(org), shortFloat(mad), shortFloat(s), d)
	return scale, how, nil
}

// factorTensors reads the per-pair factor tensors into sc (half values
// each): rope_freqs.weight, ggml's divisors of θ_i, becomes FreqFactors;
// rope_factors_short.weight and rope_factors_long.weight (both or neither)
// make sc longrope, which another scaling typ excludes.
func (m *ggufMap) factorTensors(sc *Scaling, half int, typ string, info *GGUFInfo) error {
	freqs, freqsOK, err := m.factorTensor("rope_freqs.weight", half)
	if err != nil {
		return err
	}
	short, shortOK, err := m.factorTensor("rope_factors_short.weight", half)
	if err != nil {
		return err
	}
	long, longOK, err := m.factorTensor("rope_factors_long.weight", half)
	if err != nil {
		return err
	}
	switch {
	case shortOK != longOK:
		missing := "rope_factors_long.weight"
		if longOK {
			missing = "rope_factors_short.weight"
		}
		return m.g.tensorErr(-1, missing, "missing: longrope needs both rope_factors_short.weight and rope_factors_long.weight")
	case shortOK && freqsOK:
		return m.g.tensorErr(m.f.tensors["rope_freqs.weight"].infoAt, "rope_freqs.weight", "given with longrope's rope_factors_short/long.weight: ropegen reads one set of per-pair factors")
	case shortOK && sc.Type != ScalingNone:
		return m.g.tensorErr(m.f.tensors["rope_factors_short.weight"].infoAt, "rope_factors_short.weight", "with rope.scaling.type %q: ropegen reads longrope's factors only without another scaling", typ)
	case shortOK:
		if err := m.longrope(sc, short, long, typ, info); err != nil {
			return err
		}
	case typ == "longrope":
		return m.errf("rope.scaling.type", "\"longrope\", but the file has no rope_factors_short.weight and rope_factors_long.weight tensors")
	}
	if freqsOK {
		sc.FreqFactors = freqs
		info.Notes = append(info.Notes, "per-pair factors: the float32 tensor rope_freqs.weight (llama3 scaling as convert_hf_to_gguf.py stores it for Llama 3.1), by which ggml divides θ_i")
	}
	return nil
}

// longrope makes sc longrope with the factors short and long (Phi-3), the
// original context, the factor context_length/L when the context is
// longer, and the attention factor rope.scaling.attn_factor, else 1.
func (m *ggufMap) longrope(sc *Scaling, short, long []float64, typ string, info *GGUFInfo) error {
	L, err := m.origCtx(typ)
	if err != nil {
		return err
	}
	attnK, attnKOK, err := m.float("rope.scaling.attn_factor")
	if err != nil {
		return err
	}
	*sc = Scaling{Type: ScalingLongRoPE, OrigCtx: L, ShortFactor: short, LongFactor: long, AttnFactor: 1, Truncate: true}
	if attnKOK {
		sc.AttnFactor = attnK
	}
	if info.ContextLength > L {
		sc.Factor = float64(info.ContextLength) / float64(L)
	}
	from := "rope.scaling.attn_factor"
	if !attnKOK {
		from = "1: the file has no rope.scaling.attn_factor"
	}
	info.Notes = append(info.Notes, fmt.Sprintf("longrope: the short and long factors are the float32 tensors rope_factors_short.weight and rope_factors_long.weight (as convert_hf_to_gguf.py stores Phi-3's short_factor and long_factor); llama.cpp uses the long ones when the context passes %d; the attention factor %s is %s", L, shortFloat(sc.AttnFactor), from))
	return nil
}

// factorTensor reads the per-pair factor tensor name, if the file has it:
// one dimension of half float32 values, each finite and > 0.
func (m *ggufMap) factorTensor(name string, half int) ([]float64, bool, error) {
	t, ok := m.f.tensors[name]
	if !ok {
		return nil, false, nil
	}
	n := uint64(1)
	for _, d := range t.dims {
		n *= d // parse bounded the product
	}
	if len(t.dims) == 0 || t.dims[0] != n {
		return nil, true, m.g.tensorErr(t.infoAt, name, "shape %v: want one dimension of RotaryDim/2 = %d values", t.dims, half)
	}
	if n != uint64(half) {
		return nil, true, m.g.tensorErr(t.infoAt, name, "%d values: want RotaryDim/2 = %d (rope.dimension_count/2)", n, half)
	}
	vals, err := m.g.float32s(m.f, t, half)
	if err != nil {
		return nil, true, err
	}
	for i, v := range vals {
		if !finitePos(v) {
			return nil, true, m.g.tensorErr(t.infoAt, name, "value %d is %v: want a finite number > 0", i, v)
		}
	}
	return vals, true, nil
}

// axes reads rope.dimension_sections for the multi-axis rope types.
func (m *ggufMap) axes(s *Spec, info *GGUFInfo, arch ggufArch) error {
	const key = "rope.dimension_sections"
	v, ok := m.f.kv[key]
	if arch.rope != ggufMRoPE && arch.rope != ggufIMRoPE {
		if ok {
			return m.errf(key, "given for %q, whose llama.cpp rope type is %s: ropegen reads sections only for M-RoPE (qwen2vl, qwen3vl, qwen3vlmoe)", m.f.arch, strings.ToUpper(arch.rope))
		}
		return nil
	}
	if !ok {
		return m.errf(key, "missing: llama.cpp's %s needs the pairs per axis", strings.ToUpper(arch.rope))
	}
	var sec []int64
	switch {
	case v.typ == ggufArray:
		sec = v.ints
	case v.isInt():
		sec = []int64{v.int}
	default:
		return m.errf(key, "%s: want an array of up to 4 pair counts", v.show())
	}
	if len(sec) > 4 {
		return m.errf(key, "%d values: want up to 4 (time, height, width, extra)", len(sec))
	}
	for len(sec) < 4 {
		sec = append(sec, 0)
	}
	half := int64(s.Rotary() / 2)
	for i, x := range sec {
		if x < 0 || x > half {
			return m.errf(key, "value %d is %d: want a count of pairs, 0…%d", i, x, half)
		}
	}
	if sec[3] != 0 {
		return m.errf(key, "%v: the fourth axis has %d pairs; ropegen's M-RoPE has three axes (time, height, width)", sec, sec[3])
	}
	if sum := sec[0] + sec[1] + sec[2]; sum != half {
		return m.errf(key, "%v sum to %d pairs: want RotaryDim/2 = %d", sec, sum, half)
	}
	s.Sections = []int{int(sec[0]), int(sec[1]), int(sec[2])}
	s.Axes = AxesMRoPE
	if arch.rope == ggufIMRoPE {
		s.Axes = AxesInterleaved
		if fourth := imropeFourth(s.Sections, int(half)); slices.Contains(fourth, true) {
			info.Notes = append(info.Notes, fmt.Sprintf("interleaved M-RoPE: pairs %s turn by the time position, as in Hugging Face's apply_interleaved_mrope; ggml's IMROPE turns them by a fourth position, which llama.cpp sets to 0 for text tokens", listPairs(fourth)))
		}
	}
	return nil
}

// imropeFourth returns the pairs that ggml's IMROPE rotates by its fourth
// position (ggml-cpu ops.cpp, the is_imrope branch of the M-RoPE cache)
// with sections sec over half pairs: those not in the height or width
// slices (1, 4, … below 3·sec[1]; 2, 5, … below 3·sec[2]) and not a time
// pair (0, 3, … below 3·sec[0]).
func imropeFourth(sec []int, half int) []bool {
	out := make([]bool, half)
	sum := sec[0] + sec[1] + sec[2]
	for i := range out {
		k := i % sum
		out[i] = !(k%3 == 1 && k < 3*sec[1] || k%3 == 2 && k < 3*sec[2] || k%3 == 0 && k < 3*sec[0])
	}
	return out
}

// listPairs names the true entries of l, "61, 62".
func listPairs(l []bool) string {
	var s []string
	for i, b := range l {
		if b {
			s = append(s, fmt.Sprint(i))
		}
	}
	return strings.Join(s, ", ")
}
