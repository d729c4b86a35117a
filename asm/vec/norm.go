package vec

// norm is the QK-norm family (docs/contract.md §10): for one normed vector
// x of m values (a head, or a token's n heads one after another),
//
//	s_k = Σ fl64(x_j²) over j ≡ k (mod 8), in increasing j
//	r   = fl(1/sqrt(fl64(((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)))/m) + ε))
//	y_j = fl(fl(x_j·r)·w_j)   rms;   fl(fl(x_j·r)·fl(1 + w_j))   gemma;   fl(x_j·r)   l2
//
// then the forward rotation of y (norm; not for normOnly). After the
// rotation (Norm.After) x is the rotated head, kept in the compute type in
// a scratch head. On a Grouper a head-scope norm takes NormGroup heads
// through each pass at once: their sums first, then their r lane by lane,
// then the heads.
func norm(t Target, f *Func) {
	s, v, c := f.Shape, f.Norm, f.C()
	x, row := t.Ptr("x", f.X), t.Ptr("r", c)
	var w Arr
	if v.Weighted() {
		w = t.Ptr("w", c)
		w.Once = true
	}
	eps := t.Scalar("eps")
	rotates := f.Kind == Norm
	after := rotates && v.After

	// normed is y = fl(fl(x·r)·w), fl(fl(x·r)·fl(1 + w)) or fl(x·r) for the
	// members xs of block b, w the head's weights.
	normed := func(b Block, xs []V, r V, w Arr) []V {
		ys := make([]V, len(xs))
		var ws []V
		if v.Weighted() {
			ws = b.Load(w)
		}
		for i, x := range xs {
			ys[i] = t.Mul(x, r)
			switch v.Kind {
			case "rms":
				ys[i] = t.Mul(ys[i], ws[i])
			case "gemma":
				ys[i] = t.Mul(ys[i], t.Add(ws[i], t.Const(1)))
			}
		}
		return ys
	}
	// toScratch rotates head x into sc, values past R as they are.
	toScratch := func(h Head, x, sc Arr) {
		h.Pairs([]Arr{x, sc, row}, func(b Block) { b.Store(sc, rotate(t, b, row, b.Load(x), false)) })
		h.Values(s.RotaryDim, s.HeadDim, []Arr{x, sc}, func(b Block) { b.Store(sc, b.Load(x)) })
	}
	// sum adds the squares of head x (after: of its rotation, into sc) to acc.
	sum := func(h Head, x, sc Arr, acc V) {
		if after {
			toScratch(h, x, sc)
			x = sc
		}
		h.SumSquares(acc, x)
	}
	// out writes head x normalized by r with weights w: then rotated; or
	// (after) the rotation at sc normalized.
	out := func(h Head, x, sc Arr, r V, w Arr) {
		if !rotates || after {
			src := x
			if after {
				src = sc
			}
			h.Values(0, s.HeadDim, used(src, x, w), func(b Block) { b.Store(x, normed(b, b.Load(src), r, w)) })
			return
		}
		h.Pairs(used(x, row, w), func(b Block) { b.Store(x, rotate(t, b, row, normed(b, b.Load(x), r, w), false)) })
		h.Values(s.RotaryDim, s.HeadDim, used(x, w), func(b Block) { b.Store(x, normed(b, b.Load(x), r, w)) })
	}
	var sc Arr // the scratch heads of an after-rotation norm
	st := t.Int("stride")
	stride := func(a Arr) Walk { return Walk{A: a, Stride: st} }

	if v.Token {
		if after {
			sc = t.Local(s.HeadDim, c)
		}
		acc, xs := t.Acc(), t.Copy(x)
		t.Loop(t.Int("n"), []Walk{stride(xs)}, func(h Head) { sum(h, xs, sc, acc) })
		r := t.Scale(t.Reduce(acc), t.MulInt(t.Int("n"), s.HeadDim), eps)
		walks := []Walk{stride(x)}
		if v.Weighted() {
			walks = append(walks, Walk{A: w, Step: s.HeadDim})
		}
		t.Loop(t.Int("n"), walks, func(h Head) {
			if after {
				toScratch(h, x, sc) // the scratch head held the last head's rotation
			}
			out(h, x, sc, r, w)
		})
		return
	}
	n, g := t.Int("n"), 1
	grouper, ok := t.(Grouper)
	if ok {
		g = grouper.NormGroup()
	}
	if after {
		sc = t.Local(g*s.HeadDim, c)
	}
	// scratch is a pointer walking the group's scratch heads, one a head.
	scratch := func(x Arr) (Arr, []Walk) {
		if !after {
			return sc, []Walk{stride(x)}
		}
		ss := t.Copy(sc)
		return ss, []Walk{stride(x), {A: ss, Step: s.HeadDim}}
	}
	if g > 1 {
		sums, rs := t.Local(g, F64), t.Local(g, c)
		ys := t.Copy(x) // the first head of the group to sum next
		sumGroup := func() {
			if !after {
				grouper.SumGroup(g, stride(ys), sums)
				grouper.Skip(stride(ys), g)
				return
			}
			ss, walks := scratch(ys)
			grouper.For(g, walks, func(h Head, _ Int) { toScratch(h, ys, ss) })
			grouper.SumGroup(g, Walk{A: sc, Step: s.HeadDim}, sums)
		}
		scale := func() { grouper.ScaleLanes(sums, rs, g, t.Imm(s.HeadDim), eps) }
		outGroup := func() {
			ss, walks := scratch(x)
			grouper.For(g, walks, func(h Head, i Int) { out(h, x, ss, grouper.BroadcastAt(rs, i), w) })
		}
		// The next group's sums are taken before this group is written, so
		// that the division and the square root of scale overlap them; after
		// the rotation the scratch heads hold one group, which goes through
		// all three in turn.
		grouper.Groups(n, g, !after, sumGroup, outGroup, scale)
	}
	t.Loop(n, []Walk{stride(x)}, func(h Head) {
		acc := t.Acc()
		sum(h, x, sc, acc)
		out(h, x, sc, t.Scale(t.Reduce(acc), t.Imm(s.HeadDim), eps), w)
	})
}

// used is the arrays of as that are set (an l2 norm has no weights).
func used(as ...Arr) []Arr {
	var u []Arr
	for _, a := range as {
		if a.P != nil {
			u = append(u, a)
		}
	}
	return u
}
