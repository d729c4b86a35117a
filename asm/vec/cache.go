package vec

// convert is the KV-cache conversions of f16, bf16, e4m3 and e5m2
// (docs/contract.md §11), value by value over the first Count values of
// each head:
//
//	store:  c_j = narrow(x_j)          e4m3, e5m2: narrow(fl(x_j/scale))
//	load:   x_j = widen(c_j)           e4m3, e5m2: fl(widen(c_j)·scale)
//
// narrow rounding to nearest even (f16, bf16: overflow to ±Inf; e4m3:
// saturating at ±448, e5m2 at ±57344, a NaN staying NaN), widen exact:
// the minifloat family (codec.go's Narrow and Widen), which the targets'
// Block.Load and Block.Store of these elements run.
func convert(t Target, f *Func) {
	store := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, f.Cache
	if !store {
		se, de = de, se
	}
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	var scale V
	if f.Cache == E4M3 || f.Cache == E5M2 {
		scale = t.Broadcast("scale", F32)
	}
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(h Head) {
		h.Values(0, f.Count(), []Arr{src, dst}, func(b Block) {
			y := b.Load(src)[0]
			switch {
			case scale != nil && store:
				y = t.Div(y, scale)
			case scale != nil:
				y = t.Mul(y, scale)
			}
			b.Store(dst, []V{y})
		})
	})
}

// q8 is the q8_0 cache conversions (docs/contract.md §11), exactly as
// ggml's quantize_row_q8_0_ref and dequantize_row_q8_0, block by block of
// 32 values over the first Count values of each head:
//
//	amax = MAX(amax, |x_j|) for j = 0…31 from 0   (MAX(a, b) = a > b ? a : b)
//	d = amax/127,  id = d ≠ 0 ? 1/d : 0           (float32)
//	block = f16(d), then q_j = roundf(x_j·id)      (NaN → 0, clamped to ±127)
//	load:  x_j = fl(q_j·f32(d))
func q8(t Target, f *Func) {
	store := f.Kind == Store || f.Kind == StoreShift
	se, de := F32, Q8
	if !store {
		se, de = de, se
	}
	src, dst := t.Ptr("src", se), t.Ptr("dst", de)
	walks := []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	t.Heads(t.Int("n"), walks, nil, func(h Head) {
		if store {
			h.Quantize(src, dst, f.Count()/32)
		} else {
			h.Dequantize(src, dst, f.Count()/32)
		}
	})
}
