package gen

import "github.com/ropegen/ropegen/spec"

// cacheType describes a KV cache element type, -out-dtype's value
// (docs/contract.md §11): how it is stored and which conversions its
// kernels use.
type cacheType struct {
	name   string // flag value: "f16", "bf16", "e4m3", "q8_0"
	goType string // Go type of the cache's elements: "uint16", or "uint8" (byte) for e4m3 and q8_0
	size   int    // bytes per element of goType
	about  string // for doc comments
	scale  bool   // the forms take a per-tensor scale (e4m3)
	blocks bool   // q8_0: heads are blocks of spec.Q8Block values, strides count bytes
	narrow string // the pure Go conversion from float32 (per value types)
	widen  string // the pure Go conversion to float32 (per value types)
}

var cacheTypes = map[string]cacheType{
	"f16":  {name: "f16", goType: "uint16", size: 2, about: "IEEE binary16 (bits in uint16)", narrow: "f32to16", widen: "f16to32"},
	"bf16": {name: "bf16", goType: "uint16", size: 2, about: "bfloat16 (bits in uint16)", narrow: "f32tobf16", widen: "bf16to32"},
	"e4m3": {name: "e4m3", goType: "uint8", size: 1, about: "OCP FP8 e4m3fn bytes, scaled", scale: true, narrow: "f32toe4m3", widen: "e4m3to32"},
	"q8_0": {name: "q8_0", goType: "uint8", size: 1, about: "ggml q8_0 blocks (an f16 scale, then 32 int8)", blocks: true},
}

// cache returns the plan's cache type, and false without -out-dtype.
func (p *Plan) cache() (cacheType, bool) {
	c, ok := cacheTypes[p.Spec.OutDType]
	return c, ok
}

// narrowTo reports whether the package has the rotate-and-narrow forms
// ApplyTo, ApplySeqTo and ApplyStridedTo: for an f16 or bf16 cache. An e4m3
// cache needs a scale and a q8_0 cache whole blocks, so those packages
// store keys with ApplyStore only.
func (p *Plan) narrowTo() bool {
	return p.Spec.OutDType == "f16" || p.Spec.OutDType == "bf16"
}

// toDType is the out dtype of the rotate-and-narrow kernels ("" if none).
func (p *Plan) toDType() string {
	if p.narrowTo() {
		return p.Spec.OutDType
	}
	return ""
}

// cacheHead is the size of one cached head in the cache's elements: HeadDim
// values, or for q8_0 HeadDim/32 blocks of 34 bytes.
func (p *Plan) cacheHead() int {
	if c, _ := p.cache(); c.blocks {
		return p.HeadDim / spec.Q8Block * spec.Q8BlockBytes
	}
	return p.HeadDim
}

// shiftValues is how many leading values of a cached head Shift reads and
// writes: RotaryDim, or for q8_0 the blocks that hold a rotary value. The
// rest keep their bits.
func (p *Plan) shiftValues() int {
	if c, _ := p.cache(); c.blocks {
		return (p.RotaryDim + spec.Q8Block - 1) / spec.Q8Block * spec.Q8Block
	}
	return p.RotaryDim
}
