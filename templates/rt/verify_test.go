package rt

import (
	"fmt"
	"testing"

	"github.com/ropegen/ropegen/verify"
)

// mustNew is New, which the tests' params must pass.
func mustNew(t testing.TB, p Params) *Rotary {
	t.Helper()
	r, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVerify runs ropegen's property suite on every reference shape
// through the test glue, as a generated package's tests do.
func TestVerify(t *testing.T) {
	for _, s := range refShapes {
		t.Run(s.String(), func(t *testing.T) {
			r := mustNew(t, refParams(s, 10000))
			k := kernelOf(r, 10000, "none")
			k.Caches = refCaches(r)
			verify.Run(t, k)
		})
	}
}

// normK is the bound the package doc states for a float32-compute norm
// (gen's NormBound): one rounding of r, the kind's roundings of a value,
// one spare, six more after the rotation; four more for rotated values.
func normK(kind string, after bool) [2]int {
	pass := 1 + map[string]int{"rms": 2, "gemma": 3, "l2": 1}[kind] + 1
	if after {
		pass += 6
	}
	return [2]int{pass + 4, pass}
}

// TestVerifyNorms runs the suite's QK-norm checks on the reference shapes'
// pure Go norms, every kind, scope and placement across the shapes, with
// two ε each: ε is data; with the second, Prep into every cache type.
func TestVerifyNorms(t *testing.T) {
	for si, s := range refShapes {
		for v := range normVariants {
			token, after := v%4/normToken == 1, v%2 == normAfter
			if token && s.HeadDim%8 != 0 || (v+si)%3 != 0 {
				continue // a third of the variants on each shape, every variant on some
			}
			for _, eps := range []float64{1e-6, 0.25} {
				p := refParams(s, 10000)
				p.NormKind, p.NormScope, p.NormAfter, p.NormEps = normKinds[v/4], normScopes[v%4/normToken], after, eps
				t.Run(fmt.Sprintf("%v/%s/eps=%g", s, normName(v), eps), func(t *testing.T) {
					r := mustNew(t, p)
					k := kernelOf(r, 10000, "none")
					k.Norm = normOf(r, normK(p.NormKind, after), false)
					if eps != 1e-6 {
						k.Caches = refCaches(r) // Prep with the norm, into every cache type
					}
					verify.RunNorm(t, k)
				})
			}
		}
	}
}

// refCaches describes every cache type of r's shape to verify.
func refCaches(r *Rotary) []verify.CacheForms {
	cs := []verify.CacheForms{
		cacheOf(r, "f32", func(b []float32, s Strides, _ float32) Cache { return F32Cache(b, s) }),
		cacheOf(r, "f16", func(b []uint16, s Strides, _ float32) Cache { return F16Cache(b, s) }),
		cacheOf(r, "bf16", func(b []uint16, s Strides, _ float32) Cache { return BF16Cache(b, s) }),
		cacheOf(r, "e4m3", func(b []uint8, s Strides, scale float32) Cache { return E4M3Cache(b, s, scale) }),
		cacheOf(r, "e5m2", func(b []uint8, s Strides, scale float32) Cache { return E5M2Cache(b, s, scale) }),
	}
	if r.hd%q8Values == 0 {
		cs = append(cs, cacheOf(r, "q8_0", func(b []byte, s Strides, _ float32) Cache { return Q80Cache(b, s) }))
		cs = append(cs, cacheOf(r, "nvfp4_gs", func(b []byte, s Strides, g float32) Cache { return NVFP4GSCache(b, s, g) }))
	}
	cs = append(cs, cacheOf(r, "int8_per_token_head", func(b []byte, s Strides, _ float32) Cache { return Int8PerTokenHeadCache(b, s) }))
	if h := headScalesOf(r, "e4m3", func(b []uint8, s Strides, scale float32) Cache { return E4M3Cache(b, s, scale) }); h != nil {
		cs = append(cs, h)
	}
	if h := hadamardOf(r, "e5m2", func(b []uint8, s Strides, scale float32) Cache { return E5M2Cache(b, s, scale) }); h != nil {
		cs = append(cs, h, hadamardOf(r, "f16", func(b []uint16, s Strides, _ float32) Cache { return F16Cache(b, s) }))
		cs = append(cs, hadamardOf(r, "int8_per_token_head", func(b []byte, s Strides, _ float32) Cache { return Int8PerTokenHeadCache(b, s) }))
	}
	return cs
}

// TestVerifySchemes runs the suite on models whose tables depend on more
// than a frequency list: three axes (M-RoPE's sections), longrope's two
// lists, dynamic NTK.
func TestVerifySchemes(t *testing.T) {
	s := refShapes[2] // 64/64/neox: 32 pairs
	mrope := refParams(s, 10000)
	mrope.Axes, mrope.Axis = 3, make([]uint8, 32)
	for i := range mrope.Axis {
		mrope.Axis[i] = uint8(min(2, i/11))
	}
	long := refParams(s, 10000)
	long.LongFreqs, long.OrigCtx = make([]float64, 32), 2048
	for i, f := range long.Freqs {
		long.LongFreqs[i] = f / (1 + float64(i)/8)
	}
	dyn := refParams(s, 10000)
	dyn.DynamicFactor, dyn.DynamicBase, dyn.OrigCtx = 2, 10000, 2048
	for _, c := range []struct {
		name    string
		p       Params
		scaling string
	}{{"mrope", mrope, "none"}, {"longrope", long, "longrope"}, {"dynamic", dyn, "dynamic"}} {
		t.Run(c.name, func(t *testing.T) {
			r := mustNew(t, c.p)
			k := kernelOf(r, 10000, c.scaling)
			k.Caches = refCaches(r)
			verify.Run(t, k)
		})
	}
}
