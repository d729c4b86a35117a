package gptoss20b

// Generated from config.json, gpt-oss 20B's Hugging Face config as transformers v5 saves it.

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -pkg gptoss20b -tests
