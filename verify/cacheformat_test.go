package verify

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCacheFormats checks what the cache checks assume of every format in
// cacheFormats: its name is its key; a one-value block is an element of 1,
// 2 or 4 bytes; its scales' place is one of ScalePlace's; any bytes decode
// without a panic; every encoding is the same as itself by Same, a NaN the
// same as another NaN; encoding is a fixed point of decoding (a block
// encodes again to the same bits once decoded) for ordinary values; and
// Spacing is not negative.
func TestCacheFormats(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, f := range cacheFormats {
		t.Run(name, func(t *testing.T) {
			values, bytes := f.Block()
			switch {
			case f.Name() != name:
				t.Fatalf("Name() = %q, listed as %q", f.Name(), name)
			case values < 1 || bytes < 1 || values == 1 && bytes != 1 && bytes != 2 && bytes != 4:
				t.Fatalf("Block() = %d values in %d bytes", values, bytes)
			case !slices.Contains([]ScalePlace{ScaleNone, ScaleInBlock, ScalePerTensor, ScalePerHead, ScalePerTokenHead}, f.Scales()):
				t.Fatalf("Scales() = %q", f.Scales())
			}
			const blocks = 64
			raw := make([]byte, blocks*bytes)
			y := make([]float32, blocks*values)
			for range 200 {
				for i := range raw {
					raw[i] = byte(r.Uint32())
				}
				f.Decode(y, raw, 1)
				for b := 0; b < len(raw); b += bytes {
					if !f.Same(raw[b:b+bytes], raw[b:b+bytes]) {
						t.Fatalf("block % x is not the same as itself", raw[b:b+bytes])
					}
				}
			}
			x := make([]float32, blocks*values)
			for i := range x {
				x[i] = float32(math.Ldexp(r.NormFloat64(), r.IntN(8)-4))
			}
			enc, again := make([]byte, len(raw)), make([]byte, len(raw))
			f.Encode(enc, x, 0.5)
			f.Decode(y, enc, 0.5)
			f.Encode(again, y, 0.5)
			for b := 0; b < len(enc); b += bytes {
				if !f.Same(enc[b:b+bytes], again[b:b+bytes]) {
					t.Fatalf("block %d encodes to % x, decodes to %v, which encode to % x", b/bytes, enc[b:b+bytes], y[b/bytes*values:(b/bytes+1)*values], again[b:b+bytes])
				}
			}
			nan := make([]float32, values)
			for i := range nan {
				nan[i] = float32(math.NaN())
			}
			n1, n2 := make([]byte, bytes), make([]byte, bytes)
			f.Encode(n1, nan, 1)
			nan[0] = math.Float32frombits(0xffc00123)
			f.Encode(n2, nan, 1)
			if !f.Same(n1, n2) {
				t.Errorf("two NaN blocks, % x and % x, are not the same", n1, n2)
			}
			if s := f.Spacing(1, 1, x); !(s >= 0) {
				t.Errorf("Spacing(1) = %v", s)
			}
		})
	}
}
