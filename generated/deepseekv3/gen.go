package deepseekv3

// Generated from config.json, DeepSeek-V3's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg deepseekv3 -tests
