package vec

import "math"

// The Hadamard family: the normalized Walsh–Hadamard transform of a head
// in blocks of n values (n a power of two), exactly as verify/codec's
// HadamardN gives its bits:
//
//	for s := 1; s < n; s *= 2 {          // stage s
//		for i with i&s == 0 {
//			x_i, x_{i+s} = fl(x_i + x_{i+s}), fl(x_i − x_{i+s})
//		}
//	}
//	x_i = fl(x_i · c), c = fl32(1/√n) (HadamardScale, verify/codec's hadamardScale)
//
// Every output is a fixed tree of float32 additions and subtractions, the
// stages in increasing s, each with the operands in the order above (the
// lower index first: on x86 it decides which NaN's payload a sum of two
// NaNs keeps; TestHadamardFamily compares those bits too, TestKernels
// compares a NaN as a NaN, so a target commuting an addition is not
// caught there), then one multiplication: no FMA, no reassociation, no
// other order of the stages (the stages commute in exact arithmetic, not
// in rounded).
//
// It is written against Shuffler: a head is read and written as members,
// each a float32 vector of Width lanes holding consecutive values. The
// stages with s ≥ Width pair members (vector additions); those with
// s < Width pair lanes of one member, through SwapLanes and a select on
// the lane's bit s. The family holds Chunk values (a power of two, the
// target's register budget) at once: the stages s < Chunk run on each
// chunk in registers, read from src and written to dst; the stages
// s ≥ Chunk then run chunk pair by chunk pair through dst. dst may be src
// (in place): every value is read before it is written.
//
// The kind Hadamard (x []float32, stride, n: n heads in place, each
// HeadDim/B blocks of B = HadamardBlock(HeadDim) values, as
// verify/codec's Hadamard) runs it head by head, block by block; every target lowers
// Shuffler (pure Go, AVX-512, AVX2, NEON, RVV) and TestKernels checks them
// against verify/codec. hadamardHead is the arithmetic of one head, which
// TestHadamardFamily also runs on evaluators of several widths and chunks.

// Shuffler is a target's float32 members of a head and the lane swaps of
// the Hadamard family's stages below the vector width.
type Shuffler interface {
	// Width is the lanes of a member, a power of two (1 in pure Go, 16 at
	// AVX-512, 8 at AVX2, 4 at NEON, 4·LMUL in RVV: a block's member).
	Width() int
	// Chunk is how many values the family holds at once: a power of two,
	// at least 16 and at least Width (the family takes min(Chunk, n)).
	Chunk() int
	// LoadF32 is the k float32 values at a (k a multiple of Width) as
	// k/Width members, member m holding values m·Width … m·Width+Width−1
	// in its lanes 0…Width−1; StoreF32 writes members xs there.
	LoadF32(a Arr, k int) []V
	StoreF32(a Arr, xs []V)
	// SwapLanes is x with lanes i and i^s exchanged, s a power of two
	// below Width.
	SwapLanes(x V, s int) V
	// LaneBit is the lanes i of a member with i&s ≠ 0, s a power of two
	// below Width.
	LaneBit(s int) Mask
	// Select is, lane by lane, a where m holds, else b (Codec's).
	Select(m Mask, a, b V) V
	// Var is x, computed once however often the family reads it: x
	// itself on a register target, a variable of the pure Go target
	// (whose values are expressions).
	Var(x V) V
}

// hadamard is the kind Hadamard: each of the n heads of x, stride apart,
// transformed in place. The target's Heads must run its body one head at
// a time (Shuffler's accesses are of x's current head).
func hadamard(t Target, f *Func) {
	p, ok := t.(Shuffler)
	if !ok {
		panic("vec: " + f.Name() + ": the target does not lower Shuffler (the Hadamard family's operations)")
	}
	if f.X != F32 {
		panic("vec: " + f.Name() + ": the Hadamard family transforms float32 heads")
	}
	x := t.Ptr("x", F32)
	h := f.Shape.HeadDim
	b := HadamardBlock(h)
	t.Heads(t.Int("n"), []Walk{{A: x, Stride: t.Int("stride")}}, nil, func(Head) {
		for off := 0; off < h; off += b {
			hadamardHead(t, p, b, x.At(off), x.At(off))
		}
	})
}

