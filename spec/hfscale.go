package spec

import (
	"fmt"
	"math"
)

// The attention's softmax scale, Spec.QKScale: the factor by which a
// model's attention multiplies q·k, as transformers' attention class sets
// it (self.scaling, which it passes to the attention function as scaling)
// at HFSourceCommit. Every attention class that hfLayoutsGen cites was
// read: those not in hfScales scale by head_dim^−0.5 (self.scaling =
// self.head_dim**-0.5, or 1/math.sqrt(head_dim), or the same factor on the
// query before the rotation: ESM, Evolla; or head_dim^−0.25 on the query
// and on the key: OpenAI's privacy filter), which is Spec.QKScale 0.

// hfScaleRule is how an attention class scales q·k.
type hfScaleRule int

const (
	// hfScaleMLA: yarn_apply_mscale(config.rope_parameters,
	// self.qk_head_dim ** (-0.5)), qk_head_dim = qk_nope_head_dim +
	// qk_rope_head_dim: that times YaRN's mscale² (hfMScale2).
	hfScaleMLA hfScaleRule = iota + 1
	// hfScaleQueryPre: config.query_pre_attn_scalar**-0.5.
	hfScaleQueryPre
	// hfScaleOne: 1.0 (the queries and keys are normalized first).
	hfScaleOne
	// hfScaleMultiplier: config.attention_multiplier.
	hfScaleMultiplier
	// hfScaleHalfHead: (self.head_dim / 2) ** -0.5.
	hfScaleHalfHead
	// hfScaleTimesFM: scaling 1.0 in the attention function, the query
	// multiplied by softplus(w)·1.442695041/sqrt(head_dim) per value, w
	// learned: the constant part.
	hfScaleTimesFM
)

// hfScale is a model type's entry in hfScales.
type hfScale struct {
	rule  hfScaleRule
	class string // the attention class, for notes
	// nope, rope: hfScaleMLA's config class defaults of qk_nope_head_dim
	// and qk_rope_head_dim.
	nope, rope int
	// def: the config class's default of query_pre_attn_scalar or
	// attention_multiplier; 0 when the class derives it from the head dim
	// (query_pre_attn_scalar = head_dim, attention_multiplier =
	// head_dim^−0.5).
	def float64
}

