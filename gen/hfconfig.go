package gen

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

// LoadHFConfig reads a Hugging Face config.json and returns the spec it
// describes, starting from DefaultSpec. It reads what Hugging Face
// transformers (v4 and v5) read to build the model's rotary embedding:
//
//   - HeadDim: head_dim, else hidden_size/num_attention_heads (GPT-J and
//     CodeGen: n_embd/n_head), else the model type's default.
//   - RotaryDim: int(HeadDim·partial_rotary_factor) (also inside v5's
//     rope_parameters), int(HeadDim·rotary_pct) (GPT-NeoX) or rotary_dim
//     (GPT-J), else the model type's default (GPT-NeoX 0.25, Phi 0.5,
//     StableLM 0.25, GPT-J 64); 0 when it is the whole head.
//   - Base: rope_theta in the RoPE parameters, else rope_theta, else
//     rotary_emb_base (GPT-NeoX), else 10000.
//   - Scaling: rope_scaling, else v5's rope_parameters, by rope_type (or the
//     older type): default, linear, ntk, yarn, llama3 and longrope (also
//     the older name su). The original context is the top-level
//     original_max_position_embeddings (Phi-3), else the one in the RoPE
//     parameters, else max_position_embeddings; a yarn or longrope factor
//     that is missing is max_position_embeddings over it, as in
//     transformers v5. yarn's mscale and mscale_all_dim are kept only as a
//     pair, since transformers ignores either alone.
//   - Layout: interleaved for GPT-J, CodeGen, Cohere and GLM, whose
//     rotations pair adjacent values; neox (rotate_half) for every other
//     model type.
//
// Everything else keeps DefaultSpec's value; the package name stays
// "rope". Flags given on the command line are meant to override the result
// field by field, so LoadHFConfig does not validate it: Spec.Validate does.
//
// Errors are *HFConfigError naming the path and the key: an unreadable file
// or malformed JSON, a value of the wrong JSON type, a key in the RoPE
// parameters that ropegen does not know (rather than ignore one that may
// change the frequencies), a scaling type it cannot generate (dynamic NTK
// depends on the sequence length at run time), per-layer-type RoPE
// parameters, and model types whose rotary embedding is not one of ROPE.md's
// (DeepSeek's MLA, multimodal and per-layer RoPE).
func LoadHFConfig(path string) (Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return Spec{}, &HFConfigError{Path: path, Msg: "cannot read the config: " + err.Error()}
	}
	obj, err := decodeHFConfig(path, data)
	if err != nil {
		return Spec{}, err
	}
	return hfSpec(obj)
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

// hfInterleaved are the model types whose Hugging Face implementation
// rotates adjacent pairs (2i, 2i+1); every other model type uses
// rotate_half, the neox layout.
var hfInterleaved = map[string]bool{
	"gptj":    true, // rotate_every_two
	"codegen": true, // rotate_every_two
	"cohere":  true, // rotate_half on x[..., ::2], x[..., 1::2]
	"cohere2": true,
	"glm":     true, // cos/sin repeat_interleave'd
	"glm4":    true,
}

// hfUnsupported are model types whose rotary embedding ROPE.md does not
// describe.
var hfUnsupported = map[string]string{
	"deepseek_v2": "MLA rotates a separate qk_rope_head_dim part of each head",
	"deepseek_v3": "MLA rotates a separate qk_rope_head_dim part of each head",
	"gemma3":      "local and global layers use different bases",
	"gemma3_text": "local and global layers use different bases",
	"qwen2_vl":    "multimodal RoPE (mrope_section) rotates by three positions",
	"qwen2_5_vl":  "multimodal RoPE (mrope_section) rotates by three positions",
	"chatglm":     "2D RoPE",
	"llama4":      "layers without RoPE, and the text model's settings are in text_config",
	"llama4_text": "layers without RoPE",
}

// hfDefaults are the defaults of the transformers config classes for the
// keys LoadHFConfig reads, where they are not the general ones.
var hfDefaults = map[string]struct {
	headDim   int     // 0: hidden_size/num_attention_heads
	rotaryKey string  // the key rotary is the default of
	rotary    float64 // fraction of the head, or the rotary dim for rotary_dim
}{
	"gpt_neox": {rotaryKey: "rotary_pct", rotary: 0.25},
	"phi":      {rotaryKey: "partial_rotary_factor", rotary: 0.5},
	"stablelm": {rotaryKey: "partial_rotary_factor", rotary: 0.25},
	"gptj":     {rotaryKey: "rotary_dim", rotary: 64},
	"gemma":    {headDim: 256},
	"gemma2":   {headDim: 256},
}

