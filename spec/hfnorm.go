package spec

import (
	"fmt"
	"strings"
)

// hfNorm is a model type's QK-norm, as its transformers code applies it.
type hfNorm struct {
	kind  NormKind // NormRMS, NormGemma or NormL2
	scope string   // ScopeHead or ScopeToken
	after bool     // applied to the rotated queries and keys
	// flag, when not empty, is the config key that switches the norm on,
	// and flagDefault its value when the config has none.
	flag        string
	flagDefault bool
	// eps is rms_norm_eps's default in the model's config class (class),
	// used when the config has no rms_norm_eps, as transformers does; 0
	// when ropegen has not checked one, and the config must give it.
	eps   float64
	class string
	// how names the transformers code that decides the entry, for
	// -explain's note.
	how string
}

// hfNorms is the one table of QK-norms ropegen reads from a config: which
// model types normalize queries and keys in their attention, with which
// formula (spec.NormFormula), over what (each head, or a token's heads as
// one vector), before or after RoPE, and ε. Each entry cites the code that
// decides it: transformers' src/transformers/models/<type>/modeling_<type>.py
// (or its modular_<type>.py) unless another file is named. ε is the config's
// rms_norm_eps everywhere; eps is its config-class default where one was
// checked. A model type missing here has no QK-norm.
var hfNorms = map[string]hfNorm{
	// Qwen3Attention: q_norm = k_norm = Qwen3RMSNorm(head_dim, eps=rms_norm_eps)
	// on each head of the projection, then apply_rotary_pos_emb.
	// Qwen3RMSNorm: weight * (x * rsqrt(mean(x²) + eps)). Qwen3Config:
	// rms_norm_eps 1e-6.
	"qwen3": {kind: NormRMS, scope: ScopeHead, eps: 1e-6, class: "Qwen3Config",
		how: "transformers' Qwen3Attention: q_norm/k_norm = Qwen3RMSNorm(head_dim) on each head, before apply_rotary_pos_emb"},
	// Qwen3MoeAttention: as Qwen3Attention, with Qwen3MoeRMSNorm.
	// Qwen3MoeConfig: rms_norm_eps 1e-6.
	"qwen3_moe": {kind: NormRMS, scope: ScopeHead, eps: 1e-6, class: "Qwen3MoeConfig",
		how: "transformers' Qwen3MoeAttention: q_norm/k_norm = Qwen3MoeRMSNorm(head_dim) on each head, before apply_rotary_pos_emb"},
	// modular_qwen3_next: Qwen3NextRMSNorm(Gemma3RMSNorm), x·r·(1 + w);
	// Qwen3NextAttention(Qwen3MoeAttention) takes its q_norm/k_norm over
	// head_dim before apply_rotary_pos_emb (the gated full-attention
	// layers; the linear-attention layers have no RoPE). Qwen3NextConfig:
	// rms_norm_eps 1e-6 (configuration_qwen3_next.py at spec.HFSourceCommit).
	"qwen3_next": {kind: NormGemma, scope: ScopeHead, eps: 1e-6, class: "Qwen3NextConfig",
		how: "transformers' Qwen3NextAttention: q_norm/k_norm = Qwen3NextRMSNorm (Gemma3RMSNorm's x·r·(1+w)) on each head, before apply_rotary_pos_emb"},
	// Qwen3VLTextAttention: q_norm/k_norm = Qwen3VLTextRMSNorm(head_dim)
	// before apply_rotary_pos_emb. Qwen3VLTextConfig: rms_norm_eps 1e-6.
	"qwen3_vl": {kind: NormRMS, scope: ScopeHead, eps: 1e-6, class: "Qwen3VLTextConfig",
		how: "transformers' Qwen3VLTextAttention: q_norm/k_norm = Qwen3VLTextRMSNorm(head_dim) on each head, before apply_rotary_pos_emb"},
	"qwen3_vl_text": {kind: NormRMS, scope: ScopeHead, eps: 1e-6, class: "Qwen3VLTextConfig",
		how: "transformers' Qwen3VLTextAttention: q_norm/k_norm = Qwen3VLTextRMSNorm(head_dim) on each head, before apply_rotary_pos_emb"},
	// Gemma3Attention: q_norm/k_norm = Gemma3RMSNorm(head_dim) before
	// apply_rotary_pos_emb; Gemma3RMSNorm: x * rsqrt(mean(x²) + eps) *
	// (1.0 + weight), in float32. Gemma3TextConfig: rms_norm_eps 1e-6.
	"gemma3": {kind: NormGemma, scope: ScopeHead, eps: 1e-6, class: "Gemma3TextConfig",
		how: "transformers' Gemma3Attention: q_norm/k_norm = Gemma3RMSNorm(head_dim), x·r·(1+w), on each head, before apply_rotary_pos_emb"},
	"gemma3_text": {kind: NormGemma, scope: ScopeHead, eps: 1e-6, class: "Gemma3TextConfig",
		how: "transformers' Gemma3Attention: q_norm/k_norm = Gemma3RMSNorm(head_dim), x·r·(1+w), on each head, before apply_rotary_pos_emb"},
	// Olmo2Attention: q_norm = Olmo2RMSNorm(num_attention_heads·head_dim),
	// k_norm over num_key_value_heads·head_dim, applied to the whole
	// projection before it is split into heads and rotated. Olmo2Config:
	// rms_norm_eps 1e-5.
	"olmo2": {kind: NormRMS, scope: ScopeToken, eps: 1e-5, class: "Olmo2Config",
		how: "transformers' Olmo2Attention: q_norm = Olmo2RMSNorm(num_attention_heads·head_dim) over the whole projection of a token, k_norm likewise, before apply_rotary_pos_emb"},
	// Olmo3Attention(Olmo2Attention): the same norms. Olmo3Config:
	// rms_norm_eps 1e-5 (configuration_olmo3.py at spec.HFSourceCommit).
	"olmo3": {kind: NormRMS, scope: ScopeToken, eps: 1e-5, class: "Olmo3Config",
		how: "transformers' Olmo3Attention (Olmo2Attention's q_norm/k_norm): Olmo3RMSNorm over the whole projection of a token, before apply_rotary_pos_emb"},
	// Llama4TextAttention: `if config.use_qk_norm and self.use_rope:
	// self.qk_norm = Llama4TextL2Norm(config.rms_norm_eps)`, applied to
	// queries and keys after apply_rotary_emb; Llama4TextL2Norm: x *
	// rsqrt(mean(x²) + eps), no weight. Llama4TextConfig: use_qk_norm True,
	// rms_norm_eps 1e-5.
	"llama4": {kind: NormL2, scope: ScopeHead, after: true, flag: "use_qk_norm", flagDefault: true, eps: 1e-5, class: "Llama4TextConfig",
		how: "transformers' Llama4TextAttention: qk_norm = Llama4TextL2Norm(rms_norm_eps) on each head, after apply_rotary_emb, in its RoPE layers when use_qk_norm"},
	"llama4_text": {kind: NormL2, scope: ScopeHead, after: true, flag: "use_qk_norm", flagDefault: true, eps: 1e-5, class: "Llama4TextConfig",
		how: "transformers' Llama4TextAttention: qk_norm = Llama4TextL2Norm(rms_norm_eps) on each head, after apply_rotary_emb, in its RoPE layers when use_qk_norm"},
	// HunYuanDenseV1Attention: query_layernorm/key_layernorm =
	// HunYuanDenseV1RMSNorm(head_dim) (LlamaRMSNorm), applied after
	// apply_rotary_pos_emb. HunYuanDenseV1Config: rms_norm_eps 1e-5.
	"hunyuan_v1_dense": {kind: NormRMS, scope: ScopeHead, after: true, eps: 1e-5, class: "HunYuanDenseV1Config",
		how: "transformers' HunYuanDenseV1Attention: query_layernorm/key_layernorm = HunYuanDenseV1RMSNorm(head_dim) on each head, after apply_rotary_pos_emb"},
	// HunYuanMoEV1Attention: the same, with HunYuanMoEV1RMSNorm.
	// HunYuanMoEV1Config: rms_norm_eps 1e-5 (configuration_hunyuan_v1_moe.py
	// at spec.HFSourceCommit).
	"hunyuan_v1_moe": {kind: NormRMS, scope: ScopeHead, after: true, eps: 1e-5, class: "HunYuanMoEV1Config",
		how: "transformers' HunYuanMoEV1Attention: query_layernorm/key_layernorm = HunYuanMoEV1RMSNorm(head_dim) on each head, after apply_rotary_pos_emb"},
}

