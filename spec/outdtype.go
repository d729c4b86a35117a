package spec

import "slices"

// OutDTypes are the KV cache element types -out-dtype accepts
// (docs/contract.md §11): IEEE binary16 and bfloat16 (narrowed with
// round-to-nearest-even), OCP FP8 e4m3fn with a per-tensor scale, and
// ggml's q8_0 blocks (32 values: an f16 scale and 32 int8).
var OutDTypes = []string{"f16", "bf16", "e4m3", "q8_0"}

// Q8Block is the number of values of one q8_0 block (ggml's QK8_0), and
// Q8BlockBytes its size: an f16 scale d, then 32 int8.
const (
	Q8Block      = 32
	Q8BlockBytes = 2 + Q8Block
)

// validateOutDType checks -out-dtype: one of OutDTypes, with -dtype f32,
// and for q8_0 a head dim that is a whole number of blocks.
func (s Spec) validateOutDType() error {
	if s.OutDType == "" {
		return nil
	}
	if !slices.Contains(OutDTypes, s.OutDType) {
		return specErr("out-dtype", s.OutDType, "out dtype must be one of %s (the KV cache type float32 keys and values are stored as)", quoteAll(OutDTypes))
	}
	if s.DType != "f32" {
		return specErr("out-dtype", s.OutDType, `-out-dtype needs -dtype "f32", not %q`, s.DType)
	}
	if s.OutDType == "q8_0" && s.HeadDim%Q8Block != 0 {
		return specErr("dim", s.HeadDim, `-out-dtype "q8_0" stores blocks of %d values: the head dim must be a multiple of %d`, Q8Block, Q8Block)
	}
	return nil
}
