package gemma3global

// Generated from config.json, Gemma 3 4B IT's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg gemma3global -tests
