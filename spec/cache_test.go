package spec

import (
	"slices"
	"strings"
	"testing"
)

// The cache types, in the order packages list them, with their blocks:
// q8_0 is ggml's block_q8_0 (an f16 scale and 32 int8: 34 bytes for 32
// values); the others one value per block.
func TestCacheFormats(t *testing.T) {
	want := []CacheFormat{
		{Type: "f32", BlockValues: 1, BlockBytes: 4},
		{Type: "f16", BlockValues: 1, BlockBytes: 2},
		{Type: "bf16", BlockValues: 1, BlockBytes: 2},
		{Type: "e4m3", BlockValues: 1, BlockBytes: 1},
		{Type: "e5m2", BlockValues: 1, BlockBytes: 1},
		{Type: "q8_0", BlockValues: 32, BlockBytes: 34},
		{Type: "q4_0", BlockValues: 32, BlockBytes: 18},
		{Type: "q4_1", BlockValues: 32, BlockBytes: 20},
		{Type: "q5_0", BlockValues: 32, BlockBytes: 22},
		{Type: "q5_1", BlockValues: 32, BlockBytes: 24},
		{Type: "mxfp4", BlockValues: 32, BlockBytes: 17},
		{Type: "iq4_nl", BlockValues: 32, BlockBytes: 18},
		{Type: "nvfp4", BlockValues: 64, BlockBytes: 36},
		{Type: "int8_per_token_head", BlockValues: 32, BlockBytes: 32},
		{Type: "nvfp4_gs", BlockValues: 32, BlockBytes: 18},
	}
	if len(CacheFormats) != len(want) {
		t.Fatalf("%d cache formats, want %d", len(CacheFormats), len(want))
	}
	for i, w := range want {
		f := CacheFormats[i]
		if f.Type != w.Type || f.BlockValues != w.BlockValues || f.BlockBytes != w.BlockBytes || f.About == "" {
			t.Errorf("format %d: %+v, want %+v and a description", i, f, w)
		}
		if g, ok := w.Type.Format(); !ok || g != f {
			t.Errorf("%s.Format() = %+v, %v", w.Type, g, ok)
		}
	}
	if _, ok := CacheType("f8").Format(); ok {
		t.Error(`"f8".Format() is ok`)
	}
	if got := CacheTypes(); !slices.Equal(got, []CacheType{CacheF32, CacheF16, CacheBF16, CacheE4M3, CacheE5M2, CacheQ8_0, CacheQ4_0, CacheQ4_1, CacheQ5_0, CacheQ5_1, CacheMXFP4, CacheIQ4NL, CacheNVFP4, CacheInt8PerTokenHead, CacheNVFP4GS}) {
		t.Errorf("CacheTypes() = %v", got)
	}
	for c, want := range map[CacheType]int{CacheF32: 128, CacheBF16: 128, CacheQ8_0: 136, CacheNVFP4: 72, CacheInt8PerTokenHead: 132} {
		if f, _ := c.Format(); f.HeadBytes(128) != want {
			t.Errorf("%s.HeadBytes(128) = %d: want %d", c, f.HeadBytes(128), want)
		}
	}
	for _, v := range []string{"", "f16", "f16,q8_0", "f16,", ",", "bf16 ,f32"} {
		if got := CachesString(ParseCaches(v)); got != v {
			t.Errorf("CachesString(ParseCaches(%q)) = %q", v, got)
		}
	}
	if ParseCaches("") != nil {
		t.Error(`ParseCaches("") is not nil`)
	}
}

// Validation reads the table: a format added to it is accepted, and its
// block size is the head dims it takes.
func TestCacheFormatsAreData(t *testing.T) {
	saved := CacheFormats
	defer func() { CacheFormats = saved }()
	CacheFormats = append(slices.Clone(saved), CacheFormat{Type: "q4_x", BlockValues: 48, BlockBytes: 26, About: "a test's block format"})
	s := DefaultSpec()
	s.Caches = []CacheType{"q4_x"}
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `"q4_x" stores blocks of 48 values: want a head dim that is a multiple of 48, not -dim 128`) {
		t.Errorf("head dim 128: %v, want a blocks error", err)
	}
	s.HeadDim = 96
	if err := s.Validate(); err != nil {
		t.Errorf("head dim 96: %v", err)
	}
	CacheFormats = saved
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `"q4_x" is not a cache type`) {
		t.Errorf("without the format: %v", err)
	}
}