// hfScales are the model types whose attention does not scale q·k by
// head_dim^−0.5.
var hfScales = map[string]hfScale{
	// The MLA models; their config classes' qk_nope_head_dim and
	// qk_rope_head_dim defaults. Kimi K2's remote code is DeepSeek-V3's.
	"axk1":          {rule: hfScaleMLA, class: "AXK1Attention", nope: 128, rope: 64},
	"axk2":          {rule: hfScaleMLA, class: "AXK2Attention", nope: 64, rope: 32},
	"deepseek_v2":   {rule: hfScaleMLA, class: "DeepseekV2Attention", nope: 128, rope: 64},
	"deepseek_v3":   {rule: hfScaleMLA, class: "DeepseekV3Attention", nope: 128, rope: 64},
	"deepseek_v32":  {rule: hfScaleMLA, class: "DeepseekV32Attention", nope: 128, rope: 64},
	"glm4_moe_lite": {rule: hfScaleMLA, class: "Glm4MoeLiteAttention", nope: 192, rope: 64},
	"glm_moe_dsa":   {rule: hfScaleMLA, class: "GlmMoeDsaAttention", nope: 192, rope: 64},
	"longcat_flash": {rule: hfScaleMLA, class: "LongcatFlashMLA", nope: 128, rope: 64}, // qk_head_dim when the config sets it
	"minicpm3":      {rule: hfScaleMLA, class: "MiniCPM3Attention", nope: 64, rope: 32},
	"mistral4":      {rule: hfScaleMLA, class: "Mistral4Attention", nope: 64, rope: 64},
	"youtu":         {rule: hfScaleMLA, class: "YoutuAttention", nope: 128, rope: 64},
	"kimi_k2":       {rule: hfScaleMLA, class: "DeepseekV3Attention (Kimi K2's remote modeling_deepseek.py)", nope: 128, rope: 64},

	// query_pre_attn_scalar, 256 by default (Step 3.5: the head dim).
	"gemma2":           {rule: hfScaleQueryPre, class: "Gemma2Attention", def: 256},
	"gemma3":           {rule: hfScaleQueryPre, class: "Gemma3Attention", def: 256},
	"gemma3_text":      {rule: hfScaleQueryPre, class: "Gemma3Attention", def: 256},
	"vaultgemma":       {rule: hfScaleQueryPre, class: "VaultGemmaAttention", def: 256},
	"t5gemma":          {rule: hfScaleQueryPre, class: "T5GemmaSelfAttention", def: 256},
	"t5_gemma_module":  {rule: hfScaleQueryPre, class: "T5GemmaSelfAttention", def: 256},
	"t5gemma2":         {rule: hfScaleQueryPre, class: "T5Gemma2SelfAttention", def: 256},
	"t5gemma2_decoder": {rule: hfScaleQueryPre, class: "T5Gemma2SelfAttention", def: 256},
	"t5gemma2_text":    {rule: hfScaleQueryPre, class: "T5Gemma2SelfAttention", def: 256},
	"step3p5":          {rule: hfScaleQueryPre, class: "Step3p7Attention"},
	"step3p7":          {rule: hfScaleQueryPre, class: "Step3p7Attention"},

	// 1.0: Gemma 3n, Gemma 4 and the models after them normalize q and k;
	// Dia's self-attention.
	"gemma3n":              {rule: hfScaleOne, class: "Gemma3nTextAttention"},
	"gemma3n_text":         {rule: hfScaleOne, class: "Gemma3nTextAttention"},
	"gemma4":               {rule: hfScaleOne, class: "Gemma4TextAttention"},
	"gemma4_text":          {rule: hfScaleOne, class: "Gemma4TextAttention"},
	"gemma4_unified":       {rule: hfScaleOne, class: "Gemma4UnifiedTextAttention"},
	"gemma4_unified_text":  {rule: hfScaleOne, class: "Gemma4UnifiedTextAttention"},
	"diffusion_gemma":      {rule: hfScaleOne, class: "DiffusionGemmaDecoderTextAttention"},
	"diffusion_gemma_text": {rule: hfScaleOne, class: "DiffusionGemmaDecoderTextAttention"},
	"dia":                  {rule: hfScaleOne, class: "DiaSelfAttention"},
	"dia_decoder":          {rule: hfScaleOne, class: "DiaSelfAttention"},

	// attention_multiplier, 1.0 by default (HyperCLOVA X: head_dim^−0.5).
	"granite":          {rule: hfScaleMultiplier, class: "GraniteAttention", def: 1},
	"granitemoe":       {rule: hfScaleMultiplier, class: "GraniteMoeAttention", def: 1},
	"granitemoeshared": {rule: hfScaleMultiplier, class: "GraniteMoeSharedAttention", def: 1},
	"granitemoehybrid": {rule: hfScaleMultiplier, class: "GraniteMoeHybridAttention", def: 1},
	"granite_swa":      {rule: hfScaleMultiplier, class: "GraniteSWAAttention", def: 1},
	"granitemoe_swa":   {rule: hfScaleMultiplier, class: "GraniteMoeSWAAttention", def: 1},
	"hyperclovax":      {rule: hfScaleMultiplier, class: "HyperCLOVAXAttention"},

	"zamba2":     {rule: hfScaleHalfHead, class: "Zamba2Attention"},
	"timesfm2_5": {rule: hfScaleTimesFM, class: "TimesFm2_5Attention"},
}

// hfQKScale returns Spec.QKScale for the attention of model (its part)
// with head dim hd, from config c: 0 when it is hd^−0.5 (also when a rule
// of hfScales gives that number); with a note for -explain when it is
// not. The lightning indexer (part) scores with its
// own head_dim^−0.5 (DeepseekV32Indexer.softmax_scale); the vision
// encoder (Pixtral) with head_dim^−0.5.
func hfQKScale(c hfObj, model, part string, hd int) (float64, string, error) {
	e, ok := hfScales[model]
	if !ok || part == HFPartIndexer || part == HFPartVision {
		return 0, "", nil
	}
	var (
		scale float64
		how   string
	)
	switch e.rule {
	case hfScaleMLA:
		qk, from, err := hfQKHeadDim(c, model, e)
		if err != nil {
			return 0, "", err
		}
		m2, mnote, err := hfMScale2(c, model, e.class)
		if err != nil {
			return 0, "", err
		}
		scale = 1 / math.Sqrt(float64(qk)) * m2
		how = fmt.Sprintf("%s^−0.5", from)
		if m2 != 1 {
			how += " · " + mnote
		}
	case hfScaleQueryPre:
		v, from, err := hfScaleKey(c, "query_pre_attn_scalar", e.def, float64(hd), "the head dim")
		if err != nil {
			return 0, "", err
		}
		scale, how = 1/math.Sqrt(v), fmt.Sprintf("query_pre_attn_scalar^−0.5 = %s^−0.5 (%s)", shortFloat(v), from)
	case hfScaleOne:
		scale, how = 1, "1 (self.scaling = 1.0)"
	case hfScaleMultiplier:
		v, from, err := hfScaleKey(c, "attention_multiplier", e.def, 1/math.Sqrt(float64(hd)), "head_dim^−0.5")
		if err != nil {
			return 0, "", err
		}
		scale, how = v, fmt.Sprintf("attention_multiplier %s (%s)", shortFloat(v), from)
	case hfScaleHalfHead:
		scale, how = 1/math.Sqrt(float64(hd)/2), fmt.Sprintf("(head_dim/2)^−0.5 = %s^−0.5", shortFloat(float64(hd)/2))
	case hfScaleTimesFM:
		scale = 1.442695041 / math.Sqrt(float64(hd))
		how = fmt.Sprintf("1.442695041/sqrt(head_dim %d); it also multiplies each query value i by softplus(w_i) of a learned w, which is not here: multiply the queries by it yourself", hd)
	}
	if scale == 1/math.Sqrt(float64(hd)) {
		return 0, "", nil // head_dim^−0.5 after all (Gemma 2 and 3 with query_pre_attn_scalar the head dim)
	}
	note := fmt.Sprintf("q·k scale: transformers' %s multiplies q·k by %s = %s, not head_dim^−0.5: Runtime.QKScale carries it; the attention applies it, not this package", e.class, how, shortFloat(scale))
	return scale, note, nil
}

