package gemma3local

// Generated from config.json, Gemma 3 4B IT's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg gemma3local -rope-local -tests
