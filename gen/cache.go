package gen

import "github.com/ropegen/ropegen/spec"

// cacheType is how the generated API and tests spell a cache type of
// spec.CacheFormats other than f32 (docs/contract.md §11).
type cacheType struct {
	goType string // Go type of the cache's elements: "uint16", or "uint8" (byte) for e4m3, e5m2 and the block formats
	about  string // for doc comments
	blocks bool   // a block format (spec.CacheFormat.BlockValues > 1): heads are blocks, strides count bytes
	block  int    // spec.CacheFormat.BlockValues of a block format, 0 otherwise
	// scale: the view carries a per-tensor scale outside the bytes (e4m3,
	// e5m2; nvfp4_gs's tensor scale g); headScale: it takes one per KV
	// head instead (WithHeadScales).
	scale, headScale bool
	// origin names whose layout a block format's blocks are, for the
	// CacheHead doc; "" is ggml's block_<name>.
	origin string
}

// cacheTypes has an entry for every cache type of spec.CacheFormats but
// f32 (TestCacheTypesCoverSpec); blocks comes from the spec's table.
var cacheTypes = func() map[string]cacheType {
	m := map[string]cacheType{
		"f16":                 {goType: "uint16", about: "IEEE binary16 (bits in uint16)"},
		"bf16":                {goType: "uint16", about: "bfloat16 (bits in uint16)"},
		"e4m3":                {goType: "uint8", about: "OCP FP8 e4m3fn bytes, scaled", scale: true, headScale: true},
		"e5m2":                {goType: "uint8", about: "OCP FP8 e5m2 bytes, scaled", scale: true, headScale: true},
		"q8_0":                {goType: "uint8", about: "an f16 scale d (little endian) and 32 int8"},
		"q4_0":                {goType: "uint8", about: "an f16 scale d (little endian) and 16 bytes of 4-bit values"},
		"q4_1":                {goType: "uint8", about: "an f16 scale d and minimum m (little endian) and 16 bytes of 4-bit values"},
		"q5_0":                {goType: "uint8", about: "an f16 scale d, a uint32 of fifth bits (little endian) and 16 bytes of low nibbles"},
		"q5_1":                {goType: "uint8", about: "an f16 scale d and minimum m, a uint32 of fifth bits (little endian) and 16 bytes of low nibbles"},
		"mxfp4":               {goType: "uint8", about: "an E8M0 exponent byte e and 16 bytes of 4-bit E2M1 indices"},
		"iq4_nl":              {goType: "uint8", about: "an f16 scale d (little endian) and 16 bytes of 4-bit indices into kvalues_iq4nl"},
		"nvfp4":               {goType: "uint8", about: "four UE4M3 scale bytes (one per 16 values) and 32 bytes of 4-bit E2M1 indices"},
		"int8_per_token_head": {goType: "uint8", about: "the head's float32 scale (little endian) and its int8"},
		"nvfp4_gs":            {goType: "uint8", about: "two blocks of 16 values, each 8 bytes of E2M1 codes and an e4m3 scale byte", scale: true, origin: "NVIDIA's NVFP4, as vLLM's reference quantizer writes it"},
	}
	for name, c := range m {
		f, _ := spec.CacheType(name).Format()
		c.blocks = f.BlockValues > 1
		if c.blocks {
			c.block = f.BlockValues
		}
		m[name] = c
	}
	return m
}()
