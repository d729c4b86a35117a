package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
)

// HFConfigError is a problem with a Hugging Face config.json that
// LoadHFConfig cannot turn into a spec: the file, the JSON key and what is
// wrong.
type HFConfigError struct {
	Path string // the config file, as given to LoadHFConfig
	Key  string // dotted key, e.g. "rope_scaling.factor"; "" for the file as a whole
	Msg  string
}

func (e *HFConfigError) Error() string {
	if e.Key == "" {
		return e.Path + ": " + e.Msg
	}
	return e.Path + ": " + e.Key + ": " + e.Msg
}

// HFOptions selects what LoadHFConfigWith reads from a config.
type HFOptions struct {
	// LayerType selects the RoPE of one layer type of a model whose layers
	// differ (transformers v5's layer_types and per-layer-type
	// rope_parameters, Gemma 3's rope_local_base_freq): "full_attention",
	// "sliding_attention", … The default is the full-attention layers'
	// RoPE, or the only RoPE the model has.
	LayerType string
	// Local is LayerType "sliding_attention" (the -rope-local flag).
	Local bool
	// Part selects which rotation of the model the spec is: HFPartText
	// (the default: the text model's attention), HFPartIndexer (the
	// lightning indexer of DeepSeek-V3.2 and GLM-5's sparse attention) or
	// HFPartVision (the vision encoder of vision_config: Pixtral).
	Part string
	// Layout, when not empty, is the layout the caller will set (the
	// -layout flag): a model type missing from ropegen's layout table is
	// then accepted instead of refused.
	Layout Layout
}

// The values of HFOptions.Part.
const (
	HFPartText    = "text"
	HFPartIndexer = "indexer"
	HFPartVision  = "vision"
)

// HFParts lists the values of HFOptions.Part as the -hf-part flag takes them.
var HFParts = []string{HFPartText, HFPartIndexer, HFPartVision}

// HFInfo is what LoadHFConfigWith learned about the model besides the
// spec: its model type, its layers, and notes on how the kernel sits in the
// model (which of several RoPEs it is, MLA's rotary part, what the table
// model leaves to the caller), for -explain.
type HFInfo struct {
	// ModelType is the transformers model type whose code decides the
	// layout, QK-norm and axes: the config's model_type, or for remote
	// code the type its architectures resolves to (a note says so).
	ModelType string
	Layers    []HFLayer // the model's layer types and their RoPEs; nil when the config does not say
	Notes     []string
	// NormEps is the ε of a QK-norm on this model: the config's
	// rms_norm_eps, else its config class's default where ropegen knows
	// one (spec/hfnorm.go); 0 when neither. ForcedNorm gives it to a norm
	// the caller sets.
	NormEps float64

	norm QKNorm // the QK-norm the config gave the spec (NotesFor)
}

// HFLayer is one layer type of a model: its layers and their RoPE.
type HFLayer struct {
	Type   string // "full_attention", "sliding_attention", "linear_attention", …
	Layers []int  // the layers of this type; nil when the config lists none
	Of     int    // the number of layers of the model; 0 when unknown
	RoPE   string // the RoPE these layers use, summarised; "" for none
	NoPE   string // why these layers use no RoPE ("" when they use one)
	Chosen bool   // the spec is this type's RoPE
}

// LoadHFConfig is LoadHFConfigWith with the zero HFOptions, without the
// notes.
func LoadHFConfig(path string) (Spec, error) {
	s, _, err := LoadHFConfigWith(path, HFOptions{})
	return s, err
}

// LoadHFConfigWith reads a Hugging Face config.json and returns the spec it
// describes, starting from DefaultSpec. It reads what Hugging Face
// transformers (v4 and v5) read to build the model's rotary embedding
// (modeling_rope_utils.py, and the model's own modeling file):
//
//   - The text model: a multimodal config's text_config (Llama 4, Gemma 3,
//     Qwen2.5-VL, Qwen3-VL) when it has one, else the config itself.
//   - HeadDim: head_dim, else hidden_size/num_attention_heads (GPT-J and
//     CodeGen: n_embd/n_head), else the model type's default. With MLA
//     (qk_rope_head_dim: DeepSeek-V2/V3, Kimi K2) the kernel is the rotary
//     part of each head: HeadDim = RotaryDim = qk_rope_head_dim.
//   - RotaryDim: int(HeadDim·partial_rotary_factor) (also inside v5's
//     rope_parameters), int(HeadDim·rotary_pct) (GPT-NeoX) or rotary_dim
//     (GPT-J), else the model type's default (GPT-NeoX 0.25, Phi 0.5,
//     StableLM 0.25, GPT-J 64, GLM 0.5); 0 when it is the whole head.
//   - Base: rope_theta in the RoPE parameters, else rope_theta, else
//     rotary_emb_base (GPT-NeoX), else the model type's default, else 10000.
//     With opt.Local, rope_local_base_freq (Gemma 3) or the
//     sliding_attention parameters.
//   - Scaling: rope_scaling, else v5's rope_parameters (per layer type:
//     full_attention, or sliding_attention with opt.Local), by rope_type
//     (or the older type): default, linear, ntk, dynamic, yarn, llama3 and
//     longrope (also the older name su). The original context is the
//     top-level original_max_position_embeddings (Phi-3), else the one in
//     the RoPE parameters, else max_position_embeddings (dynamic always
//     takes max_position_embeddings, as transformers does); a longrope
//     factor that is missing or null, and a yarn factor that is null, is
//     max_position_embeddings over it, as _compute_longrope_parameters and
//     _compute_yarn_parameters take it. The keys transformers' validators
//     require are required (yarn's factor among them: a yarn config
//     without it is refused, as transformers refuses it). yarn's mscale
//     and mscale_all_dim are kept only as a pair, since transformers'
//     rotary embedding ignores either alone.
//   - Axes: mrope_section in the RoPE parameters gives sectioned M-RoPE
//     (Qwen2-VL, Qwen2.5-VL), with mrope_interleaved true interleaved
//     M-RoPE (Qwen3-VL).
//   - Layout: from hfLayouts, the one table of model types ropegen knows.
//     A model_type missing from it (remote code, the publisher's config
//     as downloaded) is read as the transformers model type whose class
//     its architectures names, when exactly one type maps to that class in
//     transformers' auto mappings (hfArchitecturesGen); HFInfo.ModelType
//     is then that type, and a note says so.
//
// Everything else keeps DefaultSpec's value; the package name stays
// "rope". Flags given on the command line are meant to override the result
// field by field, so LoadHFConfigWith does not validate it: Spec.Validate
// does.
//
// Errors are *HFConfigError naming the path and the key: an unreadable file
// or malformed JSON, a value of the wrong JSON type, a key in the RoPE
// parameters that ropegen does not know (rather than ignore one that may
// change the frequencies), a scaling type it cannot generate, a model type
// missing from hfLayouts (unless opt.Layout is set) or known not to fit,
// and opt.Local for a model whose layers all use one RoPE.
func LoadHFConfigWith(path string, opt HFOptions) (Spec, HFInfo, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Spec{}, HFInfo{}, &HFConfigError{Path: path, Msg: "cannot read the config: " + err.Error()}
	}
	obj, err := decodeHFConfig(path, data)
	if err != nil {
		return Spec{}, HFInfo{}, err
	}
	return hfSpec(obj, opt)
}