// hfQKNorm sets s.QKNorm from the config c of model type model through
// hfNorms, and says in a note of info which norm it wrote and why. A model
// type without an entry keeps no norm; if its config turns a QK-norm on
// (use_qk_norm true) the note says that ropegen does not know its formula.
func hfQKNorm(c hfObj, model string, s *Spec, info *HFInfo) error {
	e, known := hfNorms[model]
	eps, epsOK, err := c.num("rms_norm_eps")
	if err != nil {
		return err
	}
	switch {
	case epsOK && eps > 0:
		info.NormEps = eps
	case !epsOK && known:
		info.NormEps = e.eps
	}
	if !known {
		on, ok, err := c.bool("use_qk_norm")
		if err != nil {
			return err
		}
		if ok && on {
			info.Notes = append(info.Notes, fmt.Sprintf("qk-norm: none written: the config has use_qk_norm true, but model_type %q has no QK-norm in ropegen's table (spec/hfnorm.go), so its formula is unknown; give -qk-norm rms|gemma|l2 (with -qk-norm-eps, -qk-norm-scope, -qk-norm-after) if it is one of those", model))
		}
		return nil
	}
	if e.flag != "" {
		on, ok, err := c.bool(e.flag)
		if err != nil {
			return err
		}
		if !ok {
			on = e.flagDefault
		}
		if !on {
			info.Notes = append(info.Notes, fmt.Sprintf("qk-norm: none: %s is false (%s)", e.flag, e.how))
			return nil
		}
	}
	from := "rms_norm_eps"
	switch {
	case epsOK && !(eps > 0):
		return c.errf("rms_norm_eps", "want a number > 0, got %v", eps)
	case !epsOK && e.eps == 0:
		return c.errf("rms_norm_eps", "missing: model_type %q normalizes queries and keys (%s) with ε = rms_norm_eps, and ropegen knows no default for it; add it to the config or give -qk-norm-eps", model, e.how)
	case !epsOK:
		eps, from = e.eps, e.class+"'s default rms_norm_eps"
	}
	s.QKNorm = QKNorm{Kind: e.kind, Eps: eps, Scope: e.scope, After: e.after}
	when := "before"
	if e.after {
		when = "after"
	}
	over := "each head"
	if e.scope == ScopeToken {
		over = "each token's heads as one vector"
	}
	info.Notes = append(info.Notes, fmt.Sprintf("qk-norm: %s over %s, %s the rotation, ε %s (%s): %s; ApplyNormQK does both in one pass, with the layer's weights per call",
		e.kind, over, when, shortFloat(eps), from, e.how))
	return nil
}

