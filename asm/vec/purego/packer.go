package purego

import (
	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// The qn family's operations (vec.Packer) in pure Go: a block's members
// are its 32 values, one a variable, as the q8_0 family's (codec.go).

// Shlv32 is a << b; Shrv32 a >> b (Go's shifts by a uint32 count).
func (t *Target) Shlv32(a, b vec.V) vec.V { return t.bin(a, "<<", b) }
func (t *Target) Shrv32(a, b vec.V) vec.V { return t.bin(a, ">>", b) }

// OrAcross is x0 | x1 | … | x31.
func (t *Target) OrAcross(xs []vec.V) vec.V {
	e := ex(xs[0])
	for _, x := range xs[1:] {
		e = jen.Add(e).Op("|").Add(ex(x))
	}
	return t.op(e)
}

// StoreNibbles is a[j] = uint8(q_j | q_{j+16}<<4) for j < 16.
func (t *Target) StoreNibbles(a vec.Arr, qs []vec.V) {
	for j := range 16 {
		t.emit(jen.Add(at(a, j)).Op("=").Uint8().Call(jen.Add(ex(qs[j])).Op("|").Add(ex(qs[j+16])).Op("<<").Lit(4)))
	}
}

// LoadNibbles is q_j = uint32(a[j] & 15), q_{j+16} = uint32(a[j] >> 4).
func (t *Target) LoadNibbles(a vec.Arr) []vec.V {
	qs := make([]vec.V, 32)
	for j := range 16 {
		qs[j] = t.op(jen.Uint32().Call(jen.Add(at(a, j)).Op("&").Lit(15)))
		qs[j+16] = t.op(jen.Uint32().Call(jen.Add(at(a, j)).Op(">>").Lit(4)))
	}
	return qs
}

// LoadU32 is the little-endian uint32 of a[0…3].
func (t *Target) LoadU32(a vec.Arr) vec.V {
	return t.op(jen.Uint32().Call(at(a, 0)).Op("|").Uint32().Call(at(a, 1)).Op("<<").Lit(8).
		Op("|").Uint32().Call(at(a, 2)).Op("<<").Lit(16).Op("|").Uint32().Call(at(a, 3)).Op("<<").Lit(24))
}

// StoreU32 is a[0…3] = v's bytes, little endian.
func (t *Target) StoreU32(a vec.Arr, v vec.V) {
	e := ex(v)
	t.emit(jen.List(at(a, 0), at(a, 1), at(a, 2), at(a, 3)).Op("=").List(jen.Uint8().Call(e), jen.Uint8().Call(jen.Add(e).Op(">>").Lit(8)),
		jen.Uint8().Call(jen.Add(e).Op(">>").Lit(16)), jen.Uint8().Call(jen.Add(e).Op(">>").Lit(24))))
}

var _ vec.Packer = (*Target)(nil)

// AddInOrder (vec.Summer) is s + x0 + x1 + …, Go's left-to-right float32
// additions, each rounded (the members are variables or converted
// products: nothing to fuse).
func (t *Target) AddInOrder(s vec.V, xs []vec.V) vec.V {
	e := ex(s)
	for _, x := range xs {
		e = jen.Add(e).Op("+").Add(ex(x))
	}
	return t.op(e)
}
