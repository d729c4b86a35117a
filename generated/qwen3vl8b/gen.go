package qwen3vl8b

// Generated from config.json, Qwen3-VL 8B Instruct's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg qwen3vl8b -tests
