package spec

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Per-layer RoPE: which RoPE each layer type of a model uses, or none.
// transformers v5 names each layer's type in layer_types (or a config
// class derives them from a pattern) and gives rope_parameters either once
// for every layer or keyed by layer type; older configs give the sliding
// layers' base apart (Gemma 3's rope_local_base_freq). Some layer types
// have no RoPE: linear-attention blocks, EXAONE 4's global layers, every
// attention layer of a Granite 4 hybrid with position_embedding_type
// "nope".

// hfRoPESource is where one layer type's RoPE comes from.
type hfRoPESource struct {
	rp        hfObj   // the RoPE parameters
	rpOK      bool    // false: the default RoPE (no scaling)
	base      float64 // a base that wins over rp's and the config's (the legacy local base); 0: none
	noScaling bool    // the config's rope_scaling is not these layers' (Gemma 3's and OLMo 3's sliding layers)
	headDim   int     // these layers' head dim when it is not the config's (Gemma 4's global_head_dim); 0: the config's
	nope      string  // why these layers use no RoPE; "" when they use one
	missing   bool    // rope_parameters is keyed by layer type but has no key for this one
}

// hfLayerGroup is one layer type with its layers and RoPE.
type hfLayerGroup struct {
	typ     string
	layers  []int // nil when the config lists none
	of      int
	src     hfRoPESource
	summary string
}

// hfStrList returns the array of strings at key.
func (o hfObj) strList(key string) ([]string, bool, error) {
	v, ok := o.get(key)
	if !ok {
		return nil, false, nil
	}
	a, isArr := v.([]any)
	if !isArr {
		return nil, true, o.errf(key, "want an array of strings, got %s", jsonKind(v))
	}
	l := make([]string, len(a))
	for i, e := range a {
		s, isStr := e.(string)
		if !isStr {
			return nil, true, o.errf(key, "element %d: want a string, got %s", i, jsonKind(e))
		}
		l[i] = s
	}
	return l, true, nil
}

// hfLayerTypes returns each layer's type: layer_types (or Granite 4's
// layers_block_type), the legacy names mapped as transformers does, else the
// config class's default pattern; nil when neither says.
func hfLayerTypes(c hfObj, model string) ([]string, string, error) {
	for _, k := range []string{"layer_types", "layers_block_type"} {
		l, ok, err := c.strList(k)
		if err != nil {
			return nil, "", err
		}
		if ok {
			for i, t := range l {
				if n, ok := hfLegacyLayerTypes[t]; ok {
					l[i] = n
				}
			}
			return l, k, nil
		}
	}
	rule, ok := hfLayerRuleFor(model)
	if !ok {
		return nil, "", nil
	}
	n, ok, err := c.int("num_hidden_layers")
	if err != nil || !ok || n <= 0 {
		return nil, "", err
	}
	if rule.noRoPEFull != "" {
		// EXAONE 4: no sliding window, no sliding layers.
		if v, ok := c.get("sliding_window"); !ok || v == nil {
			return nil, "", nil
		}
	}
	period, from := rule.period, rule.cite+"'s default"
	if rule.periodKey != "" {
		if v, ok := c.get(rule.periodKey); ok {
			from = rule.periodKey
			switch v := v.(type) {
			case string:
				// EXAONE 4's "LLLG": L a sliding layer, G a global one.
				if v == "" || strings.Trim(v, "LG") != "" {
					return nil, "", c.errf(rule.periodKey, "want a period or a pattern of L (local) and G (global) layers, got %q", v)
				}
				l := make([]string, n)
				for i := range l {
					l[i] = hfFullLayers
					if v[i%len(v)] == 'L' {
						l[i] = rule.other
					}
				}
				return l, rule.periodKey, nil
			default:
				p, _, err := c.int(rule.periodKey)
				if err != nil {
					return nil, "", err
				}
				if p <= 0 {
					return nil, "", c.errf(rule.periodKey, "want a positive integer, got %d", p)
				}
				period = p
			}
		}
	}
	l := make([]string, n)
	for i := range l {
		l[i] = rule.other
		if (i+1)%period == 0 || (rule.firstFull && i == 0) {
			l[i] = hfFullLayers
		}
	}
	return l, from, nil
}

// hfRoPEParams returns the config's RoPE parameters: rope_scaling wins over
// rope_parameters, as in transformers v4 (which knows only rope_scaling)
// and v5 (convert_rope_params_to_dict).
func hfRoPEParams(c hfObj) (hfObj, bool, error) {
	rp, ok, err := c.obj("rope_scaling")
	if err != nil || ok {
		return rp, ok, err
	}
	return c.obj("rope_parameters")
}

