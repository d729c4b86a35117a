package purego

import (
	"github.com/dave/jennifer/jen"

	"github.com/ropegen/ropegen/asm/vec"
)

// The Hadamard family's operations (vec.Shuffler) in pure Go: a member is
// one value, so every stage pairs members (SwapLanes and LaneBit are never
// asked for), each stage's values assigned to fresh variables (Var).

func (t *Target) Width() int { return 1 }

// Chunk is 32 values: the stages below 32 run on variables, the others
// through x (the statements are as many either way).
func (t *Target) Chunk() int { return 32 }

// LoadF32 reads the k values at a into fresh variables.
func (t *Target) LoadF32(a vec.Arr, k int) []vec.V {
	view := t.viewOf(a)
	xs := make([]vec.V, k)
	for j := range xs {
		xs[j] = t.op(jen.Id(view).Index(jen.Lit(a.Off + j)))
	}
	return xs
}

// StoreF32 assigns the values xs at a.
func (t *Target) StoreF32(a vec.Arr, xs []vec.V) {
	view := t.viewOf(a)
	for j, x := range xs {
		t.emit(jen.Id(view).Index(jen.Lit(a.Off + j)).Op("=").Add(x.(*val).e))
	}
}

func (t *Target) SwapLanes(vec.V, int) vec.V { panic("purego: SwapLanes: a member is one lane") }
func (t *Target) LaneBit(int) vec.Mask       { panic("purego: LaneBit: a member is one lane") }

// Var assigns x to a fresh variable unless it is one.
func (t *Target) Var(x vec.V) vec.V {
	if x.(*val).v {
		return x
	}
	return t.op(x.(*val).e)
}
