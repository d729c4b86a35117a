package gen

import (
	"slices"
	"testing"

	"github.com/ropegen/ropegen/spec"
)

// gen spells every cache type of spec's list but f32, and nothing else;
// its packages list them in spec's order.
func TestCacheTypesCoverSpec(t *testing.T) {
	for _, f := range spec.CacheFormats {
		c, ok := cacheTypes[string(f.Type)]
		switch {
		case f.Type == spec.CacheF32:
			if ok {
				t.Errorf("cacheTypes has f32")
			}
		case !ok:
			t.Errorf("cacheTypes lacks %s", f.Type)
		case c.blocks != (f.BlockValues > 1):
			t.Errorf("%s: blocks %v, spec's block of %d values", f.Type, c.blocks, f.BlockValues)
		}
	}
	if len(cacheTypes) != len(spec.CacheFormats)-1 {
		t.Errorf("cacheTypes has %d entries, spec %d cache types", len(cacheTypes), len(spec.CacheFormats))
	}
	got, err := sortCaches([]spec.CacheType{spec.CacheQ8_0, spec.CacheF32, spec.CacheBF16}, "f32")
	if err != nil || !slices.Equal(got, []string{"f32", "bf16", "q8_0"}) {
		t.Errorf("sortCaches = %v, %v; want f32, bf16, q8_0", got, err)
	}
	if _, err := sortCaches([]spec.CacheType{spec.CacheF16, spec.CacheF16}, "f32"); err == nil {
		t.Error("sortCaches of a list with f16 twice: no error")
	}
}
