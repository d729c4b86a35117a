package hfref

import "math"

// The QK-norms of Hugging Face transformers, transcribed from their forward
// methods into float64 Go (torch's float32 tensors become float64; each
// keeps its own order of operations). x is what the norm runs over (its
// last dimension): one head for Qwen3, Gemma 3 and Llama 4, the whole q (or
// k) projection of a token for OLMo 2. The caller's rotation (before or
// after) is not part of them.

// rsqrtMeanSquare is torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps):
// the sum of the squares in index order, divided by the count, plus eps,
// then 1/sqrt.
func rsqrtMeanSquare(x []float64, eps float64) float64 {
	var sum float64
	for _, v := range x {
		sum += v * v
	}
	variance := sum / float64(len(x))
	return 1 / math.Sqrt(variance+eps)
}

// NormScale is the scale every norm below multiplies x by:
// rsqrt(mean(x²) + eps).
func NormScale(x []float64, eps float64) float64 { return rsqrtMeanSquare(x, eps) }

// Qwen3RMSNorm is modeling_qwen3.Qwen3RMSNorm.forward: hidden_states *
// torch.rsqrt(variance + variance_epsilon), then self.weight * that.
func Qwen3RMSNorm(x, weight []float64, eps float64) []float64 {
	r := rsqrtMeanSquare(x, eps)
	y := make([]float64, len(x))
	for j, v := range x {
		y[j] = weight[j] * (v * r)
	}
	return y
}

// Olmo2RMSNorm is modeling_olmo2.Olmo2RMSNorm.forward, applied by
// Olmo2Attention to the whole projection of a token (num_heads·head_dim
// values): hidden_states * torch.rsqrt(variance + eps), then
// self.weight * that.
func Olmo2RMSNorm(x, weight []float64, eps float64) []float64 {
	r := rsqrtMeanSquare(x, eps)
	y := make([]float64, len(x))
	for j, v := range x {
		y[j] = weight[j] * (v * r)
	}
	return y
}

// Gemma3RMSNorm is modeling_gemma3.Gemma3RMSNorm.forward: _norm(x) =
// x * torch.rsqrt(x.pow(2).mean(-1) + eps), then output * (1.0 +
// self.weight), all in float32 in transformers.
func Gemma3RMSNorm(x, weight []float64, eps float64) []float64 {
	r := rsqrtMeanSquare(x, eps)
	y := make([]float64, len(x))
	for j, v := range x {
		y[j] = (v * r) * (1.0 + weight[j])
	}
	return y
}

// Llama4TextL2Norm is modeling_llama4.Llama4TextL2Norm.forward: x *
// torch.rsqrt(x.pow(2).mean(-1) + eps), no weight. Llama4TextAttention
// applies it after the rotation.
func Llama4TextL2Norm(x []float64, eps float64) []float64 {
	r := rsqrtMeanSquare(x, eps)
	y := make([]float64, len(x))
	for j, v := range x {
		y[j] = v * r
	}
	return y
}