// decodeHFConfig parses data as one JSON object, numbers kept as
// json.Number.
func decodeHFConfig(path string, data []byte) (hfObj, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		msg := "invalid JSON: " + err.Error()
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			// Offset counts the bytes read, the bad one included.
			line, col := lineCol(data, se.Offset-1)
			msg = fmt.Sprintf("invalid JSON at line %d, column %d: %v", line, col, se)
		case errors.Is(err, io.EOF):
			msg = "invalid JSON: the file is empty"
		case errors.Is(err, io.ErrUnexpectedEOF):
			msg = "invalid JSON: unexpected end of the file"
		}
		return hfObj{}, &HFConfigError{Path: path, Msg: msg}
	}
	if _, err := dec.Token(); err != io.EOF {
		line, col := lineCol(data, dec.InputOffset()-1)
		return hfObj{}, &HFConfigError{Path: path, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: data after the top-level object", line, col)}
	}
	m, ok := v.(map[string]any)
	if !ok {
		return hfObj{}, &HFConfigError{Path: path, Msg: "want a JSON object (a config.json), got " + jsonKind(v)}
	}
	return hfObj{path: path, m: m}, nil
}

// lineCol returns the 1-based line and column of byte offset off in data.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// hfObj is a JSON object of a config, at key prefix (empty for the top
// level, else ending in ".").
type hfObj struct {
	path   string
	prefix string
	m      map[string]any
}

func (o hfObj) errf(key, format string, args ...any) error {
	return &HFConfigError{Path: o.path, Key: o.prefix + key, Msg: fmt.Sprintf(format, args...)}
}

// get returns the value of key; null counts as absent.
func (o hfObj) get(key string) (any, bool) {
	v, ok := o.m[key]
	return v, ok && v != nil
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		return "the number " + v.String()
	case string:
		return "the string " + strconv.Quote(v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// num returns the number at key.
func (o hfObj) num(key string) (float64, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return 0, false, nil
	}
	n, isNum := v.(json.Number)
	if !isNum {
		return 0, true, o.errf(key, "want a number, got %s", jsonKind(v))
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, true, o.errf(key, "%s is out of range of float64", n)
	}
	return f, true, nil
}

// int returns the integer at key (4096 or 4096.0).
func (o hfObj) int(key string) (int, bool, error) {
	f, ok, err := o.num(key)
	if !ok || err != nil {
		return 0, ok, err
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, true, o.errf(key, "want an integer, got %v", o.m[key])
	}
	return int(f), true, nil
}

func (o hfObj) bool(key string) (bool, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, o.errf(key, "want true or false, got %s", jsonKind(v))
	}
	return b, true, nil
}

func (o hfObj) str(key string) (string, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, o.errf(key, "want a string, got %s", jsonKind(v))
	}
	return s, true, nil
}

// list returns the array of numbers at key.
func (o hfObj) list(key string) ([]float64, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, false, nil
	}
	a, isArr := v.([]any)
	if !isArr {
		return nil, true, o.errf(key, "want an array of numbers, got %s", jsonKind(v))
	}
	l := make([]float64, len(a))
	for i, e := range a {
		n, isNum := e.(json.Number)
		if !isNum {
			return nil, true, o.errf(key, "element %d: want a number, got %s", i, jsonKind(e))
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, true, o.errf(key, "element %d: %s is out of range of float64", i, n)
		}
		l[i] = f
	}
	return l, true, nil
}

func (o hfObj) obj(key string) (hfObj, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return hfObj{}, false, nil
	}
	m, isObj := v.(map[string]any)
	if !isObj {
		return hfObj{}, true, o.errf(key, "want an object or null, got %s", jsonKind(v))
	}
	return hfObj{path: o.path, prefix: o.prefix + key + ".", m: m}, true, nil
}

// firstInt returns the first of keys present, with its value.
func (o hfObj) firstInt(keys ...string) (key string, v int, ok bool, err error) {
	for _, k := range keys {
		v, ok, err := o.int(k)
		if ok || err != nil {
			return k, v, ok, err
		}
	}
	return keys[0], 0, false, nil
}

// hfScalingTypes maps Hugging Face rope_type names to ropegen's.
var hfScalingTypes = map[string]string{
	"default":  ScalingNone,
	"mrope":    ScalingNone, // Qwen2-VL's type for M-RoPE: Qwen2VLConfig turns it into "default"
	"linear":   ScalingLinear,
	"ntk":      ScalingNTK,
	"dynamic":  ScalingDynamic,
	"yarn":     ScalingYaRN,
	"llama3":   ScalingLlama3,
	"longrope": ScalingLongRoPE,
	"su":       ScalingLongRoPE, // Phi-3's first name for longrope

	"proportional": ScalingProportional, // Gemma 4
}

// hfScalingNames are the rope_type names ropegen reads, for messages.
var hfScalingNames = []string{"default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional"}

