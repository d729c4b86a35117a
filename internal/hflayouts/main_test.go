package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// model writes a models/<name> directory with the two files scanDir reads.
func model(t *testing.T, root, name, modeling, config string) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for file, text := range map[string]string{"modeling_" + name + ".py": modeling, "configuration_" + name + ".py": config} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const (
	rotateHalfNeoX = `
def rotate_half(x):
    """Rotates half the hidden dims of the input. Not x[..., 0::2]."""
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)
`
	rotateHalfGLM = `
def rotate_half_llm(x):
    x1 = x[..., 0::2]
    x2 = x[..., 1::2]  # x[..., : x.shape[-1] // 2] would be neox
    return torch.stack((-x2, x1), dim=-1).flatten(-2)
`
	applyNeoX = `
def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    q_embed = (q * cos) + (rotate_half(q) * sin)
    return q_embed, k
`
)

func TestScan(t *testing.T) {
	root := t.TempDir()
	// Llama: rotate_half in halves.
	model(t, root, "llama", rotateHalfNeoX+applyNeoX+`
class LlamaAttention(nn.Module):
    def forward(self, x):
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
`, `
class LlamaConfig(PreTrainedConfig):
    model_type = "llama"
    head_dim: int | None = None
`)
	// GLM-4V: the text attention pairs neighbours; the vision one halves;
	// the vision sub-config is not a text model type.
	model(t, root, "glm4v", rotateHalfNeoX+rotateHalfGLM+`
def apply_rotary_pos_emb_vision(q, k, cos, sin):
    return (q * cos) + (rotate_half(q) * sin), k

def apply_rotary_pos_emb(q, k, cos, sin, unsqueeze_dim=1):
    cos = cos[..., : cos.shape[-1] // 2].repeat_interleave(2, dim=-1)
    return (q * cos) + (rotate_half_llm(q) * sin), k

class Glm4vVisionAttention(nn.Module):
    def forward(self):
        q, k = apply_rotary_pos_emb_vision(q, k, cos, sin)

class Glm4vTextAttention(nn.Module):
    def forward(self):
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
`, `
class Glm4vVisionConfig(PreTrainedConfig):
    model_type = "glm4v_vision"

class Glm4vTextConfig(PreTrainedConfig):
    model_type = "glm4v_text"

    def __post_init__(self, **kwargs):
        kwargs.setdefault("partial_rotary_factor", 0.5)  # assign default for BC
`)
	// Llama 4: complex multiplication.
	model(t, root, "llama4", `
def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    return xq_, xk

class Llama4TextAttention(nn.Module):
    def forward(self):
        q, k = apply_rotary_emb(q, k, freqs_cis=freqs)
`, `
class Llama4TextConfig(PreTrainedConfig):
    model_type = "llama4_text"
`)
	// DeepSeek-V3.2: config.rope_interleave picks; the indexer halves.
	model(t, root, "deepseek_v32", rotateHalfNeoX+applyNeoX+`
def apply_rotary_pos_emb_interleave(q, k, cos, sin):
    cos = cos[..., : cos.shape[-1] // 2]
    q1, q2 = q[..., 0::2], q[..., 1::2]
    return q1, q2

class DeepseekV32Indexer(nn.Module):
    def forward(self):
        q_rot, k_rot = apply_rotary_pos_emb(q_rot, k_rot, cos, sin, unsqueeze_dim=2)

class DeepseekV32Attention(nn.Module):
    def forward(self):
        if self.config.rope_interleave:
            q, k = apply_rotary_pos_emb_interleave(q, k, cos, sin)
        else:
            q, k = apply_rotary_pos_emb(q, k, cos, sin)
`, `
class DeepseekV32Config(PreTrainedConfig):
    model_type = "deepseek_v32"
    rope_interleave: bool | None = True
`)
	// GPT-J: rotate_every_two; rotary_dim 64 by default.
	model(t, root, "gptj", `
def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    return x1

def apply_rotary_pos_emb(tensor, sin, cos):
    return (tensor * cos) + (rotate_every_two(tensor) * sin)

class GPTJAttention(nn.Module):
    def forward(self):
        k_rot = apply_rotary_pos_emb(k_rot, sin, cos)
`, `
class GPTJConfig(PreTrainedConfig):
    model_type = "gptj"
    rotary_dim: int = 64
`)
	// No rotary embedding at all: not in the table.
	model(t, root, "bert", `
class BertSelfAttention(nn.Module):
    def forward(self):
        return x
`, `
class BertConfig(PreTrainedConfig):
    model_type = "bert"
`)

	entries, err := scan(root)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]entry{}
	for _, e := range entries {
		got[e.modelType] = e
	}
	want := map[string]string{"llama": "neox", "glm4v_text": "interleaved", "llama4_text": "interleaved", "deepseek_v32": "interleaved,neox", "gptj": "interleaved"}
	if len(got) != len(want) {
		t.Errorf("model types %v, want those of %v", got, want)
	}
	for m, w := range want {
		e, ok := got[m]
		if !ok {
			t.Errorf("%s: missing", m)
			continue
		}
		if l := strings.Join(e.layouts, ","); l != w {
			t.Errorf("%s: layouts %s, want %s (%s)", m, l, w, e.cite)
		}
	}
	if e := got["glm4v_text"]; !strings.Contains(e.cite, "Glm4vTextAttention → apply_rotary_pos_emb → rotate_half_llm: [..., 0::2]") || e.rotaryKey != "partial_rotary_factor" || e.rotary != 0.5 {
		t.Errorf("glm4v_text: %+v", e)
	}
	if e := got["deepseek_v32"]; !e.choice || !e.choiceDef || e.indexer != "neox" || !strings.Contains(e.indexCite, "DeepseekV32Indexer") {
		t.Errorf("deepseek_v32: %+v", e)
	}
	if e := got["gptj"]; e.rotaryKey != "rotary_dim" || e.rotary != 64 {
		t.Errorf("gptj: %+v", e)
	}
	if e := got["llama"]; e.rotaryKey != "" || e.indexer != "" || e.choice {
		t.Errorf("llama: %+v", e)
	}

	// The rendered table is Go that names the commit.
	src, err := render(entries, nil, "0123456789012345678901234567890123456789", "huggingface/transformers")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`HFSourceCommit = "0123456789012345678901234567890123456789"`, `"glm4v_text": {layouts: []Layout{Interleaved}`, `"deepseek_v32": {layouts: []Layout{Interleaved, NeoX}`, `ropeInterleave: true, ropeInterleaveDefault: true, indexer: NeoX`} {
		if !strings.Contains(strings.Join(strings.Fields(string(src)), " "), w) {
			t.Errorf("rendered table lacks %q", w)
		}
	}
}

