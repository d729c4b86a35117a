package rt

import (
	"fmt"
	"math"
	"slices"
)

// A decode step of a Qwen3-8B-shaped layer: the fused QKV projection of one
// token holds 32 query, 8 key and 8 value heads. ApplyNormQK normalizes and
// turns the queries and the keys in place with this layer's norm weights,
// in one call; the value heads keep their bits. The result has the bits of
// the norm written out in plain Go (docs/contract.md §10) and ApplyQK done
// apart (ApplyQK first for a norm after the rotation); an f16 or bf16
// package, which rounds once, at the end, instead of twice, is checked for
// what it can be: every value finite and most moved.
func ExampleTable_ApplyNormQK() {
	r := Default()
	p := r.Params()
	hd := p.HeadDim
	const hq, hkv = 32, 8
	row := (hq + 2*hkv) * hd
	tab := r.NewTable(4096)
	// This layer's q_norm and k_norm weights (none for l2).
	weights := func(heads int, base float64) []comp {
		n := hd
		if p.NormScope == "token" {
			n *= heads
		}
		if p.NormKind == "l2" {
			return nil
		}
		w := make([]comp, n)
		for i := range w {
			w[i] = comp(base) + comp(i%5)/8
		}
		return w
	}
	qw, kw := weights(hq, 0.75), weights(hkv, 1.25)
	qkv := make([]elem, row)
	exampleFill(qkv)
	want := slices.Clone(qkv)

	tab.ApplyNormQK(qkv, Strides{Heads: hq, Head: hd, Token: row}, qw,
		qkv[hq*hd:], Strides{Heads: hkv, Head: hd, Token: row}, kw, examplePos(r, 42))

	v := (hq + hkv) * hd
	ok := slices.Equal(qkv[v:], want[v:])
	if elemBytes == 2 {
		moved := 0
		for i := range v {
			f := float64(widen(qkv[i]))
			ok = ok && !math.IsNaN(f) && !math.IsInf(f, 0)
			if qkv[i] != want[i] {
				moved++
			}
		}
		ok = ok && moved > v/2
	} else {
		rotate := func() {
			tab.ApplyQK(want, Strides{Heads: hq, Head: hd, Token: row}, want[hq*hd:], Strides{Heads: hkv, Head: hd, Token: row}, examplePos(r, 42))
		}
		if p.NormAfter {
			rotate()
		}
		exampleNorms(p, want[:hq*hd], qw)
		exampleNorms(p, want[hq*hd:(hq+hkv)*hd], kw)
		if !p.NormAfter {
			rotate()
		}
		ok = ok && slices.Equal(qkv, want)
	}
	fmt.Println("as the norm and ApplyQK apart:", ok)
	// Output: as the norm and ApplyQK apart: true
}

// exampleNorms normalizes the heads of x (whole heads, one after another)
// in place with the weights w as p's QK-norm does: docs/contract.md §10's
// sum of squares in 8 float64 partial sums, r rounded once, then fl(x·r)
// times w (rms), fl(1 + w) (gemma) or nothing (l2).
func exampleNorms(p Params, x []elem, w []comp) {
	n := p.HeadDim
	if p.NormScope == "token" {
		n = len(x)
	}
	for lo := 0; lo < len(x); lo += n {
		x := x[lo : lo+n]
		var s [8]float64
		for j, v := range x {
			s[j%8] += float64(float64(widen(v)) * float64(widen(v)))
		}
		ss := ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]))
		r := comp(1 / math.Sqrt(ss/float64(n)+p.NormEps))
		for j := range x {
			y := comp(widen(x[j]) * r)
			switch p.NormKind {
			case "rms":
				y = comp(y * w[(lo+j)%len(w)])
			case "gemma":
				y = comp(y * comp(1+w[(lo+j)%len(w)]))
			}
			x[j] = narrow(y)
		}
	}
}