// hfScalingKeys are the keys each scaling type reads from the RoPE
// parameters, besides rope_type, type, rope_theta, partial_rotary_factor
// and the M-RoPE keys.
var hfScalingKeys = map[string][]string{
	ScalingNone:     nil,
	ScalingLinear:   {"factor"},
	ScalingNTK:      {"factor"},
	ScalingDynamic:  {"factor"},
	ScalingYaRN:     {"factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "finetuned", "llama_4_scaling_beta", "max_position_embeddings"},
	ScalingLlama3:   {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"},
	ScalingLongRoPE: {"factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"},
	// factor: 1 when absent (_compute_proportional_rope_parameters);
	// partial_rotary_factor, read with every type, gives RopeAngles.
	ScalingProportional: {"factor"},
}

// hfAlpha reads HunYuan's dynamic NTK with alpha
// (HunYuanDenseV1RotaryEmbedding: base = rope_theta·alpha^(d/(d−2)), once):
// static NTK with factor alpha. The other keys HunYuan's configs carry
// beside it (factor, and yarn's) are not read on that path.
func hfAlpha(rp hfObj, alpha float64) (Scaling, error) {
	for k := range rp.m {
		switch k {
		case "rope_type", "type", "rope_theta", "partial_rotary_factor", "alpha", "factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim":
		default:
			return Scaling{}, rp.errf(k, "unknown key for HunYuan's dynamic NTK with alpha (ropegen reads alpha; factor, beta_fast, beta_slow, mscale and mscale_all_dim are not read on that path)")
		}
	}
	if !(alpha > 0) {
		return Scaling{}, rp.errf("alpha", "want a number > 0, got %v", alpha)
	}
	return Scaling{Type: ScalingNTK, Factor: alpha, Truncate: true}, nil
}

// hfSpec turns a config's top-level object into a spec.
func hfSpec(top hfObj, opt HFOptions) (Spec, HFInfo, error) {
	fail := func(err error) (Spec, HFInfo, error) { return Spec{}, HFInfo{}, err }
	switch opt.Part {
	case "", HFPartText, HFPartIndexer:
	case HFPartVision:
		return hfVisionSpec(top)
	default:
		return fail(&HFConfigError{Path: top.path, Msg: fmt.Sprintf("-hf-part %q: want one of %s", opt.Part, quoteAll(HFParts))})
	}
	layerType, err := hfLayerTypeOption(top, opt)
	if err != nil {
		return fail(err)
	}
	spec := DefaultSpec()
	var info HFInfo
	m, err := hfTextModel(top, &spec, &info)
	if err != nil {
		return fail(err)
	}
	if spec.Layout, err = m.layout(opt.Layout); err != nil {
		return fail(err)
	}
	c, model := m.c, m.model
	if err := hfQKNorm(c, model, &spec, &info); err != nil {
		return fail(err)
	}
	defaults := hfDefaults[model]
	if note, err := hfNoPE(c, defaults.nopeEvery, defaults.class); err != nil {
		return fail(err)
	} else if note != "" {
		info.Notes = append(info.Notes, note)
	}
	fixedHead, err := hfHead(m, opt.Part, &spec, &info)
	if err != nil {
		return fail(err)
	}
	out, err := hfLayerRoPEs(m, layerType, spec, fixedHead, &info)
	if err != nil {
		return fail(err)
	}
	scale, note, err := hfQKScale(c, model, opt.Part, out.HeadDim)
	if err != nil {
		return fail(err)
	}
	out.QKScale = scale
	if note != "" {
		info.Notes = append(info.Notes, note)
	}
	return out, info, nil
}

// hfLayerTypeOption returns the layer type opt selects: opt.LayerType, or
// with opt.Local "sliding_attention" (which a different LayerType
// contradicts).
func hfLayerTypeOption(top hfObj, opt HFOptions) (string, error) {
	if !opt.Local {
		return opt.LayerType, nil
	}
	if opt.LayerType != "" && opt.LayerType != hfSlidingLayers {
		return "", &HFConfigError{Path: top.path, Msg: fmt.Sprintf("-rope-local is -layer-type %s, but -layer-type %q is given too", hfSlidingLayers, opt.LayerType)}
	}
	return hfSlidingLayers, nil
}

// hfModel is the text model of a config: its settings, the model type
// whose code decides, and that type's entry in ropegen's table.
type hfModel struct {
	c          hfObj       // the text model's settings: text_config, or the config itself
	model      string      // the model type whose code decides (HFInfo.ModelType)
	entry      hfGenLayout // its entry; the zero entry when the type is not known
	refuse     string      // why ropegen refuses the type; "" when it does not
	known      bool        // the type is in the table
	unresolved string      // for a type not known: why its architectures named none
}

// hfTextModel reads the text model of config top (its text_config when it
// has one): the model type, the context length into spec, and the type's
// table entry, which is the text_config type's, else the top-level type's,
// else that of the type the config's architectures resolve to (remote
// code). Notes say which.
func hfTextModel(top hfObj, spec *Spec, info *HFInfo) (hfModel, error) {
	m := hfModel{c: top}
	tc, tcOK, err := top.obj("text_config")
	if err != nil {
		return m, err
	}
	if tcOK {
		m.c = tc
	}
	c := m.c
	model, ok, err := c.str("model_type")
	if err != nil {
		return m, err
	}
	topModel, topOK := "", false
	if tcOK {
		if topModel, topOK, err = top.str("model_type"); err != nil {
			return m, err
		}
	}
	if !ok && topOK {
		model, ok = topModel, true
	}
	if !ok {
		return m, c.errf("model_type", "missing: ropegen needs the model type to pick the pair layout")
	}
	info.ModelType = model
	if n, ok, err := c.int("max_position_embeddings"); err != nil {
		return m, err
	} else if ok && n <= 0 {
		return m, c.errf("max_position_embeddings", "want a positive integer, got %d: it is the model's context length", n)
	} else if ok {
		spec.MaxPositions = n
	}
	if tcOK {
		info.Notes = append(info.Notes, fmt.Sprintf("the text model's settings are text_config's (model_type %q)", model))
	}
	m.entry, m.refuse, m.known = hfLookup(model)
	if !m.known && topOK {
		// A text_config type the table lacks (EXAONE 4.5's exaone4_5_text)
		// belongs to the top-level type's modeling file.
		if e, r, ok := hfLookup(topModel); ok {
			m.entry, m.refuse, m.known = e, r, true
			info.Notes = append(info.Notes, fmt.Sprintf("text_config's model_type %q is not in ropegen's table; its attention is model_type %q's", model, topModel))
		}
	}
	if a, ok := hfAliases[model]; ok && !m.known {
		// Remote code an engine runs as a transformers type.
		if a.check != nil {
			if err := a.check(c); err != nil {
				return m, err
			}
		}
		m.entry, m.refuse, m.known = hfLookup(a.model)
		info.Notes = append(info.Notes, fmt.Sprintf("model_type %q is remote code, not a transformers type; it is read as model_type %q (%s), from this config's keys", model, a.model, a.cite))
		model = a.model
		info.ModelType = model
	}
	if !m.known {
		// Remote code: the transformers class its architectures names.
		resolved, note, why, err := hfArchitecture(top, model)
		if err != nil {
			return m, err
		}
		if resolved != "" {
			m.entry, m.refuse, m.known = hfLookup(resolved)
			model = resolved
			info.ModelType = model
			info.Notes = append(info.Notes, note)
		}
		m.unresolved = why
	}
	m.model = model
	return m, nil
}

// layout returns the pair layout of m's attention: its table entry's (the
// config's rope_interleave picking where the entry has two), else given,
// the layout the caller will set. A refused type, and one not known
// without given, is an error.
func (m hfModel) layout(given Layout) (Layout, error) {
	c, e := m.c, m.entry
	switch {
	case m.known && m.refuse != "":
		return "", c.errf("model_type", "%q is not supported: %s", m.model, m.refuse)
	case !m.known && given == "":
		return "", c.errf("model_type", "%q is not in ropegen's table of model types%s, so the pair layout is unknown: give -layout %s if its attention uses rotate_half (Hugging Face's Llama code, pairs (i, i+R/2)), -layout %s if it rotates adjacent values (2i, 2i+1)", m.model, m.unresolved, NeoX, Interleaved)
	case !m.known:
		return given, nil
	case !e.ropeInterleave:
		return e.layouts[0], nil
	}
	// The attention's `if self.config.rope_interleave`:
	// apply_rotary_pos_emb_interleave, else rotate_half.
	il, ok, err := c.bool("rope_interleave")
	if err != nil {
		return "", err
	}
	if !ok {
		il = e.ropeInterleaveDefault
	}
	if !il {
		return e.layouts[1], nil
	}
	return e.layouts[0], nil
}

// hfHead reads the head dim into spec: the indexer's (part HFPartIndexer),
// MLA's rotary part (qk_rope_head_dim), or the head's. It reports whether
// the head dim is fixed for every layer type (MLA and the indexer).
func hfHead(m hfModel, part string, spec *Spec, info *HFInfo) (fixed bool, err error) {
	c, entry := m.c, m.entry
	mlaRot, mla, err := c.int("qk_rope_head_dim")
	if err != nil {
		return false, err
	}
	if mla && mlaRot <= 0 {
		return false, c.errf("qk_rope_head_dim", "want a positive integer, got %d", mlaRot)
	}
	switch {
	case part == HFPartIndexer:
		return true, hfIndexer(c, m.model, entry, mlaRot, mla, spec, info)
	case mla:
		nope, nopeOK, err := c.int("qk_nope_head_dim")
		if err != nil {
			return false, err
		}
		spec.HeadDim = mlaRot
		full := "qk_nope_head_dim + qk_rope_head_dim"
		if nopeOK {
			full = fmt.Sprintf("qk_nope_head_dim %d + qk_rope_head_dim %d = %d", nope, mlaRot, nope+mlaRot)
		}
		info.Notes = append(info.Notes, fmt.Sprintf("MLA: this kernel rotates the rotary part of each query and key head, the LAST qk_rope_head_dim = %d values of its %s; the first values are not rotated. Rotate it in place with a Strides view that starts at the rotary part (x[qk_nope_head_dim:], Head = the full head's length). The softmax scale is the attention's, not the kernel's", mlaRot, full))
		if entry.indexer != "" {
			info.Notes = append(info.Notes, fmt.Sprintf("this model also has a lightning indexer, whose RoPE is %s (%s): -hf-part %s writes its package", entry.indexer, entry.indexerCite, HFPartIndexer))
		}
		return true, nil
	}
	d := hfDefaults[m.model]
	spec.HeadDim, err = hfReadHeadDim(c, d.headDim, d.heads)
	return false, err
}

// hfLayerRoPEs reads the RoPE of each layer type of m's model, starting
// from spec (with a layer type's own head dim unless fixedHead), and
// returns the one of the layer type chosen (layerType, else the default);
// info gets the layers, each summarised, and the notes.
func hfLayerRoPEs(m hfModel, layerType string, spec Spec, fixedHead bool, info *HFInfo) (Spec, error) {
	c, model := m.c, m.model
	groups, err := hfLayerGroups(c, model)
	if err != nil {
		return Spec{}, err
	}
	chosen, err := hfChoose(c, model, groups, layerType)
	if err != nil {
		return Spec{}, err
	}
	var out Spec
	var outNotes []string
	for i := range groups {
		g := &groups[i]
		if g.src.nope != "" || g.src.missing {
			continue
		}
		s := spec
		if g.src.headDim != 0 && !fixedHead {
			s.HeadDim = g.src.headDim
		}
		s, notes, err := hfRoPE(c, g.src, s, model, m.entry, hfDefaults[model].base, !fixedHead)
		if i == chosen {
			if err != nil {
				return Spec{}, err
			}
			out, outNotes = s, notes
		}
		if err != nil {
			g.summary = "not read: " + err.Error()
		} else {
			g.summary = hfSummary(s)
		}
	}
	info.Layers, info.Notes = hfLayerNotes(groups, chosen, info.Notes)
	info.Notes = append(info.Notes, outNotes...)
	info.norm = out.QKNorm
	return out, nil
}

// hfRoPE reads one RoPE into spec: the base, the rotary dim (when rotary,
// not for MLA and the indexer, whose caller fixed it), the scaling and the
// axes, from src.
func hfRoPE(c hfObj, src hfRoPESource, spec Spec, model string, entry hfGenLayout, defBase float64, rotary bool) (Spec, []string, error) {
	var notes []string
	rp, rpOK := src.rp, src.rpOK

	// Base: the source's own, else rope_theta in the RoPE parameters, else
	// the config's rope_theta (or rotary_emb_base), else the class default.
	base, baseOK := src.base, src.base != 0
	var err error
	if !baseOK && rpOK {
		if base, baseOK, err = rp.num("rope_theta"); err != nil {
			return spec, nil, err
		}
	}
	for _, k := range []string{"rope_theta", "rotary_emb_base"} {
		if baseOK {
			break
		}
		if base, baseOK, err = c.num(k); err != nil {
			return spec, nil, err
		}
	}
	if !baseOK && defBase != 0 {
		base, baseOK = defBase, true
	}
	if baseOK {
		spec.Base = base
	}

	// Proportional RoPE (Gemma 4) turns the whole head: partial_rotary_factor
	// says how many of its pairs have a frequency.
	proportional := false
	if rpOK {
		name, _, err := hfRopeType(rp)
		if err != nil {
			return spec, nil, err
		}
		proportional = hfScalingTypes[name] == ScalingProportional
	}

	// Rotary dim.
	if rotary && !proportional {
		rot, err := hfRotaryDim(c, rp, rpOK, spec.HeadDim, entry.rotaryKey, entry.rotary)
		if err != nil {
			return spec, nil, err
		}
		if rot != spec.HeadDim {
			spec.RotaryDim = rot
		}
	}

	// Scaling and axes.
	if !rpOK || src.noScaling {
		if _, fixed := hfMRoPEModels[model]; fixed && !rpOK {
			// The rotary embedding's own sections, with no RoPE parameters
			// to read them from (ERNIE-4.5-VL's publisher's config).
			if err := hfAxes(hfObj{path: c.path, prefix: c.prefix + "rope_parameters."}, &spec, model); err != nil {
				return spec, nil, err
			}
			note, err := hfErnieRemote(c, spec)
			if err != nil {
				return spec, nil, err
			}
			if note != "" {
				notes = append(notes, note)
			}
		}
		return spec, notes, nil
	}
	sc, scNotes, err := hfScaling(c, rp)
	if err != nil {
		return spec, nil, err
	}
	notes = append(notes, scNotes...)
	if proportional {
		p := 1.0
		for _, o := range []hfObj{rp, c} {
			v, ok, err := hfFraction(o, "partial_rotary_factor")
			if err != nil {
				return spec, nil, err
			}
			if ok {
				p = v
				break
			}
		}
		// _compute_proportional_rope_parameters: int(p·head_dim // 2).
		sc.RopeAngles = int(math.Floor(p * float64(spec.HeadDim) / 2))
		notes = append(notes, fmt.Sprintf("proportional RoPE (transformers' _compute_proportional_rope_parameters): the whole head of %d turns as neox pairs (i, i+%d), and only pairs 0…%d (partial_rotary_factor %s of the head) have a frequency, base^(−2i/%d); the other %d pairs keep θ = 0 (cos 1, sin 0)", spec.HeadDim, spec.HeadDim/2, sc.RopeAngles-1, shortFloat(p), spec.HeadDim, spec.HeadDim/2-sc.RopeAngles))
	}
	spec.Scaling = sc
	if err := hfAxes(rp, &spec, model); err != nil {
		return spec, nil, err
	}
	note, err := hfErnieRemote(c, spec)
	if err != nil {
		return spec, nil, err
	}
	if note != "" {
		notes = append(notes, note)
	}
	return spec, notes, nil
}

// hfMRoPEModels are the model types whose rotary embedding always has
// axes, with the sections it falls back on and the axes scheme: the
// modeling file's rope_parameters.get("mrope_section", default).
var hfMRoPEModels = map[string]struct {
	axes     string
	sections []int
}{
	"ernie4_5_vl_moe":      {AxesERNIE, []int{22, 22, 20}}, // Ernie4_5_VLMoeTextRotaryEmbedding.recomposition_to_3d
	"ernie4_5_vl_moe_text": {AxesERNIE, []int{22, 22, 20}},
	"glm4v":                {AxesMRoPE, []int{8, 12, 12}}, // Glm4vTextRotaryEmbedding.apply_mrope
	"glm4v_text":           {AxesMRoPE, []int{8, 12, 12}},
	"glm4v_moe":            {AxesMRoPE, []int{8, 12, 12}}, // Glm4vMoeTextRotaryEmbedding.apply_mrope
	"glm4v_moe_text":       {AxesMRoPE, []int{8, 12, 12}},
}

// hfErnieRemote checks ERNIE-4.5-VL's remote-code keys in config c
// against the 3-D RoPE transformers gives s (Ernie4_5_VLMoeTextRotaryEmbedding,
// which reads neither): rope_3d must not be false (the remote code then
// turns every pair by the text position) and freq_allocation, the remote
// code's pairs of the time axis, must be s's time section. It returns a
// note when the config has them, "" otherwise.
func hfErnieRemote(c hfObj, s Spec) (string, error) {
	if s.Axes != AxesERNIE {
		return "", nil
	}
	r3, r3OK, err := c.bool("rope_3d")
	if err != nil {
		return "", err
	}
	if r3OK && !r3 {
		return "", c.errf("rope_3d", "false: ERNIE-4.5-VL's remote code then turns every pair by the text position, while transformers' Ernie4_5_VLMoeTextRotaryEmbedding always applies the 3-D RoPE; give the spec with flags")
	}
	fa, faOK, err := c.int("freq_allocation")
	if err != nil || !faOK {
		return "", err
	}
	if t := s.Sections[2]; fa != t {
		return "", c.errf("freq_allocation", "%d: the remote code turns the last %d pairs by time, transformers' mrope_section %s the last %d; give the spec with flags (-axes %s -mrope-section)", fa, fa, SectionsString(s.Sections), t, AxesERNIE)
	}
	return fmt.Sprintf("ERNIE-4.5-VL: freq_allocation %d (the remote code's time pairs) agrees with transformers' mrope_section %s (height, width, time)", fa, SectionsString(s.Sections)), nil
}

// hfAxes reads M-RoPE's keys from the RoPE parameters rp into s.
func hfAxes(rp hfObj, s *Spec, model string) error {
	sec, secOK, err := rp.list("mrope_section")
	if err != nil {
		return err
	}
	il, ilOK, err := rp.bool("mrope_interleaved")
	if err != nil {
		return err
	}
	fixed, fixedOK := hfMRoPEModels[model]
	if !secOK {
		if ilOK && il {
			return rp.errf("mrope_interleaved", "true, but mrope_section is missing: interleaved M-RoPE needs the pairs per axis")
		}
		if !fixedOK {
			return nil
		}
		for _, v := range fixed.sections {
			sec = append(sec, float64(v))
		}
	}
	s.Sections = make([]int, len(sec))
	for i, v := range sec {
		if v != math.Trunc(v) || v < 0 || v > MaxHeadDim {
			return rp.errf("mrope_section", "element %d: want a count of pairs, got %v", i, v)
		}
		s.Sections[i] = int(v)
	}
	s.Axes = AxesMRoPE
	switch {
	case il:
		s.Axes = AxesInterleaved
	case fixedOK:
		s.Axes = fixed.axes
	}
	return nil
}

// hfHeadDim is hidden_size/num_attention_heads (or GPT-2 style names), or
// def, the model type's default head_dim, when it has one; defHeads is the
// model type's default num_attention_heads (0: none).
func hfHeadDim(c hfObj, def, defHeads int) (int, error) {
	if def > 0 {
		return def, nil
	}
	hk, hidden, hOK, err := c.firstInt("hidden_size", "n_embd", "d_model")
	if err != nil {
		return 0, err
	}
	nk, heads, nOK, err := c.firstInt("num_attention_heads", "n_head", "num_heads")
	if err != nil {
		return 0, err
	}
	if !nOK && defHeads > 0 {
		heads, nOK = defHeads, true
	}
	switch {
	case !hOK:
		return 0, c.errf("hidden_size", "missing: needed, with num_attention_heads, for the head dim when head_dim is absent")
	case !nOK:
		return 0, c.errf("num_attention_heads", "missing: needed, with hidden_size, for the head dim when head_dim is absent")
	case heads <= 0:
		return 0, c.errf(nk, "want a positive integer, got %d", heads)
	case hidden <= 0:
		return 0, c.errf(hk, "want a positive integer, got %d", hidden)
	case hidden%heads != 0:
		return 0, c.errf(hk, "%d is not a multiple of %s %d, and head_dim is absent", hidden, nk, heads)
	}
	return hidden / heads, nil
}

// hfRotaryDim returns the rotary dim the config gives for head dim hd, or
// hd. Where several keys give it they must agree.
func hfRotaryDim(c, rp hfObj, rpOK bool, hd int, defKey string, def float64) (int, error) {
	type source struct {
		key string
		rot int
	}
	var found []source
	fraction := func(o hfObj, key string) error {
		f, ok, err := hfFraction(o, key)
		if !ok || err != nil {
			return err
		}
		// int() as transformers does: int(head_dim * partial_rotary_factor).
		found = append(found, source{o.prefix + key, int(float64(hd) * f)})
		return nil
	}
	if rpOK {
		if err := fraction(rp, "partial_rotary_factor"); err != nil {
			return 0, err
		}
	}
	for _, k := range []string{"partial_rotary_factor", "rotary_pct"} {
		if err := fraction(c, k); err != nil {
			return 0, err
		}
	}
	rd, ok, err := c.int("rotary_dim")
	if err != nil {
		return 0, err
	}
	if ok {
		if rd <= 0 {
			return 0, c.errf("rotary_dim", "want a positive integer, got %d", rd)
		}
		found = append(found, source{"rotary_dim", rd})
	}
	if len(found) == 0 {
		switch {
		case defKey == "rotary_dim":
			return int(def), nil
		case defKey != "":
			return int(float64(hd) * def), nil
		}
		return hd, nil
	}
	for _, s := range found[1:] {
		if s.rot != found[0].rot {
			return 0, c.errf(s.key, "gives rotary dim %d, but %s gives %d", s.rot, found[0].key, found[0].rot)
		}
	}
	return found[0].rot, nil
}

// hfScaling reads the RoPE parameters rp of config c, with notes on what
// the kernel leaves to the caller.
func hfScaling(c, rp hfObj) (Scaling, []string, error) {
	sc, err := hfScalingOnly(c, rp)
	if err != nil {
		return sc, nil, err
	}
	var notes []string
	if alpha, ok, _ := rp.num("alpha"); ok {
		notes = append(notes, fmt.Sprintf("HunYuan's dynamic NTK with alpha %s (HunYuanDenseV1RotaryEmbedding, HunYuanMoEV1RotaryEmbedding): base·alpha^(R/(R−2)) once, which is static NTK with factor alpha; the yarn keys beside it are not read by that path. *Differs from transformers* past max_position_embeddings, where its dynamic_rope_update recomputes plain dynamic NTK from rope_theta (dropping alpha); ropegen keeps the alpha frequencies for every table, as Tencent's reference does", shortFloat(alpha)))
	}
	if beta, ok, _ := rp.num("llama_4_scaling_beta"); ok && beta != 0 {
		notes = append(notes, fmt.Sprintf("llama_4_scaling_beta %s (Ministral 3's get_llama_4_attn_scale): after RoPE, transformers multiplies each QUERY at position p by 1 + %s·ln(1 + floor(p/%d)). This package does not: a table row serves queries and keys alike with one attention factor for every position, and this scale is for queries only and changes with p. Multiply each query token by it yourself (it is constant over runs of %d positions)", shortFloat(beta), shortFloat(beta), sc.OrigCtx, sc.OrigCtx))
	}
	return sc, notes, nil
}

// hfReadHeadDim reads c's head_dim, or when it is absent or 0 derives it
// (hfHeadDim, with the class's defaults def and defHeads).
func hfReadHeadDim(c hfObj, def, defHeads int) (int, error) {
	hd, ok, err := c.int("head_dim")
	if err != nil {
		return 0, err
	}
	if ok && hd < 0 {
		return 0, c.errf("head_dim", "want a positive integer, got %d", hd)
	}
	if !ok || hd == 0 {
		return hfHeadDim(c, def, defHeads)
	}
	return hd, nil
}

// hfRopeType reads the RoPE type of rp: rope_type, or the older type, or
// "default" when neither is given; key is the key it came from.
func hfRopeType(rp hfObj) (name, key string, err error) {
	for _, k := range []string{"rope_type", "type"} {
		if name, ok, err := rp.str(k); err != nil || ok {
			return name, k, err
		}
	}
	return "default", "rope_type", nil
}

// hfFraction reads key of o as a fraction of the head, in (0, 1].
func hfFraction(o hfObj, key string) (float64, bool, error) {
	f, ok, err := o.num(key)
	if !ok || err != nil {
		return 0, false, err
	}
	if !(f > 0 && f <= 1) {
		return 0, false, o.errf(key, "want a fraction of the head in (0, 1], got %v", f)
	}
	return f, true, nil
}

// hfScalingOnly is hfScaling without the notes.
func hfScalingOnly(c, rp hfObj) (Scaling, error) {
	sc := Scaling{Type: ScalingNone, Truncate: true}
	name, typeKey, err := hfRopeType(rp)
	if err != nil {
		return sc, err
	}
	typ, known := hfScalingTypes[name]
	if !known {
		return sc, rp.errf(typeKey, "scaling type %q is not supported (ropegen reads %s); give the spec with flags instead of -hf-config (-dim, -base, -scaling, …)", name, quoteAll(hfScalingNames))
	}
	sc.Type = typ
	if typ == ScalingDynamic {
		if alpha, ok, err := rp.num("alpha"); err != nil {
			return sc, err
		} else if ok {
			return hfAlpha(rp, alpha)
		}
	}
	if err := hfCheckScalingKeys(rp, name, typ); err != nil {
		return sc, err
	}

	// factor, in every type but none.
	factor, factorOK, err := rp.num("factor")
	if err != nil {
		return sc, err
	}
	if typ == ScalingNone {
		return sc, nil
	}
	if factorOK {
		sc.Factor = factor
		if factor == 0 {
			// 0 is ropegen's "unset"; say so here rather than let it mean
			// something else.
			return sc, rp.errf("factor", "want a number > 0, got 0")
		}
	}
	switch typ {
	case ScalingProportional:
		return sc, nil
	case ScalingLinear, ScalingNTK, ScalingDynamic:
		return hfFactorScaling(c, rp, sc, name, factorOK)
	}
	if err := hfContextScaling(c, rp, &sc, factorOK); err != nil {
		return sc, err
	}
	switch typ {
	case ScalingYaRN:
		err = hfYaRNKeys(rp, &sc)
	case ScalingLlama3:
		err = hfLlama3Keys(rp, &sc, name, factorOK)
	case ScalingLongRoPE:
		err = hfLongRoPEKeys(rp, &sc, name)
	}
	return sc, err
}

// hfCheckScalingKeys refuses a key of the RoPE parameters rp that scaling
// type typ (rope_type name) does not read, and a missing key that
// transformers requires (_check_received_keys raises KeyError for a
// missing one; null passes it).
func hfCheckScalingKeys(rp hfObj, name, typ string) error {
	allowed := map[string]bool{"rope_type": true, "type": true, "rope_theta": true, "partial_rotary_factor": true, "mrope_section": true, "mrope_interleaved": true}
	for _, k := range hfScalingKeys[typ] {
		allowed[k] = true
	}
	var unknown []string
	for k := range rp.m {
		if !allowed[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		known := append([]string(nil), hfScalingKeys[typ]...)
		sort.Strings(known)
		what := "none"
		if len(known) > 0 {
			what = quoteAll(known)
		}
		return rp.errf(unknown[0], "unknown key for rope_type %q (ropegen reads: %s); rather than ignore a key that may change the frequencies, ropegen refuses the config: give the spec with flags instead", name, what)
	}
	for _, k := range hfRequiredKeys[typ] {
		if _, present := rp.m[k]; !present {
			return rp.errf(k, "missing: rope_type %q requires it (transformers' _validate_%s_rope_parameters refuses the config without it)", name, hfValidatorName(name))
		}
	}
	return nil
}

// hfFactorScaling completes sc for the scalings that read only a factor
// (linear, ntk, dynamic), which must be given; dynamic's original context
// is max_position_embeddings.
func hfFactorScaling(c, rp hfObj, sc Scaling, name string, factorOK bool) (Scaling, error) {
	if !factorOK {
		return sc, rp.errf("factor", "%s: rope_type %q needs a number (transformers' rotary embedding divides by it)", missingOrNull(rp, "factor"), name)
	}
	if sc.Type != ScalingDynamic {
		return sc, nil
	}
	// _compute_dynamic_ntk_parameters: L is max_position_embeddings,
	// even where original_max_position_embeddings is given.
	maxPos, ok, err := c.int("max_position_embeddings")
	if err != nil {
		return sc, err
	}
	if !ok {
		return sc, rp.errf("factor", "rope_type %q needs max_position_embeddings (the context past which the base grows), and the config has none", name)
	}
	if maxPos <= 0 {
		return sc, c.errf("max_position_embeddings", "want a positive integer, got %d", maxPos)
	}
	sc.OrigCtx = maxPos
	return sc, nil
}

// hfContextScaling reads into sc what yarn, llama3 and longrope share: the
// original context (as transformers v5's standardize_rope_params), the
// factor when it is not given (the ratio of the contexts, except for
// llama3) and attention_factor.
func hfContextScaling(c, rp hfObj, sc *Scaling, factorOK bool) error {
	orig, origKey, err := hfOrigCtx(c, rp)
	if err != nil {
		return err
	}
	sc.OrigCtx = orig
	if !factorOK && sc.Type != ScalingLlama3 {
		// _compute_yarn_parameters and _compute_longrope_parameters: a
		// factor that is None (longrope: absent too; yarn's validator
		// refused an absent one) is the ratio of the contexts.
		maxPos, ok, err := c.int("max_position_embeddings")
		if err != nil {
			return err
		}
		if !ok {
			return rp.errf("factor", "missing, and so is max_position_embeddings to derive it from (max_position_embeddings/%s)", origKey)
		}
		if orig == 0 {
			return rp.errf("factor", "missing, and %s is 0", origKey)
		}
		sc.Factor = float64(maxPos) / float64(orig)
	}
	attn, attnOK, err := rp.num("attention_factor")
	if err != nil {
		return err
	}
	if attnOK {
		if attn == 0 {
			return rp.errf("attention_factor", "want a number > 0, got 0")
		}
		sc.AttnFactor = attn
	}
	return nil
}

// hfYaRNKeys reads yarn's own keys into sc: the betas, mscale and
// mscale_all_dim (kept only as a pair), truncate and finetuned.
func hfYaRNKeys(rp hfObj, sc *Scaling) error {
	var err error
	for _, p := range []struct {
		key string
		dst *float64
	}{
		{"beta_fast", &sc.BetaFast},
		{"beta_slow", &sc.BetaSlow},
		{"mscale", &sc.MScale},
		{"mscale_all_dim", &sc.MScaleAllDim},
	} {
		if *p.dst, _, err = rp.num(p.key); err != nil {
			return err
		}
	}
	if sc.MScale == 0 || sc.MScaleAllDim == 0 {
		// transformers: `if mscale and mscale_all_dim`, else both
		// ignored.
		sc.MScale, sc.MScaleAllDim = 0, 0
	}
	if t, ok, err := rp.bool("truncate"); err != nil {
		return err
	} else if ok {
		sc.Truncate = t
	}
	_, _, err = rp.bool("finetuned")
	return err
}

// hfLlama3Keys reads llama3's own keys into sc: the factor (required) and
// the low and high frequency factors.
func hfLlama3Keys(rp hfObj, sc *Scaling, name string, factorOK bool) error {
	if !factorOK {
		return rp.errf("factor", "%s: rope_type %q needs a number (_compute_llama3_parameters divides by it)", missingOrNull(rp, "factor"), name)
	}
	for _, p := range []struct {
		key string
		dst *float64
	}{
		{"low_freq_factor", &sc.LowFreqFactor},
		{"high_freq_factor", &sc.HighFreqFactor},
	} {
		v, ok, err := rp.num(p.key)
		if err != nil {
			return err
		}
		if !ok {
			return rp.errf(p.key, "missing: rope_type %q needs it", name)
		}
		*p.dst = v
	}
	return nil
}

// hfLongRoPEKeys reads longrope's short and long factors into sc.
func hfLongRoPEKeys(rp hfObj, sc *Scaling, name string) error {
	for _, p := range []struct {
		key string
		dst *[]float64
	}{
		{"short_factor", &sc.ShortFactor},
		{"long_factor", &sc.LongFactor},
	} {
		v, ok, err := rp.list(p.key)
		if err != nil {
			return err
		}
		if !ok {
			return rp.errf(p.key, "missing: rope_type %q needs it", name)
		}
		*p.dst = v
	}
	return nil
}

// hfRequiredKeys are the keys of the RoPE parameters that transformers'
// validators require per scaling type (modeling_rope_utils.py at
// HFSourceCommit, RotaryEmbeddingConfigMixin._validate_<type>_rope_parameters'
// required_keys), less those standardize_rope_params fills in first:
// rope_type and rope_theta always, original_max_position_embeddings (yarn,
// longrope, llama3) from the top-level key or max_position_embeddings,
// which hfOrigCtx reads likewise. default and proportional require nothing
// more.
var hfRequiredKeys = map[string][]string{
	ScalingLinear:   {"factor"},
	ScalingDynamic:  {"factor"},
	ScalingYaRN:     {"factor"},
	ScalingLlama3:   {"factor", "low_freq_factor", "high_freq_factor"},
	ScalingLongRoPE: {"short_factor", "long_factor"},
}

// hfValidatorName is the rope_type a transformers validator is named by:
// _validate_<name>_rope_parameters (su is Phi-3's first name for longrope).
func hfValidatorName(name string) string {
	if name == "su" {
		return "longrope"
	}
	return name
}

// missingOrNull says whether key is absent from o or null.
func missingOrNull(o hfObj, key string) string {
	if _, present := o.m[key]; present {
		return "null"
	}
	return "missing"
}

// hfOrigCtx returns the original (pre-training) context length and the key
// it came from: the top-level original_max_position_embeddings (Phi-3), else
// the RoPE parameters', else max_position_embeddings.
func hfOrigCtx(c, rp hfObj) (int, string, error) {
	for _, o := range []hfObj{c, rp} {
		v, ok, err := o.int("original_max_position_embeddings")
		if err != nil {
			return 0, "", err
		}
		if ok {
			if v <= 0 {
				return 0, "", o.errf("original_max_position_embeddings", "want a positive integer, got %d", v)
			}
			return v, o.prefix + "original_max_position_embeddings", nil
		}
	}
	v, ok, err := c.int("max_position_embeddings")
	if err != nil {
		return 0, "", err
	}
	if !ok {
		return 0, "", rp.errf("original_max_position_embeddings", "missing, and so is max_position_embeddings")
	}
	if v <= 0 {
		return 0, "", c.errf("max_position_embeddings", "want a positive integer, got %d", v)
	}
	return v, "max_position_embeddings", nil
}

// hfNoPE says which layers use no position embedding (iRoPE: Llama 4,
// SmolLM3), as transformers decides: from no_rope_layers, one entry per
// layer, 1 for RoPE and 0 for none; without it, a NoPE layer every
// no_rope_layer_interval layers, or every `every` layers (the model type's
// default, from its config class, named in the note; 0: none): layer i has
// RoPE unless (i+1) mod the interval is 0. It returns "" for a model with
// RoPE in every layer.
func hfNoPE(c hfObj, every int, class string) (string, error) {
	const others = "this package is for the others (with attn_temperature_tuning, Hugging Face scales a NoPE layer's queries by a temperature that grows with the position: no rotation)"
	layers, ok, err := c.list("no_rope_layers")
	if err != nil {
		return "", err
	}
	if ok {
		var nope []string
		for i, v := range layers {
			switch v {
			case 0:
				nope = append(nope, strconv.Itoa(i))
			case 1:
			default:
				return "", c.errf("no_rope_layers", "entry %d is %v: want 1 (a RoPE layer) or 0 (a NoPE layer)", i, v)
			}
		}
		if len(nope) == 0 {
			return fmt.Sprintf("NoPE layers: no_rope_layers gives all %d layers RoPE", len(layers)), nil
		}
		return fmt.Sprintf("NoPE layers (iRoPE): layers %s of %d use no position embedding (no_rope_layers); %s", strings.Join(nope, ", "), len(layers), others), nil
	}
	n, ok, err := c.int("no_rope_layer_interval")
	if err != nil {
		return "", err
	}
	from := "no_rope_layer_interval"
	switch {
	case ok && n <= 0:
		return "", c.errf("no_rope_layer_interval", "want a positive integer, got %d", n)
	case !ok && every == 0:
		return "", nil
	case !ok:
		n, from = every, class+"'s default no_rope_layer_interval"
	}
	return fmt.Sprintf("NoPE layers (iRoPE): every layer i with (i+1) mod %d = 0 (layers %d, %d, %d, …; %s %d) uses no position embedding; %s", n, n-1, 2*n-1, 3*n-1, from, n, others), nil
}