// A model whose attention uses both pairings with nothing to pick between
// them is an error, not a guess.
func TestScanAmbiguous(t *testing.T) {
	root := t.TempDir()
	model(t, root, "odd", rotateHalfNeoX+applyNeoX+rotateHalfGLM+`
def apply_rotary_pos_emb_llm(q, k, cos, sin):
    return rotate_half_llm(q), k

class OddAttention(nn.Module):
    def forward(self):
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        q, k = apply_rotary_pos_emb_llm(q, k, cos, sin)
`, `
class OddConfig(PreTrainedConfig):
    model_type = "odd"
`)
	if _, err := scan(root); err == nil || !strings.Contains(err.Error(), "both pairings and no config.rope_interleave picks") {
		t.Fatalf("error %v, want the ambiguity named", err)
	}
}

func TestStripPython(t *testing.T) {
	in := "def f(x):\n    \"\"\"x[..., 0::2]\n    more\"\"\"\n    y = x  # x[..., 1::2]\n    s = \"#not a comment\"\n"
	out := stripPython(in)
	if strings.Contains(out, "0::2") || strings.Contains(out, "1::2") || !strings.Contains(out, `"#not a comment"`) || strings.Count(out, "\n") != strings.Count(in, "\n") {
		t.Errorf("stripPython(%q) = %q", in, out)
	}
}

// The auto mappings, inverted: a class names the model types with an entry
// that map to it (several when several do), with the first mapping naming
// it; tuples of classes count, types without an entry and commented-out
// lines do not.
func TestArchitectures(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "auto"), 0o755); err != nil {
		t.Fatal(err)
	}
	auto := `
MODEL_MAPPING_NAMES = OrderedDict(
    [
        # Base model mapping
        ("llama", "LlamaModel"),
        ("funnel", ("FunnelModel", "FunnelBaseModel")),
        ("llama4", ("Llama4TextModel", "Llama4Model")),
        ("llama4_text", "Llama4TextModel"),
        # ("gptj", "GPTJCommentedModel"),
    ]
)

MODEL_FOR_CAUSAL_LM_MAPPING_NAMES = OrderedDict(
    [
        ("llama", "LlamaForCausalLM"),
        ("gptj", "GPTJForCausalLM"),
        ("llama4_text", "Llama4ForCausalLM"),
        ("llama4", "Llama4ForCausalLM"),
    ]
)
`
	if err := os.WriteFile(filepath.Join(root, "auto", "modeling_auto.py"), []byte(auto), 0o644); err != nil {
		t.Fatal(err)
	}
	entries := []entry{{modelType: "llama"}, {modelType: "gptj"}, {modelType: "llama4"}, {modelType: "llama4_text"}}
	archs, err := architectures(root, entries)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range archs {
		got[a.class] = strings.Join(a.types, ",") + " " + a.mapping
	}
	want := map[string]string{
		"LlamaModel":        "llama MODEL_MAPPING_NAMES",
		"Llama4Model":       "llama4 MODEL_MAPPING_NAMES",
		"Llama4TextModel":   "llama4,llama4_text MODEL_MAPPING_NAMES",
		"LlamaForCausalLM":  "llama MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
		"GPTJForCausalLM":   "gptj MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
		"Llama4ForCausalLM": "llama4,llama4_text MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
	}
	if len(got) != len(want) {
		t.Errorf("classes %v, want %v", got, want)
	}
	for c, w := range want {
		if got[c] != w {
			t.Errorf("%s: %q, want %q", c, got[c], w)
		}
	}
	src, err := render(entries[:1], archs, "0123456789012345678901234567890123456789", "huggingface/transformers")
	if err != nil {
		t.Fatal(err)
	}
	if w := `"Llama4ForCausalLM": {models: []string{"llama4", "llama4_text"}, mapping: "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES"}`; !strings.Contains(strings.Join(strings.Fields(string(src)), " "), w) {
		t.Errorf("rendered table lacks %q:\n%s", w, src)
	}
	if _, err := architectures(t.TempDir(), entries); err == nil {
		t.Error("no auto/modeling_auto.py: no error")
	}
}
