package vec

// Emit emits f on t: the family of f's kind.
func Emit(t Target, f *Func) {
	t.Func(f, func() {
		switch {
		case f.Kind.Rotates():
			rotation(t, f)
		case f.Kind == Norm || f.Kind == NormOnly:
			norm(t, f)
		case f.Cache == Q8:
			q8(t, f)
		case f.Cache == MXFP4:
			mxfp4(t, f)
		case f.Cache == IQ4NL:
			iq4nl(t, f)
		case f.Cache == NVFP4:
			nvfp4(t, f)
		case f.Cache == Int8PerTokenHead:
			int8Head(t, f)
		case f.Cache == NVFP4GS:
			nvfp4gs(t, f)
		case f.Cache.BlockBytes() != 0: // q4_0, q4_1, q5_0, q5_1
			qn(t, f)
		case f.Kind == Fill:
			fill(t, f)
		case f.Kind == Hadamard:
			hadamard(t, f)
		default:
			convert(t, f)
		}
	})
}

// rotation is the rotation family (docs/contract.md §5): for every rotated
// index j with partner q,
//
//	y_j = fl(fl(x_j·C[j]) + fl(x_q·S[j]))     forward
//	y_j = fl(fl(x_j·C[j]) − fl(x_q·S[j]))     backward
//
// in place (fwd, inv, rows, shift) or from src into dst (to, rotTo), where
// the values past R are copied, narrowed to dst's type.
func rotation(t Target, f *Func) {
	s := f.Shape
	var src, dst Arr
	var walks []Walk
	switch f.Kind {
	case To, RotTo:
		src, dst = t.Ptr("src", F32), t.Ptr("dst", f.dstElem())
		walks = []Walk{{A: src, Stride: t.Int("ss")}, {A: dst, Stride: t.Int("ds")}}
	case Shift, ShiftInv:
		src = t.Ptr("x", f.Cache)
		dst, walks = src, []Walk{{A: src, Stride: t.Int("stride")}}
	default:
		src = t.Ptr("x", f.X)
		dst, walks = src, []Walk{{A: src, Stride: t.Int("stride")}}
	}
	var row Arr
	shared := &row
	if f.Kind == FwdRows || f.Kind == InvRows {
		row, shared = t.Ptr("rows", f.C()), nil
		walks = append(walks, Walk{A: row, Step: 2 * s.RotaryDim})
	} else {
		row = t.Ptr("r", f.C())
	}
	inv := f.Kind.Inverse()
	t.Heads(t.Int("n"), walks, shared, func(h Head) {
		h.Pairs([]Arr{src, dst, row}, func(b Block) {
			b.Store(dst, rotate(t, b, row, b.Load(src), inv))
		})
		if src != dst {
			// Values past R: y_j = x_j.
			h.Values(s.RotaryDim, s.HeadDim, []Arr{src, dst}, func(b Block) { b.Store(dst, b.Load(src)) })
		}
	})
}

// rotate is the members xs of a pairs block turned by the table row:
// y = fl(fl(x·C) + fl(q·S)) for each member x with partners q (fl(… − …)
// when inv).
func rotate(o Ops, b Block, row Arr, xs []V, inv bool) []V {
	qs := b.Partners(xs)
	cs, ss, neg := b.Table(row)
	ys := make([]V, len(xs))
	for i, x := range xs {
		ys[i] = AddSub(o, o.Mul(x, cs[i]), o.Mul(qs[i], ss[i]), neg[i] != inv)
	}
	return ys
}
