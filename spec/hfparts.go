package spec

import "fmt"

// The rotations of a model besides its text attention's: the lightning
// indexer of DeepSeek Sparse Attention (DeepSeek-V3.2, GLM-5), and the
// vision encoder of a vision_config (Pixtral).

// hfIndexer sets spec's head and rotary dims and layout to the indexer's:
// the indexer's heads are index_head_dim values whose FIRST qk_rope_head_dim
// are rotated (DeepseekV32Indexer.forward splits q into q_rot, q_pass), with
// the pairing the table derived from the Indexer class.
func hfIndexer(c hfObj, model string, entry hfGenLayout, rot int, rotOK bool, spec *Spec, info *HFInfo) error {
	if entry.indexer == "" { // also an unknown model_type: hfLookup gave the zero entry
		return c.errf("model_type", "-hf-part %s: model_type %q has no lightning indexer in ropegen's table (transformers' DeepSeek-V3.2 and GLM-5 have one)", HFPartIndexer, model)
	}
	hd, ok, err := c.int("index_head_dim")
	if err != nil {
		return err
	}
	if !ok {
		return c.errf("index_head_dim", "missing: -hf-part %s needs the indexer's head dim", HFPartIndexer)
	}
	if !rotOK {
		return c.errf("qk_rope_head_dim", "missing: -hf-part %s rotates the first qk_rope_head_dim values of each indexer head", HFPartIndexer)
	}
	if hd <= 0 || rot > hd {
		return c.errf("index_head_dim", "want a positive integer at least qk_rope_head_dim %d, got %d", rot, hd)
	}
	spec.HeadDim, spec.Layout = hd, entry.indexer
	if rot != hd {
		spec.RotaryDim = rot
	}
	other := Interleaved
	if len(entry.layouts) == 1 {
		other = entry.layouts[0]
	}
	info.Notes = append(info.Notes, fmt.Sprintf("lightning indexer (-hf-part %s): its heads are index_head_dim = %d values whose FIRST qk_rope_head_dim = %d turn, as %s pairs (%s); the main attention (MLA) turns the last qk_rope_head_dim values of its heads as %s pairs, with the same frequencies: that is the package without -hf-part", HFPartIndexer, hd, rot, entry.indexer, entry.indexerCite, other))
	return nil
}

// hfVisionTypes are the vision encoders ropegen reads from a vision_config,
// each with its axes scheme and the function that decides it.
var hfVisionTypes = map[string]struct {
	axes   string
	layout Layout
	cite   string
}{
	// PixtralRotaryEmbedding.compute_default_rope_parameters: rows take the
	// even frequencies (freqs[::2]), columns the odd (freqs[1::2]), cat as
	// (rows, columns), then apply_rotary_pos_emb with rotate_half.
	"pixtral": {AxesPixtral, NeoX, "modeling_pixtral.PixtralRotaryEmbedding (rows freqs[::2], columns freqs[1::2]) and apply_rotary_pos_emb → rotate_half"},
}

// hfVisionSpec reads the vision encoder of a config's vision_config.
func hfVisionSpec(top hfObj) (Spec, HFInfo, error) {
	fail := func(err error) (Spec, HFInfo, error) { return Spec{}, HFInfo{}, err }
	v, ok, err := top.obj("vision_config")
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fail(&HFConfigError{Path: top.path, Key: "vision_config", Msg: fmt.Sprintf("missing: -hf-part %s reads the vision encoder of a multimodal config", HFPartVision)})
	}
	model, ok, err := v.str("model_type")
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fail(v.errf("model_type", "missing: ropegen needs the vision encoder's model type"))
	}
	vt, known := hfVisionTypes[model]
	if !known {
		var names []string
		for k := range hfVisionTypes {
			names = append(names, k)
		}
		return fail(v.errf("model_type", "%q: -hf-part %s reads the vision encoders %s", model, HFPartVision, quoteAll(names)))
	}
	spec := DefaultSpec()
	spec.Layout, spec.Axes = vt.layout, vt.axes
	hd, err := hfReadHeadDim(v, 0, 0)
	if err != nil {
		return fail(err)
	}
	spec.HeadDim = hd
	rp, rpOK, err := hfRoPEParams(v)
	if err != nil {
		return fail(err)
	}
	base, baseOK := 0.0, false
	if rpOK {
		name, key, err := hfRopeType(rp)
		if err != nil {
			return fail(err)
		}
		if name != "default" {
			return fail(rp.errf(key, "%q: %s's vision RoPE takes no scaling (its rotary embedding refuses any but \"default\")", name, model))
		}
		for k := range rp.m {
			if k != "rope_type" && k != "type" && k != "rope_theta" {
				return fail(rp.errf(k, "unknown key for the vision RoPE (ropegen reads rope_type and rope_theta)"))
			}
		}
		if base, baseOK, err = rp.num("rope_theta"); err != nil {
			return fail(err)
		}
	}
	if !baseOK {
		if base, baseOK, err = v.num("rope_theta"); err != nil {
			return fail(err)
		}
	}
	if baseOK {
		spec.Base = base
	}
	info := HFInfo{ModelType: model, Notes: []string{fmt.Sprintf("vision encoder (-hf-part %s): vision_config's model_type %q, 2-D RoPE (%s). Each patch has two positions, its row and its column in the image's grid of patches (ApplyAxes takes row, column); transformers indexes one table by row·(image_size/patch_size) + column, which gives the same angles", HFPartVision, model, vt.cite)}}
	return spec, info, nil
}
