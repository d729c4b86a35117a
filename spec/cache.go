package spec

import (
	"slices"
	"strconv"
	"strings"
)

// CacheType names a KV cache format: how a package stores float32 keys and
// values (docs/contract.md §11). Its properties are CacheFormats' entry.
type CacheType string

// The cache types (CacheFormats describes each).
const (
	CacheF32   CacheType = "f32"
	CacheF16   CacheType = "f16"
	CacheBF16  CacheType = "bf16"
	CacheE4M3  CacheType = "e4m3"
	CacheE5M2  CacheType = "e5m2"
	CacheQ8_0  CacheType = "q8_0"
	CacheQ4_0  CacheType = "q4_0"
	CacheQ4_1  CacheType = "q4_1"
	CacheQ5_0  CacheType = "q5_0"
	CacheQ5_1  CacheType = "q5_1"
	CacheMXFP4 CacheType = "mxfp4"
	CacheIQ4NL CacheType = "iq4_nl"
	CacheNVFP4 CacheType = "nvfp4"
	// CacheInt8PerTokenHead is vLLM's int8 KV cache with a float32 scale
	// per token and KV head, the scale kept before the head's int8.
	CacheInt8PerTokenHead CacheType = "int8_per_token_head"
	CacheNVFP4GS          CacheType = "nvfp4_gs"
)

// CacheFormat describes a cache type as data: a format stores its values
// in blocks of BlockValues values taking BlockBytes bytes each (an element
// format is a block of 1), and a head of a package with the format must be
// a whole number of blocks.
type CacheFormat struct {
	Type        CacheType
	BlockValues int    // values per block; 1 for an element format
	BlockBytes  int    // bytes per block
	About       string // what a stored value is, for messages and docs
}

// Q8Block is the number of values of one q8_0 block (ggml's QK8_0), and
// Q8BlockBytes its size: an f16 scale d, then 32 int8. ggml's 4- and 5-bit
// formats (q4_0, q4_1, q5_0, q5_1), mxfp4 and iq4_nl have blocks of the
// same 32 values; nvfp4's blocks are of 64; nvfp4_gs's of 16 (9 bytes),
// taken two at a time: a head holds a multiple of 32 values.
const (
	Q8Block      = 32
	Q8BlockBytes = 2 + Q8Block
)

// CacheFormats is the list of cache types, in the order a package and its
// documentation list them: the one place a cache format is added.
var CacheFormats = []CacheFormat{
	{CacheF32, 1, 4, "float32, as computed"},
	{CacheF16, 1, 2, "IEEE binary16 (narrowed with round-to-nearest-even)"},
	{CacheBF16, 1, 2, "bfloat16 (narrowed with round-to-nearest-even)"},
	{CacheE4M3, 1, 1, "OCP FP8 e4m3fn with a per-tensor scale"},
	{CacheE5M2, 1, 1, "OCP FP8 e5m2 with a per-tensor scale"},
	{CacheQ8_0, Q8Block, Q8BlockBytes, "ggml q8_0 blocks: an f16 scale, then 32 int8"},
	{CacheQ4_0, Q8Block, 18, "ggml q4_0 blocks: an f16 scale, then 32 4-bit values"},
	{CacheQ4_1, Q8Block, 20, "ggml q4_1 blocks: an f16 scale and minimum, then 32 4-bit values"},
	{CacheQ5_0, Q8Block, 22, "ggml q5_0 blocks: an f16 scale, then 32 5-bit values"},
	{CacheQ5_1, Q8Block, 24, "ggml q5_1 blocks: an f16 scale and minimum, then 32 5-bit values"},
	{CacheMXFP4, Q8Block, 17, "ggml mxfp4 blocks: an E8M0 exponent, then 32 E2M1 (4-bit) values"},
	{CacheIQ4NL, Q8Block, 18, "ggml iq4_nl blocks: an f16 scale, then 32 4-bit indices into a non-linear grid"},
	{CacheNVFP4, 64, 36, "ggml nvfp4 blocks: four UE4M3 scales (one per 16 values), then 64 E2M1 (4-bit) values"},
	{CacheInt8PerTokenHead, 32, 32, "vLLM int8 with a scale per token and head: each head a float32 scale, then its int8"},
	{CacheNVFP4GS, 32, 18, "NVIDIA NVFP4 with a float32 tensor scale: blocks of 16 values (8 bytes of E2M1 (4-bit) values, then an e4m3 scale), two at a time"},
}

