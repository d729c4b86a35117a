package mistral7b

// Generated from config.json, the model's Hugging Face config.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg mistral7b -tests
