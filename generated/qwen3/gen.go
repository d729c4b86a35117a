package qwen3

// Generated from config.json, Qwen3-8B's Hugging Face config: its RoPE and
// its QK-norm (Qwen3RMSNorm on each query and key head, before the
// rotation), fused in ApplyNormQK.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg qwen3 -tests