// hfScalingTypes maps Hugging Face rope_type names to ropegen's.
var hfScalingTypes = map[string]string{
	"default":  ScalingNone,
	"linear":   ScalingLinear,
	"ntk":      ScalingNTK,
	"yarn":     ScalingYaRN,
	"llama3":   ScalingLlama3,
	"longrope": ScalingLongRoPE,
	"su":       ScalingLongRoPE, // Phi-3's first name for longrope
}

// hfScalingKeys are the keys each scaling type reads from the RoPE
// parameters, besides rope_type, type, rope_theta and partial_rotary_factor.
var hfScalingKeys = map[string][]string{
	ScalingNone:     nil,
	ScalingLinear:   {"factor"},
	ScalingNTK:      {"factor"},
	ScalingYaRN:     {"factor", "original_max_position_embeddings", "attention_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate", "finetuned"},
	ScalingLlama3:   {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"},
	ScalingLongRoPE: {"factor", "original_max_position_embeddings", "attention_factor", "short_factor", "long_factor"},
}

// hfSpec turns a config's top-level object into a spec.
func hfSpec(c hfObj) (Spec, error) {
	spec := DefaultSpec()

	model, ok, err := c.str("model_type")
	if err != nil {
		return Spec{}, err
	}
	if !ok {
		return Spec{}, c.errf("model_type", "missing: ropegen needs the model type to pick the pair layout")
	}
	if why, bad := hfUnsupported[model]; bad {
		return Spec{}, c.errf("model_type", "%q is not supported: %s", model, why)
	}
	for _, k := range []string{"qk_rope_head_dim", "rope_local_base_freq", "mrope_section"} {
		if _, ok := c.get(k); ok {
			return Spec{}, c.errf(k, "not supported: ropegen generates one plain RoPE per spec (model_type %q)", model)
		}
	}
	spec.Layout = NeoX
	if hfInterleaved[model] {
		spec.Layout = Interleaved
	}
	defaults := hfDefaults[model]

	// Head dim.
	hd, ok, err := c.int("head_dim")
	if err != nil {
		return Spec{}, err
	}
	if ok && hd < 0 {
		return Spec{}, c.errf("head_dim", "want a positive integer, got %d", hd)
	}
	if !ok || hd == 0 {
		hd, err = hfHeadDim(c, defaults.headDim)
		if err != nil {
			return Spec{}, err
		}
	}
	spec.HeadDim = hd

	// The RoPE parameters: rope_scaling wins over rope_parameters, as in
	// transformers v4 (which knows only rope_scaling) and v5.
	rp, rpOK, err := c.obj("rope_scaling")
	if err != nil {
		return Spec{}, err
	}
	if !rpOK {
		if rp, rpOK, err = c.obj("rope_parameters"); err != nil {
			return Spec{}, err
		}
	}
	if rpOK {
		var layers []string
		for k, v := range rp.m {
			if _, isObj := v.(map[string]any); isObj {
				layers = append(layers, k)
			}
		}
		if len(layers) > 0 {
			sort.Strings(layers)
			return Spec{}, rp.errf(layers[0], "per-layer-type RoPE parameters (%s) are not supported: ropegen generates one RoPE per spec", strings.Join(layers, ", "))
		}
	}

	// Base.
	base, baseOK := 0.0, false
	if rpOK {
		if base, baseOK, err = rp.num("rope_theta"); err != nil {
			return Spec{}, err
		}
	}
	for _, k := range []string{"rope_theta", "rotary_emb_base"} {
		if baseOK {
			break
		}
		if base, baseOK, err = c.num(k); err != nil {
			return Spec{}, err
		}
	}
	if baseOK {
		spec.Base = base
	}

	// Rotary dim.
	rot, err := hfRotaryDim(c, rp, rpOK, hd, defaults.rotaryKey, defaults.rotary)
	if err != nil {
		return Spec{}, err
	}
	if rot != hd {
		spec.RotaryDim = rot
	}

	// Scaling.
	if !rpOK {
		return spec, nil
	}
	sc, err := hfScaling(c, rp)
	if err != nil {
		return Spec{}, err
	}
	spec.Scaling = sc
	return spec, nil
}

// hfHeadDim is hidden_size/num_attention_heads (or GPT-2 style names), or
// def, the model type's default head_dim, when it has one.
func hfHeadDim(c hfObj, def int) (int, error) {
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
		f, ok, err := o.num(key)
		if !ok || err != nil {
			return err
		}
		if !(f > 0 && f <= 1) {
			return o.errf(key, "want a fraction of the head in (0, 1], got %v", f)
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

// hfScaling reads the RoPE parameters rp of config c.
func hfScaling(c, rp hfObj) (Scaling, error) {
	sc := Scaling{Type: ScalingNone, Truncate: true}
	typeKey := "rope_type"
	name, ok, err := rp.str(typeKey)
	if err != nil {
		return sc, err
	}
	if !ok {
		typeKey = "type"
		if name, ok, err = rp.str(typeKey); err != nil {
			return sc, err
		}
	}
	if !ok {
		typeKey, name = "rope_type", "default"
	}
	typ, known := hfScalingTypes[name]
	switch {
	case name == "dynamic":
		return sc, rp.errf(typeKey, "scaling type %q is not supported: dynamic NTK rescales the base with the sequence length at run time, and a ropegen package's frequencies are fixed (for a table built for length n, use -scaling ntk -factor s·n/L − (s−1), L = max_position_embeddings)", name)
	case !known:
		return sc, rp.errf(typeKey, "scaling type %q is not supported (ropegen reads default, linear, ntk, yarn, llama3, longrope)", name)
	}
	sc.Type = typ

	allowed := map[string]bool{"rope_type": true, "type": true, "rope_theta": true, "partial_rotary_factor": true}
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
			what = strings.Join(known, ", ")
		}
		return sc, rp.errf(unknown[0], "unknown key for rope_type %s (ropegen reads: %s)", name, what)
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
	if typ == ScalingLinear || typ == ScalingNTK {
		if !factorOK {
			return sc, rp.errf("factor", "missing: rope_type %s needs it", name)
		}
		return sc, nil
	}

	// The original context: as transformers v5's standardize_rope_params.
	orig, origKey, err := hfOrigCtx(c, rp)
	if err != nil {
		return sc, err
	}
	sc.OrigCtx = orig
	if !factorOK && typ != ScalingLlama3 {
		// transformers v5: the factor defaults to the ratio of the
		// contexts (Phi-3's longrope, DeepSeek's yarn).
		maxPos, ok, err := c.int("max_position_embeddings")
		if err != nil {
			return sc, err
		}
		if !ok {
			return sc, rp.errf("factor", "missing, and so is max_position_embeddings to derive it from (max_position_embeddings/%s)", origKey)
		}
		if orig == 0 {
			return sc, rp.errf("factor", "missing, and %s is 0", origKey)
		}
		sc.Factor = float64(maxPos) / float64(orig)
	}

	attn, attnOK, err := rp.num("attention_factor")
	if err != nil {
		return sc, err
	}
	if attnOK {
		if attn == 0 {
			return sc, rp.errf("attention_factor", "want a number > 0, got 0")
		}
		sc.AttnFactor = attn
	}

	switch typ {
	case ScalingYaRN:
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
				return sc, err
			}
		}
		if sc.MScale == 0 || sc.MScaleAllDim == 0 {
			// transformers: `if mscale and mscale_all_dim`, else both
			// ignored.
			sc.MScale, sc.MScaleAllDim = 0, 0
		}
		if t, ok, err := rp.bool("truncate"); err != nil {
			return sc, err
		} else if ok {
			sc.Truncate = t
		}
		if _, _, err := rp.bool("finetuned"); err != nil {
			return sc, err
		}
	case ScalingLlama3:
		if !factorOK {
			return sc, rp.errf("factor", "missing: rope_type llama3 needs it")
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
				return sc, err
			}
			if !ok {
				return sc, rp.errf(p.key, "missing: rope_type llama3 needs it")
			}
			*p.dst = v
		}
	case ScalingLongRoPE:
		for _, p := range []struct {
			key string
			dst *[]float64
		}{
			{"short_factor", &sc.ShortFactor},
			{"long_factor", &sc.LongFactor},
		} {
			v, ok, err := rp.list(p.key)
			if err != nil {
				return sc, err
			}
			if !ok {
				return sc, rp.errf(p.key, "missing: rope_type %s needs it", name)
			}
			*p.dst = v
		}
	}
	return sc, nil
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
