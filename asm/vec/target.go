package vec

// V is a vector value of a target, opaque to the families: a register (or
// a foldable memory operand) of a fixed-width target, the lane expressions
// of the pure Go target. Its width is the block's, which the target chose.
type V any

// S is a float64 scalar of a target: a sum of squares, ε.
type S any

// Int is a run-time integer of a target: a count of heads, a loop index.
type Int any

// Arr is an array in memory that a kernel reads or writes: the elements an
// argument points at, part of them (Off elements on: the row's sines are
// the row at Off R), or scratch space on the stack.
type Arr struct {
	Name string // for comments: "x", "r", "w", "scratch"
	Elem Elem
	Off  int  // elements from the pointer
	Once bool // read-only, each value read once: a target may fold the reads into the arithmetic
	P    any  // the target's pointer
}

// At is a from value off on.
func (a Arr) At(off int) Arr { a.Off += off; return a }

// Walk moves the pointer of A on from one iteration of a loop to the next:
// by Stride elements (a run-time Int, read before the function's first
// loop), else by Step elements.
type Walk struct {
	A      Arr
	Stride Int
	Step   int
}

// Target is one instruction set (at one level) implementing the layer.
// Every method emits code for the function being emitted; a family calls
// them in the order its arithmetic runs.
type Target interface {
	Ops

	// Level is the target's level name, "avx512", "avx2", "neon", "generic".
	Level() string
	// Func emits f: its prologue, the body, and its return.
	Func(f *Func, body func())
	// Ptr is the pointer (or slice) argument name as an array of e.
	Ptr(name string, e Elem) Arr
	// Int is the int argument name, read into a fresh register.
	Int(name string) Int
	// MulInt is a·k.
	MulInt(a Int, k int) Int
	// Copy is a new pointer at a's place (a walk moves it, not a).
	Copy(a Arr) Arr
	// Local is space on the stack for n elements of e.
	Local(n int, e Elem) Arr

	// Heads runs body over the n heads the walks move through. row is the
	// table row every head turns by, or nil; the target may keep its
	// values in registers across heads, and may run body for several
	// heads at once (Head's blocks then run once per head).
	Heads(n Int, walks []Walk, row *Arr, body func(h Head))
	// Loop runs body n times (n ≥ 0, consumed), the walks moving after
	// each iteration.
	Loop(n Int, walks []Walk, body func(h Head))
}

// Head is the current head (or heads) of a loop.
type Head interface {
	// Pairs runs body over blocks of the head's pairs: every pair of
	// [0, R/2) exactly once. arrs are the arrays body touches.
	Pairs(arrs []Arr, body func(b Block))
	// Values runs body over blocks of the values [lo, hi).
	Values(lo, hi int, arrs []Arr, body func(b Block))
	// SumSquares adds the squares of the values [0, HeadDim) of a to the
	// partial sums acc: s_k += fl64(a_j²) for j ≡ k (mod 8), in increasing j
	// (docs/contract.md §10).
	SumSquares(acc V, a Arr)
}

// Block is a block of pairs or values of a head, as the target sees it: a
// pairs block as members, each a vector of values whose partners are
// another member (or itself, lanes swapped); a values block as one member.
type Block interface {
	// Load reads the block's values of a, widened to the compute type.
	Load(a Arr) []V
	// Store writes ys, narrowed to a's type, at the block's values of a.
	Store(a Arr, ys []V)
	// Partners are the pair partners of the members xs (it may replace the
	// elements of xs by the same values, in variables).
	Partners(xs []V) []V
	// Table reads the row's values for the members: member i's C is c[i]
	// and its S is s[i], negated when neg[i] (a target may read one
	// member's sines for both, since S[b] = −S[a]).
	Table(row Arr) (c, s []V, neg []bool)
}

