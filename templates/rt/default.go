package rt

import "sync"

// The package-level functions of a package generated for one spec: its
// model's Rotary and the conveniences bound to it.

// DefaultParams are the numbers of this package's spec, which its constants
// hold: Default() is New(DefaultParams). Changing them changes nothing
// else.
var DefaultParams = defaultParams()

// defaultRotary is Default's Rotary, made on first use.
var defaultRotary = sync.OnceValue(func() *Rotary {
	r, err := New(defaultParams())
	if err != nil {
		panic(err) // ropegen checked the spec: not reached
	}
	return r
})

// Default returns the Rotary of this package's spec.
func Default() *Rotary { return defaultRotary() }

// NewTable returns a table for the positions [0, n) of this package's spec:
// Default().NewTable(n).
func NewTable(n int) *Table {
	if n < 0 {
		panicf("NewTable: n = %d: want n >= 0", n)
	}
	return Default().newTable("NewTable", 0, n)
}

// NewBatch returns a Batch for up to capacity tokens a step of this
// package's spec: Default().NewBatch(capacity).
func NewBatch(capacity int) *Batch {
	return Default().newBatch("NewBatch", capacity)
}

// Rotate is Default().Rotate: every head in x turned in place by position
// pos, without a table, with the bits of Table.Apply.
func Rotate(x []elem, pos int) {
	Default().rotate("Rotate", x, pos, false)
}

// RotateInverse is Default().RotateInverse, with the bits of
// Table.ApplyInverse.
func RotateInverse(x []elem, pos int) {
	Default().rotate("RotateInverse", x, pos, true)
}