// HadamardBlock is the block of the transform of a head of h values: the
// largest power of two dividing h (h itself for a power of two; 32 for
// 96), verify/codec's HadamardBlock. The kind Hadamard needs at least 16.
func HadamardBlock(h int) int { return h & -h }

// HadamardMaxHead is the longest head the kind Hadamard is generated for:
// every target writes a block's stages out, so a head of 4096 values
// would take some 50,000 statements.
const HadamardMaxHead = 1024

// HasHadamard reports whether a package's shape of head h gets the kind
// Hadamard: a block of at least 16 values, a head of at most
// HadamardMaxHead.
func HasHadamard(h int) bool { return HadamardBlock(h) >= 16 && h <= HadamardMaxHead }

// HadamardScale is c = fl32(1/√n) for n = 2^k: 2^−⌊k/2⌋, times fl32(1/√2)
// (exactly: a power of two times a float32) for odd k.
func HadamardScale(n int) float32 {
	k := 0
	for 1<<k < n {
		k++
	}
	c := float32(math.Ldexp(1, -k/2))
	if k%2 == 1 {
		c *= float32(0x1.6a09e6p-1) // fl32(1/√2), 0x3F3504F3
	}
	return c
}

// hadamardHead transforms the n values at src (one block, n a power of
// two, 16 ≤ n) into dst, which may be src.
func hadamardHead(o Ops, p Shuffler, n int, src, dst Arr) {
	if n < 16 || n&(n-1) != 0 {
		panic("vec: hadamard: the block must be a power of two of at least 16 values")
	}
	w := p.Width()
	ch := min(p.Chunk(), n)
	c := o.Const(float64(HadamardScale(n)))
	// Stages 1 … ch/2, chunk by chunk in registers (and the scale when
	// the chunk is the whole block).
	for off := 0; off < n; off += ch {
		xs := p.LoadF32(src.At(off), ch)
		for s := 1; s < ch; s *= 2 {
			if s >= w {
				// Members m and m + s/w, m's value bit s clear:
				//	x_i, x_{i+s} = x_i + x_{i+s}, x_i − x_{i+s}
				d := s / w
				for m := range xs {
					if m&d == 0 {
						xs[m], xs[m+d] = p.Var(o.Add(xs[m], xs[m+d])), p.Var(o.Sub(xs[m], xs[m+d]))
					}
				}
				continue
			}
			// Lanes i and i^s of each member, y = x with them swapped:
			//	lane i&s == 0: x_i + x_{i+s} = x + y
			//	lane i&s ≠ 0:  x_{i−s} − x_i = y − x
			hi := p.LaneBit(s)
			for m, x := range xs {
				y := p.SwapLanes(x, s)
				xs[m] = p.Var(p.Select(hi, o.Sub(y, x), o.Add(x, y)))
			}
		}
		if ch == n {
			// x_i = x_i · c
			for m, x := range xs {
				xs[m] = o.Mul(x, c)
			}
		}
		p.StoreF32(dst.At(off), xs)
	}
	// Stages ch … n/2 through dst, chunk pair by chunk pair: the chunks at
	// off and off + s, off's bit s clear,
	//	x_i, x_{i+s} = x_i + x_{i+s}, x_i − x_{i+s}
	// and the scale at the last stage, x_i = x_i · c.
	for s := ch; s < n; s *= 2 {
		last := 2*s == n
		for off := 0; off < n; off += ch {
			if off&s != 0 {
				continue
			}
			as, bs := p.LoadF32(dst.At(off), ch), p.LoadF32(dst.At(off+s), ch)
			for m := range as {
				as[m], bs[m] = p.Var(o.Add(as[m], bs[m])), p.Var(o.Sub(as[m], bs[m]))
				if last {
					as[m], bs[m] = o.Mul(as[m], c), o.Mul(bs[m], c)
				}
			}
			p.StoreF32(dst.At(off), as)
			p.StoreF32(dst.At(off+s), bs)
		}
	}
}
