package gen

import (
	"fmt"
	"go/format"

	"github.com/ropegen/ropegen/templates"
)

// arm64Files returns rope_arm64.s, the NEON kernels, and rope_arm64.go, their
// declarations and dispatch, both rendered from package templates with the
// plan's Kernel. Where there are no NEON kernels for the spec (see
// neonSupported) asm is nil and rope_arm64.go offers no assembly backend.
func (p *Plan) arm64Files(header string) (asm, goSrc []byte, err error) {
	k := p.neonKernel(header)
	if p.neonSupported() {
		asm, err = templates.Execute("rope_arm64.s.tmpl", k)
		if err != nil {
			return nil, nil, err
		}
	} else {
		k.Funcs = nil
	}
	src, err := templates.Execute("rope_arm64.go.tmpl", k)
	if err != nil {
		return nil, nil, err
	}
	goSrc, err = format.Source(src)
	if err != nil {
		return nil, nil, fmt.Errorf("rope_arm64.go: %w", err)
	}
	return asm, goSrc, nil
}

// neonSupported reports whether the NEON kernels cover the spec: float32
// heads rotated in place. Other dtypes, and the narrowing ApplyTo of
// -out-dtype, use the pure Go kernels on arm64.
func (p *Plan) neonSupported() bool {
	return p.Spec.DType == "f32" && p.Spec.OutDType == ""
}

// NEON register layout (templates.Kernel documents it): working sets of six
// registers (A, B, P0…P3) at V10 and V16, preloaded c values just below V10,
// preloaded s values from V22 up.
const (
	neonWork0 = 10 // first working set: V10…V15
	neonWork1 = 16 // second working set: V16…V21
	neonS0    = 22 // s of preloaded block k: V(22+k); c: V(10−Preloaded+k)
)

// neonKernel is the template data for the plan's NEON kernels: the block
// plan of one head (4-pair blocks, then a 2-pair and a 1-pair tail), its
// registers and byte offsets, and which table values stay in registers
// across heads.
func (p *Plan) neonKernel(header string) *templates.Kernel {
	const elem = 4
	neox := p.Spec.Layout == NeoX
	k := &templates.Kernel{
		Header:    header,
		Package:   p.Spec.Package,
		HeadDim:   p.HeadDim,
		RotaryDim: p.RotaryDim,
		Half:      p.Half,
		NeoX:      neox,
		Layout:    p.Spec.Layout,
		RowLen:    p.RowLen,
		HalfBytes: p.Half * elem,
		Funcs: []templates.Func{
			{Name: "applyNEON", Doc: "forward (A·R_p·x)"},
			{Name: "applyInverseNEON", Inverse: true, Doc: "backward (A·R_pᵀ·x)"},
		},
	}
	if neox {
		k.Skip = (p.HeadDim - p.Half) * elem
	} else {
		k.Skip = (p.HeadDim - p.RotaryDim) * elem
	}

	// The block plan: lanes are pairs.
	var sizes []int
	for i := 0; i < p.Half; {
		w := 4
		for w > p.Half-i {
			w /= 2
		}
		sizes = append(sizes, w)
		i += w
	}
	k.Preloaded = min(len(sizes), templates.MaxPreload)

	pair := 0
	for n, w := range sizes {
		a, b := p.Pair(pair)
		blk := templates.Block{
			Index:     n,
			Pair:      pair,
			Last:      pair + w - 1,
			Pairs:     w,
			Scalar:    w == 1,
			XA:        a * elem,
			XB:        b * elem,
			COff:      a * elem,
			SOff:      (p.RotaryDim + b) * elem,
			Preloaded: n < k.Preloaded,
		}
		if w > 1 {
			blk.Arr, blk.GoArr = fmt.Sprintf("%dS", w), fmt.Sprintf("S%d", w)
		}
		blk.CLoad, blk.SLoad = blk.COff, blk.SOff
		if neox {
			blk.XBytes, blk.TBytes = w*elem, w*elem
		} else {
			blk.XBytes, blk.TBytes = 2*w*elem, 2*w*elem
			if !blk.Scalar {
				blk.SLoad -= elem // LD2 from S[a]: the odd lanes are S[b]
			}
		}
		base := neonWork0
		if n%2 == 1 {
			base = neonWork1
		}
		blk.A, blk.B, blk.P0, blk.P1, blk.P2, blk.P3 = base, base+1, base+2, base+3, base+4, base+5
		if blk.Preloaded {
			blk.C, blk.S = neonWork0-k.Preloaded+n, neonS0+n
		} else {
			blk.C, blk.S = blk.P0, blk.P3
			if !blk.Scalar && !k.LoopTable {
				k.LoopTable, k.LoopC, k.LoopS = true, blk.CLoad, blk.SLoad
			}
		}
		k.Blocks = append(k.Blocks, blk)
		pair += w
	}
	for i := 0; i < len(k.Blocks); i += 2 {
		g := templates.Group{Blocks: k.Blocks[i:min(i+2, len(k.Blocks))]}
		g.First, g.Last = g.Blocks[0].Pair, g.Blocks[len(g.Blocks)-1].Last
		k.Groups = append(k.Groups, g)
	}

	// Preloads: every c in block order (an interleaved LD2 also writes the
	// next register, which the next c load or, last, V10 takes), then every
	// s in reverse block order (the LD2's other register is the one below:
	// the previous block's s, loaded later, or, last, V21).
	load := func(what string, b templates.Block, off, reg int) templates.Load {
		l := templates.Load{What: what, Block: b.Index, Off: off, Pairs: b.Pairs, Scalar: b.Scalar, GoArr: b.GoArr, Regs: []int{reg}, Keep: reg}
		if !neox && !b.Scalar {
			if what == "c" {
				l.Regs = []int{reg, reg + 1}
			} else {
				l.Regs = []int{reg - 1, reg}
			}
		}
		return l
	}
	pre := k.Blocks[:k.Preloaded]
	for _, b := range pre {
		k.Preload = append(k.Preload, load("c", b, b.CLoad, b.C))
	}
	for i := len(pre) - 1; i >= 0; i-- {
		k.Preload = append(k.Preload, load("s", pre[i], pre[i].SLoad, pre[i].S))
	}
	return k
}
