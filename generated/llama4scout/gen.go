package llama4scout

// Generated from config.json, Llama 4 Scout 17B-16E Instruct's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg llama4scout -tests
