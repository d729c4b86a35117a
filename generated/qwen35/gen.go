package qwen35

// Generated from config.json, Qwen3.5 9B's Hugging Face config: the full-attention layers' interleaved M-RoPE on the first 64 of 256 values; its Gated DeltaNet layers have no RoPE.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg qwen35 -tests