// ForcedNorm returns n, a QK-norm a caller sets over the config's (the
// -qk-norm flag), with ε the model's NormEps when n leaves it 0: a norm
// forced on a model takes the model's rms_norm_eps, as the model's own
// norms do. An explicit ε (n.Eps ≠ 0) wins; without a NormEps, n stays as
// it is (ε DefaultNormEps).
func (info HFInfo) ForcedNorm(n QKNorm) QKNorm {
	if n.Enabled() && n.Eps == 0 {
		n.Eps = info.NormEps
	}
	return n
}

// NotesFor returns the notes that hold for s, the spec LoadHFConfigWith
// returned with a caller's changes: the notes on the QK-norm (those
// beginning "qk-norm: ") describe the config's norm, so when s's norm is
// not the config's they give way to one saying what s has instead.
func (info HFInfo) NotesFor(s Spec) []string {
	if s.QKNorm == info.norm {
		return info.Notes
	}
	var out []string
	for _, n := range info.Notes {
		if !strings.HasPrefix(n, "qk-norm: ") {
			out = append(out, n)
		}
	}
	was := "none"
	if info.norm.Enabled() {
		was = string(info.norm.Kind)
	}
	now := "none (no ApplyNormQK)"
	if s.QKNorm.Enabled() {
		now = string(s.QKNorm.Kind)
	}
	note := fmt.Sprintf("qk-norm: %s, set by the caller over the config's %s", now, was)
	if s.QKNorm.Enabled() && s.QKNorm.Eps != 0 && s.QKNorm.Eps == info.NormEps {
		note += fmt.Sprintf("; ε %s is the model's (rms_norm_eps, or its config class's default)", shortFloat(info.NormEps))
	}
	return append(out, note)
}
