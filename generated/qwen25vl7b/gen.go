package qwen25vl7b

// Generated from config.json, Qwen2.5-VL 7B Instruct's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg qwen25vl7b -tests
