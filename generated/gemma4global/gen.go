package gemma4global

// Generated from config.json, Gemma 4 31B IT's Hugging Face config: the global layers' proportional RoPE over 512-value heads.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg gemma4global -tests
