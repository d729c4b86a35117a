package olmo3

// Generated from config.json, OLMo 3.1 32B Instruct's Hugging Face config: the full-attention layers' RoPE (YaRN); the sliding-window layers' is unscaled.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg olmo3 -tests
