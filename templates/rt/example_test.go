package rt

import (
	"fmt"
	"slices"
)

// exampleValue is a finite, non-zero value for element i of an example
// buffer.
func exampleValue(i int) elem { return narrow(comp(i%7) - 3 + 0.5) }

// examplePos returns the positions of text tokens at pos, as a model of
// Axes axes takes them: each position once per axis.
func examplePos(r *Rotary, pos ...int32) []int32 {
	var out []int32
	for _, p := range pos {
		for range r.Params().Axes {
			out = append(out, p)
		}
	}
	return out
}

// exampleFill fills x with exampleValue.
func exampleFill(x []elem) {
	for i := range x {
		x[i] = exampleValue(i)
	}
}

// A decode step of a Llama 3 8B layer: the fused QKV projection of one token
// holds 32 query, 8 key and 8 value heads. ApplyQK turns the queries and the
// keys in place, reading each table row once, and leaves the values alone.
func ExampleTable_ApplyQK() {
	r := Default()
	hd := r.Shape().HeadDim
	const hq, hkv = 32, 8
	row := (hq + 2*hkv) * hd
	tab := r.NewTable(4096)
	qkv := make([]elem, row)
	exampleFill(qkv)
	want := slices.Clone(qkv)

	tab.ApplyQK(qkv, Strides{Heads: hq, Head: hd, Token: row},
		qkv[hq*hd:], Strides{Heads: hkv, Head: hd, Token: row}, examplePos(r, 42))

	// The same as Apply on the query and key heads, which lie one after another.
	tab.Apply(want[:(hq+hkv)*hd], 42)
	fmt.Println("same bits as Apply on q and k:", slices.Equal(qkv, want))
	// Output: same bits as Apply on q and k: true
}

// DeepSeek-style MLA: each query head is 128 values without position
// followed by the rotary part. A model of the rotary part's shape
// (HeadDim = qk_rope_head_dim) turns it at offset 128 of every head.
func ExampleTable_ApplyStrided() {
	r := Default()
	hd := r.Shape().HeadDim
	const heads, nope = 16, 128
	full := nope + hd
	tab := r.NewTable(16)
	pos := []int32{7, 8}
	q := make([]elem, len(pos)*heads*full)
	exampleFill(q)
	want := slices.Clone(q)

	tab.ApplyStrided(q[nope:], Strides{Heads: heads, Head: full, Token: heads * full}, examplePos(r, pos...))

	// The same as Apply on each rotary part; the parts without position keep their bits.
	for j, p := range pos {
		for h := range heads {
			o := (j*heads+h)*full + nope
			tab.Apply(want[o:o+hd], int(p))
		}
	}
	fmt.Println("same bits as Apply on each rotary part:", slices.Equal(q, want))
	// Output: same bits as Apply on each rotary part: true
}
