package gen

// cacheType describes a KV cache element type, -out-dtype's value
// (docs/contract.md §11), as the generated API and tests spell it.
type cacheType struct {
	goType string // Go type of the cache's elements: "uint16", or "uint8" (byte) for e4m3 and q8_0
	about  string // for doc comments
	blocks bool   // q8_0: heads are blocks of spec.Q8Block values, strides count bytes
}

var cacheTypes = map[string]cacheType{
	"f16":  {goType: "uint16", about: "IEEE binary16 (bits in uint16)"},
	"bf16": {goType: "uint16", about: "bfloat16 (bits in uint16)"},
	"e4m3": {goType: "uint8", about: "OCP FP8 e4m3fn bytes, scaled"},
	"q8_0": {goType: "uint8", about: "ggml q8_0 blocks (an f16 scale, then 32 int8)", blocks: true},
}
