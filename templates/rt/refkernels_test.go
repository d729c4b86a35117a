package rt

import (
	"math"
	"unsafe"

	"github.com/ropegen/ropegen/verify/codec"
)

// rt's tests install tiny reference kernels, written here from
// docs/contract.md §5 (not from gen), for a few shapes: partial rotary, both
// layouts, a head that q8_0 blocks fit and one they do not. Two backends:
// "alt", whose rows kernels walk a row per head and whose fill kernel fills
// a prefix of the pairs (so the run-time's completion of a row and its
// head-major walk are exercised), and "generic". Both must give the same
// bits.

// refShapes are the shapes the tests install.
var refShapes = []Shape{
	{HeadDim: 16, RotaryDim: 16, Layout: "interleaved"},
	{HeadDim: 12, RotaryDim: 8, Layout: "neox"},
	{HeadDim: 64, RotaryDim: 64, Layout: "neox"},
	{HeadDim: 96, RotaryDim: 32, Layout: "interleaved"},
}

func init() { installRef() }

// installRef installs refShapes and their kernels, and the default model.
func installRef() {
	shapeList = refShapes
	gen := backend{name: "generic"}
	alt := backend{name: "alt"}
	for _, s := range refShapes {
		neox := s.Layout == "neox"
		k := kernels{fwd: refRot(s, false), inv: refRot(s, true)}
		var vs []int
		for v := range normVariants {
			if v%4/normToken == 0 || s.HeadDim%8 == 0 {
				vs = append(vs, v)
			}
		}
		k.norm, k.normOnly = genericNorms(s.HeadDim, s.RotaryDim, neox, vs...)
		k.half[0] = genericF16(s.HeadDim, s.RotaryDim, k.fwd)
		k.half[1] = genericBF16(s.HeadDim, s.RotaryDim, k.fwd)
		k.bytes[0] = genericE4M3(s.HeadDim, s.RotaryDim)
		k.bytes[2] = genericE5M2(s.HeadDim, s.RotaryDim)
		if s.HeadDim%q8Values == 0 {
			k.bytes[1] = genericQ80(s.HeadDim, s.RotaryDim)
			qn := genericQN(s.HeadDim, s.RotaryDim)
			copy(k.bytes[3:], qn[:])
			k.bytes[7] = genericMXFP4(s.HeadDim, s.RotaryDim)
			k.bytes[8] = genericIQ4NL(s.HeadDim, s.RotaryDim)
			if s.HeadDim%64 == 0 {
				k.bytes[9] = genericNVFP4(s.HeadDim, s.RotaryDim)
			}
			k.bytes[11] = genericNVFP4GS(s.HeadDim, s.RotaryDim)
		}
		k.bytes[10] = genericInt8(s.HeadDim) // any head: its block is the head
		if s.HeadDim&-s.HeadDim >= 16 {
			k.hadamard = refHadamard(s.HeadDim)
		}
		gen.shapes = append(gen.shapes, k)
		a := k
		a.fwdRows, a.invRows = refRows(k.fwd, 2*s.RotaryDim), refRows(k.inv, 2*s.RotaryDim)
		a.fill = refFill(s)
		alt.shapes = append(alt.shapes, a)
	}
	backends = []backend{alt, gen}
	active = &backends[0]
	testDefault = refParams(refShapes[0], 10000)
	testDefault.NormKind, testDefault.NormScope, testDefault.NormEps = "rms", "head", 1e-6
}

// refParams are the Params of shape s with θ_i = base^(−2i/R).
func refParams(s Shape, base float64) Params {
	f := make([]float64, s.RotaryDim/2)
	for i := range f {
		f[i] = math.Pow(base, -float64(2*i)/float64(s.RotaryDim))
	}
	return Params{HeadDim: s.HeadDim, RotaryDim: s.RotaryDim, Layout: s.Layout, Freqs: f, Attn: 1, Axes: 1, QKScale: 1 / math.Sqrt(float64(s.HeadDim))}
}

// refRot is the pure Go rotation of docs/contract.md §5 for shape s: for
// pair i with indices (a, b), c = C[a] and s = S[b] of the row,
// y_a = fl(fl(x_a·c) ∓ fl(x_b·s)), y_b = fl(fl(x_b·c) ± fl(x_a·s)).
func refRot(sh Shape, inverse bool) rotKernel {
	hd, rd := sh.HeadDim, sh.RotaryDim
	return func(x []elem, stride, n int, rp *comp) {
		r := unsafe.Slice(rp, 2*rd)
		for h := range n {
			v := x[h*stride:][:hd]
			for i := 0; i < rd/2; i++ {
				a, b := 2*i, 2*i+1
				if sh.Layout == "neox" {
					a, b = i, i+rd/2
				}
				c, s := r[a], r[rd+b]
				xa, xb := v[a], v[b]
				if inverse {
					v[a], v[b] = comp(xa*c)+comp(xb*s), comp(xb*c)-comp(xa*s)
				} else {
					v[a], v[b] = comp(xa*c)-comp(xb*s), comp(xb*c)+comp(xa*s)
				}
			}
		}
	}
}

// refRows is kern with a row per head.
func refRows(kern rotKernel, rowLen int) rowsKernel {
	return func(x []elem, stride, n int, rows []comp) {
		for h := range n {
			kern(x[h*stride:], stride, 1, &rows[h*rowLen])
		}
	}
}

// refFill fills the first half of a row's pairs, as an assembly fill
// kernel fills its whole vectors, and writes NaN into the others' values,
// which the run-time must fill.
func refFill(s Shape) fillKernel {
	rd := s.RotaryDim
	return func(rp *comp, pos float64, freqs *float64, attn float64) int {
		done := rd / 4
		full := make([]comp, 2*rd)
		fillRow(full, int(pos), unsafe.Slice(freqs, rd/2), attn, 0, s.Layout == "neox")
		r := unsafe.Slice(rp, 2*rd)
		for j := range r {
			r[j] = comp(math.NaN())
		}
		for i := range done {
			a, b := 2*i, 2*i+1
			if s.Layout == "neox" {
				a, b = i, i+rd/2
			}
			for _, j := range []int{a, b, rd + a, rd + b} {
				r[j] = full[j]
			}
		}
		return done
	}
}

// exampleCache is an f16 cache of rows rows of heads heads for the
// examples (a generated package's tests declare it with a cache type it
// has).
func exampleCache(r *Rotary, rows, heads int) Cache {
	hd := r.CacheHead("f16")
	return F16Cache(make([]uint16, rows*heads*hd), Strides{Heads: heads, Head: hd, Token: heads * hd})
}

// refHadamard is the Hadamard transform of docs/contract.md §15 for heads
// of hd values: verify/codec's Hadamard, head by head.
func refHadamard(hd int) hadamardKernel {
	return func(x []float32, stride, n int) {
		for h := range n {
			codec.Hadamard(x[h*stride:][:hd])
		}
	}
}
