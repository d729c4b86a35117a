/*
Package engine shows, in small tested code, how an inference engine that
loads models at run time uses ropegen. The kernels depend only on a head's
shape; a model's frequencies, attention factor, axis map and QK-norm are
data. So the engine carries ONE generated engine package (here
generated/engine, written by ropegen -engine for the popular shapes: 128
values in both layouts, DeepSeek's 64, Gemma's 256, Phi-3's 96, with the
QK-norms and cache types its models need) and, when it loads a model,
computes that model's numbers with package spec, the same code ropegen runs:

	m, _ := engine.LoadHF("config.json")   // every RoPE layer type; or LoadGGUF
	l := m.Layer("sliding_attention")      // Gemma 3's local layers
	tab := l.R.NewTableRange(start, n)     // prefill: rows for positions [start, start+n)
	l.Prep(tab, qkv, ..., pos)             // norm, rotate, store into the caches
	b := l.R.NewBatch(maxBatch)            // decode: a row per sequence
	b.Set(pos)                             // once a step, for every layer
	l.Prep(b, qkv, ..., pos)               // the same call

Prep is written once, against rope.CacheRows, which a *rope.Table and a
*rope.Batch both are, and calls the QK-norm form whatever the model: a
model without a QK-norm takes no weights and is only rotated.

New is rope.New(rope.Params(p.Runtime())) for p = spec.Resolve(s): the
engine package picks the shape's kernels and refuses a model whose shape or
QK-norm it lacks, naming the field and listing what it has. Every model
gives, bit for bit, what a package generated for that model alone gives
(the tests compare Llama 3.1, Qwen3, Gemma 3's two layer types, OLMo 2,
Llama 4 Scout, DeepSeek-V3, Phi-3, Qwen2.5-VL, a GGUF Llama and more,
on every backend).
*/
package engine

import (
	"fmt"
	"slices"

	rope "github.com/ropegen/ropegen/generated/engine"
	"github.com/ropegen/ropegen/spec"
)

// New resolves s with package spec and returns its Rotary from the engine
// package: New takes the model's numbers as data and checks them.
func New(s spec.Spec) (*rope.Rotary, error) {
	p, err := spec.Resolve(s)
	if err != nil {
		return nil, err
	}
	r, err := rope.New(rope.Params(p.Runtime()))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return r, nil
}

// Layer is the RoPE of one layer type of a model.
type Layer struct {
	Type string // the layer type (full_attention, sliding_attention, …); "" for a model of one RoPE
	Spec spec.Spec
	R    *rope.Rotary
}

// Model is a loaded model: a Layer for each layer type with a RoPE of its
// own, in the order the model's layers first use them.
type Model struct {
	Path   string
	Layers []Layer
}

// Layer returns the layer of type typ, or with typ "" the first; nil if
// the model has no such layer type.
func (m *Model) Layer(typ string) *Layer {
	for i := range m.Layers {
		if typ == "" || m.Layers[i].Type == typ {
			return &m.Layers[i]
		}
	}
	return nil
}

// LoadHF loads a Hugging Face config.json: the RoPE of every layer type the
// model's layers use (spec.HFInfo.Layers), each served by the engine
// package.
func LoadHF(path string) (*Model, error) {
	s, info, err := spec.LoadHFConfigWith(path, spec.HFOptions{})
	if err != nil {
		return nil, err
	}
	m := &Model{Path: path}
	var types []string
	for _, l := range info.Layers {
		if l.NoPE == "" && l.RoPE != "" && !slices.Contains(types, l.Type) {
			types = append(types, l.Type)
		}
	}
	if len(types) <= 1 {
		r, err := New(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		typ := ""
		if len(types) == 1 {
			typ = types[0]
		}
		m.Layers = append(m.Layers, Layer{Type: typ, Spec: s, R: r})
		return m, nil
	}
	for _, lt := range types {
		s, _, err := spec.LoadHFConfigWith(path, spec.HFOptions{LayerType: lt})
		if err != nil {
			return nil, err
		}
		r, err := New(s)
		if err != nil {
			return nil, fmt.Errorf("%s, %s layers: %w", path, lt, err)
		}
		m.Layers = append(m.Layers, Layer{Type: lt, Spec: s, R: r})
	}
	return m, nil
}

// LoadGGUF loads a GGUF model file as llama.cpp reads its RoPE: one layer
// type, and for a model of two bases (Gemma 3's) its local layers' too.
func LoadGGUF(path string) (*Model, error) {
	s, _, err := spec.LoadGGUFWith(path, spec.GGUFOptions{})
	if err != nil {
		return nil, err
	}
	r, err := New(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	m := &Model{Path: path, Layers: []Layer{{Spec: s, R: r}}}
	if ls, _, err := spec.LoadGGUFWith(path, spec.GGUFOptions{Local: true}); err == nil && ls.Base != s.Base {
		lr, err := New(ls)
		if err != nil {
			return nil, fmt.Errorf("%s, local layers: %w", path, err)
		}
		m.Layers[0].Type = "global"
		m.Layers = append(m.Layers, Layer{Type: "local", Spec: ls, R: lr})
	}
	return m, nil
}

// Prep is one layer's attention prep for tokens whose fused QKV
// projections lie in qkv, a row of hq query, hkv key and hkv value heads
// per token: the queries normalized (with the layer's QK-norm and weights
// qw, kw; nil for a model without one) and rotated in place, the keys
// normalized, rotated and stored into kc, the values stored into vc, token
// j at slot slots[j] and at positions pos[j·Axes:(j+1)·Axes]. rows is a
// prefill's table or a decode step's Batch (Set to pos). It is one call of
// the engine package's Prep: every view, slot and position is checked
// before anything is written.
func (l *Layer) Prep(rows rope.CacheRows, qkv []float32, hq, hkv int, qw, kw []float32, kc, vc rope.Cache, slots []int64, pos []int32) {
	hd := l.R.Shape().HeadDim
	row := (hq + 2*hkv) * hd
	kv := rope.Strides{Heads: hkv, Head: hd, Token: row}
	rows.Prep(rope.Step{
		Q: qkv, QS: rope.Strides{Heads: hq, Head: hd, Token: row}, QW: qw,
		K: qkv[hq*hd:], KS: kv, KW: kw,
		V: qkv[(hq+hkv)*hd:], VS: kv,
		KCache: kc, VCache: vc, Slots: slots,
	}, pos)
}