// Ops are the arithmetic. Every operation rounds once, as the compute
// type's (float32's or float64's) IEEE operation: no fused multiply-add.
type Ops interface {
	Mul(a, b V) V
	Add(a, b V) V
	Sub(a, b V) V
	Div(a, b V) V
	// Const is v in every lane, in the compute type of the function.
	Const(v float64) V
	// Broadcast is the argument name, of type e, in every lane.
	Broadcast(name string, e Elem) V

	// Acc is a zeroed accumulator of the 8 float64 partial sums of a norm.
	Acc() V
	// Reduce is ((s0+s4)+(s2+s6)) + ((s1+s5)+(s3+s7)) of acc.
	Reduce(acc V) S
	// Scale is r = fl(1/sqrt(fl64(ss/count) + eps)) in every lane, the
	// float64 steps each rounded, r rounded once to the compute type.
	Scale(ss S, count Int, eps S) V
	// Scalar is the float64 argument name.
	Scalar(name string) S
	// Imm is the constant k.
	Imm(k int) Int
}

// AddSub is a+b, or a−b when sub.
func AddSub(o Ops, a, b V, sub bool) V {
	if sub {
		return o.Sub(a, b)
	}
	return o.Add(a, b)
}

// Grouper is a target whose head-scope norms take several heads through
// each pass at once: their sums of squares, then their r lane by lane (the
// division, the square root and the reciprocal paid once a group), then
// the heads.
type Grouper interface {
	// NormGroup is how many heads a group has.
	NormGroup() int
	// For runs body k times with the iteration's index, a constant k > 0.
	For(k int, walks []Walk, body func(h Head, i Int))
	// Groups takes the groups of k heads of n (n loses k a group) through
	// sum (a group's sums, at its pointer), scale (their r, from the sums)
	// and out (a group written with r): sum, scale, out for each group, or
	// when pipelined, sum for group i+1 between scale and out of group i:
	// sum, scale, then sum, out, scale while a group is left, then out.
	Groups(n Int, k int, pipelined bool, sum, out, scale func())
	// Skip moves w's pointer on by k steps.
	Skip(w Walk, k int)
	// SumGroup stores at sums[i] (float64) the sum of squares of the i-th
	// of the k heads w walks through, as Reduce of SumSquares into a fresh
	// Acc gives it; w's pointer stays. A target may interleave the heads'
	// chains of additions: each head's order is the contract's.
	SumGroup(k int, w Walk, sums Arr)
	// BroadcastAt is element i of a in every lane.
	BroadcastAt(a Arr, i Int) V
	// ScaleLanes is Scale lane by lane over the n sums at sums (float64),
	// each r stored at rs (compute type).
	ScaleLanes(sums, rs Arr, n int, count Int, eps S)
}

// Filler is a target with a table fill: float64 lanes, and integer
// operations on them.
type Filler interface {
	// Lanes is how many values of e a register holds.
	Lanes(e Elem) int
	// Result sets the int result name to v.
	Result(name string, v Int)
	// Block runs body for the block of Lanes(e) pairs at the head's place.
	Block(h Head, e Elem, body func(b Block))
	// PerPair reads a, one value a pair (θ), at the block's pairs.
	PerPair(b Block, a Arr) V
	// SetTable writes the block's C and S of the row from c and s, one
	// value a pair: C[a] = C[b] = c, S[a] = −s, S[b] = s.
	SetTable(b Block, row Arr, c, s V)
	// Bits is the bits v in every lane of type e: a constant the target
	// may read from memory where it is used (a kernel with more constants
	// than registers).
	Bits(e Elem, v uint64) V
	// And, Xor, IAdd and ISub are bitwise and integer operations on the
	// lanes of a and b; Shl shifts each lane left by n bits.
	And(a, b V) V
	Xor(a, b V) V
	IAdd(a, b V) V
	ISub(a, b V) V
	Shl(a V, n int) V
	// Narrow is a rounded to e (float64 lanes to float32).
	Narrow(a V, e Elem) V
}
