package gen

import (
	"fmt"
	"math"

	"github.com/ropegen/ropegen/templates"
)

// cacheKernel is the template data of the plan's NEON cache kernels (the
// plan's OutDType) for the shape of name suffix sfx: the constants (from V16
// up; the e4m3 scale in V31), the kernels and their plans. The byte types'
// kernels (e4m3, q8_0) take a scale, which q8_0's do not read: the
// run-time's ABI has one signature for both. f16 and bf16 keys go through
// the shape's rotate-and-narrow kernel; f32, e4m3 and q8_0 keys are copied,
// then rotated by the shape's forward kernel (the run-time does it when a
// backend has no rotTo). Shift goes through load, the NEON in-place kernels
// and store.
func (p *Plan) cacheKernel(header, sfx string) *templates.CacheKernel {
	c, _ := p.cache()
	k := &templates.CacheKernel{Header: header, Package: p.Spec.Package, Cache: c.name, About: c.about}
	set := func(reg *int, r int, v uint32, what string) {
		*reg = r
		k.Consts = append(k.Consts, templates.Const{Reg: r, Value: v, What: what})
	}
	kc := &k.K
	switch c.name {
	case "bf16":
		set(&kc.Lsb, 16, 0x10000, "bf16 rounding: the lowest kept bit")
		set(&kc.Bias, 17, 0x7fff, "bf16 rounding: the bias")
		set(&kc.Quiet, 18, 0x400000, "bf16: a NaN's quiet bit")
	case "e4m3":
		kc.Scale = 31
		set(&kc.Abs, 16, 0x7fffffff, "e4m3: the magnitude's bits")
		set(&kc.Max, 17, math.Float32bits(448), "e4m3: 448, the largest magnitude")
		set(&kc.One, 18, 1, "e4m3: the lowest kept mantissa bit, shifted down")
		set(&kc.Round, 19, 0x7ffff, "e4m3: half the 20 dropped bits, less one")
		set(&kc.Rebias, 20, 120<<3, "e4m3: float32's exponent bias less e4m3's, at the kept bits")
		set(&kc.Magic, 21, math.Float32bits(0x1p14), "e4m3: 2¹⁴, whose ulp is 2⁻⁹")
		set(&kc.Normal, 22, math.Float32bits(0x1p-6), "e4m3: 2⁻⁶, the smallest normal")
		set(&kc.Inf, 23, 0x7f800000, "e4m3: +Inf's bits; above them NaNs")
		set(&kc.NaN, 24, 0x7f, "e4m3: NaN, and the magnitude's bits of a byte")
		set(&kc.High, 25, 0x80, "e4m3: the sign bit of a byte")
		set(&kc.Eight, 26, 8, "e4m3: the smallest normal's bits")
		set(&kc.Exp, 27, 120<<23, "e4m3: float32's exponent bias less e4m3's")
		set(&kc.Sub, 28, math.Float32bits(0x1p-9), "e4m3: 2⁻⁹, the subnormal spacing")
		set(&kc.QNaN, 29, 0x7fc00000, "a quiet float32 NaN")
	case "q8_0":
		set(&kc.F127, 16, math.Float32bits(127), "q8_0: 127")
		set(&kc.FM127, 17, math.Float32bits(-127), "q8_0: −127")
		set(&kc.F1, 18, math.Float32bits(1), "q8_0: 1")
		set(&kc.F0, 19, 0, "q8_0: 0")
	}
	shift := map[int]int{1: 0, 2: 1, 4: 2}
	scale := ""
	if c.size == 1 {
		scale = ", scale float32"
	}
	// The kernels of every value, and of the first shiftValues when Shift
	// touches fewer.
	type count struct {
		kind  string
		count int
	}
	counts := []count{{"", p.HeadDim}}
	if p.shiftValues() != p.HeadDim {
		counts = append(counts, count{"Shift", p.shiftValues()})
	}
	for _, n := range counts {
		for _, store := range []bool{true, false} {
			f := templates.CacheFunc{Store: store, Count: n.count, Scale: c.scale, ArgSize: 72}
			if c.size == 1 {
				f.ArgSize = 76
			}
			tag := amd64CacheTag(c.name) + "NEON" + sfx
			if store {
				f.Name, f.Kind = "cacheStore"+n.kind+tag, "store"+n.kind
				f.Params = fmt.Sprintf("dst []%s, dstStride int, src []float32, srcStride, n int%s", c.goType, scale)
				f.DstShift, f.SrcShift = shift[c.size], 2
			} else {
				f.Name, f.Kind = "cacheLoad"+n.kind+tag, "load"+n.kind
				f.Params = fmt.Sprintf("dst []float32, dstStride int, src []%s, srcStride, n int%s", c.goType, scale)
				f.DstShift, f.SrcShift = 2, shift[c.size]
			}
			if c.blocks {
				f.Loop = n.count / 32
			} else {
				f.Loop = n.count / 16
				for _, t := range []int{8, 4, 2} {
					if n.count%16&t != 0 {
						f.Tails = append(f.Tails, t)
					}
				}
			}
			k.Funcs = append(k.Funcs, f)
		}
	}
	return k
}

// amd64CacheTag is a cache type's part of its kernels' names: F16, BF16,
// E4M3, Q80.
func amd64CacheTag(c string) string {
	return map[string]string{"f16": "F16", "bf16": "BF16", "e4m3": "E4M3", "q8_0": "Q80"}[c]
}
