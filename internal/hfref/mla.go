package hfref

import "math"

// DeepSeek's MLA in transformers (modeling_deepseek_v3.py, and the same
// functions in modeling_deepseek_v2.py and the MLA models after them, at
// the snapshot spec.HFSourceCommit names), transcribed into float64 Go.

// YarnGetMScale is yarn_get_mscale(scale, mscale): 1 for scale ≤ 1, else
// 0.1·mscale·ln(scale) + 1.
func YarnGetMScale(scale, mscale float64) float64 {
	if scale <= 1 {
		return 1.0
	}
	return 0.1*mscale*math.Log(scale) + 1.0
}

// YarnApplyMScale is yarn_apply_mscale(rope_parameters, scaling), with the
// rope_parameters it reads given apart: rope_type ("default" when the
// config has none), factor and mscale_all_dim (0 when absent). The
// attention's softmax scale is YarnApplyMScale(…, qk_head_dim^−0.5).
func YarnApplyMScale(ropeType string, factor, mscaleAllDim, scaling float64) float64 {
	if ropeType != "default" {
		if mscaleAllDim != 0 {
			mscale := YarnGetMScale(factor, mscaleAllDim)
			scaling = scaling * mscale * mscale
		}
	}
	return scaling
}

// CatFreqs is transformers' cos/sin layout for angles a: cat((a, a)) with
// each half through f (math.Cos or math.Sin).
func CatFreqs(a []float64, f func(float64) float64) []float64 {
	out := make([]float64, 2*len(a))
	for i, v := range a {
		out[i] = f(v)
		out[i+len(a)] = out[i]
	}
	return out
}

// RotateHalf is rotate_half(x): cat((−x[d/2:], x[:d/2])).
func RotateHalf(x []float64) []float64 {
	h := len(x) / 2
	out := make([]float64, len(x))
	for i := range h {
		out[i] = -x[h+i]
		out[h+i] = x[i]
	}
	return out
}

// ApplyRotaryPosEmb is apply_rotary_pos_emb for one head x:
// x·cos + rotate_half(x)·sin, cos and sin as CatFreqs gives them.
func ApplyRotaryPosEmb(x, cos, sin []float64) []float64 {
	r := RotateHalf(x)
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i]*cos[i] + r[i]*sin[i]
	}
	return out
}

// ApplyRotaryPosEmbInterleave is apply_rotary_pos_emb_interleave for one
// head x (DeepSeek-V3's attention when config.rope_interleave): cos and
// sin cut to their first half (the angle of each pair), x1 = x[0::2],
// x2 = x[1::2], and the result cat([x1·cos − x2·sin, x2·cos + x1·sin]).
func ApplyRotaryPosEmbInterleave(x, cos, sin []float64) []float64 {
	h := len(x) / 2
	out := make([]float64, len(x))
	for i := range h {
		x1, x2 := x[2*i], x[2*i+1]
		out[i] = x1*cos[i] - x2*sin[i]
		out[h+i] = x2*cos[i] + x1*sin[i]
	}
	return out
}

// DeInterleave is the de-interleaving that apply_rotary_pos_emb_interleave
// did before rotate_half when DeepSeek-V3 came to transformers (commit
// eca74d1367, "[WIP] add deepseek-v3": q.view(b, h, s, d // 2,
// 2).transpose(4, 3).reshape(b, h, s, d)), whose docstring the present one
// says it is bit-identical to: the even values, then the odd ones.
func DeInterleave(x []float64) []float64 {
	h := len(x) / 2
	out := make([]float64, len(x))
	for i := range h {
		out[i], out[h+i] = x[2*i], x[2*i+1]
	}
	return out
}
