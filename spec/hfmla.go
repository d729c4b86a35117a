package spec

import "fmt"

// hfSoftmaxMScale are the model types whose attention multiplies its
// softmax scale by YaRN's mscale²: each modeling file at HFSourceCommit
// (src/transformers/models/<type>/modeling_<type>.py) sets, in its
// attention class's __init__,
//
//	self.scaling = yarn_apply_mscale(config.rope_parameters, self.qk_head_dim ** (-0.5))
//
// with the same yarn_apply_mscale and yarn_get_mscale in every file: for a
// rope_type other than "default" and a mscale_all_dim that is not 0,
// scaling·mscale·mscale with mscale = yarn_get_mscale(factor,
// mscale_all_dim), 0.1·mscale_all_dim·ln(factor) + 1 (1 for factor ≤ 1).
// mscale is not read there. Every other model's attention scales by
// head_dim^−0.5 alone, or by its own constant that no RoPE parameter
// changes.
var hfSoftmaxMScale = map[string]string{
	"axk1":          "AXK1Attention",
	"axk2":          "AXK2Attention",
	"deepseek_v2":   "DeepseekV2Attention",
	"deepseek_v3":   "DeepseekV3Attention",
	"deepseek_v32":  "DeepseekV32Attention",
	"glm4_moe_lite": "Glm4MoeLiteAttention",
	"glm_moe_dsa":   "GlmMoeDsaAttention",
	"longcat_flash": "LongcatFlashMLA",
	"minicpm3":      "MiniCPM3Attention",
	"mistral4":      "Mistral4Attention",
	"youtu":         "YoutuAttention",
	// Kimi K2's remote code is DeepSeek-V3's (its config names
	// architectures DeepseekV3ForCausalLM; hfExtraLayouts).
	"kimi_k2": "DeepseekV3Attention (Kimi K2's remote modeling_deepseek.py)",
}

// hfSoftmaxScale returns the factor by which model's attention multiplies
// its softmax scale 1/sqrt(qk_head_dim), as hfSoftmaxMScale says, from the
// RoPE parameters of config c (rope_scaling, else rope_parameters), with a
// note for -explain when it is not 1. The indexer (part) scores with its
// own head_dim^−0.5 (DeepseekV32Indexer.softmax_scale): 1.
func hfSoftmaxScale(c hfObj, model, part string) (float64, string, error) {
	attn, ok := hfSoftmaxMScale[model]
	if !ok || part == HFPartIndexer {
		return 1, "", nil
	}
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
	scale := m * m
	note := fmt.Sprintf("softmax scale: transformers' %s multiplies 1/sqrt(qk_head_dim) by yarn_apply_mscale's mscale² = (0.1·mscale_all_dim·ln factor + 1)² = (0.1·%s·ln %s + 1)² = %s: Runtime.SoftmaxScale carries it; the attention applies it, not this package",
		attn, shortFloat(mad), shortFloat(factor), shortFloat(scale))
	if factor <= 1 {
		note = fmt.Sprintf("softmax scale: transformers' %s multiplies 1/sqrt(qk_head_dim) by yarn_get_mscale(factor %s, mscale_all_dim %s)² = 1", attn, shortFloat(factor), shortFloat(mad))
	}
	return scale, note, nil
}
