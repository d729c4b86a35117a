package vec

import "testing"

// TestFrame pins the argument frames Go's ABI0 gives the kernels' signatures.
func TestFrame(t *testing.T) {
	s := Shape{HeadDim: 128, RotaryDim: 64}
	for _, c := range []struct {
		f    Func
		size int
		off  map[string]int
	}{
		{Func{Kind: Fwd, Shape: s, X: F32}, 48, map[string]int{"x": 0, "stride": 24, "n": 32, "r": 40}},
		{Func{Kind: FwdRows, Shape: s, X: F16}, 64, map[string]int{"rows": 40}},
		{Func{Kind: Norm, Shape: s, X: BF16, Norm: NormVariant{Kind: "rms"}}, 80, map[string]int{"w": 48, "eps": 72}},
		{Func{Kind: Store, Shape: s, X: F32, Cache: E4M3}, 76, map[string]int{"dst": 0, "ds": 24, "src": 32, "ss": 56, "n": 64, "scale": 72}},
		{Func{Kind: Load, Shape: s, X: F32, Cache: Q8}, 76, map[string]int{"dst": 0, "src": 32, "scale": 72}},
		{Func{Kind: To, Shape: s, X: F32, Cache: F16}, 80, map[string]int{"r": 72}},
		{Func{Kind: Hadamard, Shape: s, X: F32}, 40, map[string]int{"x": 0, "stride": 24, "n": 32}},
		{Func{Kind: Fill, Shape: s, X: F32}, 40, map[string]int{"r": 0, "pos": 8, "freqs": 16, "attn": 24, "done": 32}},
	} {
		off, size := c.f.Frame()
		if size != c.size {
			t.Errorf("%s: frame %d, want %d", c.f.Signature(), size, c.size)
		}
		for n, o := range c.off {
			if off[n] != o {
				t.Errorf("%s: %s at %d, want %d", c.f.Signature(), n, off[n], o)
			}
		}
	}
}

// TestField pins the run-time's spelling of each kernel's place.
func TestField(t *testing.T) {
	s := Shape{HeadDim: 64, RotaryDim: 64}
	for f, want := range map[Func]string{
		{Kind: Fwd, Shape: s, X: F32}:                                                  "fwd",
		{Kind: InvRows, Shape: s, X: F32}:                                              "invRows",
		{Kind: Norm, Shape: s, X: F32, Norm: NormVariant{Kind: "gemma", After: true}}:  "norm[5]",
		{Kind: NormOnly, Shape: s, X: F32, Norm: NormVariant{Kind: "l2", Token: true}}: "normOnly[10]",
		{Kind: StoreShift, Shape: s, X: F32, Cache: BF16}:                              "half[1].storeShift",
		{Kind: To, Shape: s, X: F32, Cache: F16}:                                       "half[0].to",
		{Kind: Load, Shape: s, X: F32, Cache: Q8}:                                      "bytes[1].load",
		{Kind: Store, Shape: s, X: F32, Cache: E4M3}:                                   "bytes[0].store",
		{Kind: RotTo, Shape: s, X: F32}:                                                "rotTo",
		{Kind: Hadamard, Shape: s, X: F32}:                                             "hadamard",
		{Kind: LoadShift, Shape: s, X: F32, Cache: Int8PerTokenHead}:                   "bytes[10].loadShift",
	} {
		if got := f.Field(); got != want {
			t.Errorf("%s: Field %q, want %q", f.Name(), got, want)
		}
	}
}
