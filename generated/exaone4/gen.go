package exaone4

// Generated from config.json, EXAONE 4.0 32B's Hugging Face config: the sliding-window layers' RoPE (llama3 scaling); its global layers have none.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg exaone4 -tests