// The RoPE parameters per layer type that a config class's __post_init__
// sets when the config has none, which transformers then uses whatever the
// config's rope_theta says (hfLayerRule.params).
var (
	// MiMoV2FlashConfig.__post_init__ ("matching the XiaomiMiMo/MiMo-V2-Flash pretrained thetas").
	mimoV2FlashParams = map[string]any{
		hfFullLayers:    map[string]any{"rope_type": "default", "rope_theta": json.Number("5000000"), "partial_rotary_factor": json.Number("0.334")},
		hfSlidingLayers: map[string]any{"rope_type": "default", "rope_theta": json.Number("10000"), "partial_rotary_factor": json.Number("0.334")},
	}
	// Gemma4TextConfig.__post_init__.
	gemma4Params = map[string]any{
		hfSlidingLayers: map[string]any{"rope_type": "default", "rope_theta": json.Number("10000")},
		hfFullLayers:    map[string]any{"rope_type": "proportional", "partial_rotary_factor": json.Number("0.25"), "rope_theta": json.Number("1000000")},
	}
)

// hfLayerGroups returns the model's layer types, in the order their first
// layers come, each with where its RoPE comes from.
func hfLayerGroups(c hfObj, model string) ([]hfLayerGroup, error) {
	types, typesFrom, err := hfLayerTypes(c, model)
	if err != nil {
		return nil, err
	}
	rule, _ := hfLayerRuleFor(model)
	rp, rpOK, err := hfRoPEParams(c)
	if err != nil {
		return nil, err
	}
	if !rpOK && rule.params != nil {
		rp, rpOK = hfObj{path: c.path, prefix: c.prefix + "(" + rule.cite + "'s default rope_parameters).", m: rule.params}, true
	}

	// rope_parameters keyed by layer type (transformers v5).
	var perType map[string]hfObj
	if rpOK {
		var keys []string
		for k, v := range rp.m {
			if _, isObj := v.(map[string]any); isObj {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		if len(keys) > 0 {
			if len(keys) != len(rp.m) {
				return nil, c.errf(strings.TrimSuffix(strings.TrimPrefix(rp.prefix, c.prefix), "."), "mixes per-layer-type objects (%s) with plain keys: want one or the other", strings.Join(keys, ", "))
			}
			perType = map[string]hfObj{}
			for _, k := range keys {
				o, _, err := rp.obj(k)
				if err != nil {
					return nil, err
				}
				perType[k] = o
				if types != nil && !slices.Contains(types, k) {
					return nil, rp.errf(k, "RoPE parameters for layer type %q, which no layer has (%s gives %s)", k, typesFrom, strings.Join(distinct(types), ", "))
				}
			}
		}
	}

	// The legacy local base: the sliding layers' default RoPE.
	localBase, localOK := 0.0, false
	if perType == nil {
		keys := []string{"rope_local_base_freq"}
		if rule.localBaseKey != "" && rule.localBaseKey != keys[0] {
			keys = append(keys, rule.localBaseKey)
		}
		for _, k := range keys {
			v, ok, err := c.num(k)
			if err != nil {
				return nil, err
			}
			if ok {
				localBase, localOK = v, true
				break
			}
		}
		if !localOK && rule.localBase != 0 {
			localBase, localOK = rule.localBase, true
		}
	}

	// The layer types, in order.
	n := len(types)
	var order []string
	byType := map[string][]int{}
	for i, t := range types {
		if _, ok := byType[t]; !ok {
			order = append(order, t)
		}
		byType[t] = append(byType[t], i)
	}
	if types == nil {
		switch {
		case perType != nil:
			for k := range perType {
				order = append(order, k)
			}
			sort.Strings(order)
		case localOK:
			order = []string{hfFullLayers, hfSlidingLayers}
		default:
			order = []string{hfFullLayers}
		}
	}

	// Granite 4 hybrids: position_embedding_type "rope", else no RoPE.
	posType, posOK, err := c.str("position_embedding_type")
	if err != nil {
		return nil, err
	}
	slidingWindow := false
	if v, ok := c.get("sliding_window"); ok && v != nil {
		slidingWindow = true
	}

	groups := make([]hfLayerGroup, len(order))
	for i, t := range order {
		g := hfLayerGroup{typ: t, layers: byType[t], of: n}
		switch {
		case hfNoPETypes[t] != "":
			g.src.nope = hfNoPETypes[t]
		case posOK && posType != "rope":
			g.src.nope = fmt.Sprintf("position_embedding_type %q: the attention gets no position embeddings (transformers builds a rotary embedding only for \"rope\")", posType)
		case t == hfFullLayers && rule.noRoPEFull != "" && slidingWindow:
			g.src.nope = rule.noRoPEFull
		case perType != nil:
			o, ok := perType[t]
			g.src.rp, g.src.rpOK, g.src.missing = o, ok, !ok
			if !ok {
				g.src.rp.prefix = rp.prefix + t + "."
				g.summary = "no RoPE parameters for this layer type"
			}
		case t == hfSlidingLayers && localOK:
			g.src.base, g.src.noScaling = localBase, true
			g.src.rp, g.src.rpOK = rp, rpOK
		case t == hfSlidingLayers && rule.scalingFullOnly:
			g.src.rp, g.src.rpOK, g.src.noScaling = rp, rpOK, true
		default:
			g.src.rp, g.src.rpOK = rp, rpOK
		}
		if t == hfFullLayers && rule.headDimKey != "" && g.src.nope == "" {
			hd, ok, err := c.int(rule.headDimKey)
			if err != nil {
				return nil, err
			}
			if !ok {
				hd = rule.headDim
			}
			if hd <= 0 {
				return nil, c.errf(rule.headDimKey, "want a positive integer, got %d", hd)
			}
			g.src.headDim = hd
		}
		groups[i] = g
	}
	return groups, nil
}

func distinct(l []string) []string {
	var out []string
	for _, x := range l {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// hfChoose returns the index of the group whose RoPE the spec is: the
// requested layer type, else the full-attention layers', else the first
// that has one.
func hfChoose(c hfObj, model string, groups []hfLayerGroup, want string) (int, error) {
	var names []string
	for _, g := range groups {
		names = append(names, g.typ)
	}
	if want != "" {
		for i, g := range groups {
			if g.typ != want {
				continue
			}
			if g.src.nope != "" {
				return 0, &HFConfigError{Path: c.path, Msg: fmt.Sprintf("-layer-type %q: these layers use no RoPE (%s)", want, g.src.nope)}
			}
			if g.src.missing {
				return 0, &HFConfigError{Path: c.path, Key: strings.TrimSuffix(g.src.rp.prefix, "."), Msg: fmt.Sprintf("missing: the config gives RoPE parameters per layer type but none for %q", want)}
			}
			return i, nil
		}
		return 0, &HFConfigError{Path: c.path, Msg: fmt.Sprintf("-layer-type %q: model_type %q has no layers of that type (its layer types: %s)", want, model, strings.Join(names, ", "))}
	}
	first := -1
	for i, g := range groups {
		if g.src.nope != "" || g.src.missing {
			continue
		}
		if g.typ == hfFullLayers {
			return i, nil
		}
		if first < 0 {
			first = i
		}
	}
	if first < 0 {
		var why []string
		for _, g := range groups {
			why = append(why, g.typ+": "+g.src.nope)
		}
		return 0, &HFConfigError{Path: c.path, Msg: fmt.Sprintf("no layer of model_type %q uses RoPE (%s): there is no rotation to generate", model, strings.Join(why, "; "))}
	}
	return first, nil
}

// hfLayerNotes turns the groups into HFInfo.Layers and a note per layer
// type for -explain, when the model has more than one layer type.
func hfLayerNotes(groups []hfLayerGroup, chosen int, notes []string) ([]HFLayer, []string) {
	var out []HFLayer
	for i, g := range groups {
		l := HFLayer{Type: g.typ, Layers: g.layers, Of: g.of, NoPE: g.src.nope, Chosen: i == chosen}
		if g.src.nope == "" {
			l.RoPE = g.summary
		}
		out = append(out, l)
	}
	if len(groups) < 2 {
		return out, notes
	}
	same := true
	for _, g := range groups {
		if g.src.nope != "" || g.summary != groups[chosen].summary {
			same = false
		}
	}
	for i, g := range groups {
		where := ""
		if g.layers != nil {
			where = " " + formatLayers(g.layers, g.of)
		}
		var what string
		switch {
		case g.src.nope != "":
			what = "no RoPE: " + g.src.nope
		case i == chosen:
			what = g.summary + " — this package"
		case g.summary == groups[chosen].summary:
			what = g.summary + " — the same RoPE as this package"
		default:
			what = g.summary + " — -layer-type " + g.typ + " writes its package"
		}
		notes = append(notes, fmt.Sprintf("layers of type %s%s: %s", g.typ, where, what))
	}
	if !same && groups[chosen].typ != hfFullLayers {
		notes = append(notes, fmt.Sprintf("this package is the %s layers' RoPE", groups[chosen].typ))
	}
	return out, notes
}

// hfSummary says in a few words what RoPE s is.
func hfSummary(s Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "head %d, rotary %d, base %s", s.HeadDim, s.Rotary(), shortFloat(s.Base))
	sc := &s.Scaling
	switch sc.Kind() {
	case ScalingNone:
		b.WriteString(", no scaling")
	case ScalingProportional:
		fmt.Fprintf(&b, ", proportional: %d of %d pairs turn", sc.RopeAngles, s.Rotary()/2)
		if sc.Factor != 0 && sc.Factor != 1 {
			fmt.Fprintf(&b, ", factor %s", shortFloat(sc.Factor))
		}
	default:
		fmt.Fprintf(&b, ", %s", sc.Kind())
		if sc.Factor != 0 {
			fmt.Fprintf(&b, " factor %s", shortFloat(sc.Factor))
		}
		if sc.OrigCtx != 0 {
			fmt.Fprintf(&b, " (L %d)", sc.OrigCtx)
		}
	}
	if s.Axes != AxesNone {
		fmt.Fprintf(&b, ", axes %s", s.Axes)
	}
	return b.String()
}

// formatLayers lists layer indices compactly: runs as a–b, a long list by
// its first runs and its last, with how many of n.
func formatLayers(idx []int, n int) string {
	if n > 0 && len(idx) == n {
		return fmt.Sprintf("(all %d layers)", n)
	}
	var runs []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		switch {
		case i == j:
			runs = append(runs, strconv.Itoa(idx[i]))
		case j == i+1:
			runs = append(runs, strconv.Itoa(idx[i]), strconv.Itoa(idx[j]))
		default:
			runs = append(runs, fmt.Sprintf("%d–%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	if len(runs) > 6 {
		runs = append(append(runs[:3:3], "…"), runs[len(runs)-1])
	}
	of := ""
	if n > 0 {
		of = fmt.Sprintf(" of %d", n)
	}
	return fmt.Sprintf("(%d%s: %s)", len(idx), of, strings.Join(runs, ", "))
}

// HFLayerRoPE is the RoPE of one layer type of a model, as
// LoadHFConfigLayers returns it.
type HFLayerRoPE struct {
	Type string // the layer type, HFLayer.Type; "" when the config names none
	Spec Spec   // LoadHFConfigWith's spec with HFOptions.LayerType = Type
	Info HFInfo // and its info, this layer type Chosen
}

// LoadHFConfigLayers reads a Hugging Face config.json once and returns the
// RoPE of every layer type of the model that has one, in the order their
// first layers come (HFInfo.Layers'), each exactly as LoadHFConfigWith
// returns it with opt.LayerType set to that type: Gemma 3's sliding and
// global layers, OLMo 3's, MiMo-V2-Flash's, Gemma 4's two head dims. Layer
// types without RoPE (linear attention, EXAONE 4's global layers) are left
// out. A model whose layers all use one RoPE gives one entry, of its
// layer type (full_attention when the config names none); a part without
// layers (HFPartVision) one of type "". An engine that serves every layer
// of a model needs each of these.
//
// opt.LayerType and opt.Local must be unset: the function picks every
// type. Errors are LoadHFConfigWith's, including one layer type's whose
// RoPE cannot be read (a spec that serves only some layers would be
// wrong for the rest).
func LoadHFConfigLayers(path string, opt HFOptions) ([]HFLayerRoPE, error) {
	if opt.LayerType != "" || opt.Local {
		return nil, &HFConfigError{Path: path, Msg: fmt.Sprintf("LoadHFConfigLayers loads every layer type: want HFOptions.LayerType empty and Local false, got %q, %t", opt.LayerType, opt.Local)}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &HFConfigError{Path: path, Msg: "cannot read the config: " + err.Error()}
	}
	load := func(o HFOptions) (Spec, HFInfo, error) {
		obj, err := decodeHFConfig(path, data)
		if err != nil {
			return Spec{}, HFInfo{}, err
		}
		return hfSpec(obj, o)
	}
	s, info, err := load(opt)
	if err != nil {
		return nil, err
	}
	var out []HFLayerRoPE
	for _, l := range info.Layers {
		if l.NoPE != "" {
			continue
		}
		if l.Chosen {
			out = append(out, HFLayerRoPE{Type: l.Type, Spec: s, Info: info})
			continue
		}
		o := opt
		o.LayerType = l.Type
		ls, li, err := load(o)
		if err != nil {
			return nil, err
		}
		out = append(out, HFLayerRoPE{Type: l.Type, Spec: ls, Info: li})
	}
	if len(out) == 0 {
		out = append(out, HFLayerRoPE{Spec: s, Info: info})
	}
	return out, nil
}
