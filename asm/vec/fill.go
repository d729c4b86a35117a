package vec

import "math"

// fill writes the table values of pairs [0, done) of row r for position
// pos (docs/contract.md §4; the run-time's fillRow has the bits and fills
// the pairs from done on): for pair i with indices (a, b) and φ = fl64(pos·θ_i),
//
//	C[a] = C[b] = fl32(attn·cos φ),   S[a] = −fl32(attn·sin φ),   S[b] = fl32(attn·sin φ)
//
// with sin and cos as the run-time's sincos computes them below sincosMax,
// lane by lane in float64, every operation in its order and rounded once:
// the quadrant k = round(φ·2/π) by adding and subtracting 1.5·2⁵², the
// reduction r = φ − k·π/2 with π/2 in four parts, the polynomials in z = r²
// by Estrin's scheme, then the quadrant k mod 4 swapping and negating the
// pair with integer operations. The caller uses it only where every angle
// is below sincosMax. done is the pairs of whole blocks of Lanes(F64).
func fill(t Target, f *Func) {
	x := t.(Filler)
	lanes := x.Lanes(F64)
	blocks := f.Shape.Half() / lanes
	x.Result("done", t.Imm(blocks*lanes))
	if blocks == 0 {
		return
	}
	row, freqs := t.Ptr("r", f.C()), t.Ptr("freqs", F64)
	pos, attn := t.Broadcast("pos", F64), t.Broadcast("attn", F64)
	k := func(v float64) V { return x.Bits(F64, math.Float64bits(v)) }
	i := func(v uint64) V { return x.Bits(F64, v) }
	step := lanes
	if !f.Shape.NeoX {
		step *= 2 // interleaved: both values of a pair
	}
	t.Loop(t.Imm(blocks), []Walk{{A: freqs, Step: lanes}, {A: row, Step: step}}, func(h Head) {
		x.Block(h, F64, func(b Block) {
			φ := t.Mul(x.PerPair(b, freqs), pos)
			// kb = fl(φ·2/π) + 1.5·2⁵², k = kb − 1.5·2⁵²
			kb := t.Add(t.Mul(φ, k(2/math.Pi)), k(0x1.8p52))
			kk := t.Sub(kb, k(0x1.8p52))
			// r = φ − k·P1 − k·P2 − k·P3 − k·P4
			r := φ
			for _, p := range []float64{0x1.921fbp+0, 0x1.5110bp-22, 0x1.1846980p-44, 0x1.3198a2e037073p-69} {
				r = t.Sub(r, t.Mul(kk, k(p)))
			}
			z := t.Mul(r, r)
			z2 := t.Mul(z, z)
			z4 := t.Mul(z2, z2)
			// poly is (a0·z ± b0) + z2·(a1·z ± b1) + z4·(a2·z ± b2), the sums left to right.
			poly := func(c [6]float64, sub bool) V {
				term := func(a, b float64) V { return AddSub(t, t.Mul(z, k(a)), k(b), sub) }
				return t.Add(t.Add(term(c[0], c[1]), t.Mul(z2, term(c[2], c[3]))), t.Mul(z4, term(c[4], c[5])))
			}
			// s = r + (r·z)·poly_s,  c = (1 − 0.5·z) + z2·poly_c
			s := t.Add(r, t.Mul(t.Mul(r, z), poly([6]float64{8.33333333332211858878e-3, 1.66666666666666307295e-1, 2.75573136213857245213e-6, 1.98412698295895385996e-4, 1.58962301576546568060e-10, 2.50507477628578072866e-8}, true)))
			c := t.Add(t.Sub(k(1), t.Mul(z, k(0.5))), t.Mul(z2, poly([6]float64{-1.38888888888730564116e-3, 4.16666666666665929218e-2, -2.75573141792967388112e-7, 2.48015872888517045348e-5, -1.13585365213876817300e-11, 2.08757008419747316778e-9}, false)))
			// Quadrant q = k mod 4, the low bits of kb: (sin, cos) = (s, c),
			// (c, −s), (−s, −c), (−c, s): swap where q is odd, then the signs.
			swap := x.And(x.Xor(s, c), x.ISub(i(0), x.And(kb, i(1))))
			s, c = x.Xor(s, swap), x.Xor(c, swap)
			s = x.Xor(s, x.Shl(x.And(kb, i(2)), 62))
			c = x.Xor(c, x.Shl(x.And(x.IAdd(kb, i(1)), i(2)), 62))
			x.SetTable(b, row, x.Narrow(t.Mul(c, attn), f.C()), x.Narrow(t.Mul(s, attn), f.C()))
		})
	})
}
