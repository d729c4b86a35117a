package pixtral

// Generated from config.json, Devstral Small 2 24B's Hugging Face config: its Pixtral vision encoder's 2-D RoPE (vision_config).

//go:generate go run github.com/ropegen/ropegen/cmd/ropegen -hf-config config.json -hf-part vision -pkg pixtral -tests
