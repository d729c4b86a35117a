package internlm25

// Generated from config.json, InternLM2.5 7B Chat's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg internlm25 -tests
