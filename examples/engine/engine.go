/*
Package engine shows, in small tested code, how an inference engine that
loads models at run time uses ropegen. The kernels depend only on a head's
shape; the frequencies, the attention factor and the axis map are data. So
the engine carries one generated package per shape it serves (here
rope128neox: heads of 128 float32 values, rotate_half pairs, every value
rotated) and, when it loads a model, computes that model's numbers with
package spec, the same code ropegen runs, and builds tables from them:

	s, _ := spec.LoadHFConfig("config.json") // or spec.LoadGGUF
	rot, _ := engine.New(s)                  // rope128neox.New(Params(p.Runtime()))
	tab := rot.Window(start, n)              // rows for positions [start, start+n)

A table from the loaded numbers is bit for bit the table of a package
generated for that model (the tests compare Llama 3.1 8B, Mistral 7B and
Qwen2.5 7B with YaRN against their own generated packages). Long contexts
need no table reaching the last position: a window (NewTableRange) for a
prefill or a sequence's recent positions, and a Batch for a decode step
whose sequences sit at scattered positions.
*/
package engine

import (
	"fmt"

	"github.com/ropegen/ropegen/generated/rope128neox"
	"github.com/ropegen/ropegen/spec"
)

// Rotary is the RoPE of one loaded model, in rope128neox's shape.
type Rotary struct {
	Spec spec.Spec
	R    *rope128neox.Rotary
}

// New resolves s with package spec and returns its Rotary: rope128neox's
// New takes the model's numbers as data, and refuses a model of another
// shape, naming the field.
func New(s spec.Spec) (*Rotary, error) {
	p, err := spec.Resolve(s)
	if err != nil {
		return nil, err
	}
	r, err := rope128neox.New(rope128neox.Params(p.Runtime()))
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return &Rotary{Spec: s, R: r}, nil
}

// Table returns a table for the positions [0, n).
func (r *Rotary) Table(n int) *rope128neox.Table { return r.R.NewTable(n) }

// Window returns a table for the positions [start, start+n) only.
func (r *Rotary) Window(start, n int) *rope128neox.Table { return r.R.NewTableRange(start, n) }

// Batch returns the rows of a decode step for up to capacity sequences.
func (r *Rotary) Batch(capacity int) *rope128neox.Batch { return r.R.NewBatch(capacity) }