// HeadBytes is the bytes (the elements, for a format of one value per
// block) one head of headDim values takes: its blocks, and for
// int8_per_token_head the head's float32 scale before them (HeadDim+4
// bytes: its one block is the head; BlockValues 32 is the multiple of 32
// its kernels take).
func (f CacheFormat) HeadBytes(headDim int) int {
	n := headDim / f.BlockValues * f.BlockBytes
	if f.BlockValues == 1 {
		n = headDim
	}
	if f.Type == CacheInt8PerTokenHead {
		n += 4
	}
	return n
}

// Format returns c's entry of CacheFormats; false when c is not a cache
// type.
func (c CacheType) Format() (CacheFormat, bool) {
	i := slices.IndexFunc(CacheFormats, func(f CacheFormat) bool { return f.Type == c })
	if i < 0 {
		return CacheFormat{}, false
	}
	return CacheFormats[i], true
}

// CacheTypes returns the cache types of CacheFormats, in its order.
func CacheTypes() []CacheType {
	out := make([]CacheType, len(CacheFormats))
	for i, f := range CacheFormats {
		out[i] = f.Type
	}
	return out
}

// ParseCaches splits -out-dtype's value, a comma-separated list, into its
// cache types as given ("" is none); ValidateCaches checks them.
func ParseCaches(v string) []CacheType {
	if v == "" {
		return nil
	}
	var out []CacheType
	for _, t := range strings.Split(v, ",") {
		out = append(out, CacheType(t))
	}
	return out
}

// CachesString is the inverse of ParseCaches: the list as -out-dtype
// takes it.
func CachesString(list []CacheType) string {
	s := make([]string, len(list))
	for i, c := range list {
		s[i] = string(c)
	}
	return strings.Join(s, ",")
}

// ValidateCaches checks a list of cache types for a package of element
// type dtype: each one of CacheFormats, none twice, and only with dtype
// "f32" (caches store float32 keys and values). Errors are *SpecError for
// -out-dtype, with the list as given and what is accepted. Spec.Validate
// also checks that the head dim is a whole number of blocks.
func ValidateCaches(list []CacheType, dtype string) error {
	if len(list) == 0 {
		return nil
	}
	value := shown(strconv.Quote(CachesString(list)))
	var names []string
	for _, f := range CacheFormats {
		names = append(names, string(f.Type))
	}
	for i, c := range list {
		if _, ok := c.Format(); !ok {
			return specErr("out-dtype", value, "%q is not a cache type: want a comma-separated list of %s (the KV cache types float32 keys and values are stored as)", string(c), quoteAll(names))
		}
		if slices.Contains(list[:i], c) {
			return specErr("out-dtype", value, "%q listed twice: want each cache type once", string(c))
		}
	}
	if dtype != "f32" {
		return specErr("out-dtype", value, "caches take float32 elements: want -dtype \"f32\", not -dtype %q", dtype)
	}
	return nil
}

// validateCaches checks s.Caches (ValidateCaches) and that s's head is a
// whole number of blocks of each.
func (s Spec) validateCaches() error {
	if err := ValidateCaches(s.Caches, s.DType); err != nil {
		return err
	}
	for _, c := range s.Caches {
		f, _ := c.Format()
		if s.HeadDim%f.BlockValues != 0 {
			return specErr("out-dtype", shown(strconv.Quote(CachesString(s.Caches))), "%q stores blocks of %d values: want a head dim that is a multiple of %d, not -dim %d", string(c), f.BlockValues, f.BlockValues, s.HeadDim)
		}
	}
	return nil
}