// hfScaleKey reads key of c, a number > 0: the config's value, else the
// config class's default def, else (def 0) derived, which the class
// computes as what says.
func hfScaleKey(c hfObj, key string, def, derived float64, what string) (float64, string, error) {
	if v, present := c.m[key]; present && v == nil {
		return 0, "", c.errf(key, "null: transformers' attention would pass scaling None, and its attention functions then disagree on the scale; give the number")
	}
	v, ok, err := c.num(key)
	switch {
	case err != nil:
		return 0, "", err
	case ok && !finitePos(v):
		return 0, "", c.errf(key, "want a number > 0, got %v", v)
	case ok:
		return v, key, nil
	case def != 0:
		return def, "the config class's default", nil
	}
	return derived, "the config class's default, " + what, nil
}

// hfQKHeadDim returns MLA's qk_head_dim, qk_nope_head_dim +
// qk_rope_head_dim (each the config's, else its class's default), or
// LongCat-Flash's qk_head_dim when the config gives it, and how it was
// found.
func hfQKHeadDim(c hfObj, model string, e hfScale) (int, string, error) {
	if model == "longcat_flash" {
		if v, ok, err := c.int("qk_head_dim"); err != nil || ok {
			if ok && v <= 0 {
				err = c.errf("qk_head_dim", "want a positive integer, got %d", v)
			}
			return v, fmt.Sprintf("qk_head_dim %d", v), err
		}
	}
	dims := [2]int{e.nope, e.rope}
	for i, k := range []string{"qk_nope_head_dim", "qk_rope_head_dim"} {
		v, ok, err := c.int(k)
		switch {
		case err != nil:
			return 0, "", err
		case ok && v < 0:
			return 0, "", c.errf(k, "want an integer >= 0, got %d", v)
		case ok:
			dims[i] = v
		}
	}
	if dims[0]+dims[1] <= 0 {
		return 0, "", c.errf("qk_nope_head_dim", "%d + qk_rope_head_dim %d: want a positive head dim", dims[0], dims[1])
	}
	return dims[0] + dims[1], fmt.Sprintf("(qk_nope_head_dim %d + qk_rope_head_dim %d)", dims[0], dims[1]), nil
}

// hfMScale2 returns the factor by which the MLA attention class attn of
// model multiplies qk_head_dim^−0.5 (yarn_apply_mscale, the same in every
// MLA modeling file at HFSourceCommit): for a rope_type other than
// "default" and a mscale_all_dim that is not 0, mscale², mscale =
// yarn_get_mscale(factor, mscale_all_dim) = 0.1·mscale_all_dim·ln(factor)
// + 1 (1 for factor ≤ 1), from the RoPE parameters of config c
// (rope_scaling, else rope_parameters); else 1. mscale is not read there.
// The note says how, when it is not 1.
func hfMScale2(c hfObj, model, attn string) (float64, string, error) {
	rp, rpOK, err := hfRoPEParams(c)
	if err != nil || !rpOK {
		return 1, "", err
	}
	typ, _, err := hfRopeType(rp)
	if err != nil || typ == "default" {
		return 1, "", err
	}
	mad, madOK, err := rp.num("mscale_all_dim")
	if err != nil || !madOK || mad == 0 {
		return 1, "", err
	}
	factor, factorOK, err := rp.num("factor")
	switch {
	case err != nil:
		return 0, "", err
	case !factorOK:
		return 0, "", rp.errf("factor", "missing or null: model_type %q's %s multiplies its softmax scale by yarn_get_mscale(factor, mscale_all_dim)², which needs a number", model, attn)
	}
	m := YaRNMScale(factor, mad)
	return m * m, fmt.Sprintf("yarn_apply_mscale's mscale² = (0.1·mscale_all_dim·ln factor + 1)² = (0.1·%s·ln %s + 1)²", shortFloat(mad), shortFloat(factor)), nil
}
